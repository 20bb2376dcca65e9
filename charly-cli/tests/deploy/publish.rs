//! The fixes that "not published" and "no bus address" errors print, run as printed: each
//! error's commands are taken from its text and run, and the probe then reaches the port (or
//! the address). One wording for all (`charly_cli::resolve::publish_hint`): a `port:` node in
//! a candy and `charly update`, or `charly stop && charly start -p`.

use crate::util::{Box, Run, free_port};

const NAME: &str = "test-fx-pub";

/// The backquoted parts of `text` (the commands and nodes a hint prints).
fn quoted(text: &str) -> Vec<String> {
    text.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

/// The backquoted part of `run`'s stderr that starts with `prefix`.
#[track_caller]
fn printed(run: &Run, prefix: &str) -> String {
    quoted(&run.stderr)
        .into_iter()
        .find(|q| q.starts_with(prefix))
        .unwrap_or_else(|| panic!("no `{prefix}...` in the hint\n{}", run.dump()))
}

/// Runs a printed `charly A && charly B` line: each command split at spaces, in order.
#[track_caller]
fn run_line(b: &Box, line: &str) {
    for command in line.split("&&") {
        let words: Vec<&str> = command.split_whitespace().collect();
        assert_eq!(words.first(), Some(&"charly"), "{line}");
        b.run(&words[1..]).status(0);
    }
}

/// Where podman publishes `port`/tcp of the box's container (empty: nowhere).
fn podman_port(port: u16) -> String {
    let out = std::process::Command::new("podman")
        .args(["port", &format!("charly-{NAME}"), &format!("{port}/tcp")])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn the_printed_fixes_for_an_unpublished_port_and_a_missing_bus_address_work() {
    let b = Box::built(NAME);
    b.run(&["start", NAME]).status(0);

    // VNC's port 5900: `charly stop && charly start -p`, with a free host port (as it says).
    let vnc = b.run(&["check", "vnc", "status", NAME]);
    vnc.status(2).stderr_has(&[&format!(
        "container charly-{NAME} publishes no host port for VNC's container port 5900"
    )]);
    let line = printed(&vnc, "charly stop");
    assert_eq!(line, format!("charly stop {NAME} && charly start {NAME} -p 5900:5900"), "{}", vnc.dump());
    let host = free_port();
    run_line(&b, &line.replace("5900:5900", &format!("{host}:5900")));
    assert_eq!(podman_port(5900), format!("127.0.0.1:{host}"));
    // Nothing serves VNC in the box: what fails now is the connection to the published port.
    let vnc = b.run(&["check", "vnc", "status", NAME]);
    assert!(
        !vnc.stderr.contains("not published") && vnc.stderr.contains(&format!("127.0.0.1:{host}")),
        "{}",
        vnc.dump()
    );

    // CDP's port 9222: the `port:` node in a candy, then `charly update` as printed.
    let cdp = b.run(&["check", "cdp", "status", NAME]);
    cdp.status(2).stderr_has(&["publishes no host port for CDP's container port 9222"]);
    let node = printed(&cdp, "port:");
    assert_eq!(node, "port: [9222]");
    // The bus: no DBUS_SESSION_BUS_ADDRESS in the container; its fix is an `env:` node and
    // `charly update` too.
    let bus = b.run(&["check", "dbus", "list", NAME]);
    bus.status(2).stderr_has(&["has no DBUS_SESSION_BUS_ADDRESS in its environment"]);
    let env = printed(&bus, "env:");
    b.candy(
        NAME,
        "fxport",
        &format!("fxport:\n  candy: {{}}\nfxport-port:\n  {node}\nfxport-env:\n  {env}\n"),
    );
    let update = printed(&cdp, "charly update");
    assert_eq!(update, format!("charly update {NAME}"));
    assert_eq!(printed(&bus, "charly update"), update, "one fix, one wording");
    run_line(&b, &update);

    // 9222 is published (at 9222, or the next free port when that is taken), 5900 still is.
    let mapped = podman_port(9222);
    assert!(mapped.starts_with("127.0.0.1:"), "9222 not published: {mapped:?}");
    assert_eq!(podman_port(5900), format!("127.0.0.1:{host}"), "the earlier -p is kept");
    let cdp = b.run(&["check", "cdp", "status", NAME, "--json"]);
    let j = cdp.json();
    assert_eq!(j["url"], format!("http://{mapped}"), "{}", cdp.dump());
    assert!(j["error"].as_str().unwrap().contains("nothing answers on its port 9222"), "{}", cdp.dump());
    // The bus address reached the container: charly now looks for its socket.
    let bus = b.run(&["check", "dbus", "list", NAME]);
    assert!(
        !bus.stderr.contains("has no DBUS_SESSION_BUS_ADDRESS") && bus.stderr.contains("/tmp/dbus-session"),
        "{}",
        bus.dump()
    );
}
