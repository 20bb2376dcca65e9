//! `charly settings ...`: per-host settings in `~/.config/charly/config.yml`.

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::settings::{Migrated, SettingChanged, SettingValue, SettingsList, SettingsPath, SettingsReset};

/// `charly settings ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum SettingsCmd {
    /// Print one setting's value (engine.* and run_mode resolved, secret_backend as the active
    /// store, vnc.password.<box> from the credential store; a locked or unreachable store is an
    /// error naming it and the fix)
    #[mcp_tool(output = SettingValue)]
    Get(SettingKey),
    /// Set a setting in config.yml (vnc.password.<box> goes to the credential store); the value
    /// is checked against the key's allowed values first
    #[mcp_tool(output = SettingChanged, destructive = "writes config.yml or the credential store", idempotent)]
    Set {
        /// The key, e.g. engine.run, secret_backend, vnc.password.web
        key: String,
        /// The value (one that starts with `-`, such as `-1`, is taken as the value and checked)
        #[arg(allow_hyphen_values = true)]
        value: String,
    },
    /// List every setting with its value and source (env, .env, config, default)
    #[mcp_tool(output = SettingsList)]
    List,
    /// Print the config file's path
    #[mcp_tool(output = SettingsPath)]
    Path,
    /// Reset one key to its default, or (no key) the whole config file
    #[mcp_tool(output = SettingsReset, destructive = "rewrites config.yml or deletes a stored password", idempotent)]
    Reset {
        /// The key (none: every key, the plaintext credentials and the keyring index)
        key: Option<String>,
    },
    /// Move the plaintext passwords of config.yml into the Secret Service keyring (each read
    /// back before config.yml drops it; no plaintext copy is kept)
    #[mcp_tool(output = Migrated, destructive = "writes the keyring and rewrites config.yml")]
    MigrateSecrets {
        /// Only list what would move
        #[arg(long)]
        dry_run: bool,
    },
}

/// A settings key.
#[derive(Args, McpTool, Debug)]
pub struct SettingKey {
    /// The key, e.g. engine.run, secrets.kdbx_path, vnc.password.web
    pub key: String,
}
