//! Writing one deployment's entry: what `config setup` records for a box (its image, ports,
//! environment), through the lossless editor: the rest of a hand-edited file stays as it was.

use std::path::Path;

use super::file::{self, Outcome};
use super::report::Configured;
use super::schema::{check_env, check_port};
use super::{DeployFileError, container_of};
use crate::project::yamlfile;
use crate::project::{Cancel, KeyPath};
use yaml_edit::YamlNode;

/// The fields of an entry to write; empty ones are left as the file has them.
#[derive(Clone, Debug, Default)]
pub struct EntryUpdate {
    /// The box the deployment runs (`image:`).
    pub image: String,
    /// Ports `[ip:]host:container[/udp]`: replace the entry's list when any are given.
    pub ports: Vec<String>,
    /// `KEY=VALUE` lines: merged into the entry's `env` by key (a new value wins), or, with
    /// `clean_env`, replacing it.
    pub env: Vec<String>,
    /// Replace the saved env instead of merging.
    pub clean_env: bool,
    /// `env_file:` (absolute path).
    pub env_file: Option<String>,
    /// `network:`.
    pub network: Option<String>,
    /// `secret:` (the whole list, replacing the entry's when given).
    pub secrets: Option<Vec<SecretEntry>>,
    /// `volume:` (the whole list, replacing the entry's when given).
    pub volumes: Option<Vec<VolumeEntry>>,
    /// `run_mode:` (`direct`, `quadlet`), when given.
    pub run_mode: Option<String>,
}

/// One `secret:` entry of a deployment: the variable `name` the container sees, filled from
/// credential `charly/secret/<source>` (default: the name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SecretEntry {
    /// The environment variable in the container.
    pub name: String,
    /// The credential key under `charly/secret` (None: the name).
    pub source: Option<String>,
}

/// One `volume:` entry of a deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeEntry {
    /// The volume's short name.
    pub name: String,
    /// `volume`, `bind` or `encrypted`.
    pub kind: String,
    /// The host directory (bind, encrypted).
    pub host: Option<String>,
    /// Where it is mounted in the container.
    pub path: Option<String>,
}

impl SecretEntry {
    fn yaml(&self) -> String {
        let mut fields = vec![format!("name: {}", flow_item(&self.name))];
        if let Some(source) = &self.source {
            fields.push(format!("source: {}", flow_item(source)));
        }
        format!("{{{}}}", fields.join(", "))
    }
}

impl VolumeEntry {
    fn yaml(&self) -> String {
        let mut fields =
            vec![format!("name: {}", flow_item(&self.name)), format!("type: {}", flow_item(&self.kind))];
        if let Some(host) = &self.host {
            fields.push(format!("host: {}", flow_item(host)));
        }
        if let Some(path) = &self.path {
            fields.push(format!("path: {}", flow_item(path)));
        }
        format!("{{{}}}", fields.join(", "))
    }
}

/// The entry's `secret:` list as saved.
pub fn saved_secrets(node: Option<&super::schema::Node>) -> Vec<SecretEntry> {
    node.and_then(|n| n.secret.as_ref())
        .map(|list| {
            list.iter().map(|s| SecretEntry { name: s.name.clone(), source: s.source.clone() }).collect()
        })
        .unwrap_or_default()
}

/// The entry's `port:` list as saved, as text (`8080`, `"127.0.0.1:8080:80/udp"`).
pub fn saved_ports(node: Option<&super::schema::Node>) -> Vec<String> {
    node.and_then(|n| n.port.as_ref()).map(|ps| ps.iter().map(scalar_text).collect()).unwrap_or_default()
}

/// The entry's `volume:` list as saved (`type` defaulted to `volume`).
pub fn saved_volumes(node: Option<&super::schema::Node>) -> Vec<VolumeEntry> {
    node.and_then(|n| n.volume.as_ref())
        .map(|list| {
            list.iter()
                .map(|v| VolumeEntry {
                    name: v.name.clone(),
                    kind: v.kind.clone().unwrap_or_else(|| "volume".into()),
                    host: v.host.clone(),
                    path: v.path.clone(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes (creates or updates) entry `key` of the deploy file at `path` with `update`.
///
/// # Errors
///
/// [`DeployFileError::Invalid`] naming the argument whose value is not usable (nothing is
/// written); the deploy file's load and write errors.
pub fn write_entry(
    path: &Path,
    key: &str,
    update: &EntryUpdate,
    cancel: &Cancel,
) -> Result<Configured, DeployFileError> {
    container_of(key)?;
    let bad = |problem: String| DeployFileError::Invalid {
        path: path.to_owned(),
        problem,
        fix: "the value given on the command line was refused (nothing was changed)",
    };
    for line in &update.env {
        check_env(line).map_err(|e| bad(format!("--env {e}")))?;
    }
    for port in &update.ports {
        check_port(&yaml_serde::Value::String(port.clone())).map_err(|e| bad(format!("--port {e}")))?;
    }
    let ((), changed) = file::edit(path, cancel, |file| {
        let doc = file.doc();
        let field = |name: &str| KeyPath::from_keys(["deploy", key, name]);
        let set_text = |name: &str, yaml: &str| -> Result<(), DeployFileError> {
            yamlfile::set_path(doc, path, &field(name), &yamlfile::parse_value(yaml)?)?;
            Ok(())
        };
        let set_str = |name: &str, value: &str| -> Result<(), DeployFileError> {
            yamlfile::set_path(doc, path, &field(name), value)?;
            Ok(())
        };
        // A list already there is edited item by item, in its own style: its unchanged items
        // keep their comments and quoting (rewriting it whole would turn a block list into a
        // flow one and drop its comments).
        let set_list = |name: &str, saved: &[String], items: &[String]| -> Result<(), DeployFileError> {
            match yamlfile::get(doc, &field(name)) {
                Some(YamlNode::Sequence(seq)) if seq.len() == saved.len() && !items.is_empty() => {
                    edit_items(&seq, saved, items)
                }
                _ => set_text(name, &format!("[{}]", items.join(", "))),
            }
        };
        // A field already holding the value is not touched: its quoting and comments stay.
        let saved = file.schema().deploy.as_ref().and_then(|d| d.get(key)).and_then(|n| n.as_ref());
        if saved.and_then(|n| n.image.as_deref()) != Some(update.image.as_str()) {
            set_str("image", &update.image)?;
        }
        let saved_ports = saved_ports(saved);
        if !update.ports.is_empty() && update.ports != saved_ports {
            let yaml = |ports: &[String]| ports.iter().map(|p| flow_item(p)).collect::<Vec<_>>();
            set_list("port", &yaml(&saved_ports), &yaml(&update.ports))?;
        }
        if !update.env.is_empty() || update.clean_env {
            let saved = saved.and_then(|n| n.env.clone()).unwrap_or_default();
            let env = if update.clean_env { update.env.clone() } else { merge_env(&saved, &update.env) };
            if env != saved {
                let yaml = |env: &[String]| env.iter().map(|e| flow_item(e)).collect::<Vec<_>>();
                set_list("env", &yaml(&saved), &yaml(&env))?;
            }
        }
        if let Some(env_file) = &update.env_file
            && saved.and_then(|n| n.env_file.as_ref()) != Some(env_file)
        {
            set_str("env_file", env_file)?;
        }
        if let Some(network) = &update.network
            && saved.and_then(|n| n.network.as_ref()) != Some(network)
        {
            set_str("network", network)?;
        }
        if let Some(mode) = &update.run_mode
            && saved.and_then(|n| n.run_mode.as_ref()) != Some(mode)
        {
            set_str("run_mode", mode)?;
        }
        if let Some(secrets) = &update.secrets
            && *secrets != saved_secrets(saved)
        {
            let saved: Vec<String> = saved_secrets(saved).iter().map(SecretEntry::yaml).collect();
            let items: Vec<String> = secrets.iter().map(SecretEntry::yaml).collect();
            set_list("secret", &saved, &items)?;
        }
        if let Some(volumes) = &update.volumes
            && *volumes != saved_volumes(saved)
        {
            let saved: Vec<String> = saved_volumes(saved).iter().map(VolumeEntry::yaml).collect();
            let items: Vec<String> = volumes.iter().map(VolumeEntry::yaml).collect();
            set_list("volume", &saved, &items)?;
        }
        Ok(((), Outcome::Write(doc.to_string())))
    })?;
    let file = super::DeployFile::load(path)?;
    let content = file
        .json()
        .get("deploy")
        .and_then(|d| d.get(key))
        .and_then(|n| n.as_object().cloned())
        .unwrap_or_default();
    Ok(Configured { path: path.display().to_string(), key: key.to_owned(), changed, entry: content })
}

/// Turns list `seq` (holding `saved`, as YAML text) into `items`: a changed item is replaced
/// in place, extra ones removed from the end, new ones appended.
fn edit_items(seq: &yaml_edit::Sequence, saved: &[String], items: &[String]) -> Result<(), DeployFileError> {
    for (index, item) in items.iter().enumerate().take(saved.len()) {
        if *item != saved[index] {
            seq.set(index, yamlfile::parse_value(item)?);
        }
    }
    for index in (items.len()..saved.len()).rev() {
        seq.remove(index);
    }
    for item in items.iter().skip(saved.len()) {
        seq.push(yamlfile::parse_value(item)?);
    }
    Ok(())
}

/// A YAML scalar as text (`8080` → `"8080"`).
fn scalar_text(value: &yaml_serde::Value) -> String {
    match value {
        yaml_serde::Value::String(s) => s.clone(),
        yaml_serde::Value::Number(n) => n.to_string(),
        other => format!("{other:?}"),
    }
}

/// A scalar in flow style: plain when it can be, else double-quoted.
fn flow_item(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || "_./=@~+-".contains(c))
        && !s.starts_with(['-', '~', '@'])
        && !matches!(s, "true" | "false" | "null" | "yes" | "no")
        && s.parse::<f64>().is_err();
    if plain { s.to_owned() } else { serde_json::Value::String(s.to_owned()).to_string() }
}

/// `saved` with `given` merged in by key: a given key replaces the saved line in place, new
/// keys are appended in order.
fn merge_env(saved: &[String], given: &[String]) -> Vec<String> {
    let name = |line: &str| line.split_once('=').map_or(line, |(k, _)| k).to_owned();
    let mut out: Vec<String> = saved.to_vec();
    for line in given {
        match out.iter().position(|s| name(s) == name(line)) {
            Some(i) => out[i] = line.clone(),
            None => out.push(line.clone()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn env_merges_by_key() {
        let saved = ["A=1".to_owned(), "B=2".to_owned()];
        let given = ["B=3".to_owned(), "C=4".to_owned()];
        assert_eq!(super::merge_env(&saved, &given), ["A=1", "B=3", "C=4"]);
        let list = ["A=1".to_owned(), "B=two words".to_owned(), "8080:80".to_owned(), "80".to_owned()];
        let quoted: Vec<String> = list.iter().map(|s| super::flow_item(s)).collect();
        assert_eq!(quoted, ["A=1", r#""B=two words""#, r#""8080:80""#, r#""80""#]);
    }
}
