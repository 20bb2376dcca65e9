//! [`HostChange`]: the report of `mcp install` and `mcp uninstall`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::report::Report;

/// What happened to the entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// The entry is new.
    Added,
    /// An entry of that name was changed.
    Updated,
    /// The entry was already as asked; nothing written.
    Unchanged,
    /// The entry was removed.
    Removed,
    /// There was no such entry; nothing written.
    Absent,
}

/// `mcp install` / `mcp uninstall`: what changed in which file.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct HostChange {
    /// The host (`claude-code`, ...).
    pub host: String,
    /// `project` or `user`.
    pub scope: String,
    /// The file: relative to the project for project scope, `~/...` under the home directory.
    pub path: String,
    /// The server's name in it.
    pub name: String,
    /// `added`, `updated`, `unchanged`, `removed` or `absent`.
    pub action: Action,
    /// Whether the file was written (false with `--print` and when nothing changed).
    pub written: bool,
    /// Where the old file was copied before it was replaced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup: Option<String>,
    /// The entry as written (for uninstall, the one removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<Map<String, Value>>,
    /// The file's new text, with `--print`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// What the host needs to know or do next.
    pub notes: Vec<String>,
}

impl fmt::Display for HostChange {
    /// `added charly to .mcp.json (claude-code, project scope)`, the backup, the notes; with
    /// `--print` the file's new text after a `would ...` line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = format!("{} ({}, {} scope)", self.path, self.host, self.scope);
        let name = &self.name;
        let verb = match self.action {
            Action::Added => format!("add {name} to {at}"),
            Action::Updated => format!("update {name} in {at}"),
            Action::Removed => format!("remove {name} from {at}"),
            Action::Unchanged => return writeln!(f, "{name} is already in {at} as asked; nothing written"),
            Action::Absent => return writeln!(f, "{name} is not in {at}; nothing written"),
        };
        if let Some(content) = &self.content {
            writeln!(f, "would {verb}; nothing written. The file would be:")?;
            f.write_str(content)?;
            if !content.ends_with('\n') {
                writeln!(f)?;
            }
        } else {
            let done = match self.action {
                Action::Added => "added",
                Action::Updated => "updated",
                _ => "removed",
            };
            let rest = verb.split_once(' ').map_or("", |(_, r)| r);
            writeln!(f, "{done} {rest}")?;
        }
        if let Some(backup) = &self.backup {
            writeln!(f, "the old file is in {backup}")?;
        }
        for note in &self.notes {
            writeln!(f, "note: {note}")?;
        }
        Ok(())
    }
}

impl Report for HostChange {}
