//! charly's per-host settings: `~/.config/charly/config.yml` (honouring `XDG_CONFIG_HOME`),
//! the keys it holds ([`KEYS`]) and how each value is resolved: the environment variable,
//! then the project directory's `.env`, then the file, then the default.
//!
//! This module is the bottom layer of the host-state families: the credential store
//! ([`crate::credentials`]) and the `settings.*`, `secrets.*` leaves read it.
//!
//! ```
//! use charly_cli::config::{KEYS, Settings, Source};
//!
//! let settings = Settings::empty();
//! let bind = KEYS.iter().find(|k| k.name == "bind_address").unwrap();
//! let resolved = settings.resolve(bind);
//! assert_eq!(resolved.value, "127.0.0.1");
//! # if std::env::var_os("CHARLY_BIND_ADDRESS").is_none() {
//! assert_eq!(resolved.source, Source::Default);
//! # }
//! ```

pub mod dotenv;
mod file;
mod keys;
mod strays;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use dotenv::{parse as parse_dotenv, unquote as dotenv_unquote};
pub use file::{ConfigFile, KEYRING_KEYS, OAUTH_TOKENS, VNC_PASSWORDS, config_dir, config_path};
pub use keys::{Checked, KEYS, Key, Kind, Named, VNC_PASSWORD_PREFIX, lookup};

use crate::hostfile;

/// Why the settings could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// config.yml exists but cannot be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// config.yml is not YAML, or not a mapping.
    #[error("{} is not a valid settings file: {message}; fix it by hand or run `charly settings reset`", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// config.yml could not be written; the old file is unchanged.
    #[error("cannot write {} (nothing was changed): {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An unknown key or an invalid value; the message names the key and what is allowed.
    #[error("{0}")]
    Invalid(String),
}

/// Where a resolved value came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// The environment variable (named).
    Env(&'static str),
    /// The variable (named) from the project directory's `.env`.
    DotEnv(&'static str),
    /// config.yml.
    Config,
    /// The key's default.
    Default,
}

impl Source {
    /// The variable of an `env` or `.env` value.
    pub fn variable(&self) -> Option<&'static str> {
        match self {
            Source::Env(var) | Source::DotEnv(var) => Some(var),
            Source::Config | Source::Default => None,
        }
    }
}

impl std::fmt::Display for Source {
    /// `env`, `.env`, `config`, `default` (the variable is [`Source::variable`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Source::Env(_) => "env",
            Source::DotEnv(_) => ".env",
            Source::Config => "config",
            Source::Default => "default",
        })
    }
}

/// A value and its source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The value, as text.
    pub value: String,
    /// Where it came from.
    pub source: Source,
}

/// The settings as this process sees them: config.yml, the `.env` variables and the real
/// environment.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    file: ConfigFile,
    dotenv: BTreeMap<String, String>,
}

impl Settings {
    /// Settings from this user's config.yml and `project_dir/.env`.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`] or [`ConfigError::Parse`] for config.yml.
    pub fn load(project_dir: &Path) -> Result<Settings, ConfigError> {
        Ok(Settings { file: ConfigFile::load_default()?, dotenv: dotenv::load(project_dir) })
    }

    /// No file and no `.env`: the environment and the defaults only.
    pub fn empty() -> Settings {
        Settings::default()
    }

    /// Settings over an already read file (and no `.env`).
    pub fn from_file(file: ConfigFile) -> Settings {
        Settings { file, dotenv: BTreeMap::new() }
    }

    /// The file's warnings ([`ConfigFile::warnings`]), then one for each variable of the
    /// project's `.env` that names a setting a `.env` may not set ([`Key::from_dotenv`]).
    pub fn warnings(&self) -> Vec<String> {
        let ignored = KEYS.iter().filter(|k| !k.from_dotenv() && self.dotenv.contains_key(k.env)).map(|k| {
            format!(
                "{} in the project's .env is ignored: {} is this host's choice (where it keeps credentials, \
                 which interfaces it publishes on, or a path on it), not a project's; set it in the environment or with `charly settings set {}`",
                k.env, k.name, k.name
            )
        });
        self.file.warnings().into_iter().chain(ignored).collect()
    }

    /// config.yml as read.
    pub fn file(&self) -> &ConfigFile {
        &self.file
    }

    /// config.yml, to edit (then [`ConfigFile::save`]).
    pub fn file_mut(&mut self) -> &mut ConfigFile {
        &mut self.file
    }

    /// The value of `key` and its source.
    pub fn resolve(&self, key: &Key) -> Resolved {
        if let Some(value) = std::env::var(key.env).ok().filter(|v| !v.is_empty()) {
            return Resolved { value, source: Source::Env(key.env) };
        }
        if let Some(value) = self.dotenv.get(key.env).filter(|v| !v.is_empty() && key.from_dotenv()) {
            return Resolved { value: value.clone(), source: Source::DotEnv(key.env) };
        }
        if let Some(value) = self.file.get(key.yaml) {
            return Resolved { value, source: Source::Config };
        }
        Resolved { value: key.default.to_owned(), source: Source::Default }
    }

    /// The value of the key named `name` (one of [`KEYS`]).
    ///
    /// # Panics
    ///
    /// When `name` is not in [`KEYS`]: a programming error.
    pub fn value(&self, name: &str) -> String {
        let key = KEYS.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no settings key {name}"));
        self.resolve(key).value
    }

    /// The value of the key named `name` (one of [`KEYS`]), checked by [`Key::check`].
    ///
    /// # Errors
    ///
    /// The check's message, with where the value came from: `(from CHARLY_…)` for the
    /// environment, `(from CHARLY_… in .env)`, `(in <config.yml>)` otherwise; a list or a
    /// mapping in config.yml where a value belongs is named as such.
    ///
    /// # Panics
    ///
    /// When `name` is not in [`KEYS`]: a programming error.
    pub fn checked(&self, name: &str) -> Result<Resolved, String> {
        let key = KEYS.iter().find(|k| k.name == name).unwrap_or_else(|| panic!("no settings key {name}"));
        let resolved = self.resolve(key);
        if resolved.source == Source::Default
            && let Some(shape) = self.file.shape_of(key.yaml)
        {
            return Err(format!(
                "{} is {shape} in {}, not one value: allowed values are {}",
                key.name,
                self.file.path().display(),
                key.kind
            ));
        }
        match key.check(&resolved.value) {
            Ok(_) => Ok(resolved),
            Err(why) => Err(match &resolved.source {
                Source::Env(var) => format!("{why} (from {var})"),
                Source::DotEnv(var) => format!("{why} (from {var} in .env)"),
                _ => format!("{why} (in {})", self.file.path().display()),
            }),
        }
    }

    fn boolean(&self, name: &str) -> bool {
        !matches!(self.value(name).to_ascii_lowercase().as_str(), "false" | "no" | "off" | "0")
    }

    /// `secret_backend`: `auto`, `keyring`, `kdbx` or `config`.
    pub fn secret_backend(&self) -> String {
        self.value("secret_backend")
    }

    /// `keyring_collection_label`, when set.
    pub fn keyring_collection_label(&self) -> Option<String> {
        Some(self.value("keyring_collection_label")).filter(|l| !l.is_empty())
    }

    /// `secrets.kdbx_path` (expanded), when set.
    pub fn kdbx_path(&self) -> Option<PathBuf> {
        Some(self.value("secrets.kdbx_path")).filter(|p| !p.is_empty()).map(|p| hostfile::expand_home(&p))
    }

    /// `secrets.kdbx_key_file` (expanded), when set.
    pub fn kdbx_key_file(&self) -> Option<PathBuf> {
        Some(self.value("secrets.kdbx_key_file")).filter(|p| !p.is_empty()).map(|p| hostfile::expand_home(&p))
    }

    /// `secrets.kdbx_cache`.
    pub fn kdbx_cache(&self) -> bool {
        self.boolean("secrets.kdbx_cache")
    }

    /// `secrets.kdbx_cache_timeout` in seconds (3600 when the value is not a number).
    pub fn kdbx_cache_timeout(&self) -> u64 {
        self.value("secrets.kdbx_cache_timeout").trim().parse().unwrap_or(3600)
    }
}

/// The default KDBX path: `secrets.kdbx` in [`config_dir`].
pub fn default_kdbx_path() -> PathBuf {
    config_dir().join("secrets.kdbx")
}
