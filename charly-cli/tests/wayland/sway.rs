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

#[test]
fn atspi_reads_the_accessibility_tree_over_a_real_bus() {
    let d = Desk::start();
    let bus = crate::lab::SessionBus::start();
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
