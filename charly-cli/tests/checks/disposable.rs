use std::process::Command;

use crate::fixture::{self, FIXTURE};
use crate::util::{Box, CHARLY, Run};

const BOX_PLAN: &str = r#"
pass-file:
  check: built files are there
  file: /etc/passwd
  contains: root
fail-service:
  check: busybox has neither supervisorctl nor systemctl
  service: web
skip-http:
  check: needs a published port
  http: http://127.0.0.1:${HOST_PORT:80}/
skip-mcp:
  check: needs a running server
  mcp: ping
  context: [deploy]
skip-host-command:
  check: host commands need a live deployment
  command: touch /tmp/charly-check-box-ran
  from_host: true
pass-command:
  check: each check has its own container
  command: test ! -e /tmp/mark && touch /tmp/mark && echo fresh
  stdout: fresh
pass-command-again:
  check: a new container, so the mark is gone
  command: test ! -e /tmp/mark && echo fresh
  stdout: fresh
"#;

fn tree(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn check_box_runs_each_check_in_a_disposable_container_and_touches_no_project_file() {
    fixture::images();
    let b = Box::new("test-chk-box");
    b.run(&["box", "set", "test-chk-box.box.base", FIXTURE]).status(0);
    let file = b.proj().join("charly.yml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}{BOX_PLAN}")).unwrap();
    // Not built yet: the checks that need a container fail saying so.
    let unbuilt = b.run(&["check", "box", "test-chk-box", "--json"]);
    unbuilt.status(1);
    let first = &unbuilt.json()["results"][0];
    assert_eq!(first["verdict"], "fail", "{}", unbuilt.dump());
    assert!(
        first["reasons"][0]
            .as_str()
            .unwrap()
            .contains("is not built: run `charly box build test-chk-box` first")
    );

    b.run(&["box", "build", "test-chk-box"]).status(0);
    let before = tree(&b.proj());
    let _ = std::fs::remove_file("/tmp/charly-check-box-ran");
    let run = b.run(&["check", "box", "test-chk-box", "--json"]);
    run.status(1);
    assert_eq!(tree(&b.proj()), before, "check box changed the project");
    assert!(
        !std::path::Path::new("/tmp/charly-check-box-ran").exists(),
        "a host command ran under check box"
    );
    let json = run.json();
    let verdicts: Vec<(String, String)> = json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_owned(), r["verdict"].as_str().unwrap().to_owned()))
        .collect();
    for (name, verdict) in &verdicts {
        let want = name.split('-').next().unwrap();
        assert_eq!(verdict, want, "{name}\n{}", run.dump());
    }
    assert_eq!(verdicts.len(), 7, "{}", run.dump());
    let service = &json["results"][1]["reasons"][0];
    assert_eq!(
        service,
        "service web: the container has no supervisorctl or systemctl, which this check needs"
    );
    // No disposable container is left of this image.
    let left = Command::new("podman")
        .args([
            "ps",
            "-a",
            "--filter",
            &format!("ancestor={}", "localhost/test-chk-box:latest"),
            "--format",
            "{{.Names}}",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&left.stdout).trim(), "", "containers left behind");
}

#[test]
fn box_test_reads_the_label_only() {
    fixture::images();
    let tag = "localhost/test-chk-label:latest";
    let b = Box::new("test-chk-label");
    let label = serde_json::json!({
        "candy": [
            {"id": "pass-user", "check": "app exists", "user": "app", "uid": 1234},
            {"id": "fail-file", "check": "no such file", "file": "/nope"}
        ],
        "box": [{"id": "pass-package", "package": "hello"}]
    });
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Containerfile"),
        format!(
            "FROM {FIXTURE}\nLABEL ai.opencharly.box=test-chk-label\nLABEL ai.opencharly.check='{label}'\n"
        ),
    )
    .unwrap();
    let built = Command::new("podman").args(["build", "-t", tag]).arg(dir.path()).output().unwrap();
    assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
    // From a directory with no project at all: box.test never reads one.
    let empty = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let mut cmd = b.charly();
        cmd.current_dir(empty.path()).args(args);
        Run::of(&mut cmd, args)
    };
    for image in [tag, "test-chk-label"] {
        let r = run(&["box", "test", image, "--json"]);
        r.status(1);
        let json = r.json();
        assert_eq!((json["passed"].as_u64(), json["failed"].as_u64()), (Some(2), Some(1)), "{}", r.dump());
        assert_eq!(json["results"][0]["section"], "candy");
        assert_eq!(json["results"][2]["section"], "box");
        assert_eq!(json["results"][2]["description"], "package hello");
    }
    let filtered = run(&["box", "test", tag, "--filter", "user"]);
    filtered.status(0);
    assert!(filtered.stdout.starts_with("PASS pass-user: app exists ("), "{}", filtered.dump());
    assert!(filtered.stdout.ends_with("\nchecks: 1 passed, 0 failed, 0 skipped\n"), "{}", filtered.dump());
    // An image without the label, and one that does not exist.
    let none = run(&["box", "test", FIXTURE]);
    assert_eq!(none.code, Some(2), "{}", none.dump());
    none.stderr_has(&["has no ai.opencharly.check label"]);
    let missing = run(&["box", "test", "test-chk-nothing"]);
    assert_eq!(missing.code, Some(2), "{}", missing.dump());
    missing.stderr_has(&["no image test-chk-nothing"]);
    let _ = CHARLY;
}
