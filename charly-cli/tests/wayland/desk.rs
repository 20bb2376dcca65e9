//! A sway of its own per test on this machine (the target `.`): headless, 1920×1080, run under
//! uid 4243 (sway refuses root) with its own XDG_RUNTIME_DIR and HOME in the test's temporary
//! directory. charly is given only `XDG_RUNTIME_DIR`: it finds the Wayland socket, sway's IPC
//! socket and XWayland's display itself.
//!
//! XWayland is started through a wrapper that adds `-ac`: Xwayland 22.1 on this machine
//! refuses every X client otherwise ("Authorization required": sway passes it no cookie, and
//! the local-user check fails here), so xev and xdotool could not connect at all.
//!
//! sway dies with the test: dropped, or, when the test process is killed, by a watcher that
//! waits for this process (`tail --pid`) and kills it; its clients lose their compositor and
//! exit.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{CHARLY, Run};

/// The unprivileged uid the host's sway runs as (another engineer's tests use 4242).
pub(crate) const UID: u32 = 4243;

/// The output's size.
pub(crate) const WIDTH: i64 = 1920;
/// The output's height.
pub(crate) const HEIGHT: i64 = 1080;

/// A running sway.
pub(crate) struct Desk {
    dir: tempfile::TempDir,
    sway: std::process::Child,
}

fn chown(path: &Path) {
    let ok = Command::new("chown").arg(format!("{UID}:{UID}")).arg(path).status().is_ok_and(|s| s.success());
    assert!(ok, "chown {}", path.display());
}

impl Desk {
    /// Starts sway and waits for its IPC socket (at most 10 s).
    pub(crate) fn start() -> Desk {
        let dir = tempfile::tempdir().unwrap();
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
            .arg(format!("WLR_XWAYLAND={}", wrapper.display()))
            .args(["sway", "-c", &p("sway.conf")])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let sway = command.spawn().expect("sway runs (scripts/runtimes.sh installs it)");
        let pid = sway.id();
        let watcher = format!(
            "(tail --pid={} -f /dev/null; kill {pid}) </dev/null >/dev/null 2>&1 &",
            std::process::id()
        );
        assert!(Command::new("sh").args(["-c", &watcher]).status().is_ok_and(|s| s.success()));
        let desk = Desk { dir, sway };
        desk.wait("sway's IPC socket", Duration::from_secs(10), || {
            std::fs::read_dir(desk.xdg())
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("sway-ipc."))
        });
        desk
    }

    /// Its XDG_RUNTIME_DIR.
    pub(crate) fn xdg(&self) -> PathBuf {
        self.dir.path().join("xdg")
    }

    /// Its HOME (uid 4243's; what the desktop's programs write lands here).
    pub(crate) fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// The test's directory (charly's working directory).
    pub(crate) fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `charly` with only XDG_RUNTIME_DIR pointing at the session.
    pub(crate) fn charly(&self) -> Command {
        let mut cmd = Command::new(CHARLY);
        for key in ["WAYLAND_DISPLAY", "SWAYSOCK", "I3SOCK", "DISPLAY", "RUST_LOG"] {
            cmd.env_remove(key);
        }
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("CHARLY_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("XDG_RUNTIME_DIR", self.xdg()).env("HOME", self.dir.path()).current_dir(self.dir.path());
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Runs `charly check wl <args>`.
    pub(crate) fn wl(&self, args: &[&str]) -> Run {
        let mut cmd = self.charly();
        let all: Vec<&str> = ["check", "wl"].iter().chain(args).copied().collect();
        cmd.args(&all);
        Run::of(&mut cmd, &all)
    }

    /// `charly check wl <args> --json`, which must succeed.
    #[track_caller]
    pub(crate) fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut all = args.to_vec();
        all.push("--json");
        let run = self.wl(&all);
        run.status(0);
        run.json()
    }

    /// Polls `ready` every 50 ms until it holds, for at most `limit`.
    #[track_caller]
    pub(crate) fn wait(&self, what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
        let started = Instant::now();
        while !ready() {
            if started.elapsed() > limit {
                let log = std::fs::read_to_string(self.dir.path().join("sway.log")).unwrap_or_default();
                panic!("{what}: not within {limit:?}\nsway's log:\n{log}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The windows (`windows --json`).
    pub(crate) fn windows(&self) -> Vec<serde_json::Value> {
        self.json(&["windows", "."])["windows"].as_array().cloned().unwrap_or_default()
    }

    /// The window named `name` (app_id, or X11 title), when there is one.
    pub(crate) fn window(&self, name: &str) -> Option<serde_json::Value> {
        self.windows().into_iter().find(|w| w["app_id"] == name || w["title"] == name)
    }

    /// Starts `foot -a APP_ID ARGS...` with `check.wl.exec` and waits for its window.
    pub(crate) fn foot(&self, app_id: &str, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["exec", ".", "--", "foot", "-a", app_id];
        all.extend(args);
        self.wl(&all).status(0);
        self.wait(&format!("foot {app_id}'s window"), Duration::from_secs(15), || {
            self.window(app_id).is_some()
        });
        self.window(app_id).unwrap()
    }

    /// The file `name` in HOME, once it has `want` (at most 10 s): its text.
    #[track_caller]
    pub(crate) fn file_with(&self, name: &str, want: &str) -> String {
        let path = self.home().join(name);
        self.wait(&format!("{name} with {want:?}"), Duration::from_secs(10), || {
            std::fs::read_to_string(&path).is_ok_and(|t| t.contains(want))
        });
        std::fs::read_to_string(path).unwrap()
    }
}

impl Drop for Desk {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg(self.sway.id().to_string()).status();
        let _ = self.sway.wait();
    }
}

/// The RGB of pixel (`x`, `y`) of a PNG, and its size.
pub(crate) fn png_pixel(bytes: &[u8], x: u32, y: u32) -> ([u8; 3], (u32, u32)) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).expect("a PNG frame");
    let samples = info.color_type.samples();
    let at = (y as usize * info.line_size) + x as usize * samples;
    ([buf[at], buf[at + 1], buf[at + 2]], (info.width, info.height))
}
