//! A plan of `wl:` steps run by `charly check live test-wl` (candy `wl-plan`'s checks): a
//! terminal started, typed into, the tree showing it and a screenshot of it pass against the
//! running box; the same checks for a window that is not there fail, each with its reason, in
//! the report and in the JUnit file.

use std::time::Duration;

use crate::boxes::{NAME, desk_lock, plan_candy, wl_box};

fn write_plan(text: &str) {
    let dir = wl_box().proj().join("candy/wl-plan");
    let tmp = dir.join("charly.yml.tmp");
    std::fs::write(&tmp, plan_candy(text)).unwrap();
    std::fs::rename(&tmp, dir.join("charly.yml")).unwrap();
}

fn verdicts(report: &serde_json::Value) -> Vec<(String, String)> {
    report["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_owned(), r["verdict"].as_str().unwrap().to_owned()))
        .collect()
}

/// The checks against foot `app` (started by the first check when `start`).
fn checks(app: &str, start: bool) -> String {
    let exec = if start {
        format!(
            "wl-term:\n  check: a terminal is started\n  wl: exec\n  args: [foot, -a, {app}, tee, /tmp/wl/plan.txt]\n  context: [deploy]\n"
        )
    } else {
        String::new()
    };
    format!(
        r#"{exec}wl-focus:
  check: the terminal takes the focus
  wl: focus
  target: {app}
  context: [deploy]
  eventually: 20s
  retry_interval: 500ms
wl-type:
  check: a line typed into it
  wl: type
  text: "typed by a plan\n"
  context: [deploy]
  stdout: "Typed 16 characters"
wl-tree:
  check: sway's tree has the terminal
  wl: sway-tree
  context: [deploy]
  stdout: {{contains: '"app_id": "{app}"'}}
wl-geometry:
  check: it has a place on the output
  wl: geometry
  target: {app}
  context: [deploy]
  stdout: {{contains: '"width":'}}
wl-shot:
  check: a screenshot of the desktop
  wl: screenshot
  context: [deploy]
  artifact: wl-shot.png
  artifact_min_bytes: {min}
"#,
        min = if start { 2000 } else { 100_000_000 }
    )
}

#[test]
fn a_plan_of_wl_steps_passes_against_the_box_and_fails_with_reasons_and_junit_without_the_window() {
    let b = wl_box();
    let _desk = desk_lock();
    write_plan(&checks("plan-term", true));
    let run = b.run(&["check", "live", NAME, "--json", "--junit", "wl-pass.xml"]);
    let all = ["wl-term", "wl-focus", "wl-type", "wl-tree", "wl-geometry", "wl-shot"];
    let want: Vec<(String, String)> = all.iter().map(|n| (n.to_string(), "pass".to_owned())).collect();
    assert_eq!(verdicts(&run.json()), want, "{}", run.dump());
    run.status(0);
    // What tee wrote, once it is the line (at most 10 s); shown as it is otherwise.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut typed = b.cat("/tmp/wl/plan.txt");
    while typed != "typed by a plan\n" && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        typed = b.cat("/tmp/wl/plan.txt");
    }
    assert_eq!(typed, "typed by a plan\n", "the line tee wrote in the box");
    let png = std::fs::read(b.proj().join("wl-shot.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    let xml = std::fs::read_to_string(b.proj().join("wl-pass.xml")).unwrap();
    assert!(xml.contains("tests=\"6\"") && !xml.contains("<failure"), "{xml}");
    b.wl(&["close", NAME, "plan-term"]).status(0);

    // The window is not there: each check that needs it fails with its reason.
    write_plan(&checks("plan-missing", false).replace("  eventually: 20s\n  retry_interval: 500ms\n", ""));
    let run = b.run(&["check", "live", NAME, "--json", "--junit", "wl-fail.xml"]);
    run.status(1);
    let report = run.json();
    let got = verdicts(&report);
    let expect = [
        ("wl-focus", "fail"),
        ("wl-type", "pass"),
        ("wl-tree", "fail"),
        ("wl-geometry", "fail"),
        ("wl-shot", "fail"),
    ];
    let expect: Vec<(String, String)> = expect.iter().map(|(n, v)| (n.to_string(), v.to_string())).collect();
    assert_eq!(got, expect, "{}", run.dump());
    let reasons = |name: &str| {
        report["results"].as_array().unwrap().iter().find(|r| r["name"] == name).unwrap()["reasons"]
            .to_string()
    };
    assert!(
        reasons("wl-focus").contains("no window matches \\\"plan-missing\\\""),
        "{}",
        reasons("wl-focus")
    );
    assert!(
        reasons("wl-tree").contains("stdout") && reasons("wl-tree").contains("plan-missing"),
        "{}",
        reasons("wl-tree")
    );
    assert!(reasons("wl-geometry").contains("exit status 2, expected 0"), "{}", reasons("wl-geometry"));
    assert!(reasons("wl-shot").contains("expected at least 100000000"), "{}", reasons("wl-shot"));
    let xml = std::fs::read_to_string(b.proj().join("wl-fail.xml")).unwrap();
    assert!(xml.contains("tests=\"5\"") && xml.contains("failures=\"4\""), "{xml}");
    assert!(xml.contains("no window matches") && xml.contains("expected at least 100000000"), "{xml}");
    // Validation catches a bad step before anything runs.
    write_plan("wl-bad:\n  check: a bad step\n  wl: drag\n  x: 1\n  y: 2\n  context: [deploy]\n");
    let run = b.run(&["check", "live", NAME]);
    run.status(2).stderr_has(&["wl: drag needs x2:", "wl: drag needs y2:"]);
    write_plan("");
}
