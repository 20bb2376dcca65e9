use serde_json::Value;

use crate::fixture::{self, FIXTURE};
use crate::util::{Box, free_port};

/// Each check of the plan and the verdict it must get: `pass-*` pass, `fail-*` fail,
/// `skip-*` are skipped.
const PLAN: &str = r#"
pass-file:
  check: the served file is there, as built
  file: /srv/www/index.html
  filetype: file
  mode: "0640"
  owner: root
  group_of: root
  contains: hello
  sha256: a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447
fail-file-mode:
  check: a wrong mode fails
  file: /srv/www/index.html
  mode: 644
fail-file-absent:
  check: a missing file fails
  file: /nope
pass-file-absent:
  check: exists false passes for a missing file
  file: /nope
  exists: false
pass-package:
  check: hello is installed at 2.10-3
  package: hello
  versions: {matches: "^2\\.10"}
fail-package:
  check: a package only configured is not installed
  package: gone
fail-service:
  check: busybox has no init tool, and says so
  service: httpd
pass-port:
  check: httpd listens on 8080
  port: 8080
fail-port:
  check: nothing listens on 9999
  port: 9999
pass-port-reachable:
  check: the published port answers from the host
  port: 8080
  reachable: true
pass-process:
  check: httpd runs
  process: httpd
fail-process:
  check: nginx does not
  process: nginx
pass-command:
  check: echo in the container
  command: echo hi from ${CONTAINER_NAME}
  stdout: hi from charly-test-chk-live
fail-command:
  check: a failing command fails
  command: exit 3
pass-command-host:
  check: a host command
  command: echo host
  from_host: true
  stdout: host
pass-http:
  check: the page is served on the published port
  http: http://127.0.0.1:${HOST_PORT:8080}/index.html
  status: 200
  body: {contains: hello world}
  headers: {content-type: {contains: text/html}}
fail-http:
  check: a missing page is a 404
  http: http://127.0.0.1:${HOST_PORT:8080}/missing.html
  status: 200
pass-dns:
  check: localhost resolves
  dns: localhost
  addrs: [127.0.0.1]
fail-dns:
  check: an .invalid name does not
  dns: nothing.invalid
pass-user:
  check: app is as built
  user: app
  uid: 1234
  gid: 1234
  home: /home/app
  shell: /bin/sh
  groups: [app]
fail-user:
  check: ghost does not exist
  user: ghost
pass-group:
  check: group app
  group: app
  gid: 1234
fail-group:
  check: root's gid is 0
  group: root
  gid: 5
pass-interface:
  check: loopback
  interface: lo
  mtu: 65536
  addrs: [127.0.0.1]
fail-interface:
  check: there is no eth9
  interface: eth9
pass-kernel-param:
  check: the kernel is Linux
  kernel-param: kernel.ostype
  value: Linux
fail-kernel-param:
  check: not BSD
  kernel-param: kernel.ostype
  value: BSD
pass-mount:
  check: proc is mounted
  mount: /proc
  filesystem: proc
  mount_source: proc
  opts: [nosuid]
fail-mount:
  check: proc is not ext4
  mount: /proc
  filesystem: ext4
pass-addr:
  check: the published port accepts a connection
  addr: 127.0.0.1:${HOST_PORT:8080}
fail-addr:
  check: a closed port does not
  addr: 127.0.0.1:CLOSED
pass-matching:
  check: the container name
  matching: ${CONTAINER_NAME}
  contains: charly-test-chk
fail-matching:
  check: the literal does not contain it
  matching: ${CONTAINER_NAME}
  contains: nope
skip-unresolved:
  check: an unpublished port's variable skips the check
  http: http://127.0.0.1:${HOST_PORT:9090}/
skip-flag:
  check: skip true
  file: /etc/passwd
  skip: true
"#;

#[test]
fn every_verb_passes_and_fails_against_a_running_container() {
    fixture::images();
    let b = Box::new("test-chk-live");
    b.run(&["box", "set", "test-chk-live.box.base", FIXTURE]).status(0);
    b.run(&["box", "new", "candy", "chk"]).status(0);
    b.run(&["box", "add-candy", "test-chk-live", "chk"]).status(0);
    let closed = free_port().to_string();
    let candy = b.proj().join("candy/chk/charly.yml");
    let text = std::fs::read_to_string(&candy).unwrap();
    std::fs::write(&candy, format!("{text}{}", PLAN.replace("CLOSED", &closed))).unwrap();
    // A deploy-file plan entry is the third section.
    let config = b.proj().join("../home/.config/charly");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("charly.yml"),
        "deploy:\n  test-chk-live:\n    plan:\n      - {id: deploy-web, http: \"http://127.0.0.1:${HOST_PORT:8080}/\", status: 200}\n",
    )
    .unwrap();
    b.run(&["box", "build", "test-chk-live"]).status(0);
    let port = free_port();
    let publish = format!("{port}:8080");
    b.run(&[
        "start",
        "test-chk-live",
        "--port",
        &publish,
        "--",
        "httpd",
        "-f",
        "-p",
        "8080",
        "-h",
        "/srv/www",
    ])
    .status(0);
    // httpd is up before the checks run.
    crate::util::http_get(port);

    let run = b.run(&["check", "live", "test-chk-live", "--json", "--junit", "live.xml"]);
    run.status(1);
    let report = run.json();
    let results = report["results"].as_array().unwrap();
    let by_name = |name: &str| -> &Value {
        results
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no result {name}\n{}", run.dump()))
    };
    let mut wrong = Vec::new();
    for r in results {
        let name = r["name"].as_str().unwrap();
        let want = match name.split('-').next().unwrap() {
            "pass" | "deploy" => "pass",
            "fail" => "fail",
            "skip" => "skip",
            _ => continue,
        };
        if r["verdict"] != want {
            wrong.push(format!("{name}: {} ({})", r["verdict"], r["reasons"]));
        }
    }
    assert!(wrong.is_empty(), "wrong verdicts:\n{}\n{}", wrong.join("\n"), run.dump());
    // Every check of the plan ran, and the sections are named.
    assert_eq!(results.len(), PLAN.matches("\n  check:").count() + 1, "{}", run.dump());
    assert_eq!(by_name("pass-file")["section"], "candy");
    assert_eq!(by_name("deploy-web")["section"], "deploy");
    assert_eq!(by_name("pass-http")["kind"], "http");
    // Failures say what was seen.
    let reason = |name: &str| by_name(name)["reasons"].to_string();
    assert!(
        reason("fail-service").contains("has no supervisorctl or systemctl"),
        "{}",
        reason("fail-service")
    );
    assert!(
        reason("fail-file-mode").contains("\\\"0640\\\" does not equal \\\"0644\\\""),
        "{}",
        reason("fail-file-mode")
    );
    assert!(
        reason("fail-file-absent").contains("file /nope does not exist"),
        "{}",
        reason("fail-file-absent")
    );
    assert!(reason("fail-http").contains("status \\\"404\\\""), "{}", reason("fail-http"));
    assert!(reason("fail-package").contains("package gone is not installed"), "{}", reason("fail-package"));
    assert!(reason("fail-command").contains("exit status 3, expected 0"), "{}", reason("fail-command"));
    assert!(reason("skip-unresolved").contains("${HOST_PORT:9090}"), "{}", reason("skip-unresolved"));
    assert!(reason("fail-port").contains("port 9999 is not listening"), "{}", reason("fail-port"));
    let xml = std::fs::read_to_string(b.proj().join("live.xml")).unwrap();
    assert!(xml.contains("<testsuite") && xml.contains("fail-service"), "{xml}");

    // --filter keeps one verb; all of its checks pass here.
    let only = b.run(&["check", "live", "test-chk-live", "--filter", "user", "--json"]);
    let json = only.json();
    assert_eq!(json["results"].as_array().unwrap().len(), 2, "{}", only.dump());
    assert_eq!(json["failed"], 1);

    // The text report: a line per check and the summary; exit 1 on a failure.
    let text = b.run(&["check", "live", "test-chk-live", "--filter", "process"]);
    text.status(1);
    assert!(text.stdout.contains("PASS pass-process: httpd runs"), "{}", text.dump());
    assert!(text.stdout.contains("FAIL fail-process: nginx does not"), "{}", text.dump());
    assert!(text.stdout.contains("    process nginx is not running"), "{}", text.dump());
    assert!(text.stdout.ends_with("checks: 1 passed, 1 failed, 0 skipped\n"), "{}", text.dump());
}

#[test]
fn check_live_of_a_box_that_does_not_run_says_so() {
    let b = Box::new("test-chk-idle");
    let run = b.run(&["check", "live", "test-chk-idle"]);
    assert_ne!(run.code, Some(0), "{}", run.dump());
    run.stderr_has(&["charly-test-chk-idle"]);
}
