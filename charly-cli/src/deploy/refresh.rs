//! What `update` changes, in words ([`changes`]); the host port of a port the box newly
//! declares ([`move_new_ports`]); and, for a container started before charly kept its
//! `start` flags ([`crate::engine::Given`]), what it takes from a rebuilt image into the
//! arguments it was started with ([`refresh`]):
//!
//! | field | rule |
//! |---|---|
//! | ports | a container port the new image declares (`ai.opencharly.port`) and the old one did not, and that the container does not publish yet, is published on 127.0.0.1 at the same host port, or the next free one when that is taken; not when the deploy entry has `port:` (the entry's ports replace the box's, as at `start`) |
//! | env | by key, three-way: a line the old image gave that the container still has is replaced by the new image's (or dropped when the new image no longer sets it); a key the new image adds that the container does not set is added; a key set by `--env` or the deploy entry is left alone |
//!
//! Without this, a `port:` or `env:` node added to a candy and rebuilt by `update` would not
//! reach the container, and the fix the "port not published" errors print
//! ([`crate::resolve::publish_hint`]) would not work.

use std::collections::BTreeMap;

use crate::engine::{PortMap, RunSpec};

/// Moves each port of `spec` whose container port is one of `movable` (the box's own ports,
/// not set by the entry or a flag) and that `old` did not publish, to the next host port that
/// is `free` and unused by `spec`, when its own is not: a port a rebuilt box newly declares is
/// published without failing the update.
pub fn move_new_ports(spec: &mut RunSpec, old: &RunSpec, movable: &[u16], free: impl Fn(&PortMap) -> bool) {
    for i in 0..spec.ports.len() {
        let p = spec.ports[i].clone();
        let new = !old.ports.iter().any(|o| o.container == p.container && o.protocol == p.protocol);
        if !new || p.protocol != "tcp" || !movable.contains(&p.container) {
            continue;
        }
        let mut map = p;
        let taken = |m: &PortMap, ports: &[PortMap]| {
            ports.iter().enumerate().any(|(j, o)| j != i && o.host == m.host && o.protocol == m.protocol)
        };
        while taken(&map, &spec.ports) || !free(&map) {
            match map.host.checked_add(1) {
                Some(next) => map.host = next,
                None => break,
            }
        }
        spec.ports[i] = map;
    }
}

/// What differs between the container's arguments `old` and `new`, in words (empty: the same
/// but for the image): ports published and no longer published, env lines set and no longer
/// set, volumes and binds mounted and no longer mounted, the command, the confinement, the
/// secrets, the network and the env file.
pub fn changes(old: &RunSpec, new: &RunSpec) -> Vec<String> {
    let mut out = Vec::new();
    for p in &new.ports {
        if !old.ports.contains(p) {
            out.push(format!("published container port {} at {}:{}", p.container, p.host_ip, p.host));
        }
    }
    for p in &old.ports {
        if !new.ports.iter().any(|n| n.container == p.container && n.protocol == p.protocol) {
            out.push(format!("container port {}/{} no longer published", p.container, p.protocol));
        }
    }
    for line in &new.env {
        if !old.env.contains(line) {
            out.push(format!("env {line}"));
        }
    }
    for line in &old.env {
        let key = env_key(line);
        if !new.env.iter().any(|l| env_key(l) == key) {
            out.push(format!("env {key} no longer set"));
        }
    }
    for v in &new.volumes {
        if !old.volumes.contains(v) {
            out.push(format!("volume {} at {}", v.name, v.path));
        }
    }
    for b in &new.binds {
        if !old.binds.contains(b) {
            out.push(format!("bind {} at {}", b.host, b.path));
        }
    }
    let mounted = |spec: &RunSpec, path: &str| {
        spec.volumes.iter().any(|v| v.path == path) || spec.binds.iter().any(|b| b.path == path)
    };
    for path in old.volumes.iter().map(|v| &v.path).chain(old.binds.iter().map(|b| &b.path)) {
        if !mounted(new, path) {
            out.push(format!("{path} no longer mounted"));
        }
    }
    if new.command != old.command {
        out.push(format!("command {}", new.command.join(" ")));
    }
    if new.security != old.security {
        let flags = if new.security.is_empty() { "none".to_owned() } else { new.security.join(" ") };
        out.push(format!("confinement {flags}"));
    }
    if new.secrets != old.secrets {
        let names: Vec<&str> = new.secrets.iter().map(|s| s.env.as_str()).collect();
        out.push(format!("secrets {}", if names.is_empty() { "none".into() } else { names.join(", ") }));
    }
    if new.network != old.network {
        out.push(format!("network {}", new.network.as_deref().unwrap_or("default")));
    }
    if new.env_file != old.env_file {
        out.push(format!("env file {}", new.env_file.as_deref().unwrap_or("none")));
    }
    out
}
use crate::project::runtime::{Runtime, env_key, label};

/// The ports of an image's `ai.opencharly.port` label (none when absent or unreadable).
fn label_ports(labels: &BTreeMap<String, String>) -> Vec<u16> {
    labels.get(label::PORT).and_then(|v| serde_json::from_str(v).ok()).unwrap_or_default()
}

/// Applies the [module](self) rules to `spec`, recreated from an image with labels `new`
/// after one with labels `old`; `entry_ports`: the deploy entry has `port:` values; `free`
/// says whether a host port can be bound now. Returns what changed, in words (empty: nothing).
pub fn refresh(
    spec: &mut RunSpec,
    old: &BTreeMap<String, String>,
    new: &BTreeMap<String, String>,
    entry_ports: bool,
    free: impl Fn(&PortMap) -> bool,
) -> Vec<String> {
    let mut changes = Vec::new();
    if !entry_ports {
        let before = label_ports(old);
        for port in label_ports(new).into_iter().filter(|p| !before.contains(p)) {
            if spec.ports.iter().any(|p| p.container == port && p.protocol == "tcp") {
                continue;
            }
            let mut map = PortMap {
                host_ip: super::args::BIND_ADDRESS.into(),
                host: port,
                container: port,
                protocol: "tcp".into(),
            };
            let taken = |m: &PortMap| spec.ports.iter().any(|p| p.host == m.host && p.protocol == m.protocol);
            while taken(&map) || !free(&map) {
                match map.host.checked_add(1) {
                    Some(next) => map.host = next,
                    None => break,
                }
            }
            changes.push(format!("published container port {port} at {}:{}", map.host_ip, map.host));
            spec.ports.push(map);
        }
    }
    let (old_env, new_env) = (Runtime::from_labels(old).env, Runtime::from_labels(new).env);
    let find = |lines: &[String], key: &str| lines.iter().position(|l| env_key(l) == key);
    for line in &old_env {
        let key = env_key(line);
        let Some(at) = spec.env.iter().position(|l| l == line) else { continue };
        match find(&new_env, key) {
            Some(i) if new_env[i] != *line => {
                spec.env[at] = new_env[i].clone();
                changes.push(format!("env {}", new_env[i]));
            }
            Some(_) => {}
            None => {
                spec.env.remove(at);
                changes.push(format!("env {key} no longer set"));
            }
        }
    }
    for line in &new_env {
        let key = env_key(line);
        if find(&old_env, key).is_none() && find(&spec.env, key).is_none() {
            spec.env.push(line.clone());
            changes.push(format!("env {line}"));
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_said_in_words_and_new_box_ports_move_to_a_free_host_port() {
        let old = RunSpec {
            ports: vec![port(8080, 80)],
            env: vec!["A=1".into(), "B=2".into()],
            command: vec!["sleep".into(), "infinity".into()],
            ..Default::default()
        };
        let mut new = RunSpec {
            ports: vec![port(8080, 80), port(9222, 9222), port(8080, 8080)],
            env: vec!["A=1".into(), "C=3".into()],
            command: vec!["supervisord".into()],
            security: vec!["--read-only".into()],
            ..Default::default()
        };
        // 9222 is held on the host; 8080 by the other port of the spec; 80 was published.
        move_new_ports(&mut new, &old, &[80, 9222, 8080], |p| p.host != 9222);
        assert_eq!(new.ports, [port(8080, 80), port(9223, 9222), port(8081, 8080)]);
        assert_eq!(
            changes(&old, &new),
            [
                "published container port 9222 at 127.0.0.1:9223",
                "published container port 8080 at 127.0.0.1:8081",
                "env C=3",
                "env B no longer set",
                "command supervisord",
                "confinement --read-only"
            ]
        );
        assert!(changes(&old, &old).is_empty());
    }

    fn labels(ports: &str, env: &str) -> BTreeMap<String, String> {
        [(label::PORT.to_owned(), ports.to_owned()), (label::ENV.to_owned(), env.to_owned())].into()
    }

    fn port(host: u16, container: u16) -> PortMap {
        PortMap { host_ip: "127.0.0.1".into(), host, container, protocol: "tcp".into() }
    }

    #[test]
    fn a_newly_declared_port_is_published_at_a_free_host_port() {
        let mut spec = RunSpec { ports: vec![port(8080, 80)], ..Default::default() };
        let old = labels("[80]", "[]");
        let new = labels("[80,9222,5900]", "[]");
        // 9222 is taken on the host: the next free one.
        let changes = refresh(&mut spec, &old, &new, false, |p| p.host != 9222);
        assert_eq!(spec.ports, [port(8080, 80), port(9223, 9222), port(5900, 5900)]);
        assert_eq!(
            changes,
            [
                "published container port 9222 at 127.0.0.1:9223",
                "published container port 5900 at 127.0.0.1:5900"
            ]
        );
        // Already published (e.g. by `start -p 9300:9222`), or the entry decides: unchanged.
        let mut spec = RunSpec { ports: vec![port(9300, 9222)], ..Default::default() };
        assert!(refresh(&mut spec, &old, &labels("[9222]", "[]"), false, |_| true).is_empty());
        assert!(refresh(&mut spec, &old, &labels("[80,5900]", "[]"), true, |_| true).is_empty());
        assert_eq!(spec.ports, [port(9300, 9222)]);
    }

    #[test]
    fn the_images_env_follows_the_image_and_the_users_stays() {
        let old = labels("[]", r#"["A=1","B=2","C=3"]"#);
        let new = labels("[]", r#"["A=10","C=3","D=4","E=5"]"#);
        // B was the image's and is gone; A changed; D and E are new, but E was set by --env.
        let mut spec =
            RunSpec { env: ["A=1", "B=2", "C=3", "E=mine"].map(String::from).to_vec(), ..Default::default() };
        let changes = refresh(&mut spec, &old, &new, false, |_| true);
        assert_eq!(spec.env, ["A=10", "C=3", "E=mine", "D=4"]);
        assert_eq!(changes, ["env A=10", "env B no longer set", "env D=4"]);
        // A key the user overrode keeps the user's value when the image's changes.
        let mut spec = RunSpec { env: vec!["A=user".into()], ..Default::default() };
        assert!(refresh(&mut spec, &old, &new, false, |_| true).iter().all(|c| !c.starts_with("env A")));
        assert_eq!(spec.env[0], "A=user");
    }
}
