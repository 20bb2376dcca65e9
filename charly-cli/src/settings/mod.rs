//! `charly settings ...`: the per-host settings ([`crate::config`]) and the VNC passwords of the
//! credential store ([`crate::credentials`]), REFERENCE.md §6.
//!
//! Writes go through config.yml's lock, are atomic and leave the file with mode 0600; a value
//! that fails its key's check is refused before anything is written.

mod report;

use std::path::{Path, PathBuf};

pub use report::{
    Migrated, MigratedEntry, SettingChanged, SettingRow, SettingValue, SettingsList, SettingsPath,
    SettingsReset,
};

use crate::config::{self, ConfigError, ConfigFile, KEYS, Key, Named, Settings};
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
    file.warnings()
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
    let warnings = settings.warnings();
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
                variable: None,
                warnings,
            });
        }
        Named::Plain(key) => key,
    };
    let resolved = settings.checked(key.name).map_err(SettingsError::Invalid)?;
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
        variable: resolved.source.variable().map(str::to_owned),
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
            // What `check vnc passwd` refuses is refused here too: a key no container has
            // (`vnc.password.-x`), and a password longer than VNC authentication uses.
            if target != "." {
                crate::engine::Target::new(target, None).map_err(|e| {
                    SettingsError::Refused(format!(
                        "{name}: {e}; the key is a box's container name without `charly-` (`web`, `web-2`), \
                         or `.` for this machine's VNC server"
                    ))
                })?;
            }
            if let Some(why) = crate::vnc::auth::too_long(value.len()) {
                return Err(SettingsError::Refused(format!("{name}: {why}")));
            }
            let mut store = Store::open(Settings::load(project_dir)?, interactive);
            let stored = store.set(VNC_SERVICE, target, value)?;
            let warnings = store.settings().warnings();
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
                invalid: settings.checked(key.name).err(),
                value: resolved.value,
                source: resolved.source.to_string(),
                env: key.env.into(),
            }
        })
        .collect();
    Ok(SettingsList {
        path: settings.file().path().display().to_string(),
        settings: rows,
        warnings: settings.warnings(),
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
        return reset_all();
    };
    // A file that does not parse cannot have one key removed: say what does work.
    let keyed = |e: SettingsError| match e {
        SettingsError::Config(ConfigError::Parse { path, message }) => SettingsError::Invalid(format!(
            "{} is not a valid settings file ({message}), so `settings reset {name}` cannot edit it: \
             fix it by hand, or run `charly settings reset` without a key, which moves it aside and \
             starts from the defaults",
            path.display()
        )),
        other => other,
    };
    match config::lookup(name).map_err(SettingsError::Refused)? {
        Named::VncPassword(target) => {
            let settings = Settings::load(project_dir).map_err(|e| keyed(e.into()))?;
            let mut store = Store::open(settings, interactive);
            let changed = store.delete(VNC_SERVICE, target)?;
            Ok(SettingsReset { key: Some(name.into()), path, changed, moved_aside: None })
        }
        Named::Plain(key) => {
            let (_, removed, _) = edit_config(|file| file.remove(key.yaml)).map_err(keyed)?;
            Ok(SettingsReset { key: Some(name.into()), path, changed: removed, moved_aside: None })
        }
    }
}

/// `settings reset` with no key: every key removed; a file that does not parse (the case every
/// error about it points here for) is renamed to `config.yml.broken-<UTC time>` (mode 0600,
/// it may hold credentials) so that nothing in it is lost, and the defaults apply.
fn reset_all() -> Result<SettingsReset, SettingsError> {
    let path = config::config_path();
    let shown = path.display().to_string();
    let _lock =
        FileLock::acquire(&path).map_err(|source| ConfigError::Write { path: path.clone(), source })?;
    match ConfigFile::load(&path) {
        Ok(mut file) => {
            let before = file.clone();
            file.clear();
            let changed = file != before;
            if changed {
                file.save()?;
            }
            Ok(SettingsReset { key: None, path: shown, changed, moved_aside: None })
        }
        Err(ConfigError::Parse { .. }) => {
            let aside = aside_path(&path);
            let write = |source| ConfigError::Write { path: path.clone(), source };
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
                .map_err(write)?;
            std::fs::rename(&path, &aside).map_err(write)?;
            Ok(SettingsReset {
                key: None,
                path: shown,
                changed: true,
                moved_aside: Some(aside.display().to_string()),
            })
        }
        Err(e) => Err(e.into()),
    }
}

/// `config.yml.broken-20261201T215649Z` beside `path` (`-2`, `-3`, ... when taken).
fn aside_path(path: &Path) -> PathBuf {
    let base = format!("config.yml.broken-{}", utc_stamp(std::time::SystemTime::now()));
    let mut candidate = path.with_file_name(&base);
    let mut n = 2;
    while candidate.symlink_metadata().is_ok() {
        candidate = path.with_file_name(format!("{base}-{n}"));
        n += 1;
    }
    candidate
}

/// `YYYYMMDDTHHMMSSZ` (UTC) of `time`.
fn utc_stamp(time: std::time::SystemTime) -> String {
    let secs = time.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z", rest / 3600, rest % 3600 / 60, rest % 60)
}

/// `settings path`.
pub fn path() -> SettingsPath {
    let path = config::config_path();
    SettingsPath { exists: path.is_file(), path: path.display().to_string() }
}

/// `settings migrate-secrets [--dry-run]`: every plaintext credential of config.yml's
/// `vnc_passwords` and `oauth_tokens` into the Secret Service keyring. Each one is stored, then read back from
/// the keyring and compared; only when every one reads back is config.yml rewritten without
/// them (under its lock, atomically), and no plaintext copy is kept anywhere. When one fails,
/// config.yml is left as it was (the keyring may hold copies of the others, which give the
/// same values).
///
/// # Errors
///
/// [`SettingsError::NoKeyring`] when the keyring is not available and unlocked (nothing is
/// changed), [`SettingsError::Config`].
pub fn migrate_secrets(dry_run: bool, project_dir: &Path) -> Result<Migrated, SettingsError> {
    let settings = Settings::load(project_dir)?;
    let plaintext = credentials::config_credentials(settings.file());
    if plaintext.is_empty() {
        return Ok(Migrated { dry_run, entries: Vec::new(), remaining: 0 });
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
        return Ok(Migrated { dry_run, entries, remaining: plaintext.len() });
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
    let (_, (entries, remaining), _) = edit_config(|file| {
        // The credentials as the file holds them under its lock.
        let plaintext = credentials::config_credentials(file);
        let mut entries = Vec::new();
        for (service, key, value) in &plaintext {
            let attributes = credentials::keyring_attributes(service, key);
            let stored = keyring
                .store(&credentials::keyring_label(service, key), &attributes, value.as_bytes())
                .map_err(|e| format!("failed: {e}"))
                .and_then(|()| match keyring.lookup(&attributes) {
                    Ok(credentials::Lookup::Found(back)) if back == *value => Ok(()),
                    Ok(credentials::Lookup::Found(_)) => {
                        Err("failed: the keyring returned another value when read back".to_owned())
                    }
                    Ok(credentials::Lookup::Missing) => Err("failed: not found when read back".to_owned()),
                    Ok(credentials::Lookup::Locked) => Err("failed: locked when read back".to_owned()),
                    Err(e) => Err(format!("failed: reading it back: {e}")),
                });
            let outcome = stored.map_or_else(|why| why, |()| "moved".to_owned());
            entries.push(MigratedEntry { service: service.clone(), key: key.clone(), outcome });
        }
        if entries.iter().any(|e| e.outcome != "moved") {
            for entry in entries.iter_mut().filter(|e| e.outcome == "moved") {
                entry.outcome = "not moved: another credential failed, config.yml is unchanged".into();
            }
            return (entries, plaintext.len());
        }
        for (service, key, _) in &plaintext {
            credentials::remove_config_credential(file, service, key);
            file.index_keyring_key(&credentials::composite_key(service, key), true);
        }
        (entries, credentials::config_credentials(file).len())
    })?;
    Ok(Migrated { dry_run, entries, remaining })
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_stamps() {
        use std::time::{Duration, UNIX_EPOCH};
        assert_eq!(super::utc_stamp(UNIX_EPOCH), "19700101T000000Z");
        assert_eq!(super::utc_stamp(UNIX_EPOCH + Duration::from_secs(951_782_400)), "20000229T000000Z");
        assert_eq!(super::utc_stamp(UNIX_EPOCH + Duration::from_secs(1_764_625_009)), "20251201T213649Z");
    }
}
