//! The closed schema of the deploy file (REFERENCE.md §18.2, charly era): the keys each level
//! allows, and the checks of values that podman would otherwise refuse later (`env` lines
//! without `=`, ports that are not ports, unknown volume types).
//!
//! The file is read twice: losslessly for editing, and into these types for checking. A key
//! these types do not know is an error naming it and the keys allowed there.

use std::collections::BTreeMap;

use serde::Deserialize;
use yaml_serde::Value;

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSchema {
    /// The schema version (kept as written).
    #[serde(default)]
    pub version: Option<Value>,
    /// Resolved provides of deployed boxes (written by `config setup`).
    #[serde(default)]
    pub provides: Option<Provides>,
    /// Deployment name (`<box>` or `<box>/<instance>`) → node; a null node is an empty one.
    #[serde(default)]
    pub deploy: Option<BTreeMap<String, Option<Node>>>,
    /// Sidecar templates by name.
    #[serde(default)]
    pub sidecar: Option<BTreeMap<String, Value>>,
}

/// `provides:`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Provides {
    /// Environment variables deployed boxes provide to others.
    #[serde(default)]
    pub env: Option<Vec<EnvProvide>>,
    /// MCP servers deployed boxes provide.
    #[serde(default)]
    pub mcp: Option<Vec<McpProvide>>,
}

/// One `provides.env` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvProvide {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The deployment that provides it.
    pub source: String,
}

/// One `provides.mcp` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpProvide {
    /// The server's name.
    pub name: String,
    /// Its URL.
    pub url: String,
    /// `http` (default) or `sse`.
    #[serde(default)]
    pub transport: Option<String>,
    /// The deployment that provides it.
    pub source: String,
}

/// One `deploy.<name>` node (singular keys).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Node {
    /// The box it runs (default: the deployment name's box).
    pub image: Option<String>,
    pub from: Option<String>,
    /// `[ip:]host:container[/udp]` or a container port.
    pub port: Option<Vec<Value>>,
    pub resolved_port: Option<Vec<Value>>,
    /// `KEY=VALUE` lines.
    pub env: Option<Vec<String>>,
    pub env_file: Option<String>,
    pub network: Option<String>,
    /// How this host runs it: `direct` (`charly start` runs `podman run`) or `quadlet`
    /// (systemd runs it from the units `config setup` wrote); recorded by `config setup`.
    pub run_mode: Option<String>,
    /// `podman` or `docker`.
    pub engine: Option<String>,
    pub security: Option<Security>,
    pub secret: Option<Vec<Secret>>,
    pub volume: Option<Vec<Volume>>,
    pub sidecar: Option<BTreeMap<String, Value>>,
    pub tunnel: Option<Value>,
    pub dns: Option<String>,
    pub acme_email: Option<String>,
    pub forward_gpg_agent: Option<bool>,
    pub forward_ssh_agent: Option<bool>,
    /// Check steps for `check live`.
    pub plan: Option<Vec<Value>>,
    pub kind: Option<String>,
    pub replica: Option<u32>,
    pub restart: Option<String>,
    pub add_candy: Option<Vec<String>>,
    pub nested: Option<Value>,
    pub peer: Option<Value>,
    pub host: Option<String>,
    pub user: Option<String>,
    pub ssh_arg: Option<Vec<String>>,
    pub cpus: Option<Value>,
    pub ram: Option<String>,
    pub disk_size: Option<String>,
    pub kubernetes: Option<Value>,
    pub ephemeral: Option<bool>,
    pub preemptible: Option<bool>,
}

/// `security:` of a node.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct Security {
    pub privileged: Option<bool>,
    pub cap_add: Option<Vec<String>>,
    pub devices: Option<Vec<String>>,
    pub security_opt: Option<Vec<String>>,
    pub shm_size: Option<Value>,
    pub group_add: Option<Vec<String>>,
    /// `host:container[:opts]` or `tmpfs:/path:opts`.
    pub mounts: Option<Vec<String>>,
    pub memory_max: Option<Value>,
    pub memory_high: Option<Value>,
    pub memory_swap_max: Option<Value>,
    pub cpus: Option<Value>,
}

/// One `secret:` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Secret {
    /// The podman secret's name.
    pub name: String,
    /// Where its value comes from.
    #[serde(default)]
    pub source: Option<String>,
}

/// One `volume:` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    /// The box's volume name.
    pub name: String,
    /// `volume` (default), `bind` or `encrypted`.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// The host directory (bind, encrypted).
    #[serde(default)]
    pub host: Option<String>,
    /// The path in the container (deploy-only volumes).
    #[serde(default)]
    pub path: Option<String>,
    /// Whether the box's data was seeded into it.
    #[serde(default)]
    pub data_seeded: Option<bool>,
    /// The image the data came from.
    #[serde(default)]
    pub data_source: Option<String>,
}

/// Parses `text` as a deploy file and checks its values. A blank file is an empty one.
///
/// # Errors
///
/// The problem, located (`deploy.web.env[1]: ...`, or the parser's message with line and
/// column).
pub fn check(text: &str) -> Result<FileSchema, String> {
    let file: Option<FileSchema> = yaml_serde::from_str(text).map_err(|e| e.to_string())?;
    let file = file.unwrap_or_default();
    for (key, node) in file.deploy.iter().flatten() {
        super::container_of(key).map_err(|e| format!("deploy.{key}: the deployment name: {e}"))?;
        if let Some(node) = node {
            check_node(node).map_err(|e| format!("deploy.{key}.{e}"))?;
        }
    }
    Ok(file)
}

fn check_node(node: &Node) -> Result<(), String> {
    for (i, line) in node.env.iter().flatten().enumerate() {
        check_env(line).map_err(|e| format!("env[{i}]: {e}"))?;
    }
    for (field, ports) in [("port", &node.port), ("resolved_port", &node.resolved_port)] {
        for (i, port) in ports.iter().flatten().enumerate() {
            check_port(port).map_err(|e| format!("{field}[{i}]: {e}"))?;
        }
    }
    if let Some(engine) = &node.engine
        && !matches!(engine.as_str(), "podman" | "docker")
    {
        return Err(format!("engine: {engine:?} is not an engine; use podman or docker"));
    }
    if let Some(mode) = &node.run_mode
        && !matches!(mode.as_str(), "direct" | "quadlet")
    {
        return Err(format!("run_mode: {mode:?} is not a run mode; use direct or quadlet"));
    }
    for (i, volume) in node.volume.iter().flatten().enumerate() {
        let at = |e: String| format!("volume[{i}]: {e}");
        if volume.name.trim().is_empty() {
            return Err(at("the name is empty".into()));
        }
        if let Some(kind) = &volume.kind
            && !matches!(kind.as_str(), "volume" | "bind" | "encrypted")
        {
            return Err(at(format!("type {kind:?} is not a volume type; use volume, bind or encrypted")));
        }
    }
    for (i, secret) in node.secret.iter().flatten().enumerate() {
        if secret.name.trim().is_empty() {
            return Err(format!("secret[{i}]: the name is empty"));
        }
    }
    Ok(())
}

pub use crate::project::check_env;

/// Refuses a value that a `[Container]` line of a quadlet unit cannot hold: a line break would
/// end the setting, and what follows would be read as settings of its own (`[Service]`,
/// `ExecStartPre=` run on the host: trial 29, H1); NUL ends the file for systemd. Quadlet gives
/// no escape for these in every key, so the value is refused, naming what it is. `config
/// setup` checks each value of a unit with it; `deploy import` checks what it imports (trial
/// 30, L2: an imported entry failed only at `config setup`).
///
/// # Errors
///
/// `what`, the value and why, as one sentence.
pub fn one_line(what: &str, value: &str) -> Result<(), String> {
    match value.find(['\n', '\r', '\0']) {
        None => Ok(()),
        Some(_) => Err(format!(
            "{what} {:?} holds a line break (or NUL), which a quadlet unit cannot hold: systemd reads each \
             line of the unit as a setting of its own; give it on one line (a multi-line value such as a \
             certificate goes in a file: --env-file, a bind-mounted file or a secret)",
            charly::quote::Quoted::new(value)
        )),
    }
}

/// Checks every text value of `node` (a deploy entry or a sidecar template, at `at`:
/// `deploy.web`) with [`one_line`], except its `plan` (check steps, which `check live` reads
/// and no unit holds). The first value that fails is named by where it is (`deploy.web.env[0]`).
///
/// # Errors
///
/// That value, located.
pub fn one_line_values(at: &str, node: &Value) -> Result<(), String> {
    fn walk(at: &str, value: &Value, top: bool) -> Result<(), String> {
        match value {
            Value::String(s) => one_line(at, s),
            Value::Sequence(items) => {
                items.iter().enumerate().try_for_each(|(i, v)| walk(&format!("{at}[{i}]"), v, false))
            }
            Value::Mapping(map) => map.iter().try_for_each(|(k, v)| {
                let key = match k {
                    Value::String(k) => k.clone(),
                    other => yaml_serde::to_string(other).unwrap_or_default().trim().to_owned(),
                };
                match top && key == "plan" {
                    true => Ok(()),
                    false => walk(&format!("{at}.{key}"), v, false),
                }
            }),
            Value::Tagged(tagged) => walk(at, &tagged.value, top),
            Value::Null | Value::Bool(_) | Value::Number(_) => Ok(()),
        }
    }
    walk(at, node, true)
}

/// Checks a port: a container port number, or `[ip:]host:container[/tcp|/udp]`.
///
/// # Errors
///
/// What is wrong with it.
pub fn check_port(port: &Value) -> Result<(), String> {
    let text = match port {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => return Err("not a port: write a number or \"[ip:]host:container[/udp]\"".into()),
    };
    let bad = || format!("{text:?} is not a port mapping: write N or \"[ip:]host:container[/udp]\"");
    let (mapping, protocol) = match text.rsplit_once('/') {
        Some((m, p)) => (m, Some(p)),
        None => (text.as_str(), None),
    };
    if protocol.is_some_and(|p| p != "tcp" && p != "udp") {
        return Err(bad());
    }
    let parts: Vec<&str> = mapping.rsplitn(3, ':').collect();
    let numbers = match parts.len() {
        1 => &parts[..1],
        2 | 3 => &parts[..2],
        _ => return Err(bad()),
    };
    for n in numbers {
        match n.parse::<u16>() {
            Ok(p) if p > 0 => {}
            _ => return Err(bad()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_checked_where_they_are() {
        assert!(check("").is_ok());
        assert!(check("# only a comment\n").is_ok());
        let good = "deploy:\n  web:\n    port: [\"8080:80\", 9000, \"127.0.0.1:53:53/udp\"]\n    env: [A=1]\n  web/2: ~\n";
        assert!(check(good).is_ok(), "{:?}", check(good).err());
        let err = check("deploy:\n  web:\n    env: [A=1, NOEQUALS]\n").unwrap_err();
        assert!(err.starts_with("deploy.web.env[1]: \"NOEQUALS\" has no `=`"), "{err}");
        let err = check("deploy:\n  web:\n    port: [\"80:http\"]\n").unwrap_err();
        assert!(err.starts_with("deploy.web.port[0]:"), "{err}");
        let err = check("deploy:\n  web:\n    ports: [\"80:80\"]\n").unwrap_err();
        assert!(err.contains("unknown field `ports`"), "{err}");
        let err = check("deploy:\n  \"web app\": {}\n").unwrap_err();
        assert!(err.starts_with("deploy.web app: the deployment name"), "{err}");
        assert!(check("deploy:\n  web:\n    run_mode: quadlet\n").is_ok());
        let err = check("deploy:\n  web:\n    run_mode: systemd\n").unwrap_err();
        assert!(err.starts_with("deploy.web.run_mode: \"systemd\" is not a run mode"), "{err}");
        let err = check("deploy:\n  web:\n    volume: [{name: d, type: nfs}]\n").unwrap_err();
        assert!(err.contains("volume[0]: type \"nfs\""), "{err}");
        assert!(check("[1, 2]\n").is_err());
    }
}
