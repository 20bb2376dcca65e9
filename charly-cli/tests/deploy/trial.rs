//! Faults a fresh user met in a trial of deploy mode: wording that names each instance and
//! volume once, `logs` of a supervisord box, `check live -i`, the command that stores a
//! missing secret, and a port remap that works as printed.

use std::time::{Duration, Instant};

use super::config::Host;
use super::util::{Box, DEBIAN, Run};

#[test]
fn a_volume_the_box_declares_and_the_entry_holds_is_named_once() {
    let h = Host::new("test-trvol", &[]);
    h.b.candy("test-trvol", "v", "v:\n  candy: {}\nv-vol:\n  volume: [{name: data, path: /data}]\n");
    let dir = h.home().join("site");
    std::fs::create_dir_all(&dir).unwrap();
    let bind = format!("data={}", dir.display());
    h.b.run(&["config", "setup", "test-trvol", "-i", "2", "--bind", &bind]).status(0);
    let r = h.b.run(&["config", "setup", "test-trvol", "-i", "2", "--bind", "nope=/tmp"]);
    r.status(2).stderr_has(&["box test-trvol/2: --bind nope=/tmp", "no volume \"nope\" (volumes: data);"]);
    assert!(!r.stderr.contains("data, data"), "{}", r.dump());
}

#[test]
fn logs_of_a_supervisord_box_show_each_line_once() {
    let b = Box::with_base("test-trlogs", DEBIAN);
    b.candy(
        "test-trlogs",
        "tk",
        "tk:\n  candy: {}\ntk-svc:\n  service:\n    - {name: ticker, command: \"sh -c \\\"i=0; while true; do \
         i=$((i+1)); echo tick $i; sleep 0.2; done\\\"\"}\n",
    );
    b.run(&["box", "build", "test-trlogs"]).status(0);
    b.run(&["start", "test-trlogs"]).status(0);
    let deadline = Instant::now() + Duration::from_secs(20);
    let logs = loop {
        let run = b.run(&["logs", "test-trlogs", "--json"]);
        run.status(0);
        let lines: Vec<String> =
            run.json()["lines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_owned()).collect();
        if lines.iter().any(|l| l == "tick 5") {
            break lines;
        }
        assert!(Instant::now() < deadline, "ticker printed no 5 ticks\n{}", run.dump());
        std::thread::sleep(Duration::from_millis(200));
    };
    // supervisord's own lines and the program's, each once.
    let count = |needle: &str| logs.iter().filter(|l| l.contains(needle)).count();
    assert_eq!(count("supervisord started with pid"), 1, "{logs:#?}");
    assert_eq!(count("spawned: 'ticker'"), 1, "{logs:#?}");
    for n in 1..=5 {
        assert_eq!(logs.iter().filter(|l| **l == format!("tick {n}")).count(), 1, "{logs:#?}");
    }
}

#[test]
fn check_live_with_an_instance_checks_that_instances_container() {
    let b = Box::built("test-trlive");
    b.cleanup().containers(&["charly-test-trlive-2"]);
    b.candy("test-trlive", "m", "m:\n  candy: {}\nm-mark:\n  check: the mark is there\n  file: /tmp/mark\n");
    b.run(&["start", "test-trlive"]).status(0);
    b.run(&["start", "test-trlive", "-i", "2"]).status(0);
    b.run(&["cmd", "test-trlive", "-i", "2", "touch /tmp/mark"]).status(0);
    // Instance 2 has the mark, the box's own container has not: `-i` and `--instance` pick 2.
    for flag in ["-i", "--instance"] {
        let json = b.run(&["check", "live", "test-trlive", flag, "2", "--json"]).status(0).json();
        assert_eq!((json["passed"].as_u64(), json["failed"].as_u64()), (Some(1), Some(0)), "{json}");
    }
    let json = b.run(&["check", "live", "test-trlive", "--json"]).json();
    assert_eq!((json["passed"].as_u64(), json["failed"].as_u64()), (Some(0), Some(1)), "{json}");
    b.run(&["check", "live", "test-trlive", "-i", "9"])
        .status(2)
        .stderr_has(&["container charly-test-trlive-9 does not exist", "`charly start test-trlive -i 9`"]);
}

/// The command in backticks after `store it with ` (the first one), as words.
fn printed_command(stderr: &str) -> Vec<String> {
    let rest = stderr.split("store it with `").nth(1).expect("a command in backticks");
    rest.split('`').next().unwrap().split_whitespace().map(str::to_owned).collect()
}

#[test]
fn a_missing_secret_names_the_store_and_the_command_that_stores_it() {
    let h = Host::new("test-trsec", &[]);
    let config = h.config().join("config.yml");
    let run = |args: &[&str]| {
        let mut cmd = h.b.charly();
        // No keyring answers: `auto` is the config file, then the KeePass database.
        cmd.env_remove("DBUS_SESSION_BUS_ADDRESS").env("CHARLY_KDBX_PASSWORD", "pw").args(args);
        Run::of(&mut cmd, args)
    };
    let setup = ["config", "setup", "test-trsec", "-i", "2", "--secret", "TOKEN"];
    // secret_backend auto with no database: init, then set; each as printed.
    std::fs::write(&config, "secret_backend: auto\n").unwrap();
    let r = run(&setup);
    r.status(2).stderr_has(&[
        "box test-trsec/2: no value for TOKEN (charly/secret/TOKEN)",
        &format!("(config {} (secret_backend auto", config.display()),
        "store it with `charly secrets init`",
        "then `charly secrets set charly/secret TOKEN <VALUE>`",
    ]);
    let init = printed_command(&r.stderr);
    assert_eq!(init, ["charly", "secrets", "init"]);
    run(&init[1..].iter().map(String::as_str).collect::<Vec<_>>()).status(0);
    // Now the database is the store: the message names it and `secrets set` as printed works.
    let r = run(&setup);
    let db = h.config().join("secrets.kdbx");
    r.status(2).stderr_has(&[&format!("(kdbx {})", db.display()), "store it with `charly secrets set"]);
    let set: Vec<String> =
        printed_command(&r.stderr).into_iter().map(|w| w.replace("<VALUE>", "v4lue")).collect();
    run(&set[1..].iter().map(String::as_str).collect::<Vec<_>>()).status(0);
    run(&setup).status(0);
    assert_eq!(super::config::secret_value("charly-test-trsec-2-TOKEN"), "v4lue");
}

/// The flag value in backticks after `flag ` in `stderr`: `--port 5354:53/udp` → `5354:53/udp`.
fn printed_remap(stderr: &str, flag: &str) -> String {
    let rest = stderr
        .split(&format!("remap with `{flag} "))
        .nth(1)
        .or_else(|| stderr.split(&format!("remap it: `{flag} ")).nth(1));
    rest.expect("a remap in backticks").split('`').next().unwrap().to_owned()
}

#[test]
fn a_port_in_use_is_remapped_by_the_flag_as_printed() {
    let b = Box::built("test-trport");
    b.cleanup().containers(&["charly-test-trport-2"]);
    // start: a UDP port held, and the next one too: the remap is UDP and skips both.
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = udp.local_addr().unwrap().port();
    let next = std::net::UdpSocket::bind(("127.0.0.1", port + 1));
    let publish = format!("{port}:53/udp");
    let r = b.run(&["start", "test-trport", "-i", "2", "--port", &publish]);
    r.status(2)
        .stderr_has(&[&format!("--port {port}:53/udp: port {port} on 127.0.0.1 is in use by process")]);
    let remap = printed_remap(&r.stderr, "--port");
    assert!(remap.ends_with(":53/udp"), "{}", r.dump());
    if next.is_ok() {
        assert_ne!(remap, format!("{}:53/udp", port + 1), "a port in use is never offered");
    }
    b.run(&["start", "test-trport", "-i", "2", "--port", &remap]).status(0);
    let out = std::process::Command::new("podman").args(["port", "charly-test-trport-2"]).output().unwrap();
    let host = remap.split(':').next().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), format!("53/udp -> 127.0.0.1:{host}"));
    // config setup: a TCP port held by this process; `-p` as printed is saved.
    let h = Host::new("test-trport3", &[]);
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = tcp.local_addr().unwrap().port();
    let p = format!("{port}:80");
    let r = h.b.run(&["config", "setup", "test-trport3", "-i", "3", "-p", &p]);
    r.status(2).stderr_has(&[&format!("host port {port} (127.0.0.1, for container port 80)")]);
    let remap = printed_remap(&r.stderr, "-p");
    let json =
        h.b.run(&["config", "setup", "test-trport3", "-i", "3", "-p", &remap, "--json"]).status(0).json();
    assert_eq!(json["entry"]["port"], serde_json::json!([remap]), "{json}");
}
