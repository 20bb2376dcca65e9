//! A sway of its own per test on this machine (the target `.`): [`crate::lab::Sway`] (headless,
//! 1920×1080, uid 4243, its own XDG_RUNTIME_DIR and HOME; killed with its process group when
//! the test ends, passes or panics, or by a watcher when the test process is killed). charly
//! is given only `XDG_RUNTIME_DIR`: it finds the Wayland socket, sway's IPC socket and
//! XWayland's display itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::lab::Sway;
pub(crate) use crate::lab::{HEIGHT, WIDTH};
use crate::util::{CHARLY, Run};

/// A running sway.
pub(crate) struct Desk {
    sway: Sway,
}

impl Desk {
    /// Starts sway and waits until it answers on its IPC socket.
    pub(crate) fn start() -> Desk {
        Desk { sway: Sway::start() }
    }

    /// A sway whose XWayland refuses X11 clients (started without `-ac`).
    pub(crate) fn start_refusing_x11() -> Desk {
        Desk { sway: Sway::start_with(false) }
    }

    /// Its XDG_RUNTIME_DIR.
    pub(crate) fn xdg(&self) -> PathBuf {
        self.sway.xdg()
    }

    /// Its HOME (uid 4243's; what the desktop's programs write lands here).
    pub(crate) fn home(&self) -> PathBuf {
        self.sway.home()
    }

    /// sway's pid (to stop it: a hung compositor).
    pub(crate) fn sway_pid(&self) -> u32 {
        self.sway.pid()
    }

    /// The test's directory (charly's working directory).
    pub(crate) fn dir(&self) -> &Path {
        self.sway.dir()
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
        cmd.env("XDG_RUNTIME_DIR", self.xdg()).env("HOME", self.dir()).current_dir(self.dir());
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
                let log = std::fs::read_to_string(self.sway.log()).unwrap_or_default();
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
