//! The session, screenshots, windows and their actions, XWayland windows and coordinate
//! translations, exec and resolution on `.`.

use std::time::Duration;

use crate::desk::{Desk, HEIGHT, WIDTH, png_pixel};
use crate::util::Run;

#[test]
fn status_finds_the_session_from_xdg_runtime_dir_alone() {
    let d = Desk::start();
    let status = d.json(&["status", "."]);
    let xdg = d.xdg().display().to_string();
    assert_eq!(status["place"], "this machine");
    assert_eq!(status["wayland_socket"], format!("{xdg}/wayland-1"));
    assert!(
        status["sway_socket"].as_str().unwrap().starts_with(&format!("{xdg}/sway-ipc.4243.")),
        "{status}"
    );
    assert_eq!(status["sway_version"], "1.7");
    assert_eq!(status["user"], "4243:4243");
    assert_eq!(status["outputs"][0]["name"], "HEADLESS-1");
    assert_eq!(
        (status["outputs"][0]["width"].as_i64(), status["outputs"][0]["height"].as_i64()),
        (Some(WIDTH), Some(HEIGHT))
    );
    assert!(status["xwayland"].as_str().unwrap().starts_with(':'), "{status}");
    assert_eq!(status["xwayland_ok"], true, "{status}");
    assert_eq!(status["atspi"], true);
    for tool in ["wtype", "grim", "wl-copy", "xdotool"] {
        assert!(status["tools"].as_array().unwrap().iter().any(|t| t == tool), "{tool}: {status}");
    }
    // No session where XDG_RUNTIME_DIR points: said so, with where charly looked.
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = d.charly();
    cmd.env("XDG_RUNTIME_DIR", empty.path()).args(["check", "wl", "status", "."]);
    let run = crate::util::Run::of(&mut cmd, &["check wl status . (empty XDG_RUNTIME_DIR)"]);
    run.status(2).stderr_has(&[
        "no Wayland compositor for this machine: no wayland-N socket in",
        "set XDG_RUNTIME_DIR",
    ]);
    // An explicit SWAYSOCK that names no socket: an error, never another sway.
    let mut cmd = d.charly();
    cmd.env("SWAYSOCK", "/tmp/test-i16f-nope.sock").args(["check", "wl", "windows", "."]);
    let run = crate::util::Run::of(&mut cmd, &["check wl windows . (a bad SWAYSOCK)"]);
    run.status(2).stderr_has(&["SWAYSOCK=\"/tmp/test-i16f-nope.sock\" names no socket on this machine"]);
    // A box that is not the project's (issue 16 trial L13: "not started; start it").
    d.wl(&["status", "test-wl-none"])
        .status(2)
        .stderr_has(&["box test-wl-none is not a box of this project"]);
    d.wl(&["status", ".", "-i", "2"]).status(2).stderr_has(&["--instance names a box's container"]);
}

/// Sends `signal` (`STOP`, `CONT`) to `pid`.
fn signal(pid: u32, signal: &str) {
    let ok = std::process::Command::new("kill").args(["-s", signal, &pid.to_string()]).status();
    assert!(ok.is_ok_and(|s| s.success()), "kill -s {signal} {pid}");
}

#[test]
fn status_fails_when_sway_is_hung_and_shows_no_window_count() {
    let d = Desk::start();
    let run = d.wl(&["status", "."]);
    assert!(run.status(0).stdout.contains("Windows:    0"), "{}", run.dump());
    signal(d.sway_pid(), "STOP");
    let run = d.wl(&["status", ".", "--timeout", "2s", "--json"]);
    signal(d.sway_pid(), "CONT");
    run.status(1);
    let status = run.json();
    assert!(status["problem"].as_str().unwrap().contains("sway does not answer"), "{status}");
    assert!(status["problem"].as_str().unwrap().contains("within"), "{status}");
    assert!(status.get("windows").is_none() && status.get("sway_version").is_none(), "{status}");
    signal(d.sway_pid(), "STOP");
    let run = d.wl(&["status", ".", "--timeout", "2s"]);
    signal(d.sway_pid(), "CONT");
    run.status(1);
    assert!(
        run.stdout.contains("WL:         FAILED") && run.stdout.contains("Windows:    - (unknown)"),
        "{}",
        run.dump()
    );
    // Once sway runs again, so does status.
    let run = d.wl(&["status", "."]);
    assert!(run.status(0).stdout.starts_with("WL:         ok"), "{}", run.dump());
}

#[test]
fn from_sway_refuses_a_hidden_window_and_an_offset_outside_it() {
    let d = Desk::start();
    d.foot("vis-a", &[]);
    d.foot("vis-b", &[]);
    let width = d.window("vis-a").unwrap()["width"].as_i64().unwrap();
    d.wl(&["click", ".", "5", "5", "--from-sway", "vis-a"]).status(0);
    // Outside the window: refused with its size, nothing clicked.
    d.wl(&["click", ".", &width.to_string(), "5", "--from-sway", "vis-a"])
        .status(2)
        .stderr_has(&["is outside window #", &format!("which is {width}x")]);
    d.wl(&["click", ".", "-1", "5", "--from-sway", "vis-a"]).status(2).stderr_has(&["is outside window"]);
    // Minimized: its rect is stale.
    d.wl(&["minimize", ".", "vis-a"]).status(0);
    d.wl(&["click", ".", "5", "5", "--from-sway", "vis-a"]).status(2).stderr_has(&[
        "app_id vis-a",
        "is minimized",
        "restore it first",
    ]);
    d.wl(&["minimize", ".", "vis-a"]).status(0);
    // On a workspace not shown.
    d.wl(&["sway", "msg", ".", "[app_id=\"vis-b\"] move workspace 2"]).status(0);
    d.wl(&["double-click", ".", "5", "5", "--from-sway", "vis-b"]).status(2).stderr_has(&[
        "app_id vis-b",
        "is not visible (on workspace 2",
        "check wl focus",
    ]);
    d.wl(&["focus", ".", "vis-b"]).status(0);
    d.wl(&["click", ".", "5", "5", "--from-sway", "vis-b"]).status(0);
}

#[test]
fn status_says_when_xwayland_refuses_x11_clients_and_how_to_fix_it() {
    let d = Desk::start_refusing_x11();
    let run = d.wl(&["status", ".", "--json"]);
    run.status(0)
        .stderr_has(&["warning: X11 clients cannot connect to XWayland's display :", "Xwayland -ac"]);
    let status = run.json();
    assert_eq!(status["xwayland_ok"], false, "{status}");
    assert!(status["xwayland_error"].as_str().unwrap().contains("WLR_XWAYLAND"), "{status}");
    let text = d.wl(&["status", "."]);
    assert!(text.status(0).stdout.contains("X11 clients are REFUSED"), "{}", text.dump());
}

#[test]
fn a_screenshot_is_a_png_of_the_desktop_with_its_windows() {
    let d = Desk::start();
    d.foot("orange", &["-o", "colors.background=ff8000", "sh"]);
    std::thread::sleep(Duration::from_millis(500));
    let w = d.window("orange").unwrap();
    let file = d.dir().join("desk.png");
    let run = d.wl(&["screenshot", ".", file.to_str().unwrap()]);
    run.status(0);
    let png = std::fs::read(&file).unwrap();
    assert!(
        run.stdout.starts_with(&format!(
            "Screenshot saved to {} ({} bytes, 1920x1080)",
            file.display(),
            png.len()
        )),
        "{}",
        run.dump()
    );
    let (rgb, size) =
        png_pixel(&png, (w["x"].as_i64().unwrap() + 300) as u32, (w["y"].as_i64().unwrap() + 300) as u32);
    assert_eq!(size, (1920, 1080));
    assert_eq!(rgb, [255, 128, 0], "foot's background where its window is");
    // A region: that size, all orange.
    let region = format!("{},{} 64x48", w["x"].as_i64().unwrap() + 100, w["y"].as_i64().unwrap() + 100);
    let part = d.dir().join("part.png");
    d.wl(&["screenshot", ".", part.to_str().unwrap(), "--region", &region]).status(0);
    let png = std::fs::read(&part).unwrap();
    assert_eq!(png_pixel(&png, 10, 10), ([255, 128, 0], (64, 48)));
    d.wl(&["screenshot", ".", "--output", "HEADLESS-1"]).status(0);
    // Bad input: nothing written.
    let bad = d.dir().join("bad.png");
    d.wl(&["screenshot", ".", bad.to_str().unwrap(), "--region", "1900,1000 100x100"])
        .status(2)
        .stderr_has(&["the region's bottom right (1999, 1099) is off the output: HEADLESS-1 is 1920x1080"]);
    d.wl(&["screenshot", ".", bad.to_str().unwrap(), "--region", "here"])
        .status(2)
        .stderr_has(&["expects \"X,Y WxH\""]);
    d.wl(&["screenshot", ".", bad.to_str().unwrap(), "--output", "HDMI-9"])
        .status(2)
        .stderr_has(&["outputs: HEADLESS-1"]);
    assert!(!bad.exists());
}

#[test]
fn windows_are_listed_focused_fullscreened_minimized_restored_and_closed() {
    let d = Desk::start();
    d.foot("one", &[]);
    d.foot("two", &["-T", "title with spaces"]);
    let toplevel = d.wl(&["toplevel", "."]);
    toplevel.status(0);
    assert!(
        toplevel.stdout.contains("one: ") && toplevel.stdout.contains("two: title with spaces"),
        "{}",
        toplevel.dump()
    );
    let listed = d.wl(&["windows", "."]);
    assert!(listed.stdout.contains("\t\"title with spaces\"\t"), "{}", listed.dump());
    d.wl(&["focus", ".", "one"]).status(0);
    assert_eq!(d.window("one").unwrap()["focused"], true);
    // By title, and by con id.
    d.wl(&["focus", ".", "title with spaces"]).status(0);
    assert_eq!(d.window("two").unwrap()["focused"], true);
    let id = format!("#{}", d.window("one").unwrap()["id"]);
    d.wl(&["fullscreen", ".", &id]).status(0);
    assert_eq!(d.window("one").unwrap()["fullscreen"], 1);
    d.wl(&["fullscreen", ".", "one"]).status(0);
    assert_eq!(d.window("one").unwrap()["fullscreen"], 0);
    let run = d.wl(&["minimize", ".", "one"]);
    run.status(0);
    assert!(run.stdout.starts_with("Minimized #"), "{}", run.dump());
    assert_eq!(d.window("one").unwrap()["minimized"], true);
    let run = d.wl(&["minimize", ".", "one"]);
    assert!(run.status(0).stdout.starts_with("Restored #"), "{}", run.dump());
    assert_eq!(d.window("one").unwrap()["minimized"], false);
    d.wl(&["close", ".", "one"]).status(0);
    d.wait("window one closed", Duration::from_secs(5), || d.window("one").is_none());
    // A window that does not exist: named, with those that do.
    for leaf in ["focus", "close", "fullscreen", "minimize", "geometry"] {
        d.wl(&[leaf, ".", "one"])
            .status(2)
            .stderr_has(&["no window matches \"one\" on this machine", "app_id two"]);
    }
}

#[test]
fn geometry_and_translations_agree_with_a_window_at_a_known_offset() {
    let d = Desk::start();
    d.foot("placed", &[]);
    d.wl(&[
        "sway",
        "msg",
        ".",
        "[app_id=\"placed\"] floating enable, resize set 400 300, move position 300 200",
    ])
    .status(0);
    let g = d.json(&["geometry", ".", "placed"]);
    // Inside the 2 px border and below the title bar; the content is the window's own size.
    let (x, y) = (g["x"].as_i64().unwrap(), g["y"].as_i64().unwrap());
    assert_eq!(x, 302, "{g}");
    assert!(y > 200 && y < 240, "{g}");
    assert_eq!(
        d.wl(&["geometry", ".", "placed"]).stdout,
        format!("{{\"x\":{x},\"y\":{y},\"width\":{},\"height\":{}}}\n", g["width"], g["height"])
    );
    let run = d.json(&["mouse", ".", "--from-sway", "placed", "10", "20"]);
    assert_eq!((run["x"].as_i64(), run["y"].as_i64()), (Some(x + 10), Some(y + 20)));
}

/// xev `title` at a known place: its log records where clicks land, in its own pixels.
fn xev(d: &Desk, title: &str) -> (std::path::PathBuf, crate::lab::Group) {
    let log = d.home().join(format!("{title}.log"));
    let status = d.json(&["status", "."]);
    let display = status["xwayland"].as_str().unwrap().to_owned();
    let cmd = format!("exec xev -name {title} -geometry 200x150 > {}", log.display());
    let mut c = std::process::Command::new("setpriv");
    c.args([
        "--reuid",
        "4243",
        "--regid",
        "4243",
        "--clear-groups",
        "env",
        &format!("DISPLAY={display}"),
        "timeout",
        "120",
        "sh",
        "-c",
        &cmd,
    ]);
    c.stdin(std::process::Stdio::null());
    let child = crate::lab::Group::spawn(&mut c, "xev");
    d.wait(&format!("xev {title}"), Duration::from_secs(15), || d.window(title).is_some());
    let criteria = format!("[title=\"{title}\"] floating enable, move position 500 400");
    d.wl(&["sway", "msg", ".", &criteria]).status(0);
    (log, child)
}

/// Clicks with `args` until xev logs a button event at (`x`, `y`) in its window (XWayland
/// drops a click now and then while the virtual pointer appears: up to 6 tries).
fn click_lands(d: &Desk, log: &std::path::Path, args: &[&str], x: i64, y: i64) {
    let want = format!("({x},{y}), root:");
    for _ in 0..6 {
        let before = std::fs::read_to_string(log).unwrap_or_default().len();
        d.wl(args).status(0);
        std::thread::sleep(Duration::from_millis(300));
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let new = &text[before.min(text.len())..];
        let lines: Vec<&str> = new.lines().collect();
        let landed = lines.windows(2).any(|w| w[0].starts_with("Button") && w[1].contains(&want));
        if landed {
            return;
        }
    }
    panic!(
        "no ButtonPress at {want} after 6 clicks of {args:?}:\n{}",
        std::fs::read_to_string(log).unwrap_or_default()
    );
}

#[test]
fn an_xwayland_window_gets_clicks_at_points_given_in_its_own_and_sways_coordinates() {
    let d = Desk::start();
    let (log, _xev) = xev(&d, "charlyxev");
    let g = d.json(&["geometry", ".", "charlyxev"]);
    assert_eq!(g["window"]["shell"], "xwayland");
    assert!(g["window"]["x11_window"].as_i64().unwrap() > 0);
    click_lands(&d, &log, &["click", ".", "--from-x11", "charlyxev", "17", "23"], 17, 23);
    click_lands(&d, &log, &["click", ".", "--from-sway", "charlyxev", "41", "9"], 41, 9);
    let (x, y) = ((g["x"].as_i64().unwrap() + 60).to_string(), (g["y"].as_i64().unwrap() + 70).to_string());
    click_lands(&d, &log, &["click", ".", &x, &y], 60, 70);
    // A drag: pressed at the start, moved with the button held, released at the end.
    let (x1, y1) = ((g["x"].as_i64().unwrap() + 10).to_string(), (g["y"].as_i64().unwrap() + 10).to_string());
    let (x2, y2) = ((g["x"].as_i64().unwrap() + 90).to_string(), (g["y"].as_i64().unwrap() + 50).to_string());
    click_lands(&d, &log, &["drag", ".", &x1, &y1, &x2, &y2], 90, 50);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("ButtonRelease") && text.contains("state 0x100"),
        "no motion with the button held:\n{text}"
    );
    // xprop of it, named and focused; a Wayland window is not an X11 one.
    let run = d.wl(&["xprop", ".", "charlyxev"]);
    run.status(0);
    assert!(
        run.stdout.contains("WM_NAME(STRING) = \"charlyxev\"") && run.stdout.contains("Geometry: 200x150"),
        "{}",
        run.dump()
    );
    d.wl(&["focus", ".", "charlyxev"]).status(0);
    assert!(d.wl(&["xprop", "."]).status(0).stdout.contains("Window "));
    d.foot("native", &[]);
    d.wl(&["xprop", ".", "native"])
        .status(2)
        .stderr_has(&["is a Wayland window, not an X11 (XWayland) one; xprop reads X11 windows only"]);
    d.wl(&["click", ".", "--from-x11", "native", "1", "1"]).status(2).stderr_has(&["is a Wayland window"]);
}

#[test]
fn exec_starts_a_program_as_the_desktops_user_with_arguments_as_given() {
    let d = Desk::start();
    let out = d.home().join("exec.txt");
    let marker = format!("{}", out.display());
    // The arguments reach sh as they are: the second is one argument with spaces and quotes.
    let run = d.wl(&[
        "exec",
        ".",
        "--",
        "sh",
        "-c",
        "printf '%s|%s' \"$(id -u)\" \"$1\" > \"$2\"",
        "sh",
        "a b \"c\" $(d)",
        &marker,
    ]);
    run.status(0);
    // Shown as a shell would read it back: the script one quoted word.
    assert!(run.stdout.starts_with("Launched sh -c 'printf '\\''%s|%s'\\'' "), "{}", run.dump());
    assert_eq!(d.file_with("exec.txt", "|"), "4243|a b \"c\" $(d)");
    // It gets the desktop's environment and starts in the desktop user's HOME: nothing of the
    // caller's own but the locale, the terminal and the buses (trial 16 L9: root's whole
    // environment and charly's working directory).
    let env_file = d.home().join("exec-env.txt");
    let script = "{ pwd; env; } > \"$1\"";
    let args = ["check", "wl", "exec", ".", "--", "sh", "-c", script, "sh", env_file.to_str().unwrap()];
    let mut cmd = d.charly();
    cmd.env("CALLERS_OWN_I16", "leak").env("LANG", "C.UTF-8").args(args);
    Run::of(&mut cmd, &args).status(0);
    let text = d.file_with("exec-env.txt", "WAYLAND_DISPLAY=");
    assert_eq!(text.lines().next(), Some(d.home().to_str().unwrap()), "{text}");
    assert!(!text.contains("CALLERS_OWN_I16"), "the caller's variable reached the program:\n{text}");
    assert!(text.lines().any(|l| l == "LANG=C.UTF-8"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("PATH=/")), "{text}");
    d.wl(&["exec", ".", "--", "no-such-program-charly"])
        .status(2)
        .stderr_has(&["exec: no-such-program-charly is not installed on this machine"]);
    // A path that cannot run: refused, not "Launched".
    d.wl(&["exec", ".", "/etc/passwd"])
        .status(2)
        .stderr_has(&["exec: /etc/passwd is not executable on this machine"]);
    d.wl(&["exec", ".", "/etc"]).status(2).stderr_has(&["exec: /etc is a directory"]);
    d.wl(&["exec", ".", "/no/such-i16f"]).status(2).stderr_has(&["exec: /no/such-i16f does not exist"]);
}

#[test]
fn resolution_changes_the_output_and_refuses_bad_sizes() {
    let d = Desk::start();
    let run = d.wl(&["resolution", ".", "1280x720"]);
    assert_eq!(run.status(0).stdout, "Set HEADLESS-1 to 1280x720\n");
    let status = d.json(&["status", "."]);
    assert_eq!(
        (status["outputs"][0]["width"].as_i64(), status["outputs"][0]["height"].as_i64()),
        (Some(1280), Some(720))
    );
    d.wl(&["click", ".", "1500", "10"]).status(2).stderr_has(&["HEADLESS-1 is 1280x720"]);
    d.wl(&["resolution", ".", "12x"]).status(2).stderr_has(&["expects WIDTHxHEIGHT"]);
    d.wl(&["resolution", ".", "800x600", "--output", "DP-7"])
        .status(2)
        .stderr_has(&["\"DP-7\" is not an output (outputs: HEADLESS-1)"]);
}

/// Headless Chromium on a free port with its window at (300, 200); it ends with the test, its
/// whole process group (`timeout` also bounds it).
struct Browser {
    _child: crate::lab::Group,
    url: String,
    _profile: tempfile::TempDir,
}

fn browser() -> Browser {
    let port = crate::util::free_port();
    let profile = tempfile::tempdir().unwrap();
    let mut command = std::process::Command::new("timeout");
    command
        .args(["120", "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--remote-debugging-port={port}"))
        .args(["--remote-debugging-address=127.0.0.1", "--window-position=300,200", "--window-size=800,600"])
        .arg("about:blank")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let child = crate::lab::Group::spawn(&mut command, "chromium (scripts/runtimes.sh installs it)");
    let b = Browser { _child: child, url: format!("http://127.0.0.1:{port}"), _profile: profile };
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "chromium's DevTools on {port}: not within 60 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    b
}

#[test]
fn from_cdp_adds_the_browser_windows_position_and_chrome_read_over_cdp() {
    let d = Desk::start();
    let b = browser();
    // The tab's window as Chromium reports it, read with another leaf.
    let mut cmd = d.charly();
    cmd.args(["check", "cdp", "list", ".", "--cdp-url", &b.url]);
    let tabs = crate::util::Run::of(&mut cmd, &["check cdp list"]);
    let tab = tabs.status(0).stdout.lines().next().unwrap().split('\t').next().unwrap().to_owned();
    // Headless Chromium settles its simulated chrome height (outerHeight - innerHeight) a moment
    // after it starts: read until three reads agree.
    let chrome_now = || -> i64 {
        let mut cmd = d.charly();
        let js = "window.outerHeight - window.innerHeight";
        cmd.args(["check", "cdp", "eval", ".", &tab, js, "--cdp-url", &b.url]);
        crate::util::Run::of(&mut cmd, &["check cdp eval"]).status(0).stdout.trim().parse().unwrap()
    };
    let mut reads = vec![chrome_now()];
    while reads.len() < 3 || reads[reads.len() - 3..].iter().any(|r| *r != reads[reads.len() - 1]) {
        assert!(reads.len() < 50, "the chrome height does not settle: {reads:?}");
        std::thread::sleep(Duration::from_millis(200));
        reads.push(chrome_now());
    }
    let chrome = reads[reads.len() - 1];
    let run = d.json(&["mouse", ".", "--from-cdp", "first", "--cdp-url", &b.url, "10", "20"]);
    assert_eq!((run["x"].as_i64(), run["y"].as_i64()), (Some(310), Some(220 + chrome)), "{run}");
    let run = d.json(&["mouse", ".", "--from-cdp", &tab, "--cdp-url", &b.url, "0", "0"]);
    assert_eq!((run["x"].as_i64(), run["y"].as_i64()), (Some(300), Some(200 + chrome)), "{run}");
    // Off the output once translated; a tab that does not exist; no browser there.
    d.wl(&["click", ".", "--from-cdp", "first", "--cdp-url", &b.url, "1700", "10"])
        .status(2)
        .stderr_has(&["the point (1700, 10) translated to (2000, ", "is off the output"]);
    d.wl(&["mouse", ".", "--from-cdp", "NO-SUCH-TAB", "--cdp-url", &b.url, "1", "1"])
        .status(2)
        .stderr_has(&["--from-cdp"]);
    let closed = format!("http://127.0.0.1:{}", crate::util::free_port());
    d.wl(&["mouse", ".", "--from-cdp", "first", "--cdp-url", &closed, "1", "1"])
        .status(2)
        .stderr_has(&["--from-cdp"]);
    d.wl(&["status", "."]).status(0);
}
