//! The libvirt backend: libvirt's session daemon (`qemu:///session`, the user's own libvirtd)
//! through the real `virsh`, argv only.
//!
//! The domain (`domain.xml` in the VM's directory, defined at `create`, defined again at each
//! `start` with the acceleration chosen then) boots what the qemu backend boots: the disk as
//! virtio `vda`, the image's kernel and initramfs directly, ACPI on (libvirt 9.0 otherwise passes
//! `-no-acpi`, which QEMU 10 refuses), the serial console on the VM's `console.sock` and logged
//! to its `console.log`, the SSH key as the same systemd credential in SMBIOS OEM strings. The
//! network is qemu's user network with the same `hostfwd`s on 127.0.0.1, given as
//! `<qemu:commandline>` arguments: libvirt 9.0 forwards ports on a user network only through
//! its passt backend; libvirt marks such a domain "custom-argv" tainted, and says so in its log.
//!
//! As root, `qemu:///session` is the system daemon (`/var/run/libvirt/libvirt-sock`), not a
//! session: this backend is for unprivileged users, whose session socket is
//! `$XDG_RUNTIME_DIR/libvirt/libvirt-sock`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::state::{Build, Run, Spec, now};
use super::{Vm, VmError, VmStarted, VmStopped, block, qemu, tool};
use crate::cli::VmBackendArg;
use crate::context::Ctx;

/// The connection URI.
pub const URI: &str = "qemu:///session";

/// What installs libvirt, for [`VmError::Missing`].
const HINT: &str = "install libvirt-daemon, libvirt-daemon-driver-qemu and libvirt-clients, and run `libvirtd` as this \
     user (its session daemon)";

fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0)
}

/// libvirt's session socket: `$XDG_RUNTIME_DIR/libvirt/libvirt-sock`, else
/// `/run/user/<uid>/libvirt/libvirt-sock`.
pub fn socket() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join("libvirt/libvirt-sock"),
        None => PathBuf::from(format!("/run/user/{}/libvirt/libvirt-sock", uid())),
    }
}

/// Whether a session daemon is there: not root, and its socket exists.
pub fn available() -> bool {
    uid() != 0 && socket().exists()
}

/// The backend for `--backend` (`setting`: vm.backend, for `auto`): `auto` is libvirt when
/// its session daemon is there, else qemu.
///
/// # Errors
///
/// `libvirt` asked for without a session daemon (or as root).
pub fn choose(wanted: VmBackendArg, setting: &str) -> Result<&'static str, VmError> {
    let libvirt = match (wanted, setting.trim()) {
        (VmBackendArg::Qemu, _) | (VmBackendArg::Auto, "qemu") => return Ok("qemu"),
        (VmBackendArg::Libvirt, _) | (VmBackendArg::Auto, "libvirt") => true,
        (VmBackendArg::Auto, "auto" | "") => false,
        (VmBackendArg::Auto, other) => {
            return Err(VmError::Usage(format!(
                "setting vm.backend is {other:?} (`charly settings get vm.backend` says where: config.yml, .env or \
                 CHARLY_VM_BACKEND): it is auto, libvirt or qemu; or give --backend"
            )));
        }
    };
    match (libvirt, available()) {
        (_, true) => Ok("libvirt"),
        (false, false) => Ok("qemu"),
        (true, false) if uid() == 0 => Err(VmError::Usage(
            "--backend libvirt: libvirt's session mode is a user's own daemon, and root's qemu:///session is the \
             system daemon; run charly as an unprivileged user with its `libvirtd`, or use --backend qemu"
                .into(),
        )),
        (true, false) => Err(VmError::Usage(format!(
            "--backend libvirt: libvirt's session daemon is not running (no {}); start `libvirtd` as this user, or \
             use --backend qemu",
            socket().display()
        ))),
    }
}

/// `virsh -c qemu:///session args...`, which must succeed: its stdout.
async fn virsh(args: &[&str], what: &str) -> Result<String, VmError> {
    let mut all = vec!["-c", URI];
    all.extend(args);
    let out = tool::checked(tool::command("virsh", &all), "virsh", HINT, what).await?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `text` for XML (attribute values and text).
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('\'', "&apos;")
        .replace('"', "&quot;")
}

/// A UUID of the VM's name (sha256), so that defining the domain again replaces it.
fn uuid(name: &str) -> String {
    use sha2::Digest as _;
    let h = sha2::Sha256::digest(format!("charly-vm:{name}").as_bytes());
    let hex: String = h.iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The domain XML of `vm`.
pub fn domain(vm: &Vm, build: &Build, spec: &Spec, accel: qemu::Accel) -> String {
    let file = |name: &str| esc(&vm.dir.file(name).to_string_lossy());
    let (kind, cpu) = match accel {
        qemu::Accel::Kvm => ("kvm", "host-passthrough"),
        qemu::Accel::Tcg => ("qemu", "maximum"),
    };
    let mut hostfwd = format!("user,id=charly-net,hostfwd=tcp:127.0.0.1:{}-:22", spec.ssh_port);
    for f in &spec.ports {
        hostfwd.push_str(&format!(",hostfwd=tcp:127.0.0.1:{}-:{}", f.host, f.guest));
    }
    let (sysinfo, smbios) = match &spec.ssh_key.public {
        Some(public) => (
            format!(
                "  <sysinfo type='smbios'><oemStrings><entry>{}</entry></oemStrings></sysinfo>\n",
                esc(&qemu::key_credential(public))
            ),
            "    <smbios mode='sysinfo'/>\n",
        ),
        None => (String::new(), ""),
    };
    format!(
        "<domain type='{kind}' xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n\
         \x20 <name>{name}</name>\n  <uuid>{uuid}</uuid>\n\
         \x20 <memory unit='MiB'>{ram}</memory>\n  <vcpu>{cpus}</vcpu>\n{sysinfo}\
         \x20 <os>\n    <type arch='x86_64' machine='q35'>hvm</type>\n\
         \x20   <kernel>{kernel}</kernel>\n    <initrd>{initrd}</initrd>\n    <cmdline>{cmdline}</cmdline>\n{smbios}\
         \x20 </os>\n  <features><acpi/></features>\n  <cpu mode='{cpu}'/>\n\
         \x20 <on_poweroff>destroy</on_poweroff>\n  <on_reboot>restart</on_reboot>\n\
         \x20 <devices>\n\
         \x20   <disk type='file' device='disk'><driver name='qemu' type='{format}' discard='unmap'/>\
         <source file='{disk}'/><target dev='vda' bus='virtio'/></disk>\n\
         \x20   <serial type='unix'><source mode='bind' path='{socket}'/><log file='{log}' append='on'/>\
         <target port='0'/></serial>\n\
         \x20   <rng model='virtio'><backend model='random'>/dev/urandom</backend></rng>\n\
         \x20 </devices>\n\
         \x20 <qemu:commandline>\n\
         \x20   <qemu:arg value='-netdev'/><qemu:arg value='{hostfwd}'/>\n\
         \x20   <qemu:arg value='-device'/><qemu:arg value='virtio-net-pci,netdev=charly-net,bus=pcie.0,addr=0x10'/>\n\
         \x20 </qemu:commandline>\n</domain>\n",
        name = esc(vm.name()),
        uuid = uuid(vm.name()),
        ram = spec.ram_mib,
        cpus = spec.cpus,
        kernel = file("vmlinuz"),
        initrd = file("initrd.img"),
        cmdline = esc(&build.cmdline),
        format = esc(&build.format),
        disk = file(&build.disk),
        socket = file("console.sock"),
        log = file("console.log"),
    )
}

/// Defines (or defines again) a libvirt VM's domain with the acceleration `auto` picks now;
/// nothing for the qemu backend. Returns the acceleration and why.
///
/// # Errors
///
/// `--accel kvm` where KVM does not work, virsh's failure.
pub fn define(ctx: &Ctx, vm: &Vm, build: &Build, spec: &Spec) -> Result<(), VmError> {
    if spec.backend == "libvirt" {
        define_now(ctx, vm, build, spec)?;
    }
    Ok(())
}

fn define_now(ctx: &Ctx, vm: &Vm, build: &Build, spec: &Spec) -> Result<(qemu::Accel, String), VmError> {
    let root = vm.dir.0.parent().unwrap_or(std::path::Path::new("."));
    let (accel, why) = block(ctx, qemu::choose(root, &spec.accel))?;
    let xml = vm.dir.file("domain.xml");
    crate::hostfile::write_atomic(&xml, domain(vm, build, spec, accel).as_bytes(), 0o600)?;
    let path = xml.to_string_lossy().into_owned();
    block(ctx, virsh(&["define", &path], &format!("virsh define {path}")))?;
    Ok((accel, why))
}

/// libvirt's state of the domain `name` (`running`, `shut off`, ...), or `None` when libvirt
/// does not know it.
fn state(ctx: &Ctx, name: &str) -> Option<String> {
    states(ctx).get(name).cloned()
}

/// `vm start` on libvirt: ports checked free, the domain defined again and started, then (with
/// `wait`) the guest's SSH banner awaited.
///
/// # Errors
///
/// Running already, a port taken, virsh's failure, SSH not answering in time.
pub fn start(ctx: &Ctx, vm: &Vm, build: &Build, spec: &Spec, wait: u32) -> Result<VmStarted, VmError> {
    if state(ctx, vm.name()).as_deref() == Some("running") {
        let fix = format!(
            "stop it first (`charly vm stop {}`), or reach it with `charly vm ssh {}`",
            vm.args(),
            vm.args()
        );
        return Err(VmError::Running { name: vm.name().to_owned(), what: "libvirt domain".into(), fix });
    }
    super::power::preflight(vm, &format!("SSH port of VM {}", vm.name()), spec.ssh_port)?;
    for f in &spec.ports {
        super::power::preflight(
            vm,
            &format!("port {} of VM {} (guest port {})", f.host, vm.name(), f.guest),
            f.host,
        )?;
    }
    let (accel, accel_why) = define_now(ctx, vm, build, spec)?;
    super::power::rotate(&vm.dir.file("console.log"));
    let started = Instant::now();
    block(ctx, virsh(&["start", vm.name()], &format!("virsh start {}", vm.name())))?;
    vm.dir.write("run.json", &Run { pid: None, accel: accel.name().to_owned(), started_at: now() })?;
    let ssh_ready_secs = if wait > 0 {
        let deadline = started + Duration::from_secs(wait.into());
        ctx.progress(
            0.0,
            Some(wait.into()),
            format!("booting; waiting for SSH on 127.0.0.1:{}", spec.ssh_port),
        );
        let up = block(ctx, async {
            while Instant::now() < deadline {
                if super::power::banner(spec.ssh_port).await {
                    return Ok(true);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Ok(false)
        })
        .map_err(|e| match e {
            VmError::Cancelled => super::power::running_anyway(vm),
            other => other,
        })?;
        if !up {
            return Err(VmError::Tool {
                what: format!("waiting for SSH of VM {} on 127.0.0.1:{}", vm.name(), spec.ssh_port),
                why: format!(
                    "no SSH banner within {wait} s; `charly vm console {}` shows its boot",
                    vm.args()
                ),
            });
        }
        Some(started.elapsed().as_secs_f64())
    } else {
        None
    };
    Ok(VmStarted {
        name: vm.name().to_owned(),
        backend: "libvirt".into(),
        pid: None,
        accel: accel.name().to_owned(),
        accel_why,
        ssh_port: spec.ssh_port,
        ports: spec.ports.clone(),
        console_log: vm.dir.file("console.log"),
        ssh_ready_secs,
    })
}

/// `vm stop` on libvirt: `virsh shutdown --mode acpi` and a wait of `timeout` seconds for the
/// domain to be shut off; with `force`, `virsh destroy`.
///
/// # Errors
///
/// Not running, virsh's failure, a guest that did not power off in time.
pub fn stop(ctx: &Ctx, vm: &Vm, force: bool, timeout: u32) -> Result<VmStopped, VmError> {
    let started = Instant::now();
    match state(ctx, vm.name()) {
        Some(s) if s == "running" => {}
        other => {
            let why = format!(" (libvirt: {})", other.unwrap_or_else(|| "no such domain".into()));
            vm.dir.clear_run();
            return Err(VmError::NotRunning { name: vm.name().to_owned(), why, args: vm.args() });
        }
    }
    let name = vm.name();
    if force {
        block(ctx, virsh(&["destroy", name], &format!("virsh destroy {name}")))?;
    } else {
        block(ctx, virsh(&["shutdown", name, "--mode", "acpi"], &format!("virsh shutdown {name}")))?;
        let deadline = started + Duration::from_secs(timeout.into());
        while state(ctx, name).as_deref() == Some("running") {
            if Instant::now() > deadline {
                return Err(VmError::Tool {
                    what: format!("stopping VM {name}"),
                    why: format!(
                        "the guest did not power off within {timeout} s of the ACPI power button; it still runs: \
                         `charly vm stop {} --force`",
                        vm.args()
                    ),
                });
            }
            ctx.check_cancelled().map_err(|_| VmError::Tool {
                what: format!("stopping VM {name}"),
                why: "cancelled while the guest shut down: it got the ACPI power button and may still be going down"
                    .into(),
            })?;
            std::thread::sleep(Duration::from_millis(250));
        }
    }
    vm.dir.clear_run();
    let how = if force { "destroy" } else { "acpi" };
    Ok(VmStopped { name: name.to_owned(), how: how.into(), secs: started.elapsed().as_secs_f64() })
}

/// Ends a libvirt VM at once (`virsh destroy`) and undefines its domain: whether it was running.
///
/// # Errors
///
/// virsh's failure.
pub fn undefine(ctx: &Ctx, vm: &Vm) -> Result<bool, VmError> {
    let name = vm.name();
    let Some(state) = state(ctx, name) else { return Ok(false) };
    let running = state == "running";
    if running {
        block(ctx, virsh(&["destroy", name], &format!("virsh destroy {name}")))?;
    }
    block(ctx, virsh(&["undefine", name, "--nvram"], &format!("virsh undefine {name}")))?;
    Ok(running)
}

/// The state of every charly domain of the session daemon (`virsh list --all`), by name; empty
/// without a daemon.
pub fn states(ctx: &Ctx) -> BTreeMap<String, String> {
    if !available() {
        return BTreeMap::new();
    }
    let Ok(text) = block(ctx, virsh(&["list", "--all"], "virsh list --all")) else { return BTreeMap::new() };
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace();
            let (_id, name) = (fields.next()?, fields.next()?);
            let state = fields.collect::<Vec<_>>().join(" ");
            name.starts_with("charly-").then(|| (name.to_owned(), state))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::state::{Forward, SshKey};

    #[test]
    fn the_domain_boots_what_the_qemu_backend_boots() {
        let dir = tempfile::tempdir().unwrap();
        let vm = Vm::new(dir.path(), "web", Some("2")).unwrap();
        let build = Build {
            r#box: "web".into(),
            image: "localhost/web:latest".into(),
            image_id: "0123456789ab".into(),
            disk: "disk.qcow2".into(),
            format: "qcow2".into(),
            size_bytes: 1 << 30,
            kernel_version: "6.1.0".into(),
            cmdline: crate::vm::build::CMDLINE.into(),
            init: "systemd".into(),
            sshd: true,
            ports: vec![80],
            built_at: 0,
        };
        let spec = Spec {
            r#box: "web".into(),
            instance: Some("2".into()),
            backend: "libvirt".into(),
            ram_mib: 512,
            cpus: 2,
            ssh_port: 2222,
            ports: vec![Forward { host: 8080, guest: 80 }],
            ssh_key: SshKey {
                mode: "generate".into(),
                public: Some("ssh-ed25519 AAAA x".into()),
                private: None,
            },
            accel: "auto".into(),
            created_at: 0,
        };
        let xml = domain(&vm, &build, &spec, qemu::Accel::Tcg);
        assert!(xml.starts_with("<domain type='qemu' "), "{xml}");
        for part in [
            "<name>charly-web-2</name>",
            "<memory unit='MiB'>512</memory>",
            "<features><acpi/></features>",
            "<cpu mode='maximum'/>",
            "<target dev='vda' bus='virtio'/>",
            "hostfwd=tcp:127.0.0.1:2222-:22,hostfwd=tcp:127.0.0.1:8080-:80",
            "<entry>io.systemd.credential.binary:tmpfiles.extra=",
            "<smbios mode='sysinfo'/>",
        ] {
            assert!(xml.contains(part), "{part}\n{xml}");
        }
        assert_eq!(uuid("charly-web-2"), uuid("charly-web-2"));
        assert_eq!(uuid("a").len(), 36);
        assert_eq!(esc("a'<b>&\""), "a&apos;&lt;b&gt;&amp;&quot;");
    }
}
