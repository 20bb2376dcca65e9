//! The families through a box's running container: box `test-wl` on localhost/charly-wayland
//! (bookworm minbase with supervisor, sway, foot, grim, wtype, wl-clipboard, wlr-randr,
//! xdotool, python3-gi, at-spi2-core, built by `scripts/runtimes.sh`), built with `charly box
//! build` and started with `charly start` once for the test binary. Its supervisord runs sway
//! headless as uid 1000 (through setpriv; sway refuses root) with XDG_RUNTIME_DIR
//! /run/user/1000; the box's environment names no Wayland variable, so charly finds the
//! session from the container's sockets. foot windows are started with `check.wl.exec`.
//! charly-overlay, built by the test, is bind-mounted at /usr/local/bin/charly-overlay.
//!
//! The container and image are removed when the test binary ends, however it ends (a watcher
//! waits for this process, as tests/desktop's does).

use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crate::util::{Box, Run, record};

/// The box.
pub(crate) const NAME: &str = "test-wl";
/// Its container.
pub(crate) const CONTAINER: &str = "charly-test-wl";
const WAYLAND: &str = "localhost/charly-wayland:latest";

/// sway as uid 1000, after making its runtime directory and config; XWayland through a
/// wrapper that adds `-ac`, as on this machine (desk.rs: Xwayland 22.1 refuses X clients
/// otherwise).
const SWAY: &str = "mkdir -p /run/user/1000 /tmp/wl && chown 1000:1000 /run/user/1000 /tmp/wl && \
chmod 700 /run/user/1000 && printf 'output HEADLESS-1 resolution 1920x1080\\n' > /tmp/sway.conf && \
printf '#!/bin/sh\\nexec /usr/bin/Xwayland -ac \"$@\"\\n' > /tmp/xwayland && chmod 755 /tmp/xwayland && \
exec setpriv --reuid 1000 --regid 1000 --clear-groups env HOME=/tmp/wl XDG_RUNTIME_DIR=/run/user/1000 \
WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman WLR_XWAYLAND=/tmp/xwayland sway -c /tmp/sway.conf";

/// Candy `wl-desk`'s file.
fn desk_candy() -> String {
    let command = serde_json::to_string(&format!("sh -c {}", shell_quote(SWAY))).unwrap();
    format!(
        "wl-desk:\n  candy: {{description: sway headless as uid 1000}}\nwl-desk-svc:\n  service:\n    - {{name: sway, command: {command}}}\n"
    )
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Candy `wl-plan`'s file with `checks` after its candy node.
pub(crate) fn plan_candy(checks: &str) -> String {
    format!("wl-plan:\n  candy: {{description: the plan's checks (written by the test)}}\n{checks}")
}

/// The running box.
pub(crate) struct WlBox {
    project: Mutex<Box>,
}

impl WlBox {
    /// `charly <args>` in the project.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.project.lock().unwrap_or_else(|e| e.into_inner()).charly();
        cmd.args(args);
        Run::of(&mut cmd, args)
    }

    /// `charly check wl <args>`.
    pub(crate) fn wl(&self, args: &[&str]) -> Run {
        let all: Vec<&str> = ["check", "wl"].iter().chain(args).copied().collect();
        self.run(&all)
    }

    /// The project directory.
    pub(crate) fn proj(&self) -> std::path::PathBuf {
        self.project.lock().unwrap_or_else(|e| e.into_inner()).proj()
    }

    /// A file inside the container (empty when absent).
    pub(crate) fn cat(&self, path: &str) -> String {
        let out = Command::new("podman").args(["exec", CONTAINER, "cat", path]).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Polls `ready` every 100 ms for at most `limit`.
    #[track_caller]
    pub(crate) fn wait(&self, what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
        let started = Instant::now();
        while !ready() {
            assert!(
                started.elapsed() < limit,
                "{what}: not within {limit:?}\n{}",
                self.run(&["logs", NAME]).stdout
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The window with app_id `app_id`.
    pub(crate) fn window(&self, app_id: &str) -> Option<serde_json::Value> {
        let run = self.wl(&["windows", NAME, "--json"]);
        run.status(0);
        run.json()["windows"].as_array()?.iter().find(|w| w["app_id"] == app_id).cloned()
    }

    /// foot `app_id` with `args`, started in the box, its window shown.
    pub(crate) fn foot(&self, app_id: &str, args: &[&str]) -> serde_json::Value {
        let mut all = vec!["exec", NAME, "--", "foot", "-a", app_id];
        all.extend(args);
        self.wl(&all).status(0);
        self.wait(&format!("foot {app_id}"), Duration::from_secs(20), || self.window(app_id).is_some());
        self.window(app_id).unwrap()
    }
}

/// The box, built and started on first use; every test shares it (and [`desk_lock`]).
pub(crate) fn wl_box() -> &'static WlBox {
    static BOX: OnceLock<Result<WlBox, String>> = OnceLock::new();
    let made = BOX.get_or_init(|| {
        std::panic::catch_unwind(make).map_err(|e| {
            let text = e.downcast_ref::<String>().cloned();
            text.or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
        })
    });
    made.as_ref().unwrap_or_else(|e| panic!("the shared box {NAME} did not start: {e}"))
}

/// Serialises the tests that type, click or change focus in the box's one desktop.
pub(crate) fn desk_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn make() -> WlBox {
    let b = Box::with_base(NAME, WAYLAND);
    watch(&b);
    b.candy(NAME, "wl-desk", &desk_candy());
    b.candy(NAME, "wl-plan", &plan_candy(""));
    b.run(&["box", "validate"]).status(0);
    b.run(&["box", "build", NAME]).status(0);
    record(&b, "images", &["image", "inspect", "--format", "{{.Id}}", &format!("localhost/{NAME}:latest")]);
    // charly-overlay (this workspace's program) bind-mounted where the box's PATH finds it.
    let overlay = crate::overlay::overlay_dir().join("charly-overlay");
    let bind = format!("{}:/usr/local/bin/charly-overlay:ro", overlay.display());
    b.run(&["start", NAME, "--bind", &bind]).status(0);
    record(&b, "containers", &["container", "inspect", "--format", "{{.Id}}", CONTAINER]);
    let wl = WlBox { project: Mutex::new(b) };
    wl.wait("sway in the box", Duration::from_secs(60), || wl.wl(&["status", NAME]).code == Some(0));
    wl
}

/// Removes the recorded container and image and the project when this process ends: a
/// watcher in a process group of its own (a `timeout` or ^C that kills the test's group must
/// not take the cleanup with it), left running (it outlives this process on purpose).
fn watch(b: &Box) {
    let dir = b.proj().parent().unwrap().to_owned();
    let script = format!(
        "tail --pid={pid} -f /dev/null; cd '{dir}' && for c in $(cat containers); do podman rm -f -t 0 $c; done; \
         for i in $(cat images); do podman rmi -f $i; done; \
         podman image prune -f --filter label=ai.opencharly.box={NAME}; cd / && rm -rf '{dir}'",
        pid = std::process::id(),
        dir = dir.display()
    );
    let started = std::os::unix::process::CommandExt::process_group(
        Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        0,
    )
    .spawn();
    assert!(started.is_ok(), "sh cannot start the cleanup watcher");
}

#[test]
fn the_boxs_session_is_found_from_its_sockets_and_screenshots_and_sway_answer() {
    let b = wl_box();
    let run = b.wl(&["status", NAME, "--json"]);
    run.status(0);
    let status = run.json();
    assert_eq!(status["place"], format!("container {CONTAINER}"));
    assert_eq!(status["wayland_socket"], "/run/user/1000/wayland-1");
    assert_eq!(status["user"], "1000:1000");
    assert_eq!(status["sway_version"], "1.7");
    assert_eq!(status["outputs"][0]["width"], 1920);
    let shot = b.proj().join("box-shot.png");
    let run = b.wl(&["screenshot", NAME, shot.to_str().unwrap()]);
    run.status(0);
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(run.stdout.contains("1920x1080"), "{}", run.dump());
    let outputs = b.wl(&["sway", "outputs", NAME, "--json"]);
    assert_eq!(outputs.json()["items"][0]["name"], "HEADLESS-1");
    b.wl(&["sway", "msg", NAME, "nonsense"]).status(2).stderr_has(&["sway refused `nonsense`"]);
    // Another box, or an instance, that does not run.
    b.wl(&["status", NAME, "-i", "9"]).status(2).stderr_has(&["container charly-test-wl-9 does not exist"]);
}

#[test]
fn typing_keys_and_combos_reach_a_terminal_in_the_box_literally() {
    let b = wl_box();
    let _desk = desk_lock();
    b.foot("box-tee", &["tee", "/tmp/wl/typed.txt"]);
    b.wl(&["focus", NAME, "box-tee"]).status(0);
    let text = "it's \"q\" $(touch /tmp/wl/pwned) `touch /tmp/wl/pwned`\n";
    b.wl(&["type", NAME, text]).status(0);
    b.wl(&["type", NAME, "gone"]).status(0);
    b.wl(&["key-combo", NAME, "ctrl+u"]).status(0);
    b.wl(&["type", NAME, "last"]).status(0);
    b.wl(&["key", NAME, "Return"]).status(0);
    b.wait("the typed lines", Duration::from_secs(10), || b.cat("/tmp/wl/typed.txt").contains("last"));
    assert_eq!(b.cat("/tmp/wl/typed.txt"), format!("{text}last\n"));
    assert!(b.cat("/tmp/wl/pwned").is_empty());
    assert_eq!(
        Command::new("podman")
            .args(["exec", CONTAINER, "test", "-e", "/tmp/wl/pwned"])
            .status()
            .unwrap()
            .code(),
        Some(1)
    );
    b.wl(&["key", NAME, "Entr"]).status(2).stderr_has(&["did you mean"]);
    b.wl(&["close", NAME, "box-tee"]).status(0);
    // --cdp-url is for `.`: with a box it is refused, not ignored (issue 15's trial LOW).
    b.wl(&["mouse", NAME, "--from-cdp", "first", "--cdp-url", "http://127.0.0.1:9", "1", "1"])
        .status(2)
        .stderr_has(&["--from-cdp: --cdp-url \"http://127.0.0.1:9\" (cdp_url over MCP) is the endpoint for the target `.`"]);
}

#[test]
fn the_pointer_windows_and_clipboard_work_in_the_box() {
    let b = wl_box();
    let _desk = desk_lock();
    b.foot("box-word", &["sh", "-c", "echo boxword; exec cat"]);
    b.foot("box-other", &[]);
    std::thread::sleep(Duration::from_millis(300));
    b.wl(&["focus", NAME, "box-word"]).status(0);
    b.wl(&["clipboard", NAME, "clear", "--primary"]).status(0);
    // foot's first line in the box is a locale warning: the word is on the second (14 px rows).
    b.wl(&["double-click", NAME, "--from-sway", "box-word", "12", "19"]).status(0);
    b.wait("the word selected", Duration::from_secs(5), || {
        b.wl(&["clipboard", NAME, "get", "--primary"]).stdout == "boxword"
    });
    b.wl(&["click", NAME, "--from-sway", "box-other", "40", "40"]).status(0);
    assert_eq!(b.window("box-other").unwrap()["focused"], true, "the click focused it");
    b.wl(&["clipboard", NAME, "set", "from the host"]).status(0);
    assert_eq!(b.wl(&["clipboard", NAME, "get"]).stdout, "from the host");
    b.wl(&["fullscreen", NAME, "box-other"]).status(0);
    assert_eq!(b.window("box-other").unwrap()["fullscreen"], 1);
    b.wl(&["click", NAME, "1920", "5"]).status(2).stderr_has(&["HEADLESS-1 is 1920x1080"]);
    b.wl(&["focus", NAME, "box-nothing"])
        .status(2)
        .stderr_has(&["no window matches \"box-nothing\" in container charly-test-wl"]);
    for app in ["box-word", "box-other"] {
        b.wl(&["close", NAME, app]).status(0);
    }
    b.wait("the windows closed", Duration::from_secs(5), || {
        b.window("box-word").is_none() && b.window("box-other").is_none()
    });
}

#[test]
fn exec_and_resolution_in_the_box() {
    let b = wl_box();
    let _desk = desk_lock();
    b.wl(&["exec", NAME, "--", "sh", "-c", "id -u > /tmp/wl/exec-uid"]).status(0);
    b.wait("exec ran", Duration::from_secs(10), || b.cat("/tmp/wl/exec-uid") == "1000\n");
    b.wl(&["exec", NAME, "--", "no-such-tool"])
        .status(2)
        .stderr_has(&["no-such-tool is not installed in container charly-test-wl"]);
    b.wl(&["resolution", NAME, "1280x720"]).status(0);
    let status = b.wl(&["status", NAME, "--json"]).json();
    assert_eq!(status["outputs"][0]["width"], 1280);
    b.wl(&["resolution", NAME, "1920x1080"]).status(0);
}

#[test]
fn overlays_are_drawn_in_the_box_by_a_daemon_charly_starts_there() {
    let b = wl_box();
    let _desk = desk_lock();
    let shot = |name: &str| {
        let file = b.proj().join(name);
        b.wl(&["screenshot", NAME, file.to_str().unwrap()]).status(0);
        std::fs::read(file).unwrap()
    };
    let run = b.wl(&["overlay", "show", NAME, "--type", "text", "--text", "in the box", "--bg", "#0000ff"]);
    run.status(0);
    assert!(run.stdout.starts_with("Showing text-"), "{}", run.dump());
    let run = b.wl(&["overlay", "show", NAME, "--type", "highlight", "--region", "50,60,200,100", "--json"]);
    let high = run.status(0).json()["overlays"][0].clone();
    assert_eq!((high["x"].as_i64(), high["width"].as_i64()), (Some(50), Some(200)), "{high}");
    let list = b.wl(&["overlay", "list", NAME, "--json"]);
    let overlays = list.status(0).json()["overlays"].as_array().cloned().unwrap();
    let text = overlays.iter().find(|o| o["type"] == "text").unwrap();
    let (x, y) = (text["x"].as_u64().unwrap() as u32, text["y"].as_u64().unwrap() as u32);
    let png = shot("overlay-box.png");
    assert_eq!(crate::desk::png_pixel(&png, x + 2, y + 2).0, [0, 0, 255], "the text's background");
    assert_eq!(crate::desk::png_pixel(&png, 51, 61).0, [255, 255, 0], "the highlight's frame");
    let status = b.wl(&["overlay", "status", NAME, "--json"]).json();
    assert_eq!(status["running"], true, "{status}");
    assert!(status["font"].as_str().unwrap().contains("DejaVuSans"), "{status}");
    // The daemon runs as the desktop's user, inside the container.
    let pid = status["pid"].as_u64().unwrap().to_string();
    let out =
        Command::new("podman").args(["exec", CONTAINER, "ps", "-o", "user=", "-p", &pid]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1000");
    b.wl(&["overlay", "hide", NAME, "--all"]).status(0);
    let png = shot("overlay-box-gone.png");
    assert_ne!(crate::desk::png_pixel(&png, x + 2, y + 2).0, [0, 0, 255]);
    assert_ne!(crate::desk::png_pixel(&png, 51, 61).0, [255, 255, 0]);
    b.wl(&["overlay", "show", NAME, "--type", "countdown", "--seconds", "1"]).status(0);
    b.wait("the countdown to end", Duration::from_secs(5), || {
        b.wl(&["overlay", "list", NAME, "--json"]).json()["overlays"] == serde_json::json!([])
    });
    b.wl(&["overlay", "hide", NAME, "--name", "nothing"])
        .status(2)
        .stderr_has(&["no overlay named \"nothing\""]);
}

#[test]
fn xprop_reads_an_xwayland_window_in_the_box() {
    let b = wl_box();
    let _desk = desk_lock();
    let status = b.wl(&["status", NAME, "--json"]).json();
    assert!(status["xwayland"].as_str().is_some_and(|d| d.starts_with(':')), "{status}");
    // xmessage (x11-utils): an Xt client that sets WM_CLASS (xev sets only WM_NAME).
    b.wl(&["exec", NAME, "--", "timeout", "120", "xmessage", "-name", "boxmsg", "hello from X"]).status(0);
    b.wait("xmessage's window", Duration::from_secs(20), || {
        let run = b.wl(&["windows", NAME, "--json"]);
        run.json()["windows"].as_array().is_some_and(|w| w.iter().any(|w| w["class"] == "Xmessage"))
    });
    let display = status["xwayland"].as_str().unwrap().to_owned();
    let tree = || {
        let out = Command::new("podman")
            .args(["exec", "--user", "1000:1000", "--env", &format!("DISPLAY={display}"), CONTAINER])
            .args(["xwininfo", "-root", "-tree"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let run = b.wl(&["xprop", NAME, "boxmsg"]);
    run.status(0);
    let windows = b.wl(&["windows", NAME]).stdout;
    for want in ["WM_CLASS(STRING) = \"boxmsg\", \"Xmessage\"", "WM_NAME(STRING) = \"boxmsg\"", "Geometry: "]
    {
        assert!(run.stdout.contains(want), "{want}: {}\n{windows}\n{}", run.dump(), tree());
    }
    let g = b.wl(&["geometry", NAME, "boxmsg", "--json"]).json();
    assert_eq!(g["window"]["shell"], "xwayland", "{g}");
    b.foot("box-native", &[]);
    b.wl(&["xprop", NAME, "box-native"])
        .status(2)
        .stderr_has(&["is a Wayland window, not an X11 (XWayland) one"]);
    for w in ["boxmsg", "box-native"] {
        b.wl(&["close", NAME, w]).status(0);
    }
}
