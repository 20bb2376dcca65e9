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
//! | `config` | `vnc_passwords` in config.yml (mode 0600); OAuth tokens in its `oauth_tokens` |
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
    /// config.yml's `vnc_passwords` (OAuth tokens: its `oauth_tokens`).
    Config,
    /// `secret_backend` holds no backend's name: why (the value, where it came from and
    /// the allowed values). Every read and write is refused with it, rather than falling
    /// back to the plaintext config file.
    Invalid(String),
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
            Active::Invalid(_) => "invalid".into(),
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
    /// `secret_backend` is not a backend's name ([`Active::Invalid`]).
    #[error("the credential store: {0}; nothing was read or written")]
    Backend(String),
}

/// `key` with `%` and `/` percent-encoded (`%25`, `%2F`), so that a composite `service/key`
/// has one reading whatever the key holds (an OAuth token's key is the server's URL). Keys
/// without either are unchanged, so the credentials stored before are found as they were.
fn escape_key(key: &str) -> String {
    key.replace('%', "%25").replace('/', "%2F")
}

/// The inverse of [`escape_key`]: `%2F` (any case) is `/`, `%25` is `%`; any other `%` stays.
pub(crate) fn unescape_key(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut rest = key;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let code = rest.get(at + 1..at + 3);
        match code {
            Some(c) if c.eq_ignore_ascii_case("2f") => out.push('/'),
            Some("25") => out.push('%'),
            _ => {
                out.push('%');
                rest = &rest[at + 1..];
                continue;
            }
        }
        rest = &rest[at + 3..];
    }
    out.push_str(rest);
    out
}

/// `service/key` as one string, the key escaped (see [`split_config_key`]): the entries of
/// `secrets list` and config.yml's `keyring_keys` index.
pub fn composite_key(service: &str, key: &str) -> String {
    format!("{service}/{}", escape_key(key))
}

/// The config backend's key of `service/key`: `<key>` for `charly/vnc`, `<service>/<key>`
/// otherwise, the key escaped (`/` as `%2F`, `%` as `%25`) so that it reads back as it was.
pub fn config_key(service: &str, key: &str) -> String {
    if service == VNC_SERVICE { escape_key(key) } else { composite_key(service, key) }
}

/// Every composite a config backend key of `service/key` may have been written as: the
/// [`config_key`], and the unescaped `service/key` of charly before keys were escaped (when it
/// differs), so that such entries are still found and removed.
pub fn config_key_forms(service: &str, key: &str) -> Vec<String> {
    let mut forms = vec![config_key(service, key)];
    let raw = if service == VNC_SERVICE { key.to_owned() } else { format!("{service}/{key}") };
    if raw != forms[0] {
        forms.push(raw);
    }
    forms
}

/// The `(service, key)` of a config backend key or a [`composite_key`] (the inverse of
/// [`config_key`]): the service is all before the last `/`, the key is unescaped. An entry
/// written before keys were escaped, whose key is a URL (`charly/oauth/https://host/mcp`), is
/// split before the URL's scheme.
pub fn split_config_key(composite: &str) -> (String, String) {
    if let Some(scheme) = composite.find("://")
        && let Some((service, _)) = composite[..scheme].rsplit_once('/')
    {
        return (service.to_owned(), composite[service.len() + 1..].to_owned());
    }
    match composite.rsplit_once('/') {
        Some((service, key)) => (service.to_owned(), unescape_key(key)),
        None => (VNC_SERVICE.to_owned(), unescape_key(composite)),
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
    /// `secret_backend` names the store (`keyring`, `kdbx`), rather than `auto`.
    forced: bool,
    interactive: bool,
}

impl Store {
    /// The store as `secret_backend` says (probing for `auto` and `keyring`, bounded by
    /// [`keyring::TIMEOUT`]). `interactive`: the KDBX password may be asked on the terminal.
    pub fn open(settings: Settings, interactive: bool) -> Store {
        let keyring = Keyring::new(settings.keyring_collection_label());
        // As `charly secrets` finds it: the configured file, else the default one when it
        // exists (after `settings reset secrets.kdbx_path` the store said no database was
        // configured while `secrets get` read the default: trial 29, M2).
        let kdbx =
            settings.kdbx_path().or_else(|| Some(crate::config::default_kdbx_path()).filter(|p| p.is_file()));
        let chosen = settings.checked("secret_backend").map(|r| r.value);
        let forced = matches!(chosen.as_deref(), Ok("keyring" | "kdbx"));
        let active = match chosen {
            Err(why) => Active::Invalid(why),
            Ok(name) => match name.as_str() {
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
            },
        };
        Store { settings, keyring, active, forced, interactive }
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
    /// [`Source::Unavailable`] with the reason. Under `auto` the config file is tried first
    /// then (the reference's chain); not when `secret_backend` names the store (`keyring`,
    /// `kdbx`), whose user asked for that store and not for a plaintext copy, nor for an
    /// invalid `secret_backend` ([`Active::Invalid`]): nothing is read then.
    pub fn resolve(&self, env_var: Option<&str>, service: &str, key: &str) -> Credential {
        if let Some(value) = env_var.and_then(|v| std::env::var(v).ok()).filter(|v| !v.is_empty()) {
            return Credential { value: Some(value), source: Source::Env, problem: None };
        }
        match self.get(service, key) {
            Ok(found) => found,
            // A `secret_backend` that names no store: no store was chosen, so not even the
            // config file is read (it may hold a stale copy of what the meant store keeps).
            Err(e @ CredentialError::Backend(_)) => {
                Credential { value: None, source: Source::Unavailable, problem: Some(e.to_string()) }
            }
            Err(e) => {
                let source = if matches!(e, CredentialError::Keyring(KeyringError::Locked)) {
                    Source::Locked
                } else {
                    Source::Unavailable
                };
                match self.in_config(service, key).filter(|_| !self.forced) {
                    Some(found) => found,
                    None => Credential { value: None, source, problem: Some(e.to_string()) },
                }
            }
        }
    }

    fn in_config(&self, service: &str, key: &str) -> Option<Credential> {
        let file = self.settings.file();
        let own = (service == oauth::OAUTH_SERVICE).then(|| file.oauth_tokens().remove(key)).flatten();
        let value = own.or_else(|| {
            let mut map = file.vnc_passwords();
            config_key_forms(service, key).iter().find_map(|form| map.remove(form))
        })?;
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
            Active::Invalid(why) => return Err(CredentialError::Backend(why.clone())),
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
                // A plaintext copy an earlier write or backend left goes: it would outlive the
                // new value on disk, and `migrate-secrets` would bring it back.
                self.edit_config(|file| {
                    file.index_keyring_key(&composite_key(service, key), true);
                    remove_config_credential(file, service, key);
                })?;
                Ok(Source::Keyring)
            }
            Active::Keyring(state) => Err(unusable(state).into()),
            Active::Invalid(why) => Err(CredentialError::Backend(why.clone())),
            Active::Kdbx(path) => {
                if path.as_os_str().is_empty() {
                    return Err(CredentialError::NoKdbx);
                }
                let _lock = kdbx::lock_existing(path)?;
                let (mut db, _) = Kdbx::open(&self.settings, path, self.interactive)?;
                db.set(service, key, value)?;
                db.save()?;
                // As for the keyring: no stale plaintext copy stays beside it.
                self.edit_config(|file| {
                    remove_config_credential(file, service, key);
                })?;
                Ok(Source::Kdbx)
            }
            Active::Config => {
                let forms = config_key_forms(service, key);
                self.edit_config(|file| {
                    let mut map = file.vnc_passwords();
                    if service == oauth::OAUTH_SERVICE {
                        // OAuth tokens have a map of their own; one an earlier charly kept in
                        // `vnc_passwords` moves there now.
                        for form in &forms {
                            map.remove(form);
                        }
                        let mut tokens = file.oauth_tokens();
                        tokens.insert(key.to_owned(), value.to_owned());
                        file.set_oauth_tokens(&tokens);
                    } else {
                        // An entry of the unescaped form is replaced, not kept beside.
                        for form in &forms[1..] {
                            map.remove(form);
                        }
                        map.insert(forms[0].clone(), value.to_owned());
                    }
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
            Active::Invalid(why) => return Err(CredentialError::Backend(why.clone())),
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
        let index = [composite_key(service, key), format!("{service}/{key}")];
        let mut in_file = false;
        self.edit_config(|file| {
            in_file |= remove_config_credential(file, service, key);
            for entry in &index {
                file.index_keyring_key(entry, false);
            }
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

    /// The keys stored under `service`, sorted: in the active backend (the keyring as
    /// config.yml's `keyring_keys` index lists them, the KDBX file's entries) and in
    /// config.yml's maps.
    ///
    /// # Errors
    ///
    /// [`CredentialError`] when the KDBX file cannot be opened.
    pub fn keys(&self, service: &str) -> Result<Vec<String>, CredentialError> {
        let mut keys: Vec<String> = config_credentials(self.settings.file())
            .into_iter()
            .filter(|(s, _, _)| s == service)
            .map(|(_, key, _)| key)
            .collect();
        match &self.active {
            Active::Keyring(_) => {
                for entry in self.settings.file().keyring_keys() {
                    let (s, key) = split_config_key(&entry);
                    if s == service {
                        keys.push(key);
                    }
                }
            }
            Active::Kdbx(path) if path.is_file() => {
                let (db, _) = Kdbx::open(&self.settings, path, self.interactive)?;
                keys.extend(
                    db.entries(service).into_iter().filter(|(s, _, _)| s == service).map(|(_, k, _)| k),
                );
            }
            Active::Kdbx(_) | Active::Config => {}
            Active::Invalid(why) => return Err(CredentialError::Backend(why.clone())),
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
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

/// Every plaintext credential of the config backend as `(service, key, value)`: `vnc_passwords`,
/// then `oauth_tokens`.
pub fn config_credentials(file: &ConfigFile) -> Vec<(String, String, String)> {
    let map: BTreeMap<String, String> = file.vnc_passwords();
    map.into_iter()
        .map(|(composite, value)| {
            let (service, key) = split_config_key(&composite);
            (service, key, value)
        })
        .chain(
            file.oauth_tokens().into_iter().map(|(key, value)| (oauth::OAUTH_SERVICE.to_owned(), key, value)),
        )
        .collect()
}

/// Removes `service/key` from config.yml's credential maps (`oauth_tokens` for an OAuth token,
/// and every form of `vnc_passwords`); whether there was one.
pub fn remove_config_credential(file: &mut ConfigFile, service: &str, key: &str) -> bool {
    let mut removed = false;
    if service == oauth::OAUTH_SERVICE {
        let mut tokens = file.oauth_tokens();
        removed |= tokens.remove(key).is_some();
        file.set_oauth_tokens(&tokens);
    }
    let mut map = file.vnc_passwords();
    for form in config_key_forms(service, key) {
        removed |= map.remove(&form).is_some();
    }
    file.set_vnc_passwords(&map);
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_whatever_they_hold() {
        let keys = [
            "web-1",
            "http://127.0.0.1:8080/mcp",
            "https://mcp.example.com:8443/a/b/mcp?tenant=x&scope=a%2Fb#frag",
            "https://mcp.example.com/",
            "100%",
            "a%2Fb",
            "%2f",
        ];
        for service in ["charly/oauth", "charly/vnc", "charly/secret", "a/b/c"] {
            for key in keys {
                for composite in [config_key(service, key), composite_key(service, key)] {
                    assert_eq!(
                        split_config_key(&composite),
                        (service.to_owned(), key.to_owned()),
                        "{composite}"
                    );
                }
            }
        }
        // Keys without `/` or `%` are written as before.
        assert_eq!(config_key("charly/vnc", "web"), "web");
        assert_eq!(config_key("charly/secret", "db-pw"), "charly/secret/db-pw");
        assert_eq!(config_key("charly/oauth", "http://h:1/mcp"), "charly/oauth/http:%2F%2Fh:1%2Fmcp");
        // Entries written unescaped before: a URL key splits before its scheme.
        assert_eq!(
            split_config_key("charly/oauth/https://mcp.example.com:8443/a/mcp?x=1"),
            ("charly/oauth".to_owned(), "https://mcp.example.com:8443/a/mcp?x=1".to_owned())
        );
        assert_eq!(
            config_key_forms("charly/oauth", "http://h/mcp"),
            ["charly/oauth/http:%2F%2Fh%2Fmcp", "charly/oauth/http://h/mcp"]
        );
        assert_eq!(config_key_forms("charly/secret", "pw"), ["charly/secret/pw"]);
        assert_eq!(unescape_key("50%off%zz%"), "50%off%zz%");
    }
}
