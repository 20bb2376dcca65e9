//! `vm start`, `stop`, `destroy`, `list` on the qemu backend (libvirt: [`super::libvirt`]).
//!
//! A VM runs when its `run.json` names a live qemu whose command line is the VM's
//! ([`qemu::running`]): a qemu that died or was killed (`kill -9`) is a stopped VM, whose
//! leftover sockets and pid file `stop`, `start` and `destroy` clear.

use std::path::Path;
use std::time::{Duration, Instant};

use super::state::{Dir, Run, now};
use super::{
    QEMU_HINT, Vm, VmDestroyed, VmError, VmList, VmRow, VmStarted, VmStopped, block, qemu, qmp, tool,
};
use crate::context::Ctx;
use crate::engine::owner;

/// Checks that host `port` is free on 127.0.0.1 for `what`; a taken one is an error naming its
/// holder: a VM's qemu, a podman container, or a process.
///
/// # Errors
///
/// [`VmError::PortInUse`].
pub fn preflight(vm: &Vm, what: &str, port: u16) -> Result<(), VmError> {
    match std::net::TcpListener::bind(("127.0.0.1", port)) {
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            return Err(VmError::Usage(format!(
                "{what}: port {port} is below 1024, where only root may listen; forward another host port to it \
                 (`--port {}:{port}` at create)",
                port as u32 + 8000
            )));
        }
        Err(_) => {}
    }
    let root = vm.dir.0.parent().unwrap_or(Path::new("."));
    let holders = owner::holders(port, "tcp");
    let (owner, fix) = match holders.first() {
        Some(h) => match vm_of_pid(root, h.pid) {
            Some((name, args)) if name == vm.name() => (
                format!("this VM's own qemu (pid {})", h.pid),
                format!("it is running: `charly vm stop {args}` first"),
            ),
            Some((name, args)) => {
                (format!("VM {name} (qemu pid {})", h.pid), format!("stop it (`charly vm stop {args}`)"))
            }
            None => (h.to_string(), format!(
                "stop it (`kill {}`), or give the VM another port (`charly vm destroy` it and `charly vm create` it \
                 with --ssh-port or -p HOST:GUEST)",
                h.pid
            )),
        },
        None => (
            "another process (not readable in /proc; a container's published port?)".into(),
            "free it, or give the VM another port (`charly vm destroy` it and `charly vm create` it with --ssh-port \
             or -p HOST:GUEST)"
                .into(),
        ),
    };
    Err(VmError::PortInUse { what: what.to_owned(), port, owner, fix })
}

/// The VM (name, and its box arguments) whose running qemu is `pid`.
fn vm_of_pid(root: &Path, pid: u32) -> Option<(String, String)> {
    for e in std::fs::read_dir(root).ok()?.flatten() {
        let dir = Dir(e.path());
        if dir.run().ok().flatten().is_some_and(|r| r.pid == Some(pid)) && qemu::alive(pid, &dir) {
            let spec = dir.spec().ok().flatten();
            let args = spec
                .map(|s| format!("{}{}", s.r#box, s.instance.map(|i| format!(" -i {i}")).unwrap_or_default()))
                .unwrap_or_default();
            return Some((e.file_name().to_string_lossy().into_owned(), args));
        }
    }
    None
}

/// `vm start`: qemu started daemonised with the VM's recorded settings, after its ports are
/// checked free; with `wait` seconds, until the guest's SSH server sends its banner.
///
/// # Errors
///
/// No disk, not created, running already, a port taken, KVM asked for and not working, qemu
/// failing to start (its message; nothing is left running), SSH not answering in time (the
/// VM is left running: the console shows why).
pub fn start(
    ctx: &Ctx,
    root: &Path,
    box_name: &str,
    instance: Option<&str>,
    wait: u32,
) -> Result<VmStarted, VmError> {
    let vm = Vm::new(root, box_name, instance)?;
    let _lock = super::lock(ctx, root, &vm)?;
    let build =
        vm.dir.build()?.ok_or_else(|| VmError::NotBuilt { name: vm.name().to_owned(), args: vm.args() })?;
    let spec =
        vm.dir.spec()?.ok_or_else(|| VmError::NotCreated { name: vm.name().to_owned(), args: vm.args() })?;
    if spec.backend == "libvirt" {
        return super::libvirt::start(ctx, &vm, &build, &spec, wait);
    }
    if let Some(pid) = qemu::running(&vm.dir)? {
        let fix = format!(
            "stop it first (`charly vm stop {}`), or reach it with `charly vm ssh {}`",
            vm.args(),
            vm.args()
        );
        return Err(VmError::Running { name: vm.name().to_owned(), what: format!("qemu pid {pid}"), fix });
    }
    vm.dir.clear_run();
    preflight(&vm, &format!("SSH port of VM {}", vm.name()), spec.ssh_port)?;
    for f in &spec.ports {
        preflight(&vm, &format!("port {} of VM {} (guest port {})", f.host, vm.name(), f.guest), f.host)?;
    }
    let (accel, accel_why) = block(ctx, qemu::choose(root, &spec.accel))?;
    rotate(&vm.dir.file("console.log"));
    let argv = qemu::argv(&vm.dir, &build, &spec, accel);
    ctx.check_cancelled().map_err(|_| VmError::Cancelled)?;
    let started = Instant::now();
    let out = block(ctx, tool::output(tool::command(qemu::QEMU, &argv), qemu::QEMU, QEMU_HINT))?;
    let pid =
        std::fs::read_to_string(vm.dir.file("qemu.pid")).ok().and_then(|p| p.trim().parse::<u32>().ok());
    let pid = match (out.status.success(), pid) {
        (true, Some(pid)) if qemu::alive(pid, &vm.dir) => pid,
        _ => {
            if let Some(pid) = pid.filter(|p| qemu::alive(*p, &vm.dir)) {
                kill(pid, rustix::process::Signal::KILL);
            }
            vm.dir.clear_run();
            return Err(tool::failed(&format!("{} (starting VM {})", qemu::QEMU, vm.name()), &out));
        }
    };
    vm.dir.write("run.json", &Run { pid: Some(pid), accel: accel.name().to_owned(), started_at: now() })?;
    let ssh_ready_secs = if wait > 0 {
        let deadline = started + Duration::from_secs(wait.into());
        ctx.progress(
            0.0,
            Some(wait.into()),
            format!("booting; waiting for SSH on 127.0.0.1:{}", spec.ssh_port),
        );
        match block(ctx, ssh_banner(spec.ssh_port, deadline, &vm.dir, pid)) {
            Ok(true) => Some(started.elapsed().as_secs_f64()),
            Ok(false) => {
                let console = super::console::tail(&vm.dir, 5).join(" | ");
                let state = if qemu::alive(pid, &vm.dir) { "it runs" } else { "its qemu has exited" };
                return Err(VmError::Tool {
                    what: format!("waiting for SSH of VM {} on 127.0.0.1:{}", vm.name(), spec.ssh_port),
                    why: format!(
                        "no SSH banner within {wait} s ({state}; `charly vm console {}` shows its boot); console: {console}",
                        vm.args()
                    ),
                });
            }
            Err(VmError::Cancelled) => return Err(running_anyway(&vm)),
            Err(e) => return Err(e),
        }
    } else {
        None
    };
    Ok(VmStarted {
        name: vm.name().to_owned(),
        backend: "qemu".into(),
        pid: Some(pid),
        accel: accel.name().to_owned(),
        accel_why,
        ssh_port: spec.ssh_port,
        ports: spec.ports,
        console_log: vm.dir.file("console.log"),
        ssh_ready_secs,
    })
}

/// How a VM's qemu that is gone without `vm stop` ended, as its console shows it: the guest's
/// kernel prints `reboot: Power down` (or `System halted`) last when the guest powered itself
/// off (`systemctl poweroff`), and qemu then exits; anything else is a crash or a kill.
fn ended_how(dir: &Dir) -> &'static str {
    let tail = super::console::tail(dir, 5);
    if tail.iter().any(|l| l.contains("reboot: Power down") || l.contains("reboot: System halted")) {
        "ended when the guest powered itself off (its kernel said `reboot: Power down`)"
    } else {
        "ended without `charly vm stop` (it crashed or was killed)"
    }
}

/// The error of a `start --wait` cancelled once the VM runs: it is not undone.
pub(super) fn running_anyway(vm: &Vm) -> VmError {
    VmError::Tool {
        what: format!("waiting for SSH of VM {}", vm.name()),
        why: format!("cancelled; the VM was started and runs (`charly vm stop {}` stops it)", vm.args()),
    }
}

/// Keeps the console log under 1 MiB: a bigger one becomes `console.log.1` (replacing the last).
pub(super) fn rotate(log: &Path) {
    if std::fs::metadata(log).is_ok_and(|m| m.len() > 1 << 20) {
        let mut old = log.as_os_str().to_owned();
        old.push(".1");
        let _ = std::fs::rename(log, old);
    }
}

/// Waits until 127.0.0.1:`port` sends an SSH banner (`SSH-`), or `deadline`, or the qemu exits.
/// qemu's user network accepts a forwarded connection before the guest listens and then
/// closes it, so a connection alone proves nothing.
async fn ssh_banner(port: u16, deadline: Instant, dir: &Dir, pid: u32) -> Result<bool, VmError> {
    while Instant::now() < deadline {
        if !qemu::alive(pid, dir) {
            return Ok(false);
        }
        if banner(port).await {
            return Ok(true);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Ok(false)
}

/// Whether 127.0.0.1:`port` sends an SSH banner now (one try, a few seconds at most).
pub(super) async fn banner(port: u16) -> bool {
    use tokio::io::AsyncReadExt as _;
    let connect = tokio::net::TcpStream::connect(("127.0.0.1", port));
    let Ok(Ok(mut stream)) = tokio::time::timeout(Duration::from_secs(2), connect).await else {
        return false;
    };
    let mut banner = [0u8; 4];
    matches!(tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut banner)).await, Ok(Ok(_)))
        && &banner == b"SSH-"
}

fn kill(pid: u32, signal: rustix::process::Signal) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, signal);
    }
}

/// Waits up to `limit` for the qemu `pid` of `dir` to end.
async fn ended(pid: u32, dir: &Dir, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if !qemu::alive(pid, dir) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Ends qemu `pid` at once: QMP `quit`, SIGKILL when QMP does not answer or qemu lingers.
/// `quit`, `sigkill`: how it ended.
async fn force(dir: &Dir, pid: u32) -> &'static str {
    let how = match qmp::execute(&dir.file("qmp.sock"), "quit", None).await {
        Ok(_) if ended(pid, dir, Duration::from_secs(10)).await => return "quit",
        Ok(_) => "sigkill",
        Err(_) => "sigkill",
    };
    kill(pid, rustix::process::Signal::KILL);
    ended(pid, dir, Duration::from_secs(10)).await;
    how
}

/// `vm stop`: the guest's ACPI power button (QMP `system_powerdown`; SIGTERM when QMP does not
/// answer) and a wait of `timeout` seconds for it to power off; with `force`, QMP `quit` (SIGKILL when QMP does not answer or qemu lingers).
///
/// # Errors
///
/// Not created; not running (a qemu that died: said so, its leftovers cleared); a guest that
/// did not power off in time (it still runs: `--force`).
pub fn stop(
    ctx: &Ctx,
    root: &Path,
    box_name: &str,
    instance: Option<&str>,
    force_it: bool,
    timeout: u32,
) -> Result<VmStopped, VmError> {
    let vm = Vm::new(root, box_name, instance)?;
    let _lock = super::lock(ctx, root, &vm)?;
    let spec =
        vm.dir.spec()?.ok_or_else(|| VmError::NotCreated { name: vm.name().to_owned(), args: vm.args() })?;
    if spec.backend == "libvirt" {
        return super::libvirt::stop(ctx, &vm, force_it, timeout);
    }
    let started = Instant::now();
    let Some(pid) = qemu::running(&vm.dir)? else {
        let why = match vm.dir.run()? {
            Some(Run { pid: Some(pid), .. }) => format!(": its qemu (pid {pid}) {}", ended_how(&vm.dir)),
            _ => String::new(),
        };
        vm.dir.clear_run();
        return Err(VmError::NotRunning { name: vm.name().to_owned(), why, args: vm.args() });
    };
    let how = if force_it {
        block(ctx, async { Ok(force(&vm.dir, pid).await) })?
    } else {
        let how = match block(ctx, async {
            Ok(qmp::execute(&vm.dir.file("qmp.sock"), "system_powerdown", None).await)
        })? {
            Ok(_) => "acpi",
            Err(_) => {
                kill(pid, rustix::process::Signal::TERM);
                "sigterm"
            }
        };
        let waited = block(ctx, async { Ok(ended(pid, &vm.dir, Duration::from_secs(timeout.into())).await) });
        let ended = waited.map_err(|e| match e {
            VmError::Cancelled => VmError::Tool {
                what: format!("stopping VM {}", vm.name()),
                why: "cancelled while the guest shut down: it got the ACPI power button and may still be going down \
                      (`charly vm list` shows when it has)"
                    .into(),
            },
            other => other,
        })?;
        if !ended {
            return Err(VmError::Tool {
                what: format!("stopping VM {}", vm.name()),
                why: format!(
                    "the guest did not power off within {timeout} s of the ACPI power button (it may ignore it); it still \
                     runs: `charly vm stop {} --force` quits qemu at once",
                    vm.args()
                ),
            });
        }
        how
    };
    vm.dir.clear_run();
    Ok(VmStopped { name: vm.name().to_owned(), how: how.to_owned(), secs: started.elapsed().as_secs_f64() })
}

/// `vm destroy`: the VM stopped at once when it runs, then what `create` and `start` wrote
/// removed (`vm.json`, the VM's key pair, the console log, the run files); with `disk`, the
/// whole directory (disk, kernel, initramfs, `known_hosts`, `build.json`).
///
/// # Errors
///
/// A VM that was neither built nor created; files that cannot be removed.
pub fn destroy(
    ctx: &Ctx,
    root: &Path,
    box_name: &str,
    instance: Option<&str>,
    disk: bool,
) -> Result<VmDestroyed, VmError> {
    let vm = Vm::new(root, box_name, instance)?;
    let _lock = super::lock(ctx, root, &vm)?;
    // What a build that was killed left (its staging tree in /dev/shm, its work directory, its
    // export container): the lock is held, so no build of this VM runs now.
    let mut removed = Vec::new();
    if !super::build::leftovers(root, vm.name()).is_empty() {
        let engine = crate::engine::Engine::podman(ctx.cancel_token());
        removed = super::build::sweep(ctx, &engine, root, vm.name())?;
    }
    if !vm.dir.0.is_dir() {
        if !removed.is_empty() {
            return Ok(VmDestroyed {
                name: vm.name().to_owned(),
                stopped: false,
                created: false,
                disk_removed: false,
                removed,
            });
        }
        return Err(VmError::Usage(format!(
            "VM {} does not exist (no disk, no record): nothing to destroy; `charly vm list --all` lists every VM",
            vm.name()
        )));
    }
    let spec = vm.dir.spec().ok().flatten();
    let mut stopped = false;
    if spec.as_ref().is_some_and(|s| s.backend == "libvirt") {
        stopped = super::libvirt::undefine(ctx, &vm)?;
    } else if let Some(pid) = qemu::running(&vm.dir)? {
        block(ctx, async { Ok(force(&vm.dir, pid).await) })?;
        stopped = true;
    }
    vm.dir.clear_run();
    if disk {
        std::fs::remove_dir_all(&vm.dir.0)?;
        removed.push(vm.dir.0.clone());
    } else {
        for file in [
            "vm.json",
            "id_ed25519",
            "id_ed25519.pub",
            "console.log",
            "console.log.1",
            "domain.xml",
            "console.attach",
        ] {
            let path = vm.dir.file(file);
            if std::fs::remove_file(&path).is_ok() {
                removed.push(path);
            }
        }
    }
    Ok(VmDestroyed {
        name: vm.name().to_owned(),
        stopped,
        created: spec.is_some(),
        disk_removed: disk,
        removed,
    })
}

/// `vm list`: every VM directory, with its state; only running ones unless `all`.
///
/// # Errors
///
/// qemu missing (for the acceleration probe).
pub fn list(ctx: &Ctx, root: &Path, all: bool) -> Result<VmList, VmError> {
    let mut vms = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(root).into_iter().flatten().flatten().collect();
    names.sort_by_key(std::fs::DirEntry::file_name);
    let libvirt = super::libvirt::states(ctx);
    for e in names {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("charly-") || !e.path().is_dir() {
            continue;
        }
        let dir = Dir(e.path());
        let (build, spec) = (dir.build().ok().flatten(), dir.spec().ok().flatten());
        let run = dir.run().ok().flatten();
        let pid = qemu::running(&dir).ok().flatten();
        let (state, note) = match (&spec, pid) {
            (Some(s), _) if s.backend == "libvirt" => {
                (libvirt.get(&name).cloned().unwrap_or_else(|| "undefined".into()), None)
            }
            (Some(_), Some(_)) => ("running".to_owned(), None),
            (Some(_), None) => {
                let note = run
                    .as_ref()
                    .and_then(|r| r.pid)
                    .map(|p| format!("its qemu (pid {p}) {}", ended_how(&dir)));
                ("stopped".to_owned(), note)
            }
            (None, _) if build.is_some() => {
                ("built".to_owned(), Some("not created: `charly vm create`".to_owned()))
            }
            (None, _) => (
                "incomplete".to_owned(),
                Some("no disk: `charly vm build`, or `charly vm destroy --disk`".to_owned()),
            ),
        };
        if !all && state != "running" {
            continue;
        }
        let accel = run.as_ref().filter(|_| state == "running").map(|r| r.accel.clone());
        vms.push(VmRow {
            name,
            r#box: spec.as_ref().map(|s| s.r#box.clone()).or_else(|| build.as_ref().map(|b| b.r#box.clone())),
            state,
            backend: spec.as_ref().map(|s| s.backend.clone()),
            accel,
            pid,
            ssh_port: spec.as_ref().map(|s| s.ssh_port),
            ram_mib: spec.as_ref().map(|s| s.ram_mib),
            cpus: spec.as_ref().map(|s| s.cpus),
            disk: build.as_ref().map(|b| dir.file(&b.disk)),
            note,
        });
    }
    let host = super::host(ctx, root);
    Ok(VmList { all, host, vms })
}
