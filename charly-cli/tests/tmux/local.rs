//! A private place for tmux on this machine: `TMUX_TMPDIR` (so even tmux's default server is
//! the test's own), `XDG_RUNTIME_DIR` (where `.` recordings go), `HOME`, a working directory.
//! Every tmux server started there is killed when the harness drops, also when a test fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{CHARLY, Run};

/// A test's private tmux directory and environment.
pub(crate) struct Local {
    dir: tempfile::TempDir,
    /// A socket name of the test's own (`test-tm-<tag>-<pid>`).
    pub(crate) socket: String,
}

impl Local {
    /// A fresh harness; `tag` names its socket.
    pub(crate) fn new(tag: &str) -> Local {
        let dir = tempfile::Builder::new().prefix("test-tm-").tempdir().unwrap();
        for sub in ["tmux", "home", "work"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let run = dir.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        Local { dir, socket: format!("test-tm-{tag}-{}", std::process::id()) }
    }

    /// The test's directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The working directory charly runs in (relative `--output` paths land here).
    pub(crate) fn work(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    fn env(&self, cmd: &mut Command) {
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("CHARLY_")
                || key.starts_with("TMUX")
                || key == "WAYLAND_DISPLAY"
                || key == "SWAYSOCK"
            {
                cmd.env_remove(&key);
            }
        }
        cmd.env("TMUX_TMPDIR", self.dir.path().join("tmux"))
            .env("XDG_RUNTIME_DIR", self.dir.path().join("run"))
            .env("HOME", self.dir.path().join("home"))
            .env("SHELL", "/bin/bash")
            .env("NO_COLOR", "1")
            .current_dir(self.work())
            .stdin(Stdio::null());
    }

    /// `charly` with the test's environment.
    pub(crate) fn charly(&self) -> Command {
        let mut cmd = Command::new(CHARLY);
        self.env(&mut cmd);
        cmd
    }

    /// Runs `charly <args>`.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.charly();
        cmd.args(args);
        Run::of(&mut cmd, args)
    }

    /// Runs `tmux <args>` itself in the test's environment: its stdout, and whether it
    /// succeeded.
    pub(crate) fn tmux(&self, args: &[&str]) -> (bool, String) {
        let mut cmd = Command::new("tmux");
        self.env(&mut cmd);
        let out = cmd.args(args).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Runs `charly <args>` until its stdout contains `text`, for at most 10 s: the last run.
    #[track_caller]
    pub(crate) fn until(&self, args: &[&str], text: &str) -> Run {
        let started = Instant::now();
        loop {
            let run = self.run(args);
            if run.code == Some(0) && run.stdout.contains(text) {
                return run;
            }
            assert!(started.elapsed() < Duration::from_secs(10), "no {text:?} within 10 s\n{}", run.dump());
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        // Every server of the private directory (tmux-<uid>/<socket>), by its socket.
        let Ok(dirs) = std::fs::read_dir(self.dir.path().join("tmux")) else { return };
        for dir in dirs.flatten() {
            let Ok(sockets) = std::fs::read_dir(dir.path()) else { continue };
            for socket in sockets.flatten() {
                let _ = Command::new("tmux")
                    .arg("-S")
                    .arg(socket.path())
                    .arg("kill-server")
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
    }
}

/// Waits until `path` exists, for at most 10 s.
#[track_caller]
pub(crate) fn wait_for_file(path: &Path) {
    let started = Instant::now();
    while !path.exists() {
        assert!(started.elapsed() < Duration::from_secs(10), "{} did not appear", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}
