//! Faults a fresh user met in a trial of deploy mode: wording that names each instance and
//! volume once, `logs` of a supervisord box, `check live -i`, the command that stores a
//! missing secret, and a port remap that works as printed.

use super::config::Host;

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
