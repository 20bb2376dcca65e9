//! The reports of `secrets.*`.

use std::collections::BTreeMap;
use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::report::Report;

/// `secrets init`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Initialized {
    /// The new database.
    pub path: String,
    /// The groups it was created with (`charly/vnc`, ...).
    pub groups: Vec<String>,
    /// The config file where `secrets.kdbx_path` now points at it.
    pub config: String,
}

impl fmt::Display for Initialized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Created KeePass database at {}", self.path)?;
        writeln!(
            f,
            "secrets.kdbx_path now names it; `charly settings set secret_backend kdbx` makes it the credential store"
        )
    }
}

impl Report for Initialized {}

/// `secrets list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SecretList {
    /// The database.
    pub path: String,
    /// The prefix listed.
    pub service: String,
    /// `service/key` per entry (`/` and `%` in the key escaped as `%2F` and `%25`), sorted.
    pub entries: Vec<String>,
}

impl fmt::Display for SecretList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entries.is_empty() {
            return writeln!(f, "No entries found.");
        }
        self.entries.iter().try_for_each(|e| writeln!(f, "{e}"))
    }
}

impl Report for SecretList {}

/// `secrets get`: a value, read on purpose.
#[derive(Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SecretValue {
    /// The service.
    pub service: String,
    /// The key.
    pub key: String,
    /// The value.
    pub value: String,
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretValue")
            .field("service", &self.service)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for SecretValue {
    /// The value alone on a line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.value)
    }
}

impl Report for SecretValue {}

/// `secrets set` / `secrets delete`.
#[derive(Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SecretChanged {
    /// The service.
    pub service: String,
    /// The key.
    pub key: String,
    /// The database.
    pub path: String,
    /// `stored`, `replaced`, `deleted` or `absent` (delete of a missing entry).
    pub action: String,
    /// A `--generate`d value, on a terminal only (a tool reads it with `secrets.get`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
}

impl fmt::Debug for SecretChanged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretChanged")
            .field("service", &self.service)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for SecretChanged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(value) = &self.generated {
            writeln!(f, "{value}")?;
        }
        match self.action.as_str() {
            "deleted" => writeln!(f, "Deleted {}/{} from {}", self.service, self.key, self.path),
            "absent" => {
                writeln!(f, "No entry {}/{} in {} (nothing to delete)", self.service, self.key, self.path)
            }
            _ => writeln!(f, "Stored {}/{} in {}", self.service, self.key, self.path),
        }
    }
}

impl Report for SecretChanged {}

/// `secrets export`: every entry under `charly`, read on purpose.
#[derive(Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Exported {
    /// The database.
    pub path: String,
    /// `yaml` or `json`: how the text is written.
    pub format: String,
    /// `service → key → value`.
    pub secrets: BTreeMap<String, BTreeMap<String, String>>,
}

impl fmt::Debug for Exported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Exported").field("path", &self.path).finish_non_exhaustive()
    }
}

impl fmt::Display for Exported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.format == "json" {
            let text = serde_json::to_string_pretty(&self.secrets).map_err(|_| fmt::Error)?;
            writeln!(f, "{text}")
        } else if self.secrets.is_empty() {
            writeln!(f, "{{}}")
        } else {
            f.write_str(&yaml_serde::to_string(&self.secrets).map_err(|_| fmt::Error)?)
        }
    }
}

impl Report for Exported {
    fn warnings(&self) -> Vec<String> {
        vec!["the output holds your secrets in plaintext; do not leave it in a file".into()]
    }
}

/// One credential of `secrets import`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ImportedEntry {
    /// The service.
    pub service: String,
    /// The key.
    pub key: String,
    /// `config` or `keyring`.
    pub from: String,
    /// `imported`, `would import`, or `failed: <why>` (no secret in it).
    pub outcome: String,
}

/// `secrets import`: plaintext credentials of config.yml and keyring items into the database.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Imported {
    /// The database.
    pub path: String,
    /// Only listed.
    pub dry_run: bool,
    /// The credentials.
    pub entries: Vec<ImportedEntry>,
}

impl fmt::Display for Imported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entries.is_empty() {
            return writeln!(f, "No credentials to import.");
        }
        for e in &self.entries {
            let mark = match e.outcome.as_str() {
                "imported" => "✓".to_owned(),
                "would import" => "(dry run)".to_owned(),
                other => format!("✗ {other}"),
            };
            writeln!(f, "{}/{} → kdbx {mark} (from {})", e.service, e.key, e.from)?;
        }
        Ok(())
    }
}

impl Report for Imported {
    fn failure(&self) -> Option<String> {
        let failed = self.entries.iter().filter(|e| e.outcome.starts_with("failed")).count();
        (failed > 0).then(|| format!("{failed} credential(s) could not be imported"))
    }
}

/// `secrets path`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct KdbxPath {
    /// The database path.
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
    /// `--kdbx`, `env` (CHARLY_KDBX_PATH), `.env` (that variable in the project's `.env`),
    /// `config` (secrets.kdbx_path), or `default`.
    pub source: String,
}

impl fmt::Display for KdbxPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.source == "default" && !self.exists {
            writeln!(f, "{} (default, not yet created)", self.path)
        } else {
            writeln!(f, "{}", self.path)
        }
    }
}

impl Report for KdbxPath {}
