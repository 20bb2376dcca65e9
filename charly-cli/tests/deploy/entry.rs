//! A direct `start` after `config setup`: the deploy entry's secrets, volumes, binds, env and
//! ports reach the `podman run` (before, direct start ignored the entry), and a saved value
//! that no longer holds (a bind directory gone) stops the start before anything runs.

use std::process::Command;

use super::config::Host;
use crate::util::{container_exists, free_port, http_get};

fn inspect(container: &str) -> serde_json::Value {
    let out = Command::new("podman").args(["container", "inspect", container]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()[0].clone()
}

#[test]
fn start_applies_the_deploy_entry_config_setup_wrote() {
    let name = "test-cfgrun";
    let h = Host::new(name, &[("TOKEN", "s3cret")]);
    h.b.cleanup().containers(&[&format!("charly-{name}")]);
    h.b.run(&["box", "build", name]).status(0);
    let site = h.home().join("site");
    std::fs::create_dir_all(&site).unwrap();
    std::fs::write(site.join("index.html"), "<h1>from the bind</h1>\n").unwrap();
    let port = free_port();
    let (bind, publish) = (format!("site={}", site.display()), format!("{port}:80"));
    h.b.run(&[
        "config",
        "setup",
        name,
        "--secret",
        "TOKEN",
        "-v",
        "data:/data",
        "-v",
        "site:/www",
        "--bind",
        &bind,
        "-e",
        "MODE=entry",
        "-e",
        "KEEP=1",
        "-p",
        &publish,
    ])
    .status(0);
    // busybox httpd serves the bound directory on the entry's port; -e on start wins over the entry.
    let started =
        h.b.run(&["start", name, "-e", "MODE=flag", "--json", "--", "httpd", "-f", "-p", "80", "-h", "/www"])
            .status(0)
            .json();
    assert_eq!(started["ports"][0]["host"], port, "{started}");
    assert!(http_get(port).contains("from the bind"));
    let c = inspect(&format!("charly-{name}"));
    let env: Vec<&str> = c["Config"]["Env"].as_array().unwrap().iter().filter_map(|e| e.as_str()).collect();
    assert!(env.contains(&"MODE=flag") && env.contains(&"KEEP=1"), "{env:?}");
    let mounts = c["Mounts"].as_array().unwrap();
    let mount = |dest: &str| mounts.iter().find(|m| m["Destination"] == dest).cloned().unwrap_or_default();
    assert_eq!(mount("/data")["Name"], format!("charly-{name}-data"), "{mounts:?}");
    assert_eq!(mount("/www")["Source"], site.display().to_string(), "{mounts:?}");
    // The secret is in the container's environment, from the podman secret config setup made.
    let token = h.b.run(&["cmd", name, "printf %s \"$TOKEN\""]).status(0).stdout.clone();
    assert_eq!(token, "s3cret");
    h.b.run(&["stop", name, "-t", "1"]).status(0);

    // The bind directory is gone: start refuses, naming the entry, the path and the fix.
    std::fs::remove_dir_all(&site).unwrap();
    h.b.run(&["start", name]).status(2).stderr_has(&[
        &format!("deploy entry {name}: volume site"),
        "the host directory does not exist",
        "--bind site=DIR",
        "nothing was started",
    ]);
    let c = inspect(&format!("charly-{name}"));
    assert_eq!(c["State"]["Status"], "exited", "the exited container is left as it was");
    h.b.run(&["remove", name, "-t", "0"]).status(0);
    assert!(!container_exists(&format!("charly-{name}")));
}
