//! A KeePass KDBX 4 file as charly lays it out (REFERENCE.md §4): root group `Root`, a service
//! `a/b` is the group path `Root/a/b`, an entry's title is the key and its protected
//! `Password` field the value. Reading and writing go through the `keepass` crate
//! (`save_kdbx4`); saves are atomic with mode 0600.
//!
//! The database password comes from `CHARLY_KDBX_PASSWORD`, then the kernel keyring cache
//! ([`super::kernel`]), then a prompt on a terminal (and is cached after it opened the file);
//! with none of these the error names the variable to set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use keepass::config::{DatabaseConfig, DatabaseVersion, KdfConfig};
use keepass::db::{GroupMut, GroupRef, fields};
use keepass::error::{DatabaseKeyError, DatabaseOpenError};
use keepass::{Database, DatabaseKey};

use super::{kernel, prompt};
use crate::config::Settings;
use crate::hostfile;
use crate::hostfile::FileLock;

/// The variable holding the database password.
pub const PASSWORD_ENV: &str = "CHARLY_KDBX_PASSWORD";

/// The services charly creates groups for in a new database.
pub const SERVICES: [&str; 3] = ["charly/vnc", "charly/secret", "charly/enc"];

/// The key derivation of a database `secrets init` creates: Argon2id, 6 MiB, 2 passes, 2
/// lanes. A file that scripts open on every call (`secrets get` in an alias, a unit's start-up)
/// must open within the 20 ms budget of a whole `charly` process; on these machines this
/// costs about 10 ms, where KeePassXC's default (64 MiB, about a second) would make every call
/// that long. `secrets init --strong-kdf` writes [`strong_kdf`] instead; a file made elsewhere
/// keeps its own parameters when charly saves it.
pub fn kdf() -> KdfConfig {
    KdfConfig::Argon2id {
        iterations: 2,
        memory: 6 * 1024 * 1024,
        parallelism: 2,
        version: argon2::Version::Version13,
    }
}

/// The key derivation of `secrets init --strong-kdf`: Argon2id, 64 MiB, 3 passes, 2 lanes
/// (RFC 9106's second recommended setting, with two lanes): a few hundred milliseconds per open.
pub fn strong_kdf() -> KdfConfig {
    KdfConfig::Argon2id {
        iterations: 3,
        memory: 64 * 1024 * 1024,
        parallelism: 2,
        version: argon2::Version::Version13,
    }
}

/// `CHARLY_KDBX_PASSWORD`, when set and not empty: the one place that reads it. An empty
/// variable counts as unset (the next source of the password is asked), never as an empty
/// password.
pub fn env_password() -> Option<String> {
    std::env::var(PASSWORD_ENV).ok().filter(|p| !p.is_empty())
}

/// The write lock of the existing database `path`: [`KdbxError::Missing`] before anything is
/// created (no directory, no lock file) when there is no file.
///
/// # Errors
///
/// [`KdbxError::Missing`], [`KdbxError::Io`].
pub fn lock_existing(path: &Path) -> Result<FileLock, KdbxError> {
    if !path.exists() {
        return Err(KdbxError::Missing { path: path.to_owned() });
    }
    FileLock::acquire(path).map_err(KdbxError::Io)
}

/// Why a KDBX file could not be used. No variant carries a password or a value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KdbxError {
    /// No database at the path.
    #[error("no KeePass database at {}: create one with `charly secrets init` or set secrets.kdbx_path", path.display())]
    Missing {
        /// The path.
        path: PathBuf,
    },
    /// The password (or key file) does not open the database.
    #[error("wrong password for the KeePass database {}{}: check CHARLY_KDBX_PASSWORD{}; the file is unchanged",
        path.display(), if *cached { " (the cached password was wrong and has been dropped)" } else { "" },
        if *key_file { " and the key file in secrets.kdbx_key_file (CHARLY_KDBX_KEY_FILE)" }
        else { ", and if the database needs a key file, name it in secrets.kdbx_key_file (CHARLY_KDBX_KEY_FILE)" })]
    WrongPassword {
        /// The path.
        path: PathBuf,
        /// The password came from the kernel keyring cache.
        cached: bool,
        /// A key file was part of the key.
        key_file: bool,
    },
    /// The file is not a KDBX 4 database, or it is damaged.
    #[error("{} is not a readable KeePass KDBX database ({reason}); it is unchanged: restore it from a backup or \
             point secrets.kdbx_path at another file", path.display())]
    Corrupt {
        /// The path.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// No password could be had without a terminal.
    #[error("the KeePass database {} needs its password: set CHARLY_KDBX_PASSWORD (or run the command once in a \
             terminal, which caches it in the kernel keyring)", path.display())]
    PasswordNeeded {
        /// The path.
        path: PathBuf,
    },
    /// The key file could not be read.
    #[error("cannot read the KeePass key file {}: {source}; check secrets.kdbx_key_file (CHARLY_KDBX_KEY_FILE); \
             nothing was changed", path.display())]
    KeyFile {
        /// The key file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Reading or writing the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The database could not be encoded.
    #[error("cannot encode the KeePass database {}: {message}; the file is unchanged", path.display())]
    Save {
        /// The path.
        path: PathBuf,
        /// The encoder's message.
        message: String,
    },
    /// A service or key charly cannot store (empty, or a service part that is empty).
    #[error("{0}")]
    Name(String),
    /// A prompt failed.
    #[error(transparent)]
    Prompt(#[from] prompt::PromptError),
}

/// An opened database and the key that opened it (to save it again).
pub struct Kdbx {
    path: PathBuf,
    db: Database,
    password: String,
    key_file: Option<Vec<u8>>,
}

impl std::fmt::Debug for Kdbx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kdbx").field("path", &self.path).finish_non_exhaustive()
    }
}

/// Where the password that opened a database came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PasswordFrom {
    /// `CHARLY_KDBX_PASSWORD`.
    Env,
    /// The kernel keyring cache.
    Cache,
    /// A prompt.
    Prompt,
}

fn key_of(password: &str, key_file: Option<&[u8]>) -> Result<DatabaseKey, std::io::Error> {
    let mut key = DatabaseKey::new();
    if !password.is_empty() {
        key = key.with_password(password);
    }
    if let Some(mut bytes) = key_file {
        key = key.with_keyfile(&mut bytes)?;
    }
    Ok(key)
}

fn read_key_file(path: Option<&Path>) -> Result<Option<Vec<u8>>, KdbxError> {
    path.map(|p| std::fs::read(p).map_err(|source| KdbxError::KeyFile { path: p.to_owned(), source }))
        .transpose()
}

impl Kdbx {
    /// A new database at `path` (not yet written) with groups `Root/charly/{vnc,secret,enc}`,
    /// its key derived with `kdf_config` ([`kdf`] or [`strong_kdf`]).
    ///
    /// # Errors
    ///
    /// [`KdbxError::KeyFile`].
    pub fn create(
        path: &Path,
        password: &str,
        key_file: Option<&Path>,
        kdf_config: KdfConfig,
    ) -> Result<Kdbx, KdbxError> {
        let mut db = Database::new();
        let mut config = DatabaseConfig::default();
        config.kdf_config = kdf_config;
        db.config = config;
        db.root_mut().name = "Root".into();
        let mut kdbx = Kdbx {
            path: path.to_owned(),
            db,
            password: password.to_owned(),
            key_file: read_key_file(key_file)?,
        };
        for service in SERVICES {
            kdbx.group_mut(service);
        }
        Ok(kdbx)
    }

    /// Opens `path` with a password (and key file).
    ///
    /// # Errors
    ///
    /// [`KdbxError::Missing`], [`KdbxError::WrongPassword`] (with `cached: false`),
    /// [`KdbxError::Corrupt`], [`KdbxError::KeyFile`].
    pub fn open_with(path: &Path, password: &str, key_file: Option<&Path>) -> Result<Kdbx, KdbxError> {
        let data = match std::fs::read(path) {
            Ok(data) => data,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(KdbxError::Missing { path: path.to_owned() });
            }
            Err(e) => return Err(hostfile::with_path(e, "read", path).into()),
        };
        let key_bytes = read_key_file(key_file)?;
        let key = key_of(password, key_bytes.as_deref()).map_err(|source| KdbxError::KeyFile {
            path: key_file.map(Path::to_owned).unwrap_or_default(),
            source,
        })?;
        match Database::parse(&data, key) {
            Ok(db) => {
                Ok(Kdbx { path: path.to_owned(), db, password: password.to_owned(), key_file: key_bytes })
            }
            Err(DatabaseOpenError::Key(DatabaseKeyError::IncorrectKey)) => Err(KdbxError::WrongPassword {
                path: path.to_owned(),
                cached: false,
                key_file: key_file.is_some(),
            }),
            Err(e) => Err(KdbxError::Corrupt { path: path.to_owned(), reason: e.to_string() }),
        }
    }

    /// Opens `path` with the password from the chain: `CHARLY_KDBX_PASSWORD`, the kernel
    /// keyring cache (when `secrets.kdbx_cache`), a prompt when `interactive`. A prompted
    /// password that opened the file is cached for `secrets.kdbx_cache_timeout` seconds; a
    /// cached one that no longer does is dropped.
    ///
    /// # Errors
    ///
    /// As [`Kdbx::open_with`], and [`KdbxError::PasswordNeeded`] when no password can be had.
    pub fn open(
        settings: &Settings,
        path: &Path,
        interactive: bool,
    ) -> Result<(Kdbx, PasswordFrom), KdbxError> {
        if !path.exists() {
            return Err(KdbxError::Missing { path: path.to_owned() });
        }
        let key_file = settings.kdbx_key_file();
        let key_file = key_file.as_deref();
        if let Some(password) = env_password() {
            return Ok((Kdbx::open_with(path, &password, key_file)?, PasswordFrom::Env));
        }
        let cache = settings.kdbx_cache().then(|| kernel::Cache::for_kdbx(path));
        if let Some(password) = cache.as_ref().and_then(kernel::Cache::get) {
            match Kdbx::open_with(path, &password, key_file) {
                Ok(kdbx) => return Ok((kdbx, PasswordFrom::Cache)),
                Err(KdbxError::WrongPassword { .. }) => {
                    cache.as_ref().map(kernel::Cache::forget);
                    if !interactive {
                        return Err(KdbxError::WrongPassword {
                            path: path.to_owned(),
                            cached: true,
                            key_file: key_file.is_some(),
                        });
                    }
                }
                Err(e) => return Err(e),
            }
        }
        if !interactive {
            return Err(KdbxError::PasswordNeeded { path: path.to_owned() });
        }
        let password = prompt::hidden(&format!("Password for {}: ", path.display()))?;
        let kdbx = Kdbx::open_with(path, &password, key_file)?;
        if let Some(cache) = &cache {
            cache.put(&password, settings.kdbx_cache_timeout());
        }
        Ok((kdbx, PasswordFrom::Prompt))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the database to its path: a temporary file in the same directory, mode 0600,
    /// then a rename. The KDF keeps its parameters and gets a fresh seed on every save.
    ///
    /// # Errors
    ///
    /// [`KdbxError::Save`] or [`KdbxError::Io`]; the old file is then unchanged.
    pub fn save(&mut self) -> Result<(), KdbxError> {
        // keepass writes KDBX 4.1 only; a 4.0 file (KeePassXC's default) is upgraded, which
        // KeePassXC 2.7 and KeePass 2.48 or later read.
        self.db.config.version = DatabaseVersion::KDB4(1);
        let key = key_of(&self.password, self.key_file.as_deref())?;
        let mut bytes = Vec::new();
        self.db
            .save(&mut bytes, key)
            .map_err(|e| KdbxError::Save { path: self.path.clone(), message: e.to_string() })?;
        hostfile::write_atomic(&self.path, &bytes, 0o600)?;
        Ok(())
    }

    fn group(&self, service: &str) -> Option<GroupRef<'_>> {
        let mut id = self.db.root().id();
        for part in service.split('/') {
            id = self.db.group(id)?.group_by_name(part)?.id();
        }
        self.db.group(id)
    }

    fn group_mut(&mut self, service: &str) -> GroupMut<'_> {
        let mut id = self.db.root().id();
        for part in service.split('/') {
            let existing = self.db.group(id).and_then(|g| g.group_by_name(part).map(|child| child.id()));
            id = match existing {
                Some(child) => child,
                None => {
                    let mut parent = self.db.group_mut(id).expect("the parent group exists");
                    let mut child = parent.add_group();
                    child.name = part.to_owned();
                    child.id()
                }
            };
        }
        self.db.group_mut(id).expect("the group was just found or made")
    }

    /// The value of `service/key`.
    pub fn get(&self, service: &str, key: &str) -> Option<String> {
        let group = self.group(service)?;
        group
            .entries()
            .find(|e| e.get_title() == Some(key))
            .map(|e| e.get_password().unwrap_or_default().to_owned())
    }

    /// Stores `value` under `service/key` (groups created as needed); whether it replaced a
    /// value.
    ///
    /// # Errors
    ///
    /// [`KdbxError::Name`] for an empty service part or key.
    pub fn set(&mut self, service: &str, key: &str, value: &str) -> Result<bool, KdbxError> {
        check_name(service, key)?;
        let mut group = self.group_mut(service);
        let existing = group.as_ref().entries().find(|e| e.get_title() == Some(key)).map(|e| e.id());
        match existing {
            Some(id) => {
                let mut entry = group.entry_mut(id).expect("the entry was just found");
                entry.set_protected(fields::PASSWORD, value);
                Ok(true)
            }
            None => {
                let mut entry = group.add_entry();
                entry.set_unprotected(fields::TITLE, key);
                entry.set_protected(fields::PASSWORD, value);
                Ok(false)
            }
        }
    }

    /// Removes `service/key`; whether it was there.
    pub fn delete(&mut self, service: &str, key: &str) -> bool {
        if self.group(service).is_none() {
            return false;
        }
        let mut group = self.group_mut(service);
        let ids: Vec<_> =
            group.as_ref().entries().filter(|e| e.get_title() == Some(key)).map(|e| e.id()).collect();
        for id in &ids {
            if let Some(entry) = group.entry_mut(*id) {
                entry.remove();
            }
        }
        !ids.is_empty()
    }

    /// Every entry under the group path `prefix` (recursively), as `(service, key, value)`,
    /// sorted.
    pub fn entries(&self, prefix: &str) -> Vec<(String, String, String)> {
        fn walk(group: GroupRef<'_>, service: &str, out: &mut Vec<(String, String, String)>) {
            for entry in group.entries() {
                let title = entry.get_title().unwrap_or_default().to_owned();
                out.push((service.to_owned(), title, entry.get_password().unwrap_or_default().to_owned()));
            }
            for child in group.groups() {
                let name = format!("{service}/{}", child.name);
                walk(child, &name, out);
            }
        }
        let mut out = Vec::new();
        let prefix = prefix.trim_matches('/');
        if let Some(group) = self.group(prefix) {
            walk(group, prefix, &mut out);
        }
        out.sort();
        out
    }

    /// [`Kdbx::entries`] as a map `service → key → value`.
    pub fn export(&self, prefix: &str) -> BTreeMap<String, BTreeMap<String, String>> {
        let mut map: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        for (service, key, value) in self.entries(prefix) {
            map.entry(service).or_default().insert(key, value);
        }
        map
    }
}

/// A service is `/`-separated non-empty parts; a key is non-empty (it may hold `/`: an OAuth
/// token's key is its server's URL; `secrets list` escapes it). Neither holds a newline.
fn check_name(service: &str, key: &str) -> Result<(), KdbxError> {
    if service.is_empty() || service.split('/').any(str::is_empty) || service.contains('\n') {
        return Err(KdbxError::Name(format!(
            "invalid service {service:?}: a service is a `/`-separated path of non-empty parts, e.g. charly/secret"
        )));
    }
    if key.is_empty() || key.contains('\n') {
        return Err(KdbxError::Name(format!("invalid key {key:?}: a key is non-empty, without newlines")));
    }
    Ok(())
}
