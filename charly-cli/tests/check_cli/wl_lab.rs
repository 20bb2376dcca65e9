//! A real sway session on this machine for the `check.wl.*` rows of `json` (target `.`):
//! tests/wayland's [`Sway`] (headless, 1920×1080, uid 4243, its own XDG_RUNTIME_DIR; killed
//! with its process group at drop, or by a watcher when the test process dies) and
//! [`SessionBus`] (for `atspi`), a foot window and an XWayland window (xev) to act on, and
//! `charly-overlay` built beside charly. charly is given only XDG_RUNTIME_DIR (and the bus):
//! it finds the Wayland socket, sway's IPC socket and XWayland's display itself, as a user's
//! WAYLAND_DISPLAY, SWAYSOCK, I3SOCK and DISPLAY are emptied (charly reads empty as unset).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::sway_lab::{Group, SessionBus, Sway, UID};
use crate::util::CHARLY;

/// The foot window's app_id.
pub(crate) const FOOT: &str = "rows-foot";
/// The xev window's name (its X11 instance and title).
pub(crate) const XEV: &str = "rowsxev";

/// The session, its windows and the environment the rows run with.
pub(crate) struct Lab {
    // Dropped in this order: xev, sway (and the programs charly started on it), the bus.
    _xev: Group,
    _sway: Sway,
    _bus: SessionBus,
    /// The variables of each row.
    pub(crate) env: Vec<(String, String)>,
    /// The directory holding charly-overlay, for the overlay rows' PATH.
    pub(crate) overlay: PathBuf,
    /// The foot window's content rectangle: x, y, width, height.
    pub(crate) foot: (i64, i64, i64, i64),
}

impl Lab {
    /// Starts sway and the bus, builds charly-overlay, opens the two windows and waits for
    /// them (at most 15 s each).
    pub(crate) fn new() -> Lab {
        let sway = Sway::start();
        let bus = SessionBus::start();
        let mut env: Vec<(String, String)> = ["WAYLAND_DISPLAY", "SWAYSOCK", "I3SOCK", "DISPLAY"]
            .iter()
            .map(|k| ((*k).to_owned(), String::new()))
            .collect();
        env.push(("XDG_RUNTIME_DIR".into(), sway.xdg().display().to_string()));
        env.push(("DBUS_SESSION_BUS_ADDRESS".into(), bus.address.clone()));
        let overlay = crate::sway_lab::overlay_dir();
        let wl = |args: &[&str]| -> serde_json::Value {
            let out = Command::new(CHARLY)
                // --json before the leaf: after `exec . --` it would be the program's.
                .args(["check", "wl", "--json"])
                .args(args)
                .envs(env.iter().map(|(k, v)| (k, v)))
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(out.status.success(), "check wl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
            serde_json::from_slice(&out.stdout).unwrap()
        };
        let window = |name: &str| {
            let windows = wl(&["windows", "."]);
            windows["windows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["app_id"] == name || w["title"] == name)
                .cloned()
        };
        let wait = |name: &str| {
            let started = Instant::now();
            loop {
                if let Some(w) = window(name) {
                    return w;
                }
                let log = || std::fs::read_to_string(sway.log()).unwrap_or_default();
                assert!(
                    started.elapsed() < Duration::from_secs(15),
                    "no window {name} within 15 s:\n{}",
                    log()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        // foot runs cat: what the rows type lands in it and runs nothing.
        wl(&["exec", ".", "--", "foot", "-a", FOOT, "sh", "-c", "exec cat"]);
        let display = wl(&["status", "."])["xwayland"].as_str().expect("sway's XWayland display").to_owned();
        let mut xev = Command::new("setpriv");
        xev.args(["--reuid", &UID.to_string(), "--regid", &UID.to_string(), "--clear-groups", "env"])
            .arg(format!("DISPLAY={display}"))
            .args(["timeout", "120", "xev", "-name", XEV, "-geometry", "200x150"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let xev = Group::spawn(&mut xev, "xev (scripts/runtimes.sh installs x11-utils)");
        wait(XEV);
        wait(FOOT);
        let g = wl(&["geometry", ".", FOOT]);
        let n = |k: &str| g[k].as_i64().unwrap_or_else(|| panic!("{k} in {g}"));
        let foot = (n("x"), n("y"), n("width"), n("height"));
        Lab { _xev: xev, _sway: sway, _bus: bus, env, overlay, foot }
    }
}
