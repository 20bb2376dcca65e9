//! `charly settings ...`: the per-host settings ([`crate::config`]) and the VNC passwords of the
//! credential store ([`crate::credentials`]), REFERENCE.md §6.
//!
//! Writes go through config.yml's lock, are atomic and leave the file with mode 0600; a value
//! that fails its key's check is refused before anything is written.

mod report;

use std::path::Path;

pub use report::{
    Migrated, MigratedEntry, SettingChanged, SettingRow, SettingValue, SettingsList, SettingsPath,
    SettingsReset,
};

use crate::config::{self, ConfigError, ConfigFile, KEYS, Key, Named, Settings, Source};
use crate::credentials::{self, CredentialError, KeyringState, Store, VNC_SERVICE};
use crate::hostfile::{self, FileLock};

/// Why a `settings` command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// config.yml could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The credential store refused.
    #[error(transparent)]
    Credential(#[from] CredentialError),
    /// An unknown key or an invalid value (the message names the key and the allowed values).
    #[error("{0}")]
    Invalid(String),
    /// A write refused for an unknown key or an invalid value; nothing was written.
    #[error("{0}; nothing was changed")]
    Refused(String),
    /// A password's store could not be asked (locked, not answering, unavailable, a wrong
    /// KDBX password): `settings get` reports it rather than print an empty value.
    #[error("{key}: the credential store ({store}) cannot be read: {why}")]
    StoreUnreadable {
        /// The key (`vnc.password.<box>`).
        key: String,
        /// The active store: `keyring (locked)`, `keyring (not answering)`, `kdbx`, ...
        store: String,
        /// The store's own reason, with the step that fixes it (no secret in it).
        why: String,
    },
    /// `migrate-secrets` needs a working keyring.
    #[error(
        "settings migrate-secrets moves passwords into the Secret Service keyring, which is {0}; \
             nothing was changed"
    )]
    NoKeyring(String),
}

fn warnings(file: &ConfigFile) -> Vec<String> {
    file.warning().map(str::to_owned).into_iter().collect()
}

fn lookup(name: &str) -> Result<Named<'_>, SettingsError> {
    config::lookup(name).map_err(SettingsError::Invalid)
}

/// The engine `auto` stands for: podman when it is on PATH, else docker (when it is), else
/// podman.
fn resolve_engine(value: &str) -> String {
    match value {
        "auto" if hostfile::which("podman").is_none() && hostfile::which("docker").is_some() => {
            "docker".into()
        }
        "auto" => "podman".into(),
        other => other.into(),
    }
}

/// `settings get <key>`.
///
/// # Errors
///
/// [`SettingsError::Invalid`] for an unknown key or an invalid value in the environment;
/// [`SettingsError::Config`] for an unreadable config.yml; [`SettingsError::StoreUnreadable`]
/// for a password whose store is locked or cannot be asked.
pub fn get(name: &str, project_dir: &Path, interactive: bool) -> Result<SettingValue, SettingsError> {
    let named = lookup(name)?;
    let settings = Settings::load(project_dir)?;
    let warnings = warnings(settings.file());
    let key = match named {
        Named::VncPassword(target) => {
            let store = Store::open(settings, interactive);
            let found = store.resolve(None, VNC_SERVICE, target);
            // A store that cannot be asked is an error (exit 2), never an empty value with
            // exit 0 a script would take for the password: locked names the unlock step.
            if matches!(found.source, credentials::Source::Locked | credentials::Source::Unavailable) {
                return Err(SettingsError::StoreUnreadable {
                    key: name.to_owned(),
                    store: store.active().name(),
                    why: found.problem.unwrap_or_else(|| found.source.to_string()),
                });
            }
            return Ok(SettingValue {
                key: name.to_owned(),
                value: found.value,
                configured: None,
                source: found.source.to_string(),
                warnings,
            });
        }
        Named::Plain(key) => key,
    };
    let resolved = settings.resolve(key);
    key.check(&resolved.value).map_err(|why| match &resolved.source {
        Source::Env(var) | Source::DotEnv(var) => SettingsError::Invalid(format!("{why} (from {var})")),
        _ => SettingsError::Invalid(format!("{why} (in {})", settings.file().path().display())),
    })?;
    let value = match key.name {
        "engine.build" | "engine.run" => resolve_engine(&resolved.value),
        "run_mode" if resolved.value == "auto" => {
            let engine = resolve_engine(&settings.value("engine.run"));
            if engine == "podman" && hostfile::which("systemctl").is_some() { "quadlet" } else { "direct" }
                .to_owned()
        }
        "secret_backend" => Store::open(settings, interactive).active().name(),
        _ => resolved.value.clone(),
    };
    let configured = (value != resolved.value).then(|| resolved.value.clone());
    Ok(SettingValue {
        key: name.to_owned(),
        value: Some(value),
        configured,
        source: resolved.source.to_string(),
        warnings,
    })
}

/// Loads config.yml under its lock, applies `edit`, writes it when it changed.
fn edit_config<T>(edit: impl FnOnce(&mut ConfigFile) -> T) -> Result<(ConfigFile, T, bool), SettingsError> {
    let path = config::config_path();
    let _lock =
        FileLock::acquire(&path).map_err(|source| ConfigError::Write { path: path.clone(), source })?;
    let mut file = ConfigFile::load(&path)?;
    let before = file.clone();
    let out = edit(&mut file);
    let changed = file != before || (!path.exists() && !file.is_empty());
    if changed {
        file.save()?;
    }
    Ok((file, out, changed))
}

/// `settings set <key> <value>`.
///
/// # Errors
///
/// [`SettingsError::Invalid`] (nothing written), [`SettingsError::Config`],
/// [`SettingsError::Credential`] for a password the store refused.
pub fn set(
    name: &str,
    value: &str,
    project_dir: &Path,
    interactive: bool,
) -> Result<SettingChanged, SettingsError> {
    let path = config::config_path().display().to_string();
    let named = config::lookup(name).map_err(SettingsError::Refused)?;
    match named {
        Named::VncPassword(target) => {
            if value.is_empty() {
                return Err(SettingsError::Refused(format!(
                    "{name}: an empty password; use `settings reset {name}` to remove it"
                )));
            }
            let mut store = Store::open(Settings::load(project_dir)?, interactive);
            let stored = store.set(VNC_SERVICE, target, value)?;
            let warnings = warnings(store.settings().file());
            Ok(SettingChanged {
                key: name.into(),
                value: None,
                stored_in: stored.to_string(),
                path,
                changed: true,
                warnings,
            })
        }
        Named::Plain(key) => {
            let checked = key.check(value).map_err(SettingsError::Refused)?;
            let (file, (), changed) = edit_config(|file| file.set(key.yaml, checked.to_yaml()))?;
            Ok(SettingChanged {
                key: name.into(),
                value: Some(checked.to_string()),
                stored_in: "config".into(),
                path,
                changed,
                warnings: warnings(&file),
            })
        }
    }
}

/// `settings list`.
///
/// # Errors
///
/// [`SettingsError::Config`] for an unreadable config.yml.
pub fn list(project_dir: &Path) -> Result<SettingsList, SettingsError> {
    let settings = Settings::load(project_dir)?;
    let rows = KEYS
        .iter()
        .map(|key: &Key| {
            let resolved = settings.resolve(key);
            SettingRow {
                key: key.name.into(),
                invalid: key.check(&resolved.value).err(),
                value: resolved.value,
                source: resolved.source.to_string(),
                env: key.env.into(),
            }
        })
        .collect();
    Ok(SettingsList {
        path: settings.file().path().display().to_string(),
        settings: rows,
        warnings: warnings(settings.file()),
    })
}

/// `settings reset [key]`: one key back to its default (a password deleted from the store),
/// or, with no key, an empty config file (which drops the plaintext credentials and the
/// keyring index too).
///
/// # Errors
///
/// [`SettingsError::Invalid`], [`SettingsError::Config`], [`SettingsError::Credential`].
pub fn reset(
    name: Option<&str>,
    project_dir: &Path,
    interactive: bool,
) -> Result<SettingsReset, SettingsError> {
    let path = config::config_path().display().to_string();
    let Some(name) = name else {
        let (_, (), changed) = edit_config(ConfigFile::clear)?;
        return Ok(SettingsReset { key: None, path, changed });
    };
    match config::lookup(name).map_err(SettingsError::Refused)? {
        Named::VncPassword(target) => {
            let mut store = Store::open(Settings::load(project_dir)?, interactive);
            let changed = store.delete(VNC_SERVICE, target)?;
            Ok(SettingsReset { key: Some(name.into()), path, changed })
        }
        Named::Plain(key) => {
            let (_, removed, _) = edit_config(|file| file.remove(key.yaml))?;
            Ok(SettingsReset { key: Some(name.into()), path, changed: removed })
        }
    }
}

/// `settings path`.
pub fn path() -> SettingsPath {
    let path = config::config_path();
    SettingsPath { exists: path.is_file(), path: path.display().to_string() }
}

/// `settings migrate-secrets [--dry-run]`: every plaintext credential of config.yml's
/// `vnc_passwords` into the Secret Service keyring. config.yml is first copied to
/// `config.yml.bak` (0600); the credentials the keyring took leave the file, the others stay.
///
/// # Errors
///
/// [`SettingsError::NoKeyring`] when the keyring is not available and unlocked (nothing is
/// changed), [`SettingsError::Config`].
pub fn migrate_secrets(dry_run: bool, project_dir: &Path) -> Result<Migrated, SettingsError> {
    let settings = Settings::load(project_dir)?;
    let plaintext = credentials::config_credentials(settings.file());
    if plaintext.is_empty() {
        return Ok(Migrated { dry_run, entries: Vec::new(), backup: None, remaining: 0 });
    }
    let keyring = credentials::Keyring::new(settings.keyring_collection_label());
    if dry_run {
        let entries = plaintext
            .iter()
            .map(|(service, key, _)| MigratedEntry {
                service: service.clone(),
                key: key.clone(),
                outcome: "would move".into(),
            })
            .collect();
        return Ok(Migrated { dry_run, entries, backup: None, remaining: plaintext.len() });
    }
    match keyring.probe() {
        KeyringState::Available => {}
        state => {
            let why = match &state {
                KeyringState::Unavailable(why) => format!("unavailable ({why})"),
                other => other.word().to_owned(),
            };
            return Err(SettingsError::NoKeyring(why));
        }
    }
    let config_path = config::config_path();
    let backup = config_path.with_file_name("config.yml.bak");
    let (_, (entries, remaining), _) = edit_config(|file| {
        let written = hostfile::write_atomic(&backup, file.to_yaml().as_bytes(), 0o600);
        if let Err(e) = written {
            let outcome = format!("failed: no backup written ({e})");
            let entries = plaintext
                .iter()
                .map(|(s, k, _)| MigratedEntry {
                    service: s.clone(),
                    key: k.clone(),
                    outcome: outcome.clone(),
                })
                .collect();
            return (entries, plaintext.len());
        }
        let mut map = file.vnc_passwords();
        let mut entries = Vec::new();
        for (service, key, value) in &plaintext {
            let stored = keyring.store(
                &credentials::keyring_label(service, key),
                &credentials::keyring_attributes(service, key),
                value.as_bytes(),
            );
            let outcome = match stored {
                Ok(()) => {
                    map.remove(&credentials::config_key(service, key));
                    file.index_keyring_key(&format!("{service}/{key}"), true);
                    "moved".to_owned()
                }
                Err(e) => format!("failed: {e}"),
            };
            entries.push(MigratedEntry { service: service.clone(), key: key.clone(), outcome });
        }
        file.set_vnc_passwords(&map);
        (entries, map.len())
    })?;
    Ok(Migrated { dry_run, entries, backup: Some(backup.display().to_string()), remaining })
}
