//! `cdp:` steps in a check plan, run by `charly check run` against the lab's browser.

use crate::lab::Lab;

#[test]
fn a_plan_of_cdp_steps_passes_and_fails_with_each_reason_and_junit() {
    let lab = Lab::new();
    let tab = lab.open("/late");
    let url = lab.cdp_url();
    let plan = format!(
        r##"
title:
  check: the page is the late one
  cdp: eval
  tab: {tab}
  cdp_url: {url}
  expression: document.title
  stdout: Late
late:
  check: the late element arrives
  cdp: wait
  tab: {tab}
  cdp_url: {url}
  selector: "#late"
  timeout: 10s
  stdout: {{contains: "#late found"}}
shot:
  check: a screenshot of it
  cdp: screenshot
  tab: {tab}
  cdp_url: {url}
  artifact: shot.png
  artifact_min_bytes: 100
listed:
  check: the first tab is listed
  cdp: list
  cdp_url: {url}
  stdout: {{contains: "{tab}"}}
wrong-title:
  check: a title the page does not have
  cdp: eval
  tab: {tab}
  cdp_url: {url}
  expression: document.title
  stdout: Early
throws:
  check: a script that throws
  cdp: eval
  tab: {tab}
  cdp_url: {url}
  expression: "null.x"
huge-shot:
  check: a screenshot bigger than it is
  cdp: screenshot
  tab: {tab}
  cdp_url: {url}
  artifact: huge.png
  artifact_min_bytes: 100000000
"##
    );
    std::fs::write(lab.path("plan.yml"), plan).unwrap();
    let ran = lab.charly(&["check", "run", "plan.yml", "--junit", "out.xml"]).status(1);
    let text = &ran.stdout;
    for pass in ["PASS title:", "PASS late:", "PASS shot:", "PASS listed:"] {
        assert!(text.contains(pass), "{pass}: {text}");
    }
    assert!(text.contains("FAIL wrong-title:") && text.contains("stdout"), "{text}");
    assert!(
        text.contains("FAIL throws:")
            && text.contains("exit status 2, expected 0: JavaScript threw: TypeError"),
        "{text}"
    );
    assert!(
        text.contains("FAIL huge-shot:")
            && text.contains("huge.png: ")
            && text.contains("expected at least 100000000"),
        "{text}"
    );
    assert!(text.contains("checks: 4 passed, 3 failed, 0 skipped"), "{text}");
    let png = std::fs::read(lab.path("shot.png")).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    let xml = std::fs::read_to_string(lab.path("out.xml")).unwrap();
    assert!(xml.contains("classname=\"cdp.eval\"") && xml.contains("<failure"), "{xml}");

    // Under the build context a cdp step is skipped, saying why.
    let ran = lab.charly(&["check", "run", "plan.yml", "--context", "build", "--filter", "cdp"]).status(0);
    assert!(
        ran.stdout.contains("SKIP title: cdp: eval requires a running browser (skip under charly check box)"),
        "{}",
        ran.stdout
    );
}

#[test]
fn cdp_steps_are_validated_naming_the_method_and_the_missing_field() {
    let lab = Lab::new();
    let plan = r#"
a:
  check: unknown method
  cdp: frobnicate
b:
  check: no selector
  cdp: click
c:
  check: a key the verb does not take
  cdp: eval
  expression: "1"
  tool: x
d:
  check: artifact on eval
  cdp: eval
  expression: "1"
  artifact: x.png
e:
  check: a key outside the table (found when the plan is read)
  cdp: spa-key
  key: Hyper_Q
f:
  check: a combo without a modifier
  cdp: spa-key-combo
  combo: t
g:
  check: DOM and X names in any case are keys too
  cdp: spa-key
  key: PageDown
"#;
    std::fs::write(lab.path("bad.yml"), plan).unwrap();
    let ran = lab.charly(&["check", "validate", "bad.yml"]).status(1);
    let text = &ran.stdout;
    assert!(
        text.contains("check a: cdp: unknown method \"frobnicate\" (allowed: status, list, url"),
        "{text}"
    );
    assert!(text.contains("check b: cdp: click needs selector:"), "{text}");
    assert!(text.contains("check c: tool: does not apply to cdp: steps"), "{text}");
    assert!(text.contains("check d: artifact: only applies to cdp: screenshot, not eval"), "{text}");
    assert!(text.contains("check e: key: \"Hyper_Q\" is not in the key table (allowed: return"), "{text}");
    assert!(text.contains("check f: combo: combo \"t\": needs at least one modifier"), "{text}");
    assert!(!text.contains("check g:"), "{text}");
}
