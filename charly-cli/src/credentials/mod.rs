//! The credential store: one API for every family that needs a secret (VNC passwords, podman
//! secrets, encrypted-volume passphrases, deploy and OAuth tokens), REFERENCE.md §18.8.
//!
//! A lookup goes: the caller's environment variable, then the active backend, then the config
//! file's plaintext map as a fallback. The active backend is `secret_backend`:
//!
//! | `secret_backend` | backend |
//! |---|---|
//! | `keyring` | Secret Service over D-Bus ([`keyring`]) |
//! | `kdbx` | the KeePass KDBX 4 file `secrets.kdbx_path` ([`kdbx`]) |
//! | `config` | `vnc_passwords` in config.yml (mode 0600) |
//! | `auto` | the keyring when a bounded probe finds it unlocked; else the KDBX file when one is configured and exists; else a locked or silent keyring (reads say so, writes refuse rather than fall back to plaintext); else the config file |
//!
//! Services are `charly/vnc` (key: the box, `<box>-<instance>`), `charly/secret` and
//! `charly/enc`; any `a/b` service works. No error or report of this module carries a
//! secret value.
//!
//! ```no_run
//! use charly_cli::config::Settings;
//! use charly_cli::credentials::{Source, Store};
//!
//! let store = Store::open(Settings::load(std::path::Path::new("."))?, false);
//! let password = store.resolve(Some("VNC_PASSWORD"), "charly/vnc", "web");
//! if password.source == Source::Locked {
//!     eprintln!("the keyring is locked");
//! }
//! # Ok::<(), charly_cli::config::ConfigError>(())
//! ```

pub mod kdbx;
pub mod kernel;
pub mod keyring;
pub mod oauth;
pub mod prompt;

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::config::{ConfigError, ConfigFile, Settings};
use crate::hostfile::FileLock;
pub use kdbx::{Kdbx, KdbxError};
pub use keyring::{Keyring, KeyringError, KeyringState, Lookup};

/// The service of VNC passwords.
pub const VNC_SERVICE: &str = "charly/vnc";

/// Which store is active.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Active {
    /// The Secret Service keyring, in the state the probe found it.
    Keyring(KeyringState),
    /// The KDBX file.
    Kdbx(PathBuf),
    /// config.yml's `vnc_passwords`.
    Config,
}

impl Active {
    /// `keyring`, `keyring (locked)`, `keyring (not answering)`, `keyring (unavailable)`,
    /// `kdbx`, `config`.
    pub fn name(&self) -> String {
        match self {
            Active::Keyring(KeyringState::Available) => "keyring".into(),
            Active::Keyring(state) => format!("keyring ({})", state.word()),
            Active::Kdbx(_) => "kdbx".into(),
            Active::Config => "config".into(),
        }
    }
}

/// Where a credential came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The caller's environment variable.
    Env,
    /// The Secret Service keyring.
    Keyring,
    /// The KDBX file.
    Kdbx,
    /// config.yml.
    Config,
    /// The keyring holds it, or may, but is locked.
    Locked,
    /// The active backend could not be asked (the reason is in [`Credential::problem`]).
    Unavailable,
    /// Not stored anywhere.
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let word = match self {
            Source::Env => "env",
            Source::Keyring => "keyring",
            Source::Kdbx => "kdbx",
            Source::Config => "config",
            Source::Locked => "locked",
            Source::Unavailable => "unavailable",
            Source::Default => "default",
        };
        f.write_str(word)
    }
}

/// A looked-up credential.
#[derive(Clone, PartialEq, Eq)]
pub struct Credential {
    /// The value, when found.
    pub value: Option<String>,
    /// Where it came from (or why there is none).
    pub source: Source,
    /// Why the active backend could not be asked (no secret in it).
    pub problem: Option<String>,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("source", &self.source)
            .field("problem", &self.problem)
            .finish_non_exhaustive()
    }
}

/// Why a credential could not be read or written. No variant carries a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialError {
    /// The keyring refused or is not there.
    #[error(transparent)]
    Keyring(#[from] KeyringError),
    /// The KDBX file could not be used.
    #[error(transparent)]
    Kdbx(#[from] KdbxError),
    /// config.yml could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `secret_backend: kdbx` without a file.
    #[error(
        "secret_backend is kdbx but no KeePass database is configured: run `charly secrets init` or set secrets.kdbx_path"
    )]
    NoKdbx,
}

/// The config backend's key of `service/key`: `<key>` for `charly/vnc`, `<service>/<key>`
/// otherwise.
pub fn config_key(service: &str, key: &str) -> String {
    if service == VNC_SERVICE { key.to_owned() } else { format!("{service}/{key}") }
}

/// The `(service, key)` of a config backend key (the inverse of [`config_key`]).
pub fn split_config_key(composite: &str) -> (String, String) {
    match composite.rsplit_once('/') {
        Some((service, key)) => (service.to_owned(), key.to_owned()),
        None => (VNC_SERVICE.to_owned(), composite.to_owned()),
    }
}

/// The keyring attributes of charly's credentials.
pub fn keyring_attributes<'a>(service: &'a str, key: &'a str) -> [(&'static str, &'a str); 2] {
    [("service", service), ("username", key)]
}

/// The keyring label of `service/key` (as go-keyring writes it).
pub fn keyring_label(service: &str, key: &str) -> String {
    format!("Password for '{key}' on '{service}'")
}

/// The store, with its backend chosen.
#[derive(Debug)]
pub struct Store {
    settings: Settings,
    keyring: Keyring,
    active: Active,
    interactive: bool,
}

impl Store {
    /// The store as `secret_backend` says (probing for `auto` and `keyring`, bounded by
    /// [`keyring::TIMEOUT`]). `interactive`: the KDBX password may be asked on the terminal.
    pub fn open(settings: Settings, interactive: bool) -> Store {
        let keyring = Keyring::new(settings.keyring_collection_label());
        let kdbx = settings.kdbx_path();
        let active = match settings.secret_backend().as_str() {
            "keyring" => Active::Keyring(keyring.probe()),
            "kdbx" => kdbx.map(Active::Kdbx).unwrap_or(Active::Kdbx(PathBuf::new())),
            "config" => Active::Config,
            _ => match keyring.probe() {
                KeyringState::Available => Active::Keyring(KeyringState::Available),
                state => match kdbx.filter(|p| p.is_file()) {
                    Some(path) => Active::Kdbx(path),
                    None if matches!(state, KeyringState::Locked | KeyringState::NotAnswering) => {
                        Active::Keyring(state)
                    }
                    None => Active::Config,
                },
            },
        };
        Store { settings, keyring, active, interactive }
    }

    /// The active backend.
    pub fn active(&self) -> &Active {
        &self.active
    }

    /// The settings the store was opened with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The lookup chain: `env_var` (when given and set), the active backend, then the config
    /// file. Never fails: a backend that cannot be asked gives [`Source::Locked`] or
    /// [`Source::Unavailable`] with the reason, after the config file was tried.
    pub fn resolve(&self, env_var: Option<&str>, service: &str, key: &str) -> Credential {
        if let Some(value) = env_var.and_then(|v| std::env::var(v).ok()).filter(|v| !v.is_empty()) {
            return Credential { value: Some(value), source: Source::Env, problem: None };
        }
        match self.get(service, key) {
            Ok(found) => found,
            Err(e) => {
                let source = if matches!(e, CredentialError::Keyring(KeyringError::Locked)) {
                    Source::Locked
                } else {
                    Source::Unavailable
                };
                match self.in_config(service, key) {
                    Some(found) => found,
                    None => Credential { value: None, source, problem: Some(e.to_string()) },
                }
            }
        }
    }

    fn in_config(&self, service: &str, key: &str) -> Option<Credential> {
        let value = self.settings.file().vnc_passwords().remove(&config_key(service, key))?;
        Some(Credential { value: Some(value), source: Source::Config, problem: None })
    }

    /// `service/key` from the active backend, then the config file; [`Source::Default`] (no
    /// value) when neither has it.
    ///
    /// # Errors
    ///
    /// [`CredentialError`] when the active backend cannot be asked (locked, not answering,
    /// wrong KDBX password...).
    pub fn get(&self, service: &str, key: &str) -> Result<Credential, CredentialError> {
        let found = match &self.active {
            Active::Keyring(KeyringState::Available) => {
                match self.keyring.lookup(&keyring_attributes(service, key))? {
                    Lookup::Found(value) => {
                        Some(Credential { value: Some(value), source: Source::Keyring, problem: None })
                    }
                    Lookup::Locked => return Err(KeyringError::Locked.into()),
                    Lookup::Missing => None,
                }
            }
            Active::Keyring(state) => return Err(unusable(state).into()),
            Active::Kdbx(path) => {
                if path.as_os_str().is_empty() {
                    return Err(CredentialError::NoKdbx);
                }
                let (db, _) = Kdbx::open(&self.settings, path, self.interactive)?;
                db.get(service, key).map(|value| Credential {
                    value: Some(value),
                    source: Source::Kdbx,
                    problem: None,
                })
            }
            Active::Config => None,
        };
        Ok(found.or_else(|| self.in_config(service, key)).unwrap_or(Credential {
            value: None,
            source: Source::Default,
            problem: None,
        }))
    }

    /// Stores `service/key` in the active backend; which one took it. A keyring write also
    /// records `service/key` (no value) in config.yml's `keyring_keys`.
    ///
    /// # Errors
    ///
    /// [`CredentialError`]; a locked keyring is refused, never bypassed into plaintext.
    pub fn set(&mut self, service: &str, key: &str, value: &str) -> Result<Source, CredentialError> {
        match &self.active {
            Active::Keyring(KeyringState::Available) => {
                self.keyring.store(
                    &keyring_label(service, key),
                    &keyring_attributes(service, key),
                    value.as_bytes(),
                )?;
                self.edit_config(|file| {
                    file.index_keyring_key(&format!("{service}/{key}"), true);
                })?;
                Ok(Source::Keyring)
            }
            Active::Keyring(state) => Err(unusable(state).into()),
            Active::Kdbx(path) => {
                if path.as_os_str().is_empty() {
                    return Err(CredentialError::NoKdbx);
                }
                let _lock = kdbx::lock_existing(path)?;
                let (mut db, _) = Kdbx::open(&self.settings, path, self.interactive)?;
                db.set(service, key, value)?;
                db.save()?;
                Ok(Source::Kdbx)
            }
            Active::Config => {
                let composite = config_key(service, key);
                self.edit_config(|file| {
                    let mut map = file.vnc_passwords();
                    map.insert(composite, value.to_owned());
                    file.set_vnc_passwords(&map);
                })?;
                Ok(Source::Config)
            }
        }
    }

    /// Deletes `service/key` from the active backend and from the config file's map; whether
    /// anything was removed.
    ///
    /// # Errors
    ///
    /// [`CredentialError`].
    pub fn delete(&mut self, service: &str, key: &str) -> Result<bool, CredentialError> {
        let mut removed = match &self.active {
            Active::Keyring(KeyringState::Available) => {
                let n = self.keyring.delete(&keyring_attributes(service, key))?;
                n > 0
            }
            Active::Keyring(state) => return Err(unusable(state).into()),
            Active::Kdbx(path) if path.is_file() => {
                let _lock = kdbx::lock_existing(path)?;
                let (mut db, _) = Kdbx::open(&self.settings, path, self.interactive)?;
                let removed = db.delete(service, key);
                if removed {
                    db.save()?;
                }
                removed
            }
            Active::Kdbx(_) | Active::Config => false,
        };
        let composite = config_key(service, key);
        let index = format!("{service}/{key}");
        let mut in_file = false;
        self.edit_config(|file| {
            let mut map = file.vnc_passwords();
            in_file = map.remove(&composite).is_some();
            file.set_vnc_passwords(&map);
            file.index_keyring_key(&index, false);
        })?;
        removed |= in_file;
        Ok(removed)
    }

    /// Re-reads config.yml under its lock, applies `edit`, writes it when it changed, and
    /// keeps the result as this store's view.
    fn edit_config(&mut self, edit: impl FnOnce(&mut ConfigFile)) -> Result<(), CredentialError> {
        let path = self.settings.file().path().to_owned();
        let path = if path.as_os_str().is_empty() { crate::config::config_path() } else { path };
        let _lock =
            FileLock::acquire(&path).map_err(|source| ConfigError::Write { path: path.clone(), source })?;
        let mut file = ConfigFile::load(&path)?;
        let before = file.clone();
        edit(&mut file);
        if file != before {
            file.save()?;
        }
        *self.settings.file_mut() = file;
        Ok(())
    }

    /// The keyring, whatever the active backend (`settings migrate-secrets`, `secrets import`).
    pub fn keyring(&self) -> &Keyring {
        &self.keyring
    }
}

fn unusable(state: &KeyringState) -> KeyringError {
    match state {
        KeyringState::Locked => KeyringError::Locked,
        KeyringState::NotAnswering => KeyringError::NotAnswering,
        KeyringState::Unavailable(why) => KeyringError::Unavailable(why.clone()),
        KeyringState::Available => KeyringError::Failed("the keyring is available".into()),
    }
}

/// Every plaintext credential of the config backend as `(service, key, value)`.
pub fn config_credentials(file: &ConfigFile) -> Vec<(String, String, String)> {
    let map: BTreeMap<String, String> = file.vnc_passwords();
    map.into_iter()
        .map(|(composite, value)| {
            let (service, key) = split_config_key(&composite);
            (service, key, value)
        })
        .collect()
}
