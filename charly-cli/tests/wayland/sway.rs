//! `check.wl.sway.*` on `.`: sway's answers, and its refusals in its own words.

use crate::desk::Desk;

#[test]
fn sway_queries_give_sways_json() {
    let d = Desk::start();
    d.foot("treefoot", &[]);
    let tree = d.json(&["sway", "tree", "."]);
    assert_eq!(tree["what"], "sway.tree");
    assert_eq!(tree["items"][0]["type"], "root");
    let text = d.wl(&["sway", "tree", "."]).stdout;
    assert!(text.contains("\"app_id\": \"treefoot\""), "{text}");
    let outputs = d.json(&["sway", "outputs", "."]);
    assert_eq!(outputs["items"][0]["name"], "HEADLESS-1");
    let workspaces = d.json(&["sway", "workspaces", "."]);
    assert_eq!(workspaces["items"][0]["name"], "1");
}

#[test]
fn sway_commands_change_the_desktop_and_sways_refusals_are_its_own_errors() {
    let d = Desk::start();
    d.foot("a", &[]);
    d.foot("b", &[]);
    let run = d.wl(&["sway", "msg", ".", "[app_id=\"a\"] focus"]);
    run.status(0);
    assert_eq!(run.stdout, "sway: [app_id=\"a\"] focus: ok\n");
    assert_eq!(d.window("a").unwrap()["focused"], true);
    d.wl(&["sway", "focus", ".", "app_id=b"]).status(0);
    assert_eq!(d.window("b").unwrap()["focused"], true);
    d.wl(&["sway", "focus", ".", "left"]).status(0);
    assert_eq!(d.window("a").unwrap()["focused"], true);
    d.wl(&["sway", "floating", "."]).status(0);
    assert_eq!(d.window("a").unwrap()["floating"], true);
    let before = d.window("a").unwrap()["width"].as_i64().unwrap();
    d.wl(&["sway", "resize", ".", "width", "50px"]).status(0);
    assert_eq!(d.window("a").unwrap()["width"].as_i64().unwrap(), before + 50);
    d.wl(&["sway", "resize", ".", "width", "-30px"]).status(0);
    assert_eq!(d.window("a").unwrap()["width"].as_i64().unwrap(), before + 20);
    d.wl(&["sway", "floating", "."]).status(0);
    d.wl(&["sway", "layout", ".", "tabbed"]).status(0);
    let tree = d.wl(&["sway", "tree", "."]).stdout;
    assert!(tree.contains("\"layout\": \"tabbed\""), "{tree}");
    d.wl(&["sway", "move", ".", "workspace", "2"]).status(0);
    assert_eq!(d.window("a").unwrap()["workspace"], "2");
    d.wl(&["sway", "workspace", ".", "2"]).status(0);
    let ws = d.json(&["sway", "workspaces", "."]);
    assert!(ws["items"].as_array().unwrap().iter().any(|w| w["name"] == "2" && w["focused"] == true), "{ws}");
    d.wl(&["sway", "focus", ".", "app_id=a"]).status(0);
    d.wl(&["sway", "kill", "."]).status(0);
    d.wait("window a closed", std::time::Duration::from_secs(5), || d.window("a").is_none());
    d.wl(&["sway", "reload", "."]).status(0);
    // sway's own refusals.
    d.wl(&["sway", "msg", ".", "frobnicate now"])
        .status(2)
        .stderr_has(&["sway refused `frobnicate now`: Unknown/invalid command 'frobnicate'"]);
    d.wl(&["sway", "msg", ".", "[app_id=\"nosuch\"] focus"])
        .status(2)
        .stderr_has(&["sway refused", "No matching node"]);
    // charly's refusals, before sway sees anything: nothing after a criteria, no quote in a value.
    d.wl(&["sway", "focus", ".", "[app_id=\"b\"]; exec touch /tmp/charly-wl-injected"])
        .status(2)
        .stderr_has(&["nothing may follow the closing ]"]);
    d.wl(&["sway", "focus", ".", "app_id=b\"] exec x; [a=\""]).status(2).stderr_has(&["without quotes"]);
    d.wl(&["sway", "move", ".", "output", "X;kill"]).status(2).stderr_has(&["expects workspace N"]);
    d.wl(&["sway", "resize", ".", "depth", "5"]).status(2).stderr_has(&["not width or height"]);
    d.wl(&["sway", "layout", ".", "grid"]).status(2).stderr_has(&["allowed: tabbed"]);
    assert!(!std::path::Path::new("/tmp/charly-wl-injected").exists());
    d.wl(&["status", "."]).status(0);
}

#[test]
fn atspi_needs_an_accessibility_bus_and_says_so() {
    let d = Desk::start();
    let empty = tempfile::tempdir().unwrap();
    let mut cmd = d.charly();
    let bus = format!("unix:path={}/no-bus", empty.path().display());
    cmd.env("DBUS_SESSION_BUS_ADDRESS", &bus).args(["check", "wl", "atspi", ".", "tree"]);
    let run = crate::util::Run::of(&mut cmd, &["check wl atspi . tree (no bus)"]);
    run.status(2).stderr_has(&["python3 (Atspi) failed on this machine", "accessibility bus"]);
    d.wl(&["atspi", ".", "find"]).status(2).stderr_has(&["atspi find needs a query"]);
}

/// A session bus as the desktop's uid 4243, which has no passwd entry: dbus-daemon refuses to
/// start without one ("Could not get password database information"), so it runs under
/// nss_wrapper (libnss-wrapper) with a passwd file of its own. The accessibility bus is
/// activated from it (at-spi-bus-launcher), which exits with it. The bus ends with the returned
/// guard, or when the test process is killed.
struct Bus {
    daemon: std::process::Child,
    address: String,
    dir: tempfile::TempDir,
}

impl Drop for Bus {
    fn drop(&mut self) {
        // at-spi-bus-launcher and its bus exit when the session bus goes.
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

fn session_bus() -> Bus {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let p = |s: &str| dir.path().join(s).display().to_string();
    std::fs::write(p("passwd"), format!("desk:x:4243:4243::{}:/bin/sh\n", p(""))).unwrap();
    std::fs::write(p("group"), "desk:x:4243:\n").unwrap();
    let address = format!("unix:path={}", p("bus"));
    let daemon = std::process::Command::new("setpriv")
        .args(["--reuid", "4243", "--regid", "4243", "--clear-groups", "env", "-i"])
        .arg("LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libnss_wrapper.so")
        .arg(format!("NSS_WRAPPER_PASSWD={}", p("passwd")))
        .arg(format!("NSS_WRAPPER_GROUP={}", p("group")))
        .arg(format!("HOME={}", p("")))
        .arg(format!("XDG_RUNTIME_DIR={}", p("")))
        .args(["PATH=/usr/bin:/bin", "dbus-daemon", "--session", "--nofork", "--nopidfile"])
        .arg(format!("--address={address}"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("dbus-daemon runs (scripts/runtimes.sh installs dbus and libnss-wrapper)");
    // setpriv and env exec, so the child is dbus-daemon itself; a watcher ends it when this
    // process is killed.
    let watcher = format!(
        "(tail --pid={} -f /dev/null; kill {}) </dev/null >/dev/null 2>&1 &",
        std::process::id(),
        daemon.id()
    );
    assert!(std::process::Command::new("sh").args(["-c", &watcher]).status().is_ok_and(|s| s.success()));
    let started = std::time::Instant::now();
    while !dir.path().join("bus").exists() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "dbus-daemon as uid 4243 did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Bus { daemon, address, dir }
}

#[test]
fn atspi_reads_the_accessibility_tree_over_a_real_bus() {
    let d = Desk::start();
    let bus = session_bus();
    let atspi = |args: &[&str]| {
        let mut cmd = d.charly();
        cmd.env("DBUS_SESSION_BUS_ADDRESS", &bus.address).args(["check", "wl", "atspi", "."]).args(args);
        crate::util::Run::of(&mut cmd, args)
    };
    // No accessible application runs here (foot has no AT-SPI; bookworm's GTK typelib is not
    // installed): the tree is the desktop itself, read through the bus the launcher started.
    let tree = atspi(&["tree", "--json"]);
    let items = tree.status(0).json()["items"].as_array().cloned().unwrap();
    assert_eq!(items[0]["role"], "desktop frame", "{}", tree.dump());
    assert_eq!(items[0]["depth"], 0);
    let found = atspi(&["find", "desktop", "--json"]).json();
    assert_eq!(found["items"].as_array().unwrap().len(), 1, "{found}");
    assert_eq!(atspi(&["find", "no-such-thing", "--json"]).json()["items"], serde_json::json!([]));
    atspi(&["click", "desktop"]).status(2).stderr_has(&[
        "no accessible matching \"desktop\" has a click, press or activate action on this machine",
    ]);
    assert!(bus.dir.path().join("at-spi").exists(), "the accessibility bus was started");
    d.wl(&["status", "."]).status(0);
}
