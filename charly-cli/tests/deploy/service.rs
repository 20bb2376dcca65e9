//! `service.*` against a real container: a Debian box (the mmdebstrap image with supervisor)
//! whose candy declares two supervisord programs; supervisorctl in the container starts,
//! stops and restarts them, and a service the image does not declare is refused.

use std::time::{Duration, Instant};

use crate::util::{Box, DEBIAN, Run, container_exists};

const CANDY: &str = "\
sup:
  candy: {description: two supervisord programs}
sup-svc:
  service:
    - {name: ticker, command: 'sh -c \"while true; do echo tick; sleep 1; done\"'}
    - {name: idle, command: sleep infinity, autostart: false, env: [WHO=idle]}
sup-ticker-runs:
  check: charly's supervisord says ticker runs
  service: ticker
sup-idle-stopped:
  check: and idle does not
  service: idle
  running: false
sup-init-runs:
  check: supervisord (a python script) runs
  process: supervisord
sup-sleep-runs:
  check: ticker's sleep (a program) runs
  process: sleep
sup-nothing-runs:
  check: a program nobody runs
  process: nosuchprog
  running: false
";

/// `service status --json`'s state of each program, once `ticker` runs (bounded wait).
fn states(b: &Box, name: &str) -> Vec<(String, String)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let run = b.run(&["service", "status", name, "--json"]);
        if run.code == Some(0) || run.code == Some(1) {
            let json = run.json();
            let states: Vec<(String, String)> = json["services"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| (s["name"].as_str().unwrap().to_owned(), s["state"].as_str().unwrap().to_owned()))
                .collect();
            if states.iter().any(|(n, s)| n == "ticker" && s == "RUNNING") {
                return states;
            }
        }
        assert!(Instant::now() < deadline, "ticker never ran\n{}", run.dump());
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn state_of(b: &Box, name: &str, service: &str) -> String {
    let json = b.run(&["service", "status", name, service, "--json"]).json();
    json["services"][0]["state"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn supervisorctl_starts_stops_and_restarts_the_declared_services() {
    let b = Box::with_base("test-svc", DEBIAN);
    b.candy("test-svc", "sup", CANDY);
    b.run(&["box", "build", "test-svc"]).status(0);
    let listed = b.run(&["box", "list", "services"]).status(0).stdout.clone();
    assert!(listed.starts_with("ticker\tsh -c"), "{listed}");
    let started = b.run(&["start", "test-svc", "--json"]).status(0).json();
    assert_eq!(
        started["command"],
        serde_json::json!(["supervisord", "-n", "-c", "/etc/charly/supervisord.conf"])
    );
    let states = states(&b, "test-svc");
    assert_eq!(states, [("idle".into(), "STOPPED".into()), ("ticker".into(), "RUNNING".into())]);
    // `check live`'s service and process verbs ask charly's supervisord (on its own socket)
    // and /proc (minbase has no pgrep; pidof misses the supervisord script): issue 14's trial
    // had every service check fail there.
    let live = b.run(&["check", "live", "test-svc", "--filter", "service", "--json"]);
    assert_eq!(live.json()["passed"], 2, "{}", live.dump());
    assert_eq!(live.json()["failed"], 0, "{}", live.dump());
    let live = b.run(&["check", "live", "test-svc", "--filter", "process", "--json"]);
    assert_eq!(live.json()["passed"], 3, "{}", live.dump());
    assert_eq!(live.json()["failed"], 0, "{}", live.dump());

    let run = b.run(&["service", "start", "test-svc", "idle", "--json"]);
    run.status(0);
    assert_eq!(run.json()["exit_status"], 0, "{}", run.dump());
    assert_eq!(state_of(&b, "test-svc", "idle"), "RUNNING");
    // The program's own env reached it (minbase has no pgrep: the pid from supervisorctl).
    let json = b.run(&["service", "status", "test-svc", "idle", "--json"]).json();
    let description = json["services"][0]["description"].as_str().unwrap().to_owned();
    let pid = description.strip_prefix("pid ").and_then(|r| r.split(',').next()).expect("a pid");
    let env = b.run(&["cmd", "test-svc", &format!("tr '\\0' '\\n' < /proc/{pid}/environ")]);
    assert!(env.status(0).stdout.contains("WHO=idle"), "{}", env.dump());

    b.run(&["service", "stop", "test-svc", "ticker"]).status(0);
    assert_eq!(state_of(&b, "test-svc", "ticker"), "STOPPED");
    b.run(&["service", "restart", "test-svc", "ticker"]).status(0);
    assert_eq!(state_of(&b, "test-svc", "ticker"), "RUNNING");
    // The text report: a line per service.
    let text = b.run(&["service", "status", "test-svc"]).status(0).stdout.clone();
    assert!(text.contains("idle\tRUNNING\tpid "), "{text}");

    // A service the image does not declare: an error naming box, service and the declared
    // ones, and supervisorctl is never asked.
    b.run(&["service", "restart", "test-svc", "nope"]).status(2).stderr_has(&[
        "service \"nope\"",
        "box test-svc (image localhost/test-svc:latest) declares no such service",
        "declared: ticker, idle",
    ]);
    assert_eq!(state_of(&b, "test-svc", "ticker"), "RUNNING");
    b.run(&["service", "status", "test-svc", "nope"]).status(2).stderr_has(&["declared: ticker, idle"]);
    // Stopping what is stopped and starting what runs do nothing, and say so (issue 14's
    // second trial: supervisorctl's `ERROR (not running)` was reported as a failure).
    b.run(&["service", "stop", "test-svc", "idle"]).status(0);
    let again = b.run(&["service", "stop", "test-svc", "idle", "--json"]);
    again.status(0);
    assert_eq!(again.json()["unchanged"], true, "{}", again.dump());
    assert_eq!(
        b.run(&["service", "stop", "test-svc", "idle"]).status(0).stdout,
        "idle: not running (nothing to do)\n"
    );
    b.run(&["service", "start", "test-svc", "idle"]).status(0);
    let again = b.run(&["service", "start", "test-svc", "idle"]);
    assert_eq!(again.status(0).stdout, "idle: already running (nothing to do)\n");
    assert_eq!(state_of(&b, "test-svc", "idle"), "RUNNING");

    b.run(&["remove", "test-svc", "-t", "1"]).status(0);
    assert!(!container_exists("charly-test-svc"));
    // Not running: the lifecycle's error.
    b.run(&["service", "status", "test-svc"])
        .status(2)
        .stderr_has(&["container charly-test-svc does not exist"]);
}

#[test]
fn a_box_without_services_has_no_supervisord_to_ask() {
    let b = Box::built("test-nosvc");
    b.run(&["start", "test-nosvc"]).status(0);
    let run: Run = b.run(&["service", "start", "test-nosvc", "web"]);
    run.status(2).stderr_has(&[
        "box \"test-nosvc\"",
        "declares no services (no ai.opencharly.service label)",
        "`service:` node",
    ]);
}

/// With `security.user`, supervisord still starts as root (no `--user`: an unprivileged
/// supervisord could not switch users) and runs the program as that user.
#[test]
fn supervisord_runs_the_programs_as_the_boxs_security_user() {
    let b = Box::with_base("test-svcuser", DEBIAN);
    b.candy(
        "test-svcuser",
        "sup",
        "sup:\n  candy: {description: a program as nobody}\nsup-svc:\n  service: [{name: who, command: sleep infinity}]\n\
         sup-sec:\n  security: {user: nobody}\n",
    );
    b.run(&["box", "build", "test-svcuser"]).status(0);
    b.run(&["start", "test-svcuser"]).status(0);
    let deadline = Instant::now() + Duration::from_secs(20);
    let pid = loop {
        let json = b.run(&["service", "status", "test-svcuser", "who", "--json"]).json();
        let description = json["services"][0]["description"].as_str().unwrap_or_default().to_owned();
        if json["services"][0]["state"] == "RUNNING" {
            break description
                .strip_prefix("pid ")
                .and_then(|r| r.split(',').next())
                .expect("a pid")
                .to_owned();
        }
        assert!(Instant::now() < deadline, "who never ran: {json}");
        std::thread::sleep(Duration::from_millis(250));
    };
    let uid = |pid: &str| {
        let run = b.run(&["cmd", "test-svcuser", &format!("grep '^Uid:' /proc/{pid}/status")]);
        run.status(0).stdout.split_whitespace().nth(1).unwrap_or_default().to_owned()
    };
    assert_eq!(uid(&pid), "65534", "the program runs as nobody");
    assert_eq!(uid("1"), "0", "PID 1 (the init) is root");
    let sup =
        b.run(&["cmd", "test-svcuser", "cat /run/charly-supervisord.pid"]).status(0).stdout.trim().to_owned();
    assert_eq!(uid(&sup), "0", "supervisord is root");
}

/// A box whose candy declares services, started with a command of its own on a base without
/// supervisor (busybox): no supervisorctl runs there, and `service.*` says so instead of
/// runc's "executable file not found" with the exit status of a failed check (trial 29).
#[test]
fn a_container_without_supervisorctl_says_so() {
    let b = Box::new("test-nosup");
    b.candy("test-nosup", "nosup", "nosup:\n  candy: {description: a service}\nnosup-svc:\n  service:\n    - {name: ticker, command: sleep infinity}\n");
    b.run(&["box", "build", "test-nosup"]).status(0);
    b.run(&["start", "test-nosup", "--", "sleep", "1000"]).status(0);
    let run: Run = b.run(&["service", "status", "test-nosup"]);
    run.status(2).stderr_has(&[
        "container charly-test-nosup has no supervisorctl",
        "`charly start test-nosup -- CMD`",
    ]);
}
