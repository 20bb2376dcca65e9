//! The reports of `settings.*`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::report::Report;

/// `settings get`: one value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SettingValue {
    /// The key.
    pub key: String,
    /// The value as the settings resolve it (for `engine.*` and `run_mode`, the resolved choice;
    /// for `secret_backend`, the active store; for `vnc.password.*`, the password). Absent when a
    /// password is not stored (a store that cannot be asked is an error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The value as configured, when it differs from `value` (`auto`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub configured: Option<String>,
    /// Where it came from: `env`, `.env` (the project's `.env` file), `config`, `default`; for a
    /// password `keyring`, `kdbx`, `config`, `default` (not stored).
    pub source: String,
    /// The variable, when `source` is `env` or `.env`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variable: Option<String>,
    /// Warnings (a config file readable by others).
    pub warnings: Vec<String>,
}

impl fmt::Display for SettingValue {
    /// The value alone on a line (nothing for a password not stored), for scripts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => writeln!(f, "{value}"),
            None => Ok(()),
        }
    }
}

impl Report for SettingValue {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `settings set`: what was stored where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SettingChanged {
    /// The key.
    pub key: String,
    /// The new value; absent for a password (never echoed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// `config` (config.yml) or, for a password, the backend that took it.
    pub stored_in: String,
    /// The config file.
    pub path: String,
    /// Whether anything changed (setting a key to its current value changes nothing).
    pub changed: bool,
    /// Warnings (a config file readable by others).
    pub warnings: Vec<String>,
}

impl fmt::Display for SettingChanged {
    /// `Set K = V`, or `Set vnc.password.web (stored in keyring)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Some(value) => writeln!(f, "Set {} = {value}", self.key),
            None => writeln!(f, "Set {} (stored in {})", self.key, self.stored_in),
        }
    }
}

impl Report for SettingChanged {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// One row of `settings list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SettingRow {
    /// The key.
    pub key: String,
    /// Its value.
    pub value: String,
    /// `env` (the variable `env` names), `.env` (that variable in the project's `.env` file),
    /// `config` or `default`.
    pub source: String,
    /// Its environment variable.
    pub env: String,
    /// Why the value is not valid for the key, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid: Option<String>,
}

/// `settings list`: every key except the passwords.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SettingsList {
    /// The config file.
    pub path: String,
    /// The keys, in table order.
    pub settings: Vec<SettingRow>,
    /// Warnings (a config file readable by others).
    pub warnings: Vec<String>,
}

impl fmt::Display for SettingsList {
    /// `key  value  (source)` per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in &self.settings {
            let value = if row.value.is_empty() { "\"\"" } else { row.value.as_str() };
            match row.source.as_str() {
                "env" | ".env" => write!(f, "{:<27} {:<32} ({} {})", row.key, value, row.source, row.env)?,
                _ => write!(f, "{:<27} {:<32} ({})", row.key, value, row.source)?,
            }
            match &row.invalid {
                Some(why) => writeln!(f, "  invalid: {why}")?,
                None => writeln!(f)?,
            }
        }
        Ok(())
    }
}

impl Report for SettingsList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `settings reset`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SettingsReset {
    /// The key reset; absent when everything was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The config file.
    pub path: String,
    /// Whether anything was removed.
    pub changed: bool,
    /// Where a config file that did not parse was moved (`config.yml.broken-<UTC time>`, mode
    /// 0600); absent when the file was readable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_aside: Option<String>,
}

impl fmt::Display for SettingsReset {
    /// `Reset K to default` / `Reset all settings to defaults`, where an unreadable file went,
    /// or that there was nothing to reset.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.key, &self.moved_aside) {
            (Some(key), _) if !self.changed && key.starts_with(crate::config::VNC_PASSWORD_PREFIX) => {
                writeln!(f, "{key}: nothing stored (nothing to reset)")
            }
            (Some(key), _) if !self.changed => {
                writeln!(f, "{key} is not set in {} (already the default)", self.path)
            }
            (Some(key), _) => writeln!(f, "Reset {key} to default"),
            (None, Some(aside)) => writeln!(
                f,
                "Moved the unreadable {} aside to {aside}; all settings are back to their defaults",
                self.path
            ),
            (None, None) => writeln!(f, "Reset all settings to defaults ({})", self.path),
        }
    }
}

impl Report for SettingsReset {}

/// `settings path`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SettingsPath {
    /// The config file (`$XDG_CONFIG_HOME/charly/config.yml` or `~/.config/charly/config.yml`).
    pub path: String,
    /// Whether it exists.
    pub exists: bool,
}

impl fmt::Display for SettingsPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.path)
    }
}

impl Report for SettingsPath {}

/// One credential `settings migrate-secrets` moved (or would move).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MigratedEntry {
    /// The service (`charly/vnc`, `charly/secret`, `charly/enc`, ...).
    pub service: String,
    /// The key.
    pub key: String,
    /// `moved` (stored and read back), `would move`, `failed: <why>` (no secret in it), or
    /// `not moved: ...` when another one failed.
    pub outcome: String,
}

/// `settings migrate-secrets`: plaintext credentials from config.yml into the keyring.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Migrated {
    /// Only listed, nothing changed.
    pub dry_run: bool,
    /// The credentials.
    pub entries: Vec<MigratedEntry>,
    /// How many plaintext credentials config.yml still holds.
    pub remaining: usize,
}

impl fmt::Display for Migrated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entries.is_empty() {
            return writeln!(f, "No plaintext credentials in the config file.");
        }
        for entry in &self.entries {
            let mark = match entry.outcome.as_str() {
                "moved" => "→ keyring ✓".to_owned(),
                "would move" => "→ keyring (dry run)".to_owned(),
                other if other.starts_with("not moved") => format!("→ keyring – {other}"),
                other => format!("→ keyring ✗ {other}"),
            };
            writeln!(f, "{}/{} {mark}", entry.service, entry.key)?;
        }
        match self.remaining {
            _ if self.dry_run => Ok(()),
            0 => writeln!(
                f,
                "The config file holds no plaintext credentials any more (each was read back from the keyring; no copy is kept)."
            ),
            n => writeln!(f, "The config file still holds {n} plaintext credential(s)."),
        }
    }
}

impl Report for Migrated {
    fn failure(&self) -> Option<String> {
        let failed = self.entries.iter().filter(|e| e.outcome.starts_with("failed")).count();
        (failed > 0)
            .then(|| format!("{failed} credential(s) could not be moved; the config file is unchanged"))
    }
}
