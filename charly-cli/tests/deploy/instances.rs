//! Instances of one box kept apart where the trial found them shared: each has its own
//! encrypted volume directories and passphrase (`remove --purge` and `config passwd` of one
//! leave the others' data and keys), and a deployment's quadlet units and run mode are its own
//! (all its `.volume` units go with `--purge`, the recorded run mode decides what `start` does).

use std::path::PathBuf;
use std::process::Command;

use super::config::{Host, fuse_works};

/// Unmounts the plain dirs at the end, also when an assertion fails.
struct Unmount(Vec<PathBuf>);

impl Drop for Unmount {
    fn drop(&mut self) {
        for dir in &self.0 {
            let _ = Command::new("fusermount3").arg("-u").arg(dir.join("plain")).output();
        }
    }
}

#[test]
fn each_instance_has_its_own_encrypted_directory_and_passphrase() {
    if let Err(why) = fuse_works() {
        panic!("encrypted volumes cannot be tested on this machine: {why}");
    }
    let name = "test-dx-enc";
    let h = Host::new(name, &[]);
    h.b.candy(name, "st", "st:\n  candy: {}\nst-vol:\n  volume: [{name: state, path: /var/state}]\n");
    let enc = h.home().join(".local/share/charly/encrypted");
    let (a, b) = (enc.join(format!("charly-{name}-a-state")), enc.join(format!("charly-{name}-b-state")));
    let _unmount = Unmount(vec![a.clone(), b.clone()]);
    for (inst, dir) in [("a", &a), ("b", &b)] {
        let json = h
            .b
            .run(&["config", "setup", name, "-i", inst, "--encrypt", "state", "--password", "auto", "--json"])
            .status(0)
            .json();
        assert_eq!(json["volumes"][0]["host"], dir.join("plain").display().to_string(), "{json}");
        assert_eq!(json["passphrase_stored"], format!("charly/enc/{name}/{inst} (config)"), "{json}");
        assert_eq!(
            std::fs::read_to_string(dir.join("charly.owner")).unwrap(),
            format!("{name}/{inst} state\n")
        );
    }
    h.b.run(&["config", "mount", name, "-i", "a"]).status(0);
    std::fs::write(a.join("plain/mine"), "secret-data").unwrap();
    h.b.run(&["config", "unmount", name, "-i", "a"]).status(0);

    // passwd of instance a: its key changes, b's does not and b still mounts.
    let p = h.b.run(&["config", "passwd", name, "-i", "a", "--new-passphrase", "newpass1"]);
    p.status(0);
    assert!(
        p.stdout.contains(&format!("{name}/a: new passphrase stored as charly/enc/{name}/a (config)")),
        "{}",
        p.dump()
    );
    h.b.run(&["config", "mount", name, "-i", "b"]).status(0);
    h.b.run(&["config", "unmount", name, "-i", "b"]).status(0);

    // remove --purge of b takes b's directory only.
    let removed = h.b.run(&["remove", name, "-i", "b", "--purge", "--json"]).status(0).json();
    assert_eq!(removed["encrypted"], serde_json::json!([b.display().to_string()]), "{removed}");
    assert!(!b.exists() && a.join("cipher/gocryptfs.conf").is_file());
    let status = h.b.run(&["config", "status", name, "-i", "a", "--json"]).status(0).json();
    assert_eq!(status["volumes"][0]["present"], true, "{status}");
    h.b.run(&["config", "mount", name, "-i", "a"]).status(0);
    let mine = std::fs::read_to_string(a.join("plain/mine"));
    h.b.run(&["config", "unmount", name, "-i", "a"]).status(0);
    assert_eq!(mine.unwrap(), "secret-data");

    // A directory of a colliding name (box test-dx-enc instance a-x and instance a volume
    // x-state are both charly-test-dx-enc-a-x-state) stays the one it was made for.
    h.b.run(&["config", "setup", name, "-i", "a-x", "--encrypt", "state", "--password", "auto"]).status(0);
    let r = h.b.run(&["config", "setup", name, "-i", "a", "-v", "x-state:/x", "--encrypt", "x-state"]);
    r.status(2).stderr_has(&["is the encrypted volume of deployment \"test-dx-enc/a-x state\""]);
    h.b.run(&["config", "remove", name, "-i", "a-x", "--purge"]).status(0);
    h.b.run(&["config", "remove", name, "-i", "a", "--purge"]).status(0);
    assert!(!a.exists());
}

#[test]
fn purge_removes_every_unit_and_start_follows_the_recorded_run_mode() {
    let name = "test-dx-q";
    let h = Host::new(name, &[]);
    h.b.candy(
        name,
        "wv",
        "wv:\n  candy: {}\nwv-vol:\n  volume: [{name: www, path: /www}, {name: state, path: /var/state}]\n",
    );
    for v in ["www", "state", "extra"] {
        h.b.cleanup().volumes(&[&format!("charly-{name}-q-{v}")]);
    }
    let setup = ["config", "setup", name, "-i", "q", "--run-mode", "quadlet", "-v", "extra:/extra", "--json"];
    let json = h.b.run(&setup).status(0).json();
    assert_eq!(json["entry"]["run_mode"], "quadlet", "{json}");
    let unit = |n: &str| h.units().join(format!("charly-{name}-q{n}"));
    let all = [".container", "-www.volume", "-state.volume", "-extra.volume"];
    for u in all {
        assert!(unit(u).is_file(), "{u} not written: {json}");
    }
    // The recorded run mode: systemd runs it, which this machine does not have as PID 1.
    let start = h.b.run(&["start", name, "-i", "q"]);
    if std::path::Path::new("/run/systemd/system").is_dir() {
        panic!("this test expects a host without systemd as PID 1 (the start would really run the unit)");
    }
    start.status(2).stderr_has(&[
        &format!("deploy entry {name}/q: run_mode \"quadlet\""),
        "systemd is not running on this host",
        &format!("`charly config setup {name} -i q --run-mode direct`"),
    ]);
    assert!(!super::util::container_exists(&format!("charly-{name}-q")));
    // Without --run-mode, setup keeps the recorded mode (and its units).
    h.b.run(&["config", "setup", name, "-i", "q", "-e", "A=1"]).status(0);
    assert!(unit(".container").is_file());
    // Switched to direct: recorded, and the units go.
    let json =
        h.b.run(&["config", "setup", name, "-i", "q", "--run-mode", "direct", "--json"]).status(0).json();
    assert_eq!(json["changed"], true, "{json}");
    assert_eq!(json["entry"]["run_mode"], "direct", "{json}");
    assert_eq!(json["units_removed"].as_array().unwrap().len(), 4, "{json}");
    for u in all {
        assert!(!unit(u).exists(), "{u} left: {json}");
    }
    // Back to quadlet, then remove --purge: every unit goes (the image's volumes' too).
    h.b.run(&setup).status(0);
    let removed = h.b.run(&["remove", name, "-i", "q", "--purge", "--json"]).status(0).json();
    assert_eq!(removed["units"].as_array().unwrap().len(), 4, "{removed}");
    for u in all {
        assert!(!unit(u).exists(), "{u} left: {removed}");
    }
}
