//! `update` recreates the container as a `stop` and a `start` with the same flags would run it:
//! the rebuilt image's env, services (supervisord as init), volumes and confinement, the deploy
//! entry as it is now, the flags of the start; and when the new container does not run, the
//! old one runs again.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{Box, DEBIAN};

fn inspect(container: &str) -> serde_json::Value {
    let out = Command::new("podman").args(["container", "inspect", container]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()[0].clone()
}

fn write_entry(b: &Box, text: &str) {
    let dir = b.proj().parent().unwrap().join("home/.config/charly");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("charly.yml"), text).unwrap();
}

#[test]
fn update_applies_the_new_images_labels_and_the_deploy_entry_as_it_is_now() {
    let name = "test-dx-upd";
    let container = format!("charly-{name}");
    let b = Box::with_base(name, DEBIAN);
    b.cleanup().volumes(&[&format!("{container}-extra")]);
    b.candy(name, "u1", "u1:\n  candy: {}\nu1-env:\n  env: [HOME=/root]\n");
    b.run(&["box", "build", name]).status(0);
    b.run(&["start", name, "-e", "FLAG=kept"]).status(0);
    // The image gains an env line, a service (supervisord becomes the init), a volume and a
    // confinement; the deploy entry gains an env line.
    b.candy(
        name,
        "u2",
        "u2:\n  candy: {}\nu2-env:\n  env: [UPDATED=1]\nu2-svc:\n  service: [{name: looper, command: sleep 1000}]\n\
         u2-vol:\n  volume: [{name: extra, path: /extra}]\nu2-sec:\n  security: {cap_drop: [NET_RAW]}\n",
    );
    write_entry(&b, &format!("deploy:\n  {name}:\n    env: [NEW=3]\n"));
    let run = b.run(&["update", name, "--json"]);
    let json = run.status(0).json();
    assert_eq!(json["restarted"], true, "{}", run.dump());
    let changes: Vec<&str> =
        json["changes"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    for change in [
        "env UPDATED=1",
        "env NEW=3",
        &format!("volume {container}-extra at /extra"),
        "command supervisord -n -c /etc/charly/supervisord.conf",
        "confinement --cap-drop NET_RAW",
    ] {
        assert!(changes.contains(&change), "{change:?} not in {changes:?}");
    }
    // The image's env, the entry's and the start's flag.
    let env = b.run(&["cmd", name, "echo $UPDATED $NEW $FLAG $HOME"]);
    assert_eq!(env.status(0).stdout, "1 3 kept /root\n");
    // The service runs under supervisord (as the fix of `service status` on a box without
    // services says: declare one, then `charly update`).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let status = b.run(&["service", "status", name, "looper", "--json"]);
        if status.code == Some(0) && status.json()["services"][0]["state"] == "RUNNING" {
            break;
        }
        assert!(Instant::now() < deadline, "looper never ran\n{}", status.dump());
        std::thread::sleep(Duration::from_millis(250));
    }
    let c = inspect(&container);
    let caps = c["HostConfig"]["CapDrop"].to_string();
    assert!(caps.contains("NET_RAW"), "{caps}");
    let mounts = c["Mounts"].to_string();
    assert!(mounts.contains("\"/extra\""), "{mounts}");

    // Nothing new: recreated with no change said.
    let again = b.run(&["update", name, "--json"]).status(0).json();
    assert_eq!(again["changes"], serde_json::json!([]), "{again}");
}

#[test]
fn update_runs_the_old_container_again_when_the_new_one_does_not_run() {
    let name = "test-dx-updback";
    let container = format!("charly-{name}");
    let b = Box::built(name);
    b.run(&["start", name, "-e", "MARK=old"]).status(0);
    let before = inspect(&container)["Image"].as_str().unwrap().to_owned();
    // The rebuilt image runs as a user its passwd does not have: podman cannot start it.
    b.candy(name, "bad", "bad:\n  candy: {}\nbad-sec:\n  security: {user: test-dx-nosuchuser}\n");
    let r = b.run(&["update", name]);
    r.status(2).stderr_has(&[
        &format!("update {container}: the new container did not run:"),
        "test-dx-nosuchuser",
        "the container runs again as before the update (from the image it ran)",
    ]);
    let c = inspect(&container);
    assert_eq!(c["State"]["Running"], true, "{}", r.dump());
    assert_eq!(c["Image"].as_str().unwrap(), before);
    assert_eq!(b.run(&["cmd", name, "echo $MARK"]).status(0).stdout, "old\n");
}
