//! A plan of `cdp:`, `vnc:` and `dbus:` steps run by `charly check live test-desktop` (no
//! `cdp_url:` or `vnc_addr:`: the steps find the box's published 9222 and 5900, and the
//! container's session bus), written as the checks of candy `desk-plan`: it passes against the
//! running box, then fails with each reason and a JUnit file once the page differs (its title,
//! text and form gone) and the plan expects a desktop and a bus name the box does not have.

use crate::cdp::{FORM, eval, open};
use crate::desk::{NAME, desk, plan_candy, pointer};

/// The checks, against tab `tab`, expecting a desktop of `size` and `bus_name` on the bus.
fn checks(tab: &str, size: &str, bus_name: &str) -> String {
    format!(
        r##"desk-title:
  check: the form's tab has its title
  cdp: eval
  tab: {tab}
  expression: document.title
  context: [deploy]
  stdout: Form
desk-text:
  check: and its text
  cdp: text
  tab: {tab}
  context: [deploy]
  stdout: {{contains: "Sign in"}}
desk-type:
  check: a name typed into the form
  cdp: type
  tab: {tab}
  selector: "#name"
  text: Ada
  context: [deploy]
  timeout: 5s
  stdout: {{contains: "Typed 3 characters into #name"}}
desk-click:
  check: Go clicked
  cdp: click
  tab: {tab}
  selector: "#go"
  context: [deploy]
  timeout: 5s
desk-greeting:
  check: the page greets the name
  cdp: eval
  tab: {tab}
  expression: out.textContent
  context: [deploy]
  stdout: "Hello, Ada"
desk-page-shot:
  check: a screenshot of the page
  cdp: screenshot
  tab: {tab}
  context: [deploy]
  artifact: page-shot.png
  artifact_min_bytes: 1000
vnc-up:
  check: the desktop answers with its size
  vnc: status
  context: [deploy]
  stdout: {{contains: "Size:       {size}"}}
vnc-shot:
  check: a screenshot of the desktop
  vnc: screenshot
  context: [deploy]
  artifact: desk-shot.png
  artifact_min_bytes: 1000
vnc-mouse:
  check: the pointer moves
  vnc: mouse
  x: 1000
  y: 200
  context: [deploy]
  stdout: {{contains: "(1000, 200)"}}
vnc-click:
  check: a click on the desktop
  vnc: click
  x: 1100
  y: 200
  context: [deploy]
  stdout: {{contains: "Clicked left at (1100, 200)"}}
bus-names:
  check: the box's session bus answers
  dbus: list
  context: [deploy]
  stdout: {{contains: org.freedesktop.DBus}}
bus-owner:
  check: the expected name is on the bus
  dbus: call
  dest: org.freedesktop.DBus
  path: /org/freedesktop/DBus
  method: org.freedesktop.DBus.NameHasOwner
  args: ["string:{bus_name}"]
  context: [deploy]
  stdout: "true"
"##
    )
}

/// Replaces candy `desk-plan`'s file (temporary file + rename: other tests read the project).
fn write_plan(text: &str) {
    let dir = desk().proj().join("candy/desk-plan");
    let tmp = dir.join("charly.yml.tmp");
    std::fs::write(&tmp, plan_candy(text)).unwrap();
    std::fs::rename(&tmp, dir.join("charly.yml")).unwrap();
}

/// `check live`'s verdicts by check name, in the plan's order.
fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    let results = report["results"].as_array().expect("results");
    results
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_owned(), r["verdict"].as_str().unwrap().to_owned()))
        .collect()
}

fn named(list: &[&str], verdict: &str) -> Vec<(String, String)> {
    list.iter().map(|n| (n.to_string(), verdict.to_owned())).collect()
}

#[test]
fn a_plan_of_cdp_vnc_and_dbus_steps_passes_against_the_box_and_fails_with_reasons_and_junit() {
    let d = desk();
    let _pointer = pointer();
    let tab = open(FORM, "Form");
    write_plan(&checks(&tab, "1280x720", "org.freedesktop.DBus"));
    let all = [
        "desk-title",
        "desk-text",
        "desk-type",
        "desk-click",
        "desk-greeting",
        "desk-page-shot",
        "vnc-up",
        "vnc-shot",
        "vnc-mouse",
        "vnc-click",
        "bus-names",
        "bus-owner",
    ];
    let run = d.run(&["check", "live", NAME, "--json", "--junit", "pass.xml"]);
    assert_eq!(verdicts(&run.json()), named(&all, "pass"), "{}", run.dump());
    run.status(0);
    // The steps did it: the page greets Ada, the artifacts are PNGs.
    assert_eq!(eval(&tab, "out.textContent"), "Hello, Ada");
    for png in ["page-shot.png", "desk-shot.png"] {
        let bytes = std::fs::read(d.proj().join(png)).unwrap_or_else(|e| panic!("{png}: {e}"));
        assert_eq!(&bytes[..4], b"\x89PNG", "{png}");
    }
    let xml = std::fs::read_to_string(d.proj().join("pass.xml")).unwrap();
    assert!(xml.contains("tests=\"12\"") && !xml.contains("<failure"), "{xml}");

    // The page differs: another title, the form gone. The plan expects another desktop.
    eval(&tab, "document.title = 'Signed out'; document.body.innerHTML = '<h1>Bye</h1>'; 'ok'");
    write_plan(&checks(&tab, "1920x1080", "org.charly.Gone"));
    let run = d.run(&["check", "live", NAME, "--junit", "fail.xml"]);
    run.status(1);
    let text = &run.stdout;
    let failed =
        ["desk-title", "desk-text", "desk-type", "desk-click", "desk-greeting", "vnc-up", "bus-owner"];
    for name in failed {
        assert!(text.contains(&format!("FAIL {name}:")), "{name}\n{}", run.dump());
    }
    for name in ["desk-page-shot", "vnc-shot", "vnc-mouse", "vnc-click", "bus-names"] {
        assert!(text.contains(&format!("PASS {name}:")), "{name}\n{}", run.dump());
    }
    let reason = |name: &str| -> String {
        let at = text.find(&format!("FAIL {name}:")).unwrap();
        let rest = &text[at..];
        let end = rest[1..].find("\nPASS ").into_iter().chain(rest[1..].find("\nFAIL ")).min();
        rest[..end.map_or(rest.len(), |e| e + 1)].to_owned()
    };
    let reasons = [
        ("desk-title", "stdout \"Signed out\" does not equal \"Form\""),
        ("desk-text", "stdout \"Bye\" does not contain \"Sign in\""),
        ("desk-type", "exit status 2, expected 0: no visible element matches selector \"#name\""),
        ("desk-click", "exit status 2, expected 0: no visible element matches selector \"#go\""),
        ("desk-greeting", "exit status 2, expected 0: JavaScript threw: ReferenceError: out is not defined"),
        (
            "vnc-up",
            "Size:       1280x720\\nSecurity:   None (1) (offered: None (1))\" does not contain \"Size:       1920x1080\"",
        ),
        ("bus-owner", "stdout \"false\" does not equal \"true\""),
    ];
    for (name, why) in reasons {
        assert!(reason(name).contains(why), "{name}: no {why:?} in\n{}", reason(name));
    }
    assert!(text.contains("checks: 5 passed, 7 failed, 0 skipped"), "{}", run.dump());
    let xml = std::fs::read_to_string(d.proj().join("fail.xml")).unwrap();
    assert_eq!(xml.matches("<failure").count(), 7, "{xml}");
    assert!(xml.contains("name=\"desk-title\"") && xml.contains("classname=\"cdp.eval\""), "{xml}");
    assert!(xml.contains("name=\"vnc-up\"") && xml.contains("classname=\"vnc.status\""), "{xml}");
    assert!(xml.contains("name=\"bus-owner\"") && xml.contains("classname=\"dbus.call\""), "{xml}");
    assert!(xml.contains("no visible element matches selector"), "the reasons are in the JUnit file: {xml}");
    write_plan("");
    desk().run(&["check", "cdp", "close", NAME, &tab]).status(0);
}
