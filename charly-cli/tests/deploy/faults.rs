use std::process::Stdio;
use std::time::{Duration, Instant};

use charly_cli::cli::Cli;
use charly_cli::{Ctx, commands};
use clap::Parser as _;
use tokio_util::sync::CancellationToken;

use crate::util::{Box, Run, container_exists, free_port};

#[test]
fn starting_a_box_that_was_never_built() {
    let b = Box::new("test-unbuilt");
    let run = b.run(&["start", "test-unbuilt"]);
    run.status(2).stderr_has(&[
        "box test-unbuilt: image localhost/test-unbuilt:latest is not in local storage",
        "`charly box build test-unbuilt`",
    ]);
    assert!(!container_exists("charly-test-unbuilt"));
    // Not a box of the project at all: the project's error lists the boxes.
    b.run(&["start", "ghost"]).status(2).stderr_has(&["ghost", "test-unbuilt"]);
}

#[test]
fn names_podman_would_reject() {
    let b = Box::new("test-names");
    b.run(&["start", "test names"]).status(2).stderr_has(&[
        "box \"test names\": ' ' is not allowed in a container name",
        "[a-zA-Z0-9][a-zA-Z0-9_.-]*",
        "choose a box name",
    ]);
    b.run(&["start", "test-names", "--instance", "a:b"]).status(2).stderr_has(&[
        "instance \"a:b\"",
        "':'",
        "choose an instance name",
    ]);
    b.run(&["stop", "test-names", "-i", "_x"]).status(2).stderr_has(&["instance \"_x\"", "starts with '_'"]);
}

#[test]
fn bad_arguments_change_nothing() {
    let b = Box::built("test-args");
    b.run(&["start", "test-args", "--env", "NOEQUALS"])
        .status(2)
        .stderr_has(&["--env <KEY=VALUE>", "no `=`"]);
    b.run(&["start", "test-args", "--bind", "/nonexistent/charly:/x"])
        .status(2)
        .stderr_has(&["--bind \"/nonexistent/charly:/x\"", "/nonexistent/charly does not exist"]);
    b.run(&["start", "test-args", "--port", "80:x"]).status(2).stderr_has(&["--port <HOST:CONTAINER>"]);
    assert!(!container_exists("charly-test-args"));
}

#[test]
fn a_port_already_taken_names_its_owner_and_the_remap_flag() {
    let b = Box::built("test-port");
    b.cleanup().containers(&["charly-test-port-2"]);
    let port = free_port();
    let publish = format!("{port}:80");
    b.run(&["start", "test-port", "--port", &publish]).status(0);
    let taken = b.run(&["start", "test-port", "-i", "2", "--port", &publish]);
    taken.status(2).stderr_has(&[
        &format!("--port {port}:80: port {port} on 127.0.0.1 is in use by container charly-test-port (box test-port)"),
        "`charly stop test-port`",
    ]);
    // A port free when charly looked, after the one in use (not blindly port + 1).
    crate::util::suggested_remap(&taken.stderr, "remap with `--port ", port, 80);
    assert!(!container_exists("charly-test-port-2"));
    // Another process.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let other = listener.local_addr().unwrap().port();
    let publish = format!("{other}:80");
    b.run(&["start", "test-port", "-i", "2", "--port", &publish])
        .status(2)
        .stderr_has(&["in use by process", &format!("(pid {})", std::process::id())]);
    assert!(!container_exists("charly-test-port-2"));
}

#[test]
fn stop_of_a_stopped_container_and_cmd_against_one_that_is_gone() {
    let b = Box::built("test-gone");
    b.run(&["stop", "test-gone"]).status(2).stderr_has(&[
        "container charly-test-gone does not exist (box test-gone is not started)",
        "`charly start test-gone`",
    ]);
    b.run(&["start", "test-gone"]).status(0);
    b.run(&["stop", "test-gone"]).status(0);
    b.run(&["stop", "test-gone"])
        .status(2)
        .stderr_has(&["container charly-test-gone is exited", "not running"]);
    b.run(&["cmd", "test-gone", "true"]).status(2).stderr_has(&["is exited", "`charly start test-gone`"]);
    b.run(&["remove", "test-gone"]).status(0);
    b.run(&["cmd", "test-gone", "true"]).status(2).stderr_has(&["container charly-test-gone does not exist"]);
    b.run(&["logs", "test-gone"]).status(2).stderr_has(&["container charly-test-gone does not exist"]);
}

#[test]
fn remove_while_a_cmd_runs() {
    let b = Box::built("test-busy");
    b.run(&["start", "test-busy"]).status(0);
    let started = Instant::now();
    let mut cmd = b.charly();
    let child = cmd
        .args(["cmd", "test-busy", "touch /tmp/started; sleep 60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the exec session is there.
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.run(&["cmd", "test-busy", "test -f /tmp/started"]).code != Some(0) {
        assert!(Instant::now() < deadline, "the command did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    b.run(&["remove", "test-busy", "--timeout", "2"]).status(0);
    let cut = Run::from_output(
        child.wait_with_output().unwrap(),
        "cmd test-busy 'sleep 60'".into(),
        started.elapsed(),
    );
    // podman's exec ends when the container stops, which is before `rm` has
    // finished: the state charly reads then is `exited (143)` or `gone`.
    cut.status(2).stderr_has(&[
        "the command in container charly-test-busy was cut off",
        "(stopped or removed while the command ran)",
    ]);
    assert!(cut.stderr.contains("is gone now") || cut.stderr.contains("is exited ("), "{}", cut.dump());
    assert!(cut.took < Duration::from_secs(30), "{}", cut.dump());
    assert!(!container_exists("charly-test-busy"));
}

#[test]
fn a_cancelled_start_changes_nothing() {
    let b = Box::built("test-cancel");
    let cli = Cli::try_parse_from(["charly", "start", "test-cancel"]).unwrap();
    let token = CancellationToken::new();
    token.cancel();
    let err = commands::run(&cli, &Ctx::served(b.proj(), token, None)).unwrap_err();
    assert_eq!(err.to_string(), "cancelled; nothing was changed");
    assert!(!container_exists("charly-test-cancel"));
}

/// `kill -9` of charly during `config setup`: the deploy file is the old one or the new one,
/// never half of one (the write is a temporary file renamed over it). Kills land across the
/// whole run (delays spread over a measured setup), and every surviving file still parses
/// and keeps the hand-written comment.
#[test]
fn a_kill_9_during_config_setup_leaves_the_deploy_file_old_or_new() {
    let b = Box::new("test-kill");
    let config = b.proj().parent().unwrap().join("home/.config/charly");
    std::fs::create_dir_all(&config).unwrap();
    let file = config.join("charly.yml");
    let mut old = "# hand-written: kept\ndeploy:\n  test-kill:\n    env: [N=0]\n".to_owned();
    std::fs::write(&file, &old).unwrap();
    // How long one setup takes, to spread the kills over it.
    let whole = b.run(&["config", "setup", "test-kill", "-e", "N=1"]).status(0).took;
    old = std::fs::read_to_string(&file).unwrap();
    assert!(old.contains("N=1") && old.starts_with("# hand-written: kept\n"), "{old}");
    let steps = 24u32;
    let (mut killed, mut finished) = (0, 0);
    for i in 0..steps {
        let value = format!("N={}", i + 2);
        let mut cmd = b.charly();
        let mut child = cmd
            .args(["config", "setup", "test-kill", "-e", &value])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(whole * i / steps);
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            finished += 1
        } else {
            killed += 1
        }
        let now = std::fs::read_to_string(&file).unwrap();
        assert!(
            now == old || now.contains(&format!("[{value}]")),
            "kill after {:?}: neither old nor new:\n{now}\nold:\n{old}",
            whole * i / steps
        );
        assert!(now.starts_with("# hand-written: kept\n"), "{now}");
        let parsed: serde_json::Value = yaml_serde::from_str(&now).unwrap();
        assert!(parsed["deploy"]["test-kill"]["env"].is_array(), "{now}");
        old = now;
    }
    // The delays did cut runs short (not every run finished before its kill).
    assert!(killed > 0, "no run was killed ({finished} finished): the kills came too late");
}
