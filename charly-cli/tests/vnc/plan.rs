//! `vnc:` steps in a check plan, run by `charly check run` against Xvfb + x11vnc: passing,
//! failing with each reason and JUnit, skipped under the build context, validated.

use std::process::Command;

use crate::lab::{Lab, free_port};

const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

fn charly(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    charly_env(dir, args, &[])
}

fn charly_env(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let out = Command::new(CHARLY)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .env("HOME", dir)
        .env_remove("CHARLY_PROJECT_DIR")
        .env_remove("VNC_PASSWORD")
        .output()
        .expect("charly runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_plan_of_vnc_steps_passes_and_fails_with_each_reason_and_junit() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::x11vnc(640, 480, None);
    let addr = &lab.addr;
    let closed = format!("127.0.0.1:{}", free_port());
    let plan = format!(
        r##"
up:
  check: the desktop answers with its size
  vnc: status
  vnc_addr: {addr}
  stdout: {{contains: "640x480"}}
shot:
  check: a screenshot of it
  vnc: screenshot
  vnc_addr: {addr}
  artifact: shot.png
  artifact_min_bytes: 100
moved:
  check: the pointer moves
  vnc: mouse
  vnc_addr: {addr}
  x: 50
  y: 60
  stdout: {{contains: "(50, 60)"}}
clicked:
  check: a right click
  vnc: click
  vnc_addr: {addr}
  x: 10
  y: 20
  button: right
  stdout: {{contains: "Clicked right at (10, 20)"}}
typed:
  check: text typed
  vnc: type
  vnc_addr: {addr}
  text: hi
  stdout: {{contains: "Typed 2 characters"}}
size:
  check: fbupdate-request prints the size
  vnc: rfb
  vnc_addr: {addr}
  method: fbupdate-request
  stdout: '{{"width":640,"height":480}}'
wrong-size:
  check: a size the desktop does not have
  vnc: status
  vnc_addr: {addr}
  stdout: {{contains: "1920x1080"}}
huge-shot:
  check: a screenshot bigger than it is
  vnc: screenshot
  vnc_addr: {addr}
  artifact: huge.png
  artifact_min_bytes: 100000000
nobody:
  check: a server that is not there
  vnc: status
  vnc_addr: {closed}
"##
    );
    std::fs::write(dir.path().join("plan.yml"), plan).unwrap();
    let (code, text, err) = charly(dir.path(), &["check", "run", "plan.yml", "--junit", "out.xml"]);
    assert_eq!(code, Some(1), "{text}\n{err}");
    for pass in ["PASS up:", "PASS shot:", "PASS moved:", "PASS clicked:", "PASS typed:", "PASS size:"] {
        assert!(text.contains(pass), "{pass}: {text}");
    }
    assert!(text.contains("FAIL wrong-size:") && text.contains("stdout"), "{text}");
    assert!(
        text.contains("FAIL huge-shot:")
            && text.contains("huge.png: ")
            && text.contains("expected at least 100000000"),
        "{text}"
    );
    assert!(text.contains("FAIL nobody:") && text.contains("not reachable"), "{text}");
    assert!(text.contains("checks: 6 passed, 3 failed, 0 skipped"), "{text}");
    let png = std::fs::read(dir.path().join("shot.png")).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    let xml = std::fs::read_to_string(dir.path().join("out.xml")).unwrap();
    assert!(xml.contains("classname=\"vnc.status\"") && xml.contains("<failure"), "{xml}");
    // The pointer really moved: the last step that moved it was the right click at (10, 20).
    lab.pointer_reaches(10, 20);

    // Under the build context a vnc step is skipped, saying why.
    let (code, text, _) =
        charly(dir.path(), &["check", "run", "plan.yml", "--context", "build", "--filter", "vnc"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("SKIP up: vnc: status requires a running desktop (skip under charly check box)"),
        "{text}"
    );
}

#[test]
fn vnc_steps_are_validated_naming_the_method_and_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let plan = r##"
a:
  check: unknown method
  vnc: frobnicate
b:
  check: a click without y
  vnc: click
  x: 3
c:
  check: artifact on status
  vnc: status
  artifact: x.png
d:
  check: passwd is not a step
  vnc: passwd
e:
  check: a key the verb does not take
  vnc: status
  selector: "#x"
f:
  check: a coordinate off the wire
  vnc: mouse
  x: 70000
  y: 1
g:
  check: a key outside the table (found when the plan is read, not when it runs)
  vnc: key
  key: Hyper_Q
h:
  check: a key name in another case is one key
  vnc: key
  key: return
"##;
    std::fs::write(dir.path().join("bad.yml"), plan).unwrap();
    let (code, text, err) = charly(dir.path(), &["check", "validate", "bad.yml"]);
    assert_eq!(code, Some(1), "{text}\n{err}");
    assert!(
        text.contains("check a: vnc: unknown method \"frobnicate\" (allowed: status, screenshot, click"),
        "{text}"
    );
    assert!(text.contains("check b: vnc: click needs y: (desktop pixels 0-65535)"), "{text}");
    assert!(text.contains("check c: artifact: only applies to vnc: screenshot, not status"), "{text}");
    assert!(text.contains("check d: vnc: passwd is not a plan step"), "{text}");
    assert!(text.contains("check e: unknown key \"selector\" for vnc:"), "{text}");
    assert!(text.contains("check f: x: expects desktop pixels 0-65535, got 70000"), "{text}");
    assert!(text.contains("check g: key: key \"Hyper_Q\" is not a key name charly knows"), "{text}");
    assert!(!text.contains("check h:"), "{text}");
}

/// Regression (issue 15 trial, HIGH; fixed in 9825124): with a session bus reachable and no
/// VNC_PASSWORD, a `vnc:` step's credential lookup probed the keyring with a `block_on` inside
/// the plan's runtime and panicked ("Cannot start a runtime from within a runtime"), losing
/// the plan and its JUnit. A one-step plan against x11vnc with a private dbus-daemon as the
/// session bus passes, and its JUnit is written.
#[test]
fn r15_a_vnc_step_with_a_session_bus_and_no_password_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    let lab = Lab::x11vnc(320, 240, None);
    let bus = crate::dbus_bus::Bus::new(false);
    let plan = format!(
        "up:\n  check: the desktop answers\n  vnc: status\n  vnc_addr: {}\n  stdout: {{contains: \"320x240\"}}\n",
        lab.addr
    );
    std::fs::write(dir.path().join("plan.yml"), plan).unwrap();
    let (code, text, err) = charly_env(
        dir.path(),
        &["check", "run", "plan.yml", "--junit", "out.xml"],
        &[("DBUS_SESSION_BUS_ADDRESS", &bus.address)],
    );
    assert!(!err.contains("panicked") && !err.contains("Cannot start a runtime"), "{err}");
    assert_eq!(code, Some(0), "{text}\n{err}");
    assert!(text.contains("PASS up:"), "{text}");
    let xml = std::fs::read_to_string(dir.path().join("out.xml")).unwrap();
    assert!(xml.contains("name=\"up\"") && !xml.contains("<failure"), "{xml}");
}
