//! What the Wayland tests start on this machine, and how each is ended whatever happens:
//! [`Group`] (a process group killed when dropped, or by a watcher when the test process dies
//! first), [`Sway`] (sway 1.7 headless under uid 4243) and [`SessionBus`] (a session bus as
//! that uid), and [`overlay_dir`] (charly-overlay built once per test binary). Used by
//! tests/wayland and by tests/check_cli's `check.wl.*` rows; std and tempfile only.
//!
//! sway is killed with SIGKILL, never asked with SIGTERM: sway 1.7 installs its SIGTERM
//! handler with `signal()` under `_POSIX_C_SOURCE` (System V semantics: the handler runs once,
//! then the default is back), and the handler only asks the event loop to stop. A SIGTERM that
//! lands after the IPC socket exists but before `wl_display_run` starts is lost (the loop sets
//! its `run` flag again when it starts), and sway runs on until a second signal: a test that
//! dropped its sway that early waited for it for ever (the full tests/wayland run hung in
//! `a_target_without_charly_overlay_says_how_to_get_it`, the quickest test, only under load).
//! [`Sway::start`] also waits until sway answers on its IPC socket, which it does only from
//! its event loop.

use std::io::{Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The unprivileged uid the host's sway runs as (another family's tests use 4242).
pub(crate) const UID: u32 = 4243;

/// The output's width.
pub(crate) const WIDTH: i64 = 1920;
/// The output's height.
pub(crate) const HEIGHT: i64 = 1080;

/// A process started as the leader of a process group of its own. Dropping it (also while a
/// test panics) kills the whole group with SIGKILL, and reaps the leader; a watcher in a group
/// of its own (so a `timeout` or ^C that kills the test's group leaves it running) kills the
/// group when this test process dies before the drop.
pub(crate) struct Group {
    child: Child,
    watcher: Child,
}

impl Group {
    /// Spawns `command` (stdio as the caller set it) as a group leader, and its watcher.
    #[track_caller]
    pub(crate) fn spawn(command: &mut Command, what: &str) -> Group {
        command.process_group(0);
        let mut child = command.spawn().unwrap_or_else(|e| panic!("{what} cannot start: {e}"));
        let script =
            format!("tail --pid={} -f /dev/null; exec kill -s KILL -- -{}", std::process::id(), child.id());
        let watcher = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match watcher {
            Ok(watcher) => Group { child, watcher },
            Err(e) => {
                kill_group(child.id());
                let _ = child.wait();
                panic!("sh cannot start the watcher of {what}: {e}");
            }
        }
    }

    /// The leader's pid (the group's id).
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Whether the leader has exited (it is reaped then).
    pub(crate) fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // The watcher first: once the leader is reaped its pid (the group's id) may be reused.
        kill_group(self.watcher.id());
        let _ = self.watcher.wait();
        // An unreaped leader keeps the group's id ours, even after it exited.
        if matches!(self.child.try_wait(), Ok(None)) {
            kill_group(self.child.id());
        }
        let _ = self.child.wait();
    }
}

/// `kill -s KILL -- -PGID`.
fn kill_group(pgid: u32) {
    let _ = Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn chown(path: &Path) {
    let ok = Command::new("chown").arg(format!("{UID}:{UID}")).arg(path).status().is_ok_and(|s| s.success());
    assert!(ok, "chown {}", path.display());
}

/// sway headless, 1920×1080, run as uid [`UID`] (sway refuses root) with its own
/// XDG_RUNTIME_DIR and HOME in a temporary directory; killed with its group when dropped.
///
/// XWayland is started through a wrapper that adds `-ac`: Xwayland 22.1 on this machine
/// refuses every X client otherwise ("Authorization required": sway passes it no cookie, and
/// the local-user check fails here). Its clients started elsewhere (foot through
/// `check.wl.exec`) lose their compositor and exit.
pub(crate) struct Sway {
    // Dropped first: sway ends before its directory goes.
    group: Group,
    dir: tempfile::TempDir,
}

impl Sway {
    /// Starts sway and waits until it answers on its IPC socket (at most 20 s).
    #[track_caller]
    pub(crate) fn start() -> Sway {
        Sway::start_with(true)
    }

    /// [`Sway::start`]; without `accept_x11`, XWayland is sway's own (no `-ac`): it refuses
    /// every X client on this machine.
    #[track_caller]
    pub(crate) fn start_with(accept_x11: bool) -> Sway {
        let dir = tempfile::Builder::new().prefix("test-wl-").tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        for sub in ["xdg", "home"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
            chown(&dir.path().join(sub));
        }
        std::fs::set_permissions(dir.path().join("xdg"), std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(
            dir.path().join("sway.conf"),
            format!("output HEADLESS-1 resolution {WIDTH}x{HEIGHT}\n"),
        )
        .unwrap();
        let wrapper = dir.path().join("xwayland");
        std::fs::write(&wrapper, "#!/bin/sh\nexec /usr/bin/Xwayland -ac \"$@\"\n").unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
        let log = std::fs::File::create(dir.path().join("sway.log")).unwrap();
        let p = |s: &str| dir.path().join(s).display().to_string();
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid", &UID.to_string(), "--regid", &UID.to_string(), "--clear-groups", "env", "-i"])
            .arg(format!("HOME={}", p("home")))
            .arg(format!("XDG_RUNTIME_DIR={}", p("xdg")))
            .args([
                "WLR_BACKENDS=headless",
                "WLR_LIBINPUT_NO_DEVICES=1",
                "WLR_RENDERER=pixman",
                "PATH=/usr/bin:/bin",
            ])
            .args(accept_x11.then(|| format!("WLR_XWAYLAND={}", wrapper.display())))
            .args(["sway", "-c", &p("sway.conf")])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        // setpriv and env exec: the leader is sway itself.
        let group = Group::spawn(&mut command, "sway (scripts/runtimes.sh installs it)");
        let mut sway = Sway { group, dir };
        let started = Instant::now();
        while !sway.ipc_socket().is_some_and(|s| answers(&s)) {
            let exited = sway.group.exited();
            let log = || std::fs::read_to_string(sway.log()).unwrap_or_default();
            assert!(!exited, "sway exited at start:\n{}", log());
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "sway's IPC: no answer within 20 s:\n{}",
                log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        sway
    }

    /// The temporary directory (sway.conf, sway.log, xdg/, home/).
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// Its XDG_RUNTIME_DIR (the Wayland socket, sway's IPC socket).
    pub(crate) fn xdg(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    /// Its HOME (uid 4243's; what the desktop's programs write lands here).
    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// sway's log (its stdout and stderr).
    pub(crate) fn log(&self) -> PathBuf {
        self.dir.path().join("sway.log")
    }

    /// sway's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.group.id()
    }

    /// Its IPC socket, once it exists.
    pub(crate) fn ipc_socket(&self) -> Option<PathBuf> {
        let name = format!("sway-ipc.{UID}.{}.sock", self.pid());
        let path = self.xdg().join(name);
        path.exists().then_some(path)
    }
}

/// Whether sway answers GET_VERSION on `socket` (the i3 IPC: `i3-ipc`, length and type as
/// native u32s; the reply starts with the same magic), within 2 s.
fn answers(socket: &Path) -> bool {
    let Ok(mut stream) = std::os::unix::net::UnixStream::connect(socket) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    let mut message = b"i3-ipc".to_vec();
    message.extend(0u32.to_ne_bytes());
    message.extend(7u32.to_ne_bytes());
    let mut header = [0u8; 14];
    stream.write_all(&message).is_ok()
        && stream.read_exact(&mut header).is_ok()
        && header.starts_with(b"i3-ipc")
}

/// A session bus as uid [`UID`], which has no passwd entry: dbus-daemon refuses to start
/// without one ("Could not get password database information"), so it runs under
/// nss_wrapper (libnss-wrapper) with a passwd file of its own. The accessibility bus is
/// activated from it (at-spi-bus-launcher, in the daemon's group), which ends with it.
pub(crate) struct SessionBus {
    // Dropped first: the bus ends before its directory goes.
    _daemon: Group,
    /// `unix:path=...`, for DBUS_SESSION_BUS_ADDRESS.
    pub(crate) address: String,
    /// The bus's directory (its HOME and XDG_RUNTIME_DIR).
    pub(crate) dir: tempfile::TempDir,
}

impl SessionBus {
    /// Starts the bus and waits for its socket (at most 10 s).
    #[track_caller]
    pub(crate) fn start() -> SessionBus {
        let dir = tempfile::Builder::new().prefix("test-wl-bus-").tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let p = |s: &str| dir.path().join(s).display().to_string();
        std::fs::write(p("passwd"), format!("desk:x:{UID}:{UID}::{}:/bin/sh\n", p(""))).unwrap();
        std::fs::write(p("group"), format!("desk:x:{UID}:\n")).unwrap();
        let address = format!("unix:path={}", p("bus"));
        let mut command = Command::new("setpriv");
        command
            .args(["--reuid", &UID.to_string(), "--regid", &UID.to_string(), "--clear-groups", "env", "-i"])
            .arg("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libnss_wrapper.so")
            .arg(format!("NSS_WRAPPER_PASSWD={}", p("passwd")))
            .arg(format!("NSS_WRAPPER_GROUP={}", p("group")))
            .arg(format!("HOME={}", p("")))
            .arg(format!("XDG_RUNTIME_DIR={}", p("")))
            .args(["PATH=/usr/bin:/bin", "dbus-daemon", "--session", "--nofork", "--nopidfile"])
            .arg(format!("--address={address}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let daemon =
            Group::spawn(&mut command, "dbus-daemon (scripts/runtimes.sh installs dbus and libnss-wrapper)");
        let started = Instant::now();
        while !dir.path().join("bus").exists() {
            assert!(started.elapsed() < Duration::from_secs(10), "dbus-daemon as uid {UID} did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        SessionBus { _daemon: daemon, address, dir }
    }
}

/// The directory holding a current `charly-overlay` (beside the charly binary): built once
/// per test binary with `cargo build -p charly-overlay` (a no-op when it is current).
pub(crate) fn overlay_dir() -> PathBuf {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
        let out = Command::new(env!("CARGO"))
            .args(["build", "--quiet", "-p", "charly-overlay", "--manifest-path"])
            .arg(&manifest)
            .output()
            .map_err(|e| format!("cargo: {e}"))?;
        if !out.status.success() {
            return Err(format!("cargo build -p charly-overlay: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let dir = PathBuf::from(env!("CARGO_BIN_EXE_charly")).parent().unwrap().to_owned();
        if dir.join("charly-overlay").is_file() {
            Ok(dir)
        } else {
            Err(format!("no charly-overlay in {} after the build", dir.display()))
        }
    });
    built.clone().unwrap_or_else(|e| panic!("{e}"))
}
