//! `charly secrets ...`: the KeePass KDBX 4 file itself (REFERENCE.md §4), whatever the active
//! credential backend is. The file is laid out as [`crate::credentials::kdbx`] describes;
//! every write holds the file's lock and is atomic (mode 0600), so a refused password, a
//! corrupt file or a crash leaves the file as it was.
//!
//! The path: `--kdbx`, then `CHARLY_KDBX_PATH`, then `secrets.kdbx_path` in config.yml, then
//! `~/.config/charly/secrets.kdbx`.

mod report;

use std::path::{Path, PathBuf};

pub use report::{
    Exported, Imported, ImportedEntry, Initialized, KdbxPath, SecretChanged, SecretList, SecretValue,
};

use crate::config::{self, ConfigError, ConfigFile, Settings, Source};
use crate::credentials::kdbx::{self, Kdbx, KdbxError, PASSWORD_ENV};
use crate::credentials::{self, Lookup, prompt};
use crate::hostfile::FileLock;

/// Why a `secrets` command could not do its work. No variant carries a secret.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SecretsError {
    /// The database could not be opened or written.
    #[error(transparent)]
    Kdbx(#[from] KdbxError),
    /// config.yml could not be read or written.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// `secrets init` over an existing file.
    #[error("{} exists already: pass --force to replace it (its entries are lost) or choose another path", .0.display())]
    Exists(PathBuf),
    /// No entry.
    #[error("no entry found for {service}/{key} in {}", path.display())]
    NotFound {
        /// The service.
        service: String,
        /// The key.
        key: String,
        /// The database.
        path: PathBuf,
    },
    /// A value or password is needed and no terminal can be asked.
    #[error("{0}")]
    NeedsArgument(String),
}

/// The database path and where it came from: `arg` (`--kdbx`, or `secrets init`'s
/// positional path), then `CHARLY_KDBX_PATH` (the real environment, then the project's
/// `.env`), then `secrets.kdbx_path` in config.yml, then [`config::default_kdbx_path`]. Every
/// `secrets` leaf, `secrets init` included, resolves its database here.
pub fn resolve_path(arg: Option<&Path>, settings: &Settings) -> (PathBuf, String) {
    if let Some(path) = arg {
        return (absolute(path), "--kdbx".into());
    }
    let key = config::KEYS.iter().find(|k| k.name == "secrets.kdbx_path").expect("the key exists");
    let resolved = settings.resolve(key);
    match (&resolved.source, settings.kdbx_path()) {
        (Source::Default, _) | (_, None) => (config::default_kdbx_path(), "default".into()),
        (source, Some(path)) => (path, source.to_string()),
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// The options every `secrets` leaf shares.
#[derive(Clone, Debug)]
pub struct Opts<'a> {
    /// `--kdbx`.
    pub kdbx: Option<&'a Path>,
    /// The project directory (for `.env`).
    pub project_dir: &'a Path,
    /// Whether a terminal can be asked.
    pub interactive: bool,
}

impl Opts<'_> {
    fn settings(&self) -> Result<Settings, SecretsError> {
        Ok(Settings::load(self.project_dir)?)
    }

    fn open(&self) -> Result<(Settings, Kdbx), SecretsError> {
        let settings = self.settings()?;
        let (path, _) = resolve_path(self.kdbx, &settings);
        let (db, _) = Kdbx::open(&settings, &path, self.interactive)?;
        Ok((settings, db))
    }
}

/// `secrets init [path] [--force] [--strong-kdf]`.
///
/// # Errors
///
/// [`SecretsError::Exists`], [`SecretsError::NeedsArgument`] (no `CHARLY_KDBX_PASSWORD` and no
/// terminal), [`SecretsError::Kdbx`], [`SecretsError::Config`].
pub fn init(
    db_path: Option<&Path>,
    force: bool,
    strong_kdf: bool,
    opts: &Opts<'_>,
) -> Result<Initialized, SecretsError> {
    let settings = opts.settings()?;
    // The same resolution as every other leaf: the positional path or --kdbx, then
    // CHARLY_KDBX_PATH, then secrets.kdbx_path, then the default.
    let (path, _) = resolve_path(db_path.or(opts.kdbx), &settings);
    if path.exists() && !force {
        return Err(SecretsError::Exists(path));
    }
    let password = match kdbx::env_password() {
        Some(p) => p,
        _ if opts.interactive => prompt::new_password(&format!("New password for {}: ", path.display()))
            .map_err(KdbxError::from)?,
        _ => {
            return Err(SecretsError::NeedsArgument(format!(
                "secrets init needs the new database's password: set {PASSWORD_ENV} (there is no terminal to ask)"
            )));
        }
    };
    let _lock = FileLock::acquire(&path).map_err(KdbxError::Io)?;
    // config.yml is read (and locked) before the database is written, so a config file that
    // cannot be edited leaves no database behind that it does not name.
    let config_path = config::config_path();
    let _config_lock = FileLock::acquire(&config_path)
        .map_err(|source| ConfigError::Write { path: config_path.clone(), source })?;
    let mut file = ConfigFile::load(&config_path)?;
    let kdf_config = if strong_kdf { kdbx::strong_kdf() } else { kdbx::kdf() };
    let mut db = Kdbx::create(&path, &password, settings.kdbx_key_file().as_deref(), kdf_config)?;
    db.save()?;
    file.set(&["secrets_kdbx_path"], yaml_serde::Value::String(path.display().to_string()));
    file.save()?;
    Ok(Initialized {
        path: path.display().to_string(),
        groups: kdbx::SERVICES.iter().map(|s| (*s).to_owned()).collect(),
        config: config_path.display().to_string(),
    })
}

/// `secrets list [service]`.
///
/// # Errors
///
/// [`SecretsError::Kdbx`].
pub fn list(service: &str, opts: &Opts<'_>) -> Result<SecretList, SecretsError> {
    let (_, db) = opts.open()?;
    let entries =
        db.entries(service).into_iter().map(|(s, k, _)| credentials::composite_key(&s, &k)).collect();
    Ok(SecretList { path: db.path().display().to_string(), service: service.to_owned(), entries })
}

/// `secrets get <service> <key>`.
///
/// # Errors
///
/// [`SecretsError::NotFound`], [`SecretsError::Kdbx`].
pub fn get(service: &str, key: &str, opts: &Opts<'_>) -> Result<SecretValue, SecretsError> {
    let (_, db) = opts.open()?;
    // `secrets list` shows a key with `/` as `%2F` (`charly/secret/a%2Fb`): that spelling
    // finds it too, as it is shown (trial 29).
    let shown = crate::credentials::unescape_key(key);
    match db.get(service, key).or_else(|| (shown != key).then(|| db.get(service, &shown)).flatten()) {
        Some(value) => Ok(SecretValue { service: service.into(), key: key.into(), value }),
        None => Err(SecretsError::NotFound {
            service: service.into(),
            key: key.into(),
            path: db.path().to_owned(),
        }),
    }
}

/// 16 random bytes as hex.
fn generate() -> Result<String, SecretsError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| KdbxError::Io(std::io::Error::other(e.to_string())))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `secrets set <service> <key> [value] [--generate]`. The value: `--generate` (16 random
/// bytes, hex), the argument, or a hidden prompt on a terminal. `reveal` puts a generated
/// value in the report (a terminal); a tool reads it back with `secrets.get`.
///
/// # Errors
///
/// [`SecretsError::NeedsArgument`] when no value is given and no terminal can be asked;
/// [`SecretsError::Kdbx`].
pub fn set(
    service: &str,
    key: &str,
    value: Option<&str>,
    generate_value: bool,
    reveal: bool,
    opts: &Opts<'_>,
) -> Result<SecretChanged, SecretsError> {
    let (value, generated) = match (value, generate_value) {
        (Some(_), true) => {
            return Err(SecretsError::NeedsArgument("give either a value or --generate, not both".into()));
        }
        (Some(""), false) => {
            return Err(SecretsError::NeedsArgument("the value is empty".into()));
        }
        (Some(v), false) => (v.to_owned(), false),
        (None, true) => (generate()?, true),
        (None, false) if opts.interactive => {
            (prompt::hidden(&format!("Value for {service}/{key}: ")).map_err(KdbxError::from)?, false)
        }
        (None, false) => {
            return Err(SecretsError::NeedsArgument(
                "secrets set needs the value: pass it as the `value` argument, or --generate".into(),
            ));
        }
    };
    let settings = opts.settings()?;
    let (path, _) = resolve_path(opts.kdbx, &settings);
    let _lock = kdbx::lock_existing(&path)?;
    let (mut db, _) = Kdbx::open(&settings, &path, opts.interactive)?;
    let replaced = db.set(service, key, &value)?;
    db.save()?;
    Ok(SecretChanged {
        service: service.into(),
        key: key.into(),
        path: path.display().to_string(),
        action: if replaced { "replaced" } else { "stored" }.into(),
        generated: (generated && reveal).then_some(value),
    })
}

/// `secrets delete <service> <key>` (no error when absent).
///
/// # Errors
///
/// [`SecretsError::Kdbx`].
pub fn delete(service: &str, key: &str, opts: &Opts<'_>) -> Result<SecretChanged, SecretsError> {
    let settings = opts.settings()?;
    let (path, _) = resolve_path(opts.kdbx, &settings);
    let _lock = kdbx::lock_existing(&path)?;
    let (mut db, _) = Kdbx::open(&settings, &path, opts.interactive)?;
    let shown = crate::credentials::unescape_key(key);
    let removed = db.delete(service, key) || (shown != key && db.delete(service, &shown));
    if removed {
        db.save()?;
    }
    Ok(SecretChanged {
        service: service.into(),
        key: key.into(),
        path: path.display().to_string(),
        action: if removed { "deleted" } else { "absent" }.into(),
        generated: None,
    })
}

/// `secrets export [--format yaml|json]`: every entry under `charly`.
///
/// # Errors
///
/// [`SecretsError::Kdbx`].
pub fn export(format: &str, opts: &Opts<'_>) -> Result<Exported, SecretsError> {
    let (_, db) = opts.open()?;
    Ok(Exported {
        path: db.path().display().to_string(),
        format: format.into(),
        secrets: db.export("charly"),
    })
}

/// `secrets import [--dry-run]`: config.yml's plaintext credentials and the keyring items its
/// `keyring_keys` index names, into the database.
///
/// # Errors
///
/// [`SecretsError::Kdbx`], [`SecretsError::Config`].
pub fn import(dry_run: bool, opts: &Opts<'_>) -> Result<Imported, SecretsError> {
    let settings = opts.settings()?;
    let (path, _) = resolve_path(opts.kdbx, &settings);
    let mut found: Vec<(String, String, Result<String, String>, &'static str)> =
        credentials::config_credentials(settings.file())
            .into_iter()
            .map(|(s, k, v)| (s, k, Ok(v), "config"))
            .collect();
    let index = settings.file().keyring_keys();
    if !index.is_empty() {
        let keyring = credentials::Keyring::new(settings.keyring_collection_label());
        for entry in index {
            let (service, key) = credentials::split_config_key(&entry);
            if found.iter().any(|(s, k, _, _)| *s == service && *k == key) {
                continue;
            }
            let value = match keyring.lookup(&credentials::keyring_attributes(&service, &key)) {
                Ok(Lookup::Found(v)) => Ok(v),
                Ok(Lookup::Locked) => Err("the keyring is locked".to_owned()),
                Ok(Lookup::Missing) => continue,
                Err(e) => Err(e.to_string()),
            };
            found.push((service, key, value, "keyring"));
        }
    }
    let mut entries = Vec::new();
    if dry_run {
        for (service, key, value, from) in found {
            let outcome = match value {
                Ok(_) => "would import".to_owned(),
                Err(why) => format!("failed: {why}"),
            };
            entries.push(ImportedEntry { service, key, from: from.into(), outcome });
        }
        return Ok(Imported { path: path.display().to_string(), dry_run, entries });
    }
    let _lock = kdbx::lock_existing(&path)?;
    let (mut db, _) = Kdbx::open(&settings, &path, opts.interactive)?;
    let mut any = false;
    for (service, key, value, from) in found {
        let outcome = match value.and_then(|v| db.set(&service, &key, &v).map_err(|e| e.to_string())) {
            Ok(_) => {
                any = true;
                "imported".to_owned()
            }
            Err(why) => format!("failed: {why}"),
        };
        entries.push(ImportedEntry { service, key, from: from.into(), outcome });
    }
    if any {
        db.save()?;
    }
    Ok(Imported { path: path.display().to_string(), dry_run, entries })
}

/// The warnings every `secrets` leaf gives: config.yml or the database readable by group or
/// others ([`crate::hostfile::readable_by_others`], as `settings` warns).
pub fn warnings(opts: &Opts<'_>) -> Vec<String> {
    let config = config::config_path();
    let db = match opts.settings() {
        Ok(settings) => resolve_path(opts.kdbx, &settings).0,
        Err(_) => return crate::hostfile::readable_by_others(&config).into_iter().collect(),
    };
    [config, db].iter().filter_map(|p| crate::hostfile::readable_by_others(p)).collect()
}

/// `secrets path`.
///
/// # Errors
///
/// [`SecretsError::Config`] for an unreadable config.yml.
pub fn path(opts: &Opts<'_>) -> Result<KdbxPath, SecretsError> {
    let settings = opts.settings()?;
    let (path, source) = resolve_path(opts.kdbx, &settings);
    Ok(KdbxPath { exists: path.is_file(), path: path.display().to_string(), source })
}
