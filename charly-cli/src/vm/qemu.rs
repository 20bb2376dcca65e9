//! qemu itself: whether KVM works here ([`probe`]), the command line a VM runs with
//! ([`argv`]), and whether a VM's qemu is alive ([`alive`]).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::state::{Build, Dir, Spec};
use super::{QEMU_HINT, VmError, tool};

/// The qemu binary.
pub const QEMU: &str = "qemu-system-x86_64";

/// The exit status of the probe guest: it writes 0x31 to qemu's `isa-debug-exit` port, and
/// qemu exits with `(value << 1) | 1`.
const PROBE_STATUS: i32 = (0x31 << 1) | 1;

/// A 512-byte boot sector: `mov al, 0x31; out 0xf4, al; hlt; jmp $-1`, then the 0x55AA mark.
fn probe_sector() -> Vec<u8> {
    let mut sector = vec![0xB0, 0x31, 0xE6, 0xF4, 0xF4, 0xEB, 0xFD];
    sector.resize(510, 0);
    sector.extend([0x55, 0xAA]);
    sector
}

/// What the KVM probe found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// Whether a guest runs under KVM here.
    pub kvm: bool,
    /// Why: `a probe guest ran under KVM`, or what failed.
    pub why: String,
    /// The host boot it was made in (`/proc/sys/kernel/random/boot_id`).
    boot: String,
    /// The qemu binary's size and mtime when it was made.
    qemu: String,
}

fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default().trim().to_owned()
}

fn qemu_stamp() -> String {
    crate::hostfile::which(QEMU)
        .and_then(|p| std::fs::metadata(p).ok())
        .map(|m| {
            use std::os::unix::fs::MetadataExt as _;
            format!("{} {}", m.size(), m.mtime())
        })
        .unwrap_or_default()
}

/// Whether KVM runs a guest here, asked once per host boot (and qemu binary): the answer is
/// kept in `<root>/.kvm-probe.json`. The probe: `/dev/kvm` must open read-write, then qemu
/// boots a 512-byte boot sector with `-accel kvm -cpu host` (the CPU charly gives a KVM guest) and
/// must exit with the sector's status within 10 s. On a `kvm_pvm` host qemu dies at once
/// ("failed to set MSR 0x10a"): KVM is there but runs no stock guest.
///
/// # Errors
///
/// [`VmError::Missing`] when qemu is not installed.
pub async fn probe(root: &Path) -> Result<Probe, VmError> {
    let cache = root.join(".kvm-probe.json");
    let (boot, qemu) = (boot_id(), qemu_stamp());
    if qemu.is_empty() {
        return Err(VmError::Missing {
            program: QEMU.into(),
            why: "not found on PATH".into(),
            hint: QEMU_HINT,
        });
    }
    if let Some(kept) = std::fs::read(&cache).ok().and_then(|b| serde_json::from_slice::<Probe>(&b).ok())
        && kept.boot == boot
        && kept.qemu == qemu
    {
        return Ok(kept);
    }
    let (kvm, why) = run_probe(root).await?;
    let found = Probe { kvm, why, boot, qemu };
    // Best effort: without the file the next command probes again.
    let _ = crate::hostfile::write_atomic(&cache, &serde_json::to_vec(&found).unwrap_or_default(), 0o600);
    Ok(found)
}

async fn run_probe(root: &Path) -> Result<(bool, String), VmError> {
    if let Err(e) = std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm") {
        return Ok((false, format!("/dev/kvm cannot be opened ({e})")));
    }
    crate::hostfile::create_private_dir(root)?;
    let image = tempfile::Builder::new().prefix(".kvm-probe-").suffix(".img").tempfile_in(root)?;
    std::fs::write(image.path(), probe_sector())?;
    let mut drive = OsString::from("format=raw,if=ide,file=");
    drive.push(escape(image.path()));
    let args: Vec<OsString> = [
        "-accel",
        "kvm",
        "-cpu",
        "host",
        "-machine",
        "pc",
        "-m",
        "16",
        "-display",
        "none",
        "-nodefaults",
        "-no-user-config",
        "-no-reboot",
        "-device",
        "isa-debug-exit,iobase=0xf4,iosize=0x04",
        "-drive",
    ]
    .iter()
    .map(OsString::from)
    .chain([drive])
    .collect();
    let out =
        tool::output_within(tool::command(QEMU, &args), QEMU, QEMU_HINT, Duration::from_secs(10)).await?;
    let pvm = Path::new("/sys/module/kvm_pvm").exists();
    let module =
        if pvm { " (the host's KVM module is kvm_pvm, which runs PVM guest kernels only)" } else { "" };
    Ok(match out {
        Some(out) if out.status.code() == Some(PROBE_STATUS) => (true, "a probe guest ran under KVM".into()),
        Some(out) => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let said = stderr
                .lines()
                .find(|l| l.contains("error"))
                .map_or_else(|| super::tail(&stderr, 1), str::to_owned);
            (false, format!("a probe guest failed under KVM: {said}{module}"))
        }
        None => (false, format!("a probe guest did not finish under KVM within 10 s{module}")),
    })
}

/// The acceleration a VM runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    /// `-accel kvm -cpu host`.
    Kvm,
    /// `-accel tcg -cpu max`.
    Tcg,
}

impl Accel {
    /// `kvm` or `tcg`.
    pub fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// The acceleration for `wanted` (`auto`, `kvm`, `tcg`), and why.
///
/// # Errors
///
/// `kvm` when the probe says KVM does not work (its reason, and `--accel tcg`).
pub async fn choose(root: &Path, wanted: &str) -> Result<(Accel, String), VmError> {
    match wanted {
        "tcg" => Ok((Accel::Tcg, "asked for (--accel tcg)".into())),
        _ => {
            let probe = probe(root).await?;
            match (probe.kvm, wanted) {
                (true, _) => Ok((Accel::Kvm, probe.why)),
                (false, "kvm") => Err(VmError::Usage(format!(
                    "--accel kvm: KVM does not work on this host: {}; `charly vm destroy` the VM and `charly vm create` it with --accel tcg (or auto)",
                    probe.why
                ))),
                (false, _) => Ok((Accel::Tcg, format!("KVM does not work here: {}", probe.why))),
            }
        }
    }
}

/// `path` for a qemu option value: commas doubled (qemu's escape for `,` in `key=value` lists).
pub fn escape(path: &Path) -> OsString {
    OsString::from(path.to_string_lossy().replace(',', ",,"))
}

fn opt(prefix: &str, path: &Path, suffix: &str) -> OsString {
    let mut s = OsString::from(prefix);
    s.push(escape(path));
    s.push(suffix);
    s
}

/// The systemd credential that writes root's `authorized_keys` at boot (`tmpfiles.extra`,
/// base64 twice: the credential value, and the file content of the `f+~` line).
pub fn key_credential(public: &str) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let content = b64.encode(format!("{}\n", public.trim()));
    let lines =
        format!("d /root/.ssh 0700 root root -\nf+~ /root/.ssh/authorized_keys 0600 root root - {content}\n");
    format!("io.systemd.credential.binary:tmpfiles.extra={}", b64.encode(lines))
}

/// qemu's command line for the VM in `dir` (daemonised, its pid in `qemu.pid`): direct kernel
/// boot of the disk as `/dev/vda`, user networking with the SSH port and the forwards on
/// 127.0.0.1 only, the serial console on `console.sock` and logged to `console.log`, QMP on
/// `qmp.sock`, the SSH key as a systemd credential, a virtio RNG (sshd waits for entropy).
pub fn argv(dir: &Dir, build: &Build, spec: &Spec, accel: Accel) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |items: &[&str]| a.extend(items.iter().map(OsString::from));
    let name = dir.0.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    push(&["-name", &format!("{name},process={name}"), "-nodefaults", "-no-user-config", "-machine", "q35"]);
    match accel {
        Accel::Kvm => push(&["-accel", "kvm", "-cpu", "host"]),
        Accel::Tcg => push(&["-accel", "tcg", "-cpu", "max"]),
    }
    let (ram, cpus) = (spec.ram_mib.to_string(), spec.cpus.to_string());
    push(&["-m", &ram, "-smp", &cpus, "-display", "none", "-vga", "none"]);
    let mut nic = format!("user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:{}-:22", spec.ssh_port);
    for f in &spec.ports {
        nic.push_str(&format!(",hostfwd=tcp:127.0.0.1:{}-:{}", f.host, f.guest));
    }
    push(&["-nic", &nic, "-device", "virtio-rng-pci", "-append", &build.cmdline]);
    let mut drive = OsString::from(format!("if=virtio,discard=unmap,format={},file=", build.format));
    drive.push(escape(&dir.file(&build.disk)));
    let mut console = opt("socket,id=console,server=on,wait=off,path=", &dir.file("console.sock"), "");
    console.push(opt(",logappend=on,logfile=", &dir.file("console.log"), ""));
    a.extend([
        "-kernel".into(),
        dir.file("vmlinuz").into(),
        "-initrd".into(),
        dir.file("initrd.img").into(),
        "-drive".into(),
        drive,
        "-chardev".into(),
        console,
        "-serial".into(),
        "chardev:console".into(),
        "-qmp".into(),
        opt("unix:", &dir.file("qmp.sock"), ",server=on,wait=off"),
        "-pidfile".into(),
        dir.file("qemu.pid").into(),
        "-daemonize".into(),
    ]);
    if let Some(public) = &spec.ssh_key.public {
        a.extend(["-smbios".into(), format!("type=11,value={}", key_credential(public)).into()]);
    }
    a
}

/// Whether `pid` is the qemu of the VM in `dir`: a live process (not a zombie) whose command
/// line names the VM's QMP socket (a pid reused by another process is not it).
pub fn alive(pid: u32, dir: &Dir) -> bool {
    let proc = Path::new("/proc").join(pid.to_string());
    if !not_a_zombie(pid) {
        return false;
    }
    let Ok(cmdline) = std::fs::read(proc.join("cmdline")) else { return false };
    let qmp = escape(&dir.file("qmp.sock"));
    let qmp = qmp.as_encoded_bytes();
    cmdline.windows(qmp.len()).any(|w| w == qmp)
}

/// Whether process `pid` exists and has not exited (a zombie, or one being reaped, has).
pub fn not_a_zombie(pid: u32) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
    // The state follows the `(comm)` field, whose name may hold spaces and parentheses.
    let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next());
    !matches!(state, Some("Z" | "X" | "x") | None)
}

/// The pid of the VM's qemu when it runs: from `run.json` (or `qemu.pid`), checked with [`alive`].
///
/// # Errors
///
/// [`VmError::State`] for an unreadable `run.json`.
pub fn running(dir: &Dir) -> Result<Option<u32>, VmError> {
    let pid = match dir.run()? {
        Some(run) => run.pid,
        None => std::fs::read_to_string(dir.file("qemu.pid")).ok().and_then(|p| p.trim().parse().ok()),
    };
    Ok(pid.filter(|pid| alive(*pid, dir)))
}
