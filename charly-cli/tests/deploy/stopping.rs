//! What charly started stops with it, and a start that did not start is an error: a `cmd`
//! whose charly gets SIGTERM or whose MCP call is cancelled stops its command in the
//! container, `logs --follow` leaves no `podman logs`, a container that exits at once is an
//! error with its status and log (and is removed), and a flag after the box is not taken as
//! the command.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use charly_cli::cli::Cli;
use charly_cli::{Ctx, commands};
use clap::Parser as _;
use tokio_util::sync::CancellationToken;

use crate::util::{Box, Run, container_exists};

/// Whether a process of `container` runs with exactly `args` (`podman top`, which needs no
/// `ps` in the image).
pub(super) fn runs_in(container: &str, args: &str) -> bool {
    let out = Command::new("podman").args(["top", container, "args"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().any(|l| l.trim() == args)
}

/// Waits (at most 20 s) until `runs_in(container, args)` is `want`.
#[track_caller]
pub(super) fn wait_runs_in(container: &str, args: &str, want: bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while runs_in(container, args) != want {
        assert!(
            Instant::now() < deadline,
            "`{args}` in {container}: never {}",
            if want { "started" } else { "stopped" }
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The host processes whose command line holds every one of `words` (as separate arguments).
fn host_processes(words: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let args: Vec<String> =
            raw.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
        if words.iter().all(|w| args.iter().any(|a| a == w)) {
            found.push(args.join(" "));
        }
    }
    found
}

fn sigterm(pid: u32) {
    let status = Command::new("kill").args(["-TERM", &pid.to_string()]).status().unwrap();
    assert!(status.success());
}

#[test]
fn a_container_that_exits_at_once_is_an_error_and_is_removed() {
    let name = "test-dx-exit";
    let b = Box::built(name);
    let container = format!("charly-{name}");
    let r = b.run(&["start", name, "--", "/bin/nonexistent"]);
    r.status(2).stderr_has(&[
        &format!("box {name}: container {container} exited at once with status"),
        "(command: /bin/nonexistent)",
        "it was removed and nothing was started",
        "its last log lines:",
        "/bin/nonexistent",
    ]);
    assert!(!container_exists(&container), "{}", r.dump());
    let r = b.run(&["start", name, "--", "sh", "-c", "echo boom >&2; exit 3"]);
    r.status(2).stderr_has(&["exited at once with status 3", "boom"]);
    assert!(!container_exists(&container), "{}", r.dump());
    // A flag after the box is refused by the parser (not run as the command); after `--` a
    // command may start with `-`.
    let r = b.run(&["start", name, "-i", "s1", "--network", "nosuchnet"]);
    r.status(2).stderr_has(&["unexpected argument '--network'", "-- --network"]);
    assert!(!container_exists(&format!("{container}-s1")));
    // The keep-alive still starts and runs.
    b.run(&["start", name]).status(0);
    assert!(container_exists(&container));
}

#[test]
fn sigterm_to_charly_stops_the_command_it_runs_in_the_container() {
    let name = "test-dx-term";
    let b = Box::built(name);
    let container = format!("charly-{name}");
    b.run(&["start", name]).status(0);
    let child = b
        .charly()
        .args(["cmd", name, "sleep 41"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_runs_in(&container, "sleep 41", true);
    let started = Instant::now();
    sigterm(child.id());
    let run = Run::from_output(child.wait_with_output().unwrap(), "cmd 'sleep 41'".into(), started.elapsed());
    run.status(2).stderr_has(&["cancelled"]);
    assert!(run.took < Duration::from_secs(15), "{}", run.dump());
    assert!(!runs_in(&container, "sleep 41"), "sleep 41 still runs in the container\n{}", run.dump());
    let orphans = host_processes(&["exec", &container, "sleep 41"]);
    assert!(orphans.is_empty(), "podman exec left running: {orphans:?}");

    // `logs --follow`: its `podman logs --follow` goes with charly.
    let child = b.charly().args(["logs", name, "--follow"]).stdout(Stdio::null()).spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while host_processes(&["logs", "--follow", &container]).is_empty() {
        assert!(Instant::now() < deadline, "podman logs --follow never ran");
        std::thread::sleep(Duration::from_millis(100));
    }
    sigterm(child.id());
    let mut child = child;
    let deadline = Instant::now() + Duration::from_secs(15);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "charly logs --follow did not end on SIGTERM");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let left = host_processes(&["logs", "--follow", &container]);
    assert!(left.is_empty(), "podman logs --follow left running: {left:?}");
}

#[test]
fn a_cancelled_cmd_call_stops_its_command_in_the_container() {
    let name = "test-dx-mcpcancel";
    let b = Box::built(name);
    let container = format!("charly-{name}");
    b.run(&["start", name]).status(0);
    let token = CancellationToken::new();
    let cancel = token.clone();
    let watch = container.clone();
    let watcher = std::thread::spawn(move || {
        wait_runs_in(&watch, "sleep 77", true);
        cancel.cancel();
    });
    // As the MCP server runs a `cmd` call: served scope, the call's token.
    let cli = Cli::try_parse_from(["charly", "cmd", name, "sleep 77"]).unwrap();
    let started = Instant::now();
    let err = commands::run(&cli, &Ctx::served(b.proj(), token, None)).unwrap_err();
    watcher.join().unwrap();
    assert!(err.to_string().contains("cancelled"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(!runs_in(&container, "sleep 77"), "sleep 77 still runs in the container");

    // A disposable container of `shell --command` (the box stopped) goes too.
    b.run(&["stop", name, "-t", "1"]).status(0);
    let token = CancellationToken::new();
    let cancel = token.clone();
    let image = format!("localhost/{name}:latest");
    let find = image.clone();
    let watcher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let out = Command::new("podman")
                .args([
                    "ps",
                    "--no-trunc",
                    "--filter",
                    &format!("ancestor={find}"),
                    "--format",
                    "{{.Command}}",
                ])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).contains("sleep 78") {
                break;
            }
            assert!(Instant::now() < deadline, "the disposable container never ran");
            std::thread::sleep(Duration::from_millis(100));
        }
        cancel.cancel();
    });
    let cli = Cli::try_parse_from(["charly", "shell", name, "--command", "sleep 78"]).unwrap();
    let err = commands::run(&cli, &Ctx::served(b.proj(), token, None)).unwrap_err();
    watcher.join().unwrap();
    assert!(err.to_string().contains("cancelled"), "{err}");
    let out = Command::new("podman")
        .args([
            "ps",
            "--all",
            "--no-trunc",
            "--filter",
            &format!("ancestor={image}"),
            "--format",
            "{{.Names}} {{.Command}}",
        ])
        .output()
        .unwrap();
    let left = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(!left.contains("sleep 78"), "the disposable container was left: {left}");
}
