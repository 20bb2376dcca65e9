//! `vm.*`: boxes as virtual machines (REFERENCE.md §11 in charly's names, DESIGN.md "Runtimes").
//!
//! A VM is named as its box's container is, `charly-<box>[-<instance>]`, and everything of it
//! lives in its own directory under charly's data directory ([`state`]), never relative to the
//! working directory.
//!
//! | leaf | what it does | module |
//! |---|---|---|
//! | `build` | the box's built image → a bootable disk: its file system exported through the engine (`podman export`), made an ext4 file system with `mkfs.ext4 -d` (no loop device, no root mount), written as qcow2 (or raw) by `qemu-img`; the image's own kernel and initramfs kept beside it for direct kernel boot; fresh SSH host keys written into it and pinned in `known_hosts` | [`build`], `tree` |
//! | `create` | RAM and CPUs checked against the host, the box's `ai.opencharly.port` label as user-network forwards on 127.0.0.1, an SSH port, an SSH key | [`create`] |
//! | `start`, `stop`, `destroy`, `list` | qemu started daemonised with a QMP socket; ACPI `system_powerdown`, `--force` = `quit`, SIGTERM/SIGKILL when QMP does not answer; a qemu that died (`kill -9`) is seen as stopped; `list` shows running VMs, `--all` every one | [`power`], [`qemu`], [`qmp`] |
//! | `console` | the serial console: a relay to its socket on a terminal, the tail of its log as a tool | [`console`] |
//! | `ssh` | the real `ssh` through the forwarded port, host keys pinned | [`ssh`] |
//! | (backend) | libvirt's session daemon through `virsh`, the same disk, kernel, console and forwards | [`libvirt`] |
//!
//! Choices made here, and why:
//!
//! - **One disk per VM**: `build` writes the disk into the VM's own directory, so an instance
//!   (`-i 2`) is built on its own; a VM writes its root file system, and two VMs cannot share
//!   one. `destroy` keeps the disk (a new `create` boots it again); `destroy --disk` removes it.
//! - **Direct kernel boot**, not a bootloader: the image's `/boot/vmlinuz-*` (or
//!   `/usr/lib/modules/*/vmlinuz`) and its initramfs are copied beside the disk and given to
//!   qemu with `-kernel`/`-initrd`, the root file system being the whole disk (`root=/dev/vda`).
//!   Installing a bootloader needs a partition table and the bootloader's own tools run inside
//!   the image; direct boot needs neither, and the kernel stays the image's own.
//! - **An image without a kernel** is an error that gives the candy to add as the commands that
//!   make it ([`kernel_candy`]); the embedded sample project is left as it is (its box is
//!   Fedora's, and its files are what other families' tests list).
//! - **The SSH key is passed at boot**, as a systemd credential in SMBIOS type 11
//!   (`io.systemd.credential.binary:tmpfiles.extra=`): `systemd-tmpfiles` writes
//!   `/root/.ssh/authorized_keys` (replacing it) at every boot. The disk is qcow2, which no
//!   e2fsprogs tool writes into, and a key changed by a later `create` takes effect at the next
//!   start without touching the disk. It needs a systemd guest (`build` records the init; a key
//!   for another init is refused by `create`).
//! - **Host keys are pinned**: `build` replaces the image's SSH host keys with fresh ones
//!   (`ssh-keygen -A` into the file system: two VMs of one image never share a host key) and
//!   writes their public halves to `known_hosts`; `vm ssh` runs with `StrictHostKeyChecking=yes`
//!   and `HostKeyAlias=<vm>` against that file only, so a changed key is refused by ssh itself.
//! - **KVM is tried, not assumed**: `/dev/kvm` can exist and still not run a guest (a `kvm_pvm`
//!   host module needs PVM guest kernels: qemu dies with "failed to set MSR"). `auto` boots a
//!   512-byte probe guest under KVM once per host boot and uses TCG when it fails ([`qemu::probe`]);
//!   `vm list` and `doctor` say which and why.
//! - **QMP by hand** ([`qmp`]): three commands (`qmp_capabilities`, `system_powerdown`, `quit`)
//!   over a unix socket, newline-delimited JSON with serde_json. The QMP crates are a typed
//!   binding of qemu's whole schema (qapi-qmp: generated types for hundreds of commands) or an
//!   async client with retry and policy layers (qmp): each more code than the exchange itself,
//!   in a binary with a size budget.

pub mod build;
pub mod console;
pub mod create;
pub mod libvirt;
pub mod power;
pub mod qemu;
pub mod qmp;
mod report;
pub mod ssh;
pub mod state;
mod tool;
mod tree;

use std::path::PathBuf;

pub use self::report::{
    VmBuilt, VmConsole, VmCreated, VmDestroyed, VmList, VmRow, VmSsh, VmStarted, VmStopped,
};
use self::state::Dir;
use crate::context::Ctx;
use crate::engine::{EngineError, Target};
pub use crate::project::VmHost;

/// The candy that gives box `box_name` what a VM needs (a kernel with its initramfs, systemd as
/// init with udev and D-Bus, so the ACPI power button shuts it down, DHCP on its network, an SSH
/// server), as the commands that make it: for [`VmError::NoKernel`] and the other errors of an
/// image that cannot boot.
pub fn kernel_candy(box_name: &str) -> String {
    format!(
        "a candy `vm` made with `charly box new candy vm`, `charly candy add-deb vm linux-image-cloud-amd64 \
         systemd-sysv udev dbus dhcpcd openssh-server` (Debian; Fedora: `charly candy add-rpm vm kernel-core \
         systemd NetworkManager openssh-server`) and `charly box add-candy {box_name} vm`"
    )
}

/// The fix for [`VmError::NoKernel`]: [`kernel_candy`] where the image has a package manager
/// to install one with (`apt-get` or `dnf` in `tree`, the exported image), else a distribution
/// base first (a busybox or scratch base has neither).
pub fn no_kernel_fix(box_name: &str, tree: &std::path::Path) -> String {
    let then = format!("then `charly box build {box_name}` and `charly vm build {box_name}`");
    let has = |path: &str| tree.join(path).exists();
    if ["usr/bin/apt-get", "usr/bin/dnf", "usr/bin/dnf5", "usr/bin/yum"].iter().any(|p| has(p)) {
        return format!("add {}, {then}", kernel_candy(box_name));
    }
    format!(
        "its base has no package manager (apt-get or dnf) to install one with, so base the box on a \
         distribution first (`charly box set {box_name}.box.base docker.io/library/debian:bookworm`), \
         add {}, {then}",
        kernel_candy(box_name)
    )
}

/// Why a `vm.*` leaf could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VmError {
    /// podman refused (an image never built, a bad name).
    #[error(transparent)]
    Engine(Box<EngineError>),
    /// The project could not be read (an unknown box).
    #[error(transparent)]
    Project(#[from] crate::project::ProjectError),
    /// An argument is not usable; the message names it and what is allowed.
    #[error("{0}")]
    Usage(String),
    /// The box's image has no kernel to boot.
    #[error(
        "box {box_name}: image {image} has no kernel (no /boot/vmlinuz-* or /usr/lib/modules/*/vmlinuz), so it \
         cannot boot as a VM; {fix}"
    )]
    NoKernel {
        /// The box.
        box_name: String,
        /// Its image.
        image: String,
        /// How to give it one ([`no_kernel_fix`]).
        fix: String,
    },
    /// The VM has no disk yet.
    #[error("VM {name} has no disk; build it with `charly vm build {args}`")]
    NotBuilt {
        /// The VM.
        name: String,
        /// The box (and `-i instance`) as arguments.
        args: String,
    },
    /// The VM was not created.
    #[error("VM {name} does not exist; create it with `charly vm create {args}`")]
    NotCreated {
        /// The VM.
        name: String,
        /// The box (and `-i instance`) as arguments.
        args: String,
    },
    /// `create` of a VM that exists.
    #[error(
        "VM {name} exists already (created with {ram_mib} MiB, {cpus} CPU(s), SSH on 127.0.0.1:{ssh_port}); start it \
         with `charly vm start {args}`, or remove it first with `charly vm destroy {args}`"
    )]
    Exists {
        /// The VM.
        name: String,
        /// Its memory.
        ram_mib: u64,
        /// Its CPUs.
        cpus: u32,
        /// Its SSH port.
        ssh_port: u16,
        /// The box (and `-i instance`) as arguments.
        args: String,
    },
    /// The VM runs (and must not, for what was asked).
    #[error("VM {name} is running ({what}); {fix}")]
    Running {
        /// The VM.
        name: String,
        /// What runs it: `qemu pid 12`, `libvirt domain`.
        what: String,
        /// What to do.
        fix: String,
    },
    /// The VM does not run.
    #[error("VM {name} is not running{why}; start it with `charly vm start {args}`")]
    NotRunning {
        /// The VM.
        name: String,
        /// Why, when it is known (`: its qemu (pid 12) died without a stop`).
        why: String,
        /// The box (and `-i instance`) as arguments.
        args: String,
    },
    /// A host port is taken.
    #[error("{what}: port {port} on 127.0.0.1 is in use by {owner}; {fix}")]
    PortInUse {
        /// What wants it (`--ssh-port 2222`, `port 8080 of box web`).
        what: String,
        /// The port.
        port: u16,
        /// Who holds it.
        owner: String,
        /// How to free it, or another port to use.
        fix: String,
    },
    /// A program charly runs is not installed.
    #[error("cannot run {program}: {why}; {hint}")]
    Missing {
        /// The program.
        program: String,
        /// The OS error.
        why: String,
        /// What installs it.
        hint: &'static str,
    },
    /// A program ran and failed.
    #[error("{what} failed: {why}")]
    Tool {
        /// What was done (`mkfs.ext4 -d ... (making the root file system)`).
        what: String,
        /// Its exit status and last stderr lines.
        why: String,
    },
    /// A state file of the VM cannot be read.
    #[error("cannot read {}: {why}; `charly vm destroy` the VM (with --disk to start afresh)", path.display())]
    State {
        /// The file.
        path: PathBuf,
        /// Why.
        why: String,
    },
    /// The command was cancelled; what it had made is removed.
    #[error("cancelled; nothing was left behind")]
    Cancelled,
    /// A file operation failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl From<EngineError> for VmError {
    fn from(e: EngineError) -> Self {
        VmError::Engine(Box::new(e))
    }
}

/// What `qemu-system-x86` is for, in [`VmError::Missing`].
pub const QEMU_HINT: &str = "install qemu-system-x86 (Debian bookworm: from bookworm-backports, as \
     the project's scripts/runtimes.sh does) and qemu-utils";

/// A VM: its name and directory.
#[derive(Clone, Debug)]
pub struct Vm {
    /// The box and instance, with the VM's name as `container`.
    pub target: Target,
    /// Its directory.
    pub dir: Dir,
}

impl Vm {
    /// The VM of `box_name` (instance `instance`), in `root` ([`state::root`] unless a test says).
    ///
    /// # Errors
    ///
    /// [`VmError::Engine`] for a name podman (and so charly) refuses.
    pub fn new(root: &std::path::Path, box_name: &str, instance: Option<&str>) -> Result<Vm, VmError> {
        let target = Target::new(box_name, instance)?;
        let dir = Dir(root.join(&target.container));
        Ok(Vm { target, dir })
    }

    /// The VM's name, `charly-<box>[-<instance>]`.
    pub fn name(&self) -> &str {
        &self.target.container
    }

    /// The arguments that name this VM again: `web` or `web -i 2`.
    pub fn args(&self) -> String {
        format!("{}{}", self.target.box_name, self.target.instance_flag())
    }
}

/// Checks that VM `charly-<box>[-<instance>]` is `box_name`'s (instance `instance`), before a
/// leaf acts on it. Names collide as container names do (box `a-b` and box `a`, instance `b`,
/// are both `charly-a-b`): as the deploy engine refuses a container whose labels name another
/// box ([`crate::engine::claim`]), a VM whose `vm.json` or `build.json` records another box is
/// refused, naming its owner. A VM of nobody yet (no record) must be a box of the project's
/// `charly.yml`; one recorded as this box's stays reachable when the box is gone from it (to
/// destroy it).
///
/// # Errors
///
/// [`VmError::Usage`] naming the owner; [`VmError::Project`] for a box not in the project.
pub fn claim(
    project: &crate::project::Project,
    root: &std::path::Path,
    leaf: &str,
    box_name: &str,
    instance: Option<&str>,
) -> Result<(), VmError> {
    let vm = Vm::new(root, box_name, instance)?;
    let recorded = match vm.dir.spec() {
        Ok(Some(spec)) => Some((spec.r#box, "vm.json")),
        _ => vm.dir.build().ok().flatten().map(|b| (b.r#box, "build.json")),
    };
    match recorded {
        Some((owner, _)) if owner == box_name => Ok(()),
        Some((owner, file)) => {
            let stem = format!("charly-{}", owner.replace('/', "-"));
            let theirs = match vm.name().strip_prefix(&stem).and_then(|i| i.strip_prefix('-')) {
                Some(i) => format!("box {owner}'s instance {i}"),
                None => format!("box {owner}'s"),
            };
            let args = match vm.name().strip_prefix(&stem).and_then(|i| i.strip_prefix('-')) {
                Some(i) => format!("{owner} -i {i}"),
                None => owner.clone(),
            };
            let asked = match instance {
                Some(i) => format!("box {box_name}'s instance {i}"),
                None => format!("box {box_name}'s"),
            };
            Err(VmError::Usage(format!(
                "VM {} is {theirs} (its {file}), not {asked}: the two names make the same VM name; act on it with \
                 `charly vm {leaf} {args}`, and give {box_name} another instance name (`-i`) so its VM is apart",
                vm.name()
            )))
        }
        None => {
            project.resolve_box(box_name)?;
            Ok(())
        }
    }
}

/// What runs VMs here (`vm list`, `doctor`): qemu's version, what `--accel auto` picks and why
/// (the KVM probe, [`qemu::probe`], kept per host boot in `root`), whether libvirt's session
/// daemon is there.
pub fn host(ctx: &Ctx, root: &std::path::Path) -> VmHost {
    let version = std::process::Command::new(qemu::QEMU)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_owned));
    let libvirt = libvirt::available();
    match (&version, block(ctx, qemu::probe(root))) {
        (Some(_), Ok(probe)) => VmHost {
            qemu: version,
            accel: Some(if probe.kvm { "kvm" } else { "tcg" }.to_owned()),
            why: probe.why,
            libvirt,
        },
        (_, Err(e)) => VmHost { qemu: version, accel: None, why: e.to_string(), libvirt },
        (None, Ok(_)) => VmHost {
            qemu: None,
            accel: None,
            why: format!("{} does not run; {QEMU_HINT}", qemu::QEMU),
            libvirt,
        },
    }
}

/// Drives `future` on a private current-thread runtime, stopping it (and every child process
/// it spawned with `kill_on_drop`) when the run is cancelled.
///
/// # Errors
///
/// The future's error, or [`VmError::Cancelled`].
pub(crate) fn block<T>(
    ctx: &Ctx,
    future: impl std::future::Future<Output = Result<T, VmError>>,
) -> Result<T, VmError> {
    let token = ctx.cancel_token();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        tokio::select! {
            result = future => result,
            () = token.cancelled() => Err(VmError::Cancelled),
        }
    })
}

/// The settings (config.yml, `.env`, the environment) for the `vm.*` defaults.
///
/// # Errors
///
/// [`VmError::Usage`] for an unreadable config.yml (its message names the file and the fix).
pub(crate) fn settings(ctx: &Ctx) -> Result<crate::config::Settings, VmError> {
    crate::config::Settings::load(ctx.root()).map_err(|e| VmError::Usage(e.to_string()))
}

/// Holds the VM's lock (`<root>/.<name>.lock`, gone when released): one `build`, `create`,
/// `start`, `stop` or `destroy` of a VM at a time, across processes; a wait for it is said
/// through the progress of `ctx`.
///
/// # Errors
///
/// [`VmError::Io`] when the lock file cannot be made.
pub(crate) fn lock(ctx: &Ctx, root: &std::path::Path, vm: &Vm) -> Result<crate::hostfile::FileLock, VmError> {
    let waiting = || {
        ctx.progress(
            0.0,
            None,
            format!(
                "waiting for another charly command on VM {} (a build, create, start, stop or destroy of it) to end",
                vm.name()
            ),
        );
    };
    Ok(crate::hostfile::FileLock::acquire_noting(&root.join(vm.name()), waiting)?)
}

/// A size in bytes: a number with an optional binary unit, `K`, `M`, `G`, `T` (also `KiB`,
/// `MB`, ...; 1G = 1024 MiB, as qemu reads it) or `B` for bytes; a bare number is MiB, as
/// qemu's `-m` reads it. `None` for anything else.
pub fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: f64 = number.parse().ok().filter(|n: &f64| *n > 0.0 && n.is_finite())?;
    let shift = match unit.trim().to_ascii_lowercase().trim_end_matches("ib").trim_end_matches('b') {
        "" if unit.trim().eq_ignore_ascii_case("b") => 0,
        "" => 20,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    let bytes = number * (1u64 << shift) as f64;
    (bytes < u64::MAX as f64).then_some(bytes as u64)
}

/// The last `n` non-empty lines of `text`, joined with `; ` (a failed tool's stderr, for an error).
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("; ")
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_are_binary_and_a_bare_number_is_mib() {
        assert_eq!(parse_size("4G"), Some(4 << 30));
        assert_eq!(parse_size("10 GiB"), Some(10 << 30));
        assert_eq!(parse_size("512m"), Some(512 << 20));
        assert_eq!(parse_size("2048"), Some(2048 << 20));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size("4096b"), Some(4096));
        assert_eq!(parse_size("2MB"), Some(2 << 20));
        for bad in ["", "G", "0", "-1G", "4X", "big", "1e3G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }
}
