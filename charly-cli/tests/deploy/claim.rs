//! Names that collide: box `test-cl` instance `x-y` and box `test-cl-x` instance `y` are both
//! `charly-test-cl-x-y`, and a container made with plain `podman run --name charly-<box>`
//! has charly's name too. Every leaf that acts on an existing container refuses one that is
//! not its target's (labels), saying whose it is and the fix, and leaves it running; volumes
//! and secrets go by the same labels; a start that fails or is cancelled leaves nothing.

use std::process::Command;
use std::time::{Duration, Instant};

use charly_cli::cli::Cli;
use charly_cli::{Ctx, commands};
use clap::Parser as _;
use tokio_util::sync::CancellationToken;

use crate::util::{BUSYBOX, Box, container_exists, volume_exists};

/// Whether container `name` runs.
fn running(name: &str) -> bool {
    let out =
        Command::new("podman").args(["inspect", "--format", "{{.State.Running}}", name]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "true"
}

/// A project with box `<name>` and box `<name>-x`, both built: instance `x-y` of the first
/// and instance `y` of the second are both `charly-<name>-x-y` (each test its own pair).
fn pair(name: &str) -> Box {
    let b = Box::new(name);
    let other = format!("{name}-x");
    b.run(&["box", "new", "box", &other, "--base", BUSYBOX]).status(0);
    b.cleanup().images(&[&format!("localhost/{other}:latest")]);
    let c = format!("charly-{name}-x-y");
    let volumes = [format!("{c}-data"), format!("{c}-logs")];
    b.cleanup().containers(&[&c]);
    b.cleanup().volumes(&[&volumes[0], &volumes[1]]);
    // Left over from an earlier, killed run.
    let _ = Command::new("podman").args(["rm", "-f", "-t", "0", &c]).output();
    let _ = Command::new("podman").args(["volume", "rm", "-f", &volumes[0], &volumes[1]]).output();
    b.run(&["box", "build", name]).status(0);
    b.run(&["box", "build", &other]).status(0);
    b
}

#[test]
fn the_colliding_pair_is_refused_everywhere_and_left_running() {
    let b = pair("test-cl");
    let c = "charly-test-cl-x-y";
    b.run(&["start", "test-cl", "-i", "x-y"]).status(0);
    let whose = "it belongs to box test-cl instance x-y, not to box test-cl-x instance y";
    let fix = "`charly start test-cl-x -i <other>`";
    let cases: Vec<Vec<&str>> = vec![
        vec!["start", "test-cl-x"],
        vec!["stop", "test-cl-x"],
        vec!["remove", "test-cl-x"],
        vec!["remove", "test-cl-x", "--purge"],
        vec!["update", "test-cl-x"],
        vec!["logs", "test-cl-x"],
        vec!["cmd", "test-cl-x", "true"],
        vec!["shell", "test-cl-x", "--command", "true"],
        vec!["service", "status", "test-cl-x"],
        vec!["config", "setup", "test-cl-x"],
        vec!["check", "cdp", "status", "test-cl-x"],
        vec!["check", "live", "test-cl-x"],
    ];
    for case in &cases {
        let mut args = case.clone();
        // `-i y` right after the box (`check live` spells it `--instance`).
        let at = args.iter().position(|a| a.starts_with("test-cl")).unwrap() + 1;
        args.splice(at..at, [if case[1] == "live" { "--instance" } else { "-i" }, "y"]);
        let ran = b.run(&args);
        assert_ne!(ran.code, Some(0), "{}", ran.dump());
        ran.stderr_has(&[&format!("container {c}: {whose}"), fix, "`charly stop test-cl -i x-y`"]);
        assert!(running(c), "{c} was touched by `{}`", args.join(" "));
    }
    // The config setup refused before writing the entry.
    let deploy = b.proj().parent().unwrap().join("home/.config/charly/charly.yml");
    assert!(std::fs::read_to_string(&deploy).map_or(true, |t| !t.contains("test-cl-x/y")));
    // Its own box still reaches it.
    b.run(&["cmd", "test-cl", "-i", "x-y", "true"]).status(0);
    b.run(&["stop", "test-cl", "-i", "x-y", "-t", "1"]).status(0);
    // Stopped, it is still not the other box's to replace.
    b.run(&["start", "test-cl-x", "-i", "y"]).status(2).stderr_has(&[whose]);
    assert!(container_exists(c));
    b.run(&["remove", "test-cl", "-i", "x-y"]).status(0);
    assert!(!container_exists(c));
}

#[test]
fn a_container_charly_did_not_create_is_refused_and_left_running() {
    let b = Box::built("test-fr");
    // From the box's own image: it carries the box label, but not charly's run label.
    let out = Command::new("podman")
        .args(["run", "-d", "--name", "charly-test-fr", "localhost/test-fr:latest", "sleep", "300"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for args in [
        &["stop", "test-fr"][..],
        &["remove", "test-fr", "--purge"],
        &["start", "test-fr"],
        &["cmd", "test-fr", "true"],
        &["logs", "test-fr"],
    ] {
        b.run(args).status(2).stderr_has(&[
            "container charly-test-fr: it was not created by charly",
            "`charly start test-fr -i <other>`",
            "`podman rename charly-test-fr <new>`",
        ]);
        assert!(running("charly-test-fr"), "touched by `{}`", args.join(" "));
    }
    // Another instance name is the way out.
    b.cleanup().containers(&["charly-test-fr-2"]);
    b.run(&["start", "test-fr", "-i", "2"]).status(0);
    b.run(&["remove", "test-fr", "-i", "2", "-t", "1"]).status(0);
}

#[test]
fn purge_of_one_half_of_the_pair_leaves_the_others_volumes() {
    let b = pair("test-cp");
    let (data, logs) = ("charly-test-cp-x-y-data", "charly-test-cp-x-y-logs");
    b.run(&["start", "test-cp", "-i", "x-y", "--volume", "data:/data"]).status(0);
    b.run(&["cmd", "test-cp", "-i", "x-y", "echo kept > /data/f"]).status(0);
    b.run(&["remove", "test-cp", "-i", "x-y", "-t", "1"]).status(0);
    assert!(volume_exists(data));
    // The volume name is the other box's too: refused, nothing made.
    b.run(&["start", "test-cp-x", "-i", "y", "--volume", "data:/data"]).status(2).stderr_has(&[&format!(
        "volume {data}: it belongs to box test-cp instance x-y, not to box test-cp-x instance y"
    )]);
    assert!(!container_exists("charly-test-cp-x-y"));
    b.run(&["start", "test-cp-x", "-i", "y", "--volume", "logs:/logs"]).status(0);
    let removed = b.run(&["remove", "test-cp-x", "-i", "y", "-t", "1", "--purge", "--json"]).status(0).json();
    assert_eq!(removed["volumes"], serde_json::json!([logs]), "{removed}");
    assert!(!volume_exists(logs));
    assert!(volume_exists(data), "the other box's volume of a colliding name is kept");
    let removed = b.run(&["remove", "test-cp", "-i", "x-y", "--purge", "--json"]).status(0).json();
    assert_eq!(removed["volumes"], serde_json::json!([data]), "{removed}");
    assert!(!volume_exists(data));
}

#[test]
fn a_start_that_fails_removes_the_container_and_volumes_it_made() {
    let b = Box::built("test-sfail");
    let (kept, made) = ("charly-test-sfail-kept", "charly-test-sfail-made");
    b.cleanup().volumes(&[kept, made]);
    b.run(&["start", "test-sfail", "--volume", "kept:/kept"]).status(0);
    b.run(&["remove", "test-sfail", "-t", "1"]).status(0);
    assert!(volume_exists(kept));
    // runc refuses to mount a volume on /proc: `podman run` fails after it created the
    // container (left `Created` before) and the volume.
    let ran = b.run(&["start", "test-sfail", "--volume", "kept:/kept", "--volume", "made:/proc"]);
    ran.status(2).stderr_has(&["cannot be mounted because it is not of type proc"]);
    assert!(!container_exists("charly-test-sfail"), "{}", ran.dump());
    assert!(!volume_exists(made), "the volume this start made was left\n{}", ran.dump());
    assert!(volume_exists(kept), "a volume from before is kept");
}

#[test]
fn a_cancelled_start_removes_the_container_and_volumes_it_made() {
    let b = Box::new("test-scancel");
    let volume = "charly-test-scancel-data";
    b.cleanup().volumes(&[volume]);
    b.candy("test-scancel", "slow", "slow:\n  candy: {}\nslow-hook:\n  hook: {post_enable: 'sleep 60'}\n");
    b.run(&["box", "build", "test-scancel"]).status(0);
    let cli = Cli::try_parse_from(["charly", "start", "test-scancel", "--volume", "data:/data"]).unwrap();
    let token = CancellationToken::new();
    let cancel = token.clone();
    // Cancelled while its post_enable hook runs: the container is up, the volume made.
    let watcher = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !running("charly-test-scancel") {
            assert!(Instant::now() < deadline, "the start never ran its container");
            std::thread::sleep(Duration::from_millis(100));
        }
        assert!(volume_exists("charly-test-scancel-data"));
        cancel.cancel();
    });
    let started = Instant::now();
    let err = commands::run(&cli, &Ctx::served(b.proj(), token, None)).unwrap_err();
    watcher.join().unwrap();
    assert_eq!(err.to_string(), "cancelled; nothing was changed");
    assert!(started.elapsed() < Duration::from_secs(50), "the hook was not cut off");
    assert!(!container_exists("charly-test-scancel"));
    assert!(!volume_exists(volume));
}

/// Quadlet unit files are named as containers and volumes are, so they collide too: the
/// other half's `config setup` does not overwrite them, its `config remove --purge` leaves them.
#[test]
fn quadlet_units_of_a_colliding_name_stay_their_deployments() {
    let b = pair("test-cq");
    let units = b.proj().parent().unwrap().join("home/.config/containers/systemd");
    let (container, volume) =
        (units.join("charly-test-cq-x-y.container"), units.join("charly-test-cq-x-y-data.volume"));
    let setup = |box_name: &str, instance: &str| {
        b.run(&["config", "setup", box_name, "-i", instance, "-v", "data:/data", "--run-mode", "quadlet"])
    };
    setup("test-cq", "x-y").status(0);
    let text = std::fs::read_to_string(&container).unwrap();
    assert!(volume.is_file() && volume_exists("charly-test-cq-x-y-data"));
    setup("test-cq-x", "y")
        .status(2)
        .stderr_has(&[&format!("unit file {} is box test-cq instance x-y's", container.display())]);
    assert_eq!(std::fs::read_to_string(&container).unwrap(), text, "the unit was rewritten");
    b.run(&["config", "remove", "test-cq-x", "-i", "y", "--purge"]).status(0);
    assert!(container.is_file() && volume.is_file() && volume_exists("charly-test-cq-x-y-data"));
    let removed = b.run(&["config", "remove", "test-cq", "-i", "x-y", "--purge", "--json"]).status(0).json();
    assert_eq!(removed["volumes_removed"], serde_json::json!(["charly-test-cq-x-y-data"]), "{removed}");
    assert!(!container.exists() && !volume.exists());
}

/// A plain `podman run` of a box's image (the image's box label, no run or deploy label) is
/// not that box's container: `status` names it apart as foreign, and does not list or probe it
/// as the box's, beside the box's own container started by charly (trial finding).
#[test]
fn status_shows_a_plain_podman_run_of_the_image_as_foreign() {
    let name = "test-fx-foreign";
    let b = Box::built(name);
    let plain = "test-fx-foreign-plain";
    b.cleanup().containers(&[plain]);
    let _ = Command::new("podman").args(["rm", "-f", "-t", "0", plain]).output();
    let image = format!("localhost/{name}:latest");
    let ran = Command::new("podman")
        .args(["run", "-d", "--name", plain, "-p", "127.0.0.1::80", &image, "sleep", "300"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "podman run: {}", String::from_utf8_lossy(&ran.stderr));
    // Only the foreign one: the box has no container of its own.
    let status = b.run(&["status", name]);
    status.status(0);
    assert!(status.stdout.starts_with(&format!("box {name} has no container")), "{}", status.dump());
    assert!(
        status.stdout.contains(&format!("not charly's: {plain} (running, image {image} of box {name})")),
        "{}",
        status.dump()
    );
    // With the box's own container beside it: that one is the box's, the plain one foreign.
    b.run(&["start", name]).status(0);
    for args in [vec!["status", name, "--json"], vec!["status", "--json"]] {
        let j = b.run(&args).json();
        let names: Vec<&str> =
            j["containers"].as_array().unwrap().iter().map(|c| c["container"].as_str().unwrap()).collect();
        assert!(names.contains(&format!("charly-{name}").as_str()) && !names.contains(&plain), "{j}");
        let foreign = j["foreign"].as_array().unwrap();
        let mine: Vec<_> = foreign.iter().filter(|c| c["container"] == plain).collect();
        assert_eq!(mine.len(), 1, "{j}");
        assert_eq!(
            (&mine[0]["box"], &mine[0]["image"], &mine[0]["status"]),
            (&serde_json::json!(name), &serde_json::json!(image), &serde_json::json!("running")),
            "{j}"
        );
    }
    assert!(running(plain), "left alone");
}

/// Concurrent starts of a new instance with a volume (trial 29, M1): one starts it, the others
/// wait for it and find it running; its volume carries charly's labels, so `--purge` removes
/// it. Before, each start created the volume, the winner's lost its labels, and the instance
/// could be neither started again nor purged.
#[test]
fn concurrent_starts_of_one_instance_take_turns() {
    let b = Box::built("test-cc");
    let volume = "charly-test-cc-c-data";
    b.cleanup().containers(&["charly-test-cc-c"]);
    b.cleanup().volumes(&[volume]);
    let port = format!("{}:80", crate::util::free_port());
    let runs: Vec<_> = (0..3)
        .map(|_| {
            let mut cmd = b.charly();
            cmd.args([
                "start",
                "test-cc",
                "-i",
                "c",
                "-p",
                &port,
                "--volume",
                "data:/data",
                "--",
                "sleep",
                "1000",
            ]);
            cmd.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let outs: Vec<_> = runs.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let started = outs.iter().filter(|o| o.status.success()).count();
    let text = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(started, 1, "{:?}", outs.iter().map(text).collect::<Vec<_>>());
    for o in outs.iter().filter(|o| !o.status.success()) {
        assert_eq!(o.status.code(), Some(2));
        assert!(text(o).contains("already running"), "{}", text(o));
    }
    let labels = crate::util::podman(&[
        "volume",
        "inspect",
        volume,
        "--format",
        "{{index .Labels \"ai.opencharly.box\"}}",
    ]);
    assert_eq!(labels.trim(), "test-cc");
    let removed = b.run(&["remove", "test-cc", "-i", "c", "-t", "1", "--purge", "--json"]).status(0).json();
    assert_eq!(removed["volumes"], serde_json::json!([volume]), "{removed}");
    assert!(!volume_exists(volume));
}

/// `status` of a box the project does not have, with no container, is an error as `start`
/// and `stop` make it (trial 29: it exited 0 and suggested starting it); the project's own
/// box without a container is still a status.
#[test]
fn status_of_a_box_the_project_does_not_have_is_an_error() {
    let b = Box::new("test-stn");
    b.run(&["status", "test-stn-nosuch"])
        .status(2)
        .stderr_has(&["box test-stn-nosuch is not a box of this project"]);
    let own = b.run(&["status", "test-stn"]);
    own.status(0);
    assert!(own.stdout.contains("box test-stn has no container"), "{}", own.dump());
}
