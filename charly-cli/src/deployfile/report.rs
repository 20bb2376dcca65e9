//! The reports of `deploy.*`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::report::Report;

/// `deploy path`: where the deploy file is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeployPath {
    /// The deploy file (`$XDG_CONFIG_HOME/charly/charly.yml` or `~/.config/charly/charly.yml`).
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
}

impl fmt::Display for DeployPath {
    /// The path alone, for scripts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.path)
    }
}

impl Report for DeployPath {}

/// `deploy show [box]`: the file, or one entry.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Shown {
    /// The deploy file.
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
    /// The entry shown (`web`, `web/2`); absent: the whole file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The YAML: the file as written (comments kept), or `deploy: {<key>: ...}`.
    pub yaml: String,
    /// The same as JSON: the file's top-level keys, or `{deploy: {<key>: ...}}`.
    pub content: serde_json::Map<String, serde_json::Value>,
}

impl fmt::Display for Shown {
    /// The YAML, or a line saying there is no file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.yaml.trim().is_empty() {
            return writeln!(f, "No deploy entries ({} {})", self.path, exists_word(self.exists));
        }
        write!(f, "{}", with_newline(&self.yaml))
    }
}

impl Report for Shown {}

/// `deploy export`: the file or some entries, as YAML, and where it went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Exported {
    /// The deploy file read.
    pub path: String,
    /// The entries exported.
    pub keys: Vec<String>,
    /// The YAML exported (comments of the deploy file kept).
    pub yaml: String,
    /// The file written (`--output`); absent: the YAML is the output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
}

impl fmt::Display for Exported {
    /// The YAML, or `Wrote <file> (N entries)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.output {
            Some(output) => writeln!(f, "Wrote {output} ({})", entries(self.keys.len())),
            None if self.yaml.trim().is_empty() => writeln!(f, "No deploy entries to export ({})", self.path),
            None => write!(f, "{}", with_newline(&self.yaml)),
        }
    }
}

impl Report for Exported {}

/// `deploy import`: what went into the deploy file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Imported {
    /// The deploy file.
    pub path: String,
    /// The files read, in merge order.
    pub files: Vec<String>,
    /// The entries written (added or merged field by field).
    pub keys: Vec<String>,
    /// Whether the file's text changed.
    pub changed: bool,
    /// Parts of the imported files left out, and why (`provides` is this host's own).
    pub ignored: Vec<String>,
}

impl fmt::Display for Imported {
    /// `Imported N file(s) into <path>: entries a, b`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.keys.is_empty() { "no entries".into() } else { self.keys.join(", ") };
        let unchanged = if self.changed { "" } else { " (already there; unchanged)" };
        writeln!(f, "Imported {} file(s) into {}: {what}{unchanged}", self.files.len(), self.path)?;
        for line in &self.ignored {
            writeln!(f, "  ignored: {line}")?;
        }
        Ok(())
    }
}

impl Report for Imported {}

/// `deploy reset [box]`: what was removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Reset {
    /// The deploy file.
    pub path: String,
    /// The entry reset; absent: the whole file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Whether anything was removed (false: nothing there to remove).
    pub changed: bool,
    /// Whether the file itself was deleted (the whole file, or its last entry).
    pub file_removed: bool,
    /// The `provides` entries removed with the entry (their `source` was it).
    pub provides_removed: Vec<String>,
    /// One line saying what happened.
    pub summary: String,
}

impl fmt::Display for Reset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary)
    }
}

impl Report for Reset {}

/// One deployment of `deploy status`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatusRow {
    /// The deployment name (`web`, `web/2`); for a unit or container without an entry, its
    /// container name.
    pub key: String,
    /// `charly-<box>[-<instance>]`.
    pub container: String,
    /// Whether the deploy file has an entry for it.
    pub deploy_entry: bool,
    /// Whether `<container>.container` is in the quadlet directory.
    pub quadlet: bool,
    /// The container's state (`running`, `exited`, ...); absent: no such container, or
    /// podman could not be asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// `ok` (an entry, and a unit or container), `not deployed` (an entry only: run
    /// `charly config setup` or `charly start`), `no deploy entry` (runs on the box's
    /// defaults).
    pub verdict: String,
}

/// `deploy status`: the deploy file's entries beside the quadlet units and containers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DeployStatus {
    /// The deploy file.
    pub path: String,
    /// The quadlet directory.
    pub quadlet_dir: String,
    /// Whether podman answered (false: the `state` of every row is unknown).
    pub podman: bool,
    /// The deployments, sorted by name.
    pub rows: Vec<StatusRow>,
}

impl fmt::Display for DeployStatus {
    /// `NAME  deploy file: yes  quadlet: no  container: running  (ok)` per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.rows.is_empty() {
            return writeln!(f, "No deploy entries, quadlet units or charly containers");
        }
        let yes = |b: bool| if b { "yes" } else { "no" };
        for row in &self.rows {
            let state = match (&row.state, self.podman) {
                (Some(s), _) => s.as_str(),
                (None, true) => "none",
                (None, false) => "unknown",
            };
            writeln!(
                f,
                "{:<32} deploy file: {:<3}  quadlet: {:<3}  container: {:<8} ({})",
                row.key,
                yes(row.deploy_entry),
                yes(row.quadlet),
                state,
                row.verdict
            )?;
        }
        Ok(())
    }
}

impl Report for DeployStatus {}

fn exists_word(exists: bool) -> &'static str {
    if exists { "has none" } else { "does not exist" }
}

fn entries(n: usize) -> String {
    if n == 1 { "1 entry".into() } else { format!("{n} entries") }
}

fn with_newline(text: &str) -> String {
    if text.ends_with('\n') { text.to_owned() } else { format!("{text}\n") }
}

/// `config setup`: the deploy entry written.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Configured {
    /// The deploy file.
    pub path: String,
    /// The deployment name (`web`, `web/2`).
    pub key: String,
    /// Whether the file's text changed (false: the entry already had these values).
    pub changed: bool,
    /// The entry as it now is.
    pub entry: serde_json::Map<String, serde_json::Value>,
}

impl fmt::Display for Configured {
    /// `Wrote deploy entry web/2 in <path>`, or that it already had these values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.changed {
            writeln!(f, "Wrote deploy entry {} in {}", self.key, self.path)
        } else {
            writeln!(f, "Deploy entry {} in {} already had these values", self.key, self.path)
        }
    }
}

impl Report for Configured {}
