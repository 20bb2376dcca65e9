//! The libvirt backend: libvirt's session daemon (`qemu:///session`) through `virsh`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::state::{Build, Spec};
use super::{Vm, VmError, VmStarted, VmStopped};
use crate::cli::VmBackendArg;
use crate::context::Ctx;

/// libvirt's session socket: `$XDG_RUNTIME_DIR/libvirt/libvirt-sock`, else
/// `/run/user/<uid>/libvirt/libvirt-sock`.
pub fn socket() -> PathBuf {
    use std::os::unix::fs::MetadataExt as _;
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("libvirt/libvirt-sock"),
        None => {
            let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
            PathBuf::from(format!("/run/user/{uid}/libvirt/libvirt-sock"))
        }
    }
}

/// Whether the session daemon is there (its socket exists).
pub fn available() -> bool {
    socket().exists()
}

/// The backend for `--backend` (`setting`: vm.backend for `auto`): `auto` is libvirt when its
/// session daemon is there, else qemu.
///
/// # Errors
///
/// `libvirt` asked for without a session daemon.
pub fn choose(wanted: VmBackendArg, setting: &str) -> Result<&'static str, VmError> {
    let wanted = match (wanted, setting) {
        (VmBackendArg::Qemu, _) | (VmBackendArg::Auto, "qemu") => return Ok("qemu"),
        (VmBackendArg::Libvirt, _) | (VmBackendArg::Auto, "libvirt") => true,
        (VmBackendArg::Auto, _) => false,
    };
    match (wanted, available()) {
        (_, true) => Err(VmError::Usage(
            "the libvirt backend is not built yet in this charly; create the VM with --backend qemu".into(),
        )),
        (true, false) => Err(VmError::Usage(format!(
            "--backend libvirt: libvirt's session daemon is not running (no {}); start `libvirtd` as this user, or \
             use --backend qemu",
            socket().display()
        ))),
        (false, false) => Ok("qemu"),
    }
}

/// Defines the domain of a libvirt VM (nothing for qemu).
///
/// # Errors
///
/// virsh's failure.
pub fn define(_ctx: &Ctx, _vm: &Vm, _build: &Build, spec: &Spec) -> Result<(), VmError> {
    if spec.backend == "libvirt" {
        return Err(VmError::Usage("the libvirt backend is not built yet".into()));
    }
    Ok(())
}

/// Starts a libvirt VM.
///
/// # Errors
///
/// virsh's failure.
pub fn start(_ctx: &Ctx, _vm: &Vm, _build: &Build, _spec: &Spec, _wait: u32) -> Result<VmStarted, VmError> {
    Err(VmError::Usage("the libvirt backend is not built yet".into()))
}

/// Stops a libvirt VM.
///
/// # Errors
///
/// virsh's failure.
pub fn stop(_ctx: &Ctx, _vm: &Vm, _force: bool, _timeout: u32) -> Result<VmStopped, VmError> {
    Err(VmError::Usage("the libvirt backend is not built yet".into()))
}

/// Destroys and undefines a libvirt VM's domain: whether it was running.
///
/// # Errors
///
/// virsh's failure.
pub fn undefine(_ctx: &Ctx, _vm: &Vm) -> Result<bool, VmError> {
    Ok(false)
}

/// The state of every charly domain of the session daemon, by name (empty without one).
pub fn states(_ctx: &Ctx) -> BTreeMap<String, String> {
    BTreeMap::new()
}
