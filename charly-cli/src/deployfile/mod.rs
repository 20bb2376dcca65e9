//! The per-host deploy file `~/.config/charly/charly.yml` (`$XDG_CONFIG_HOME/charly/charly.yml`)
//! and the `deploy.*` leaves on it (REFERENCE.md §3, §18.2).
//!
//! The file holds how this host runs its boxes: a `deploy:` map of deployment name (`<box>` or
//! `<box>/<instance>`) → node (`image`, `port`, `env`, `volume`, `security`, ...), the resolved
//! `provides` of deployed boxes and a `sidecar` template library. People edit it by hand, so
//! every write goes through the lossless YAML editor of the project files
//! (`project::yamlfile`): comments, key order and quoting outside the edited node stay
//! as they were. Writes are atomic (temporary file + rename, mode 0600) under a lock that
//! serialises read-modify-write cycles across threads and processes; a file that is not YAML,
//! not a closed [`schema`] deploy file, or a bad import changes nothing.
//!
//! | module | what |
//! |---|---|
//! | [`schema`] | the closed schema of the file and the checks of its values |
//! | [`entry`] | writing one deployment's entry (`config setup`) |
//! | [`crypt`] | where encrypted volumes live, whether one is mounted |
//! | [`file`] | locating, reading, validating and writing the file |
//! | [`leaves`] | `deploy.{export,import,path,reset,show,status}` |
//! | [`report`] | their reports |
//!
//! This is a bottom layer: the lifecycle ([`crate::deploy`]) and `config.*` read and write the
//! file through it; it depends on nothing above [`crate::project`], [`crate::config`] and the
//! container names of [`crate::engine`].

pub mod crypt;
pub mod entry;
pub mod file;
pub mod leaves;
pub mod report;
pub mod schema;

use std::path::PathBuf;

pub use self::entry::{
    EntryUpdate, SecretEntry, VolumeEntry, saved_ports, saved_secrets, saved_volumes, write_entry,
};
pub use self::file::{DeployFile, checked_deploy_path, deploy_path, quadlet_dir};
pub use self::leaves::{export, import, path, reset, show, status};
pub use self::report::{Configured, DeployPath, DeployStatus, Exported, Imported, Reset, Shown, StatusRow};

/// Why a `deploy.*` leaf could not do its work. Every variant leaves the deploy file as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeployFileError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The deploy file (or a file to import) is not a valid deploy file.
    #[error("{} is not a valid deploy file: {problem}; {fix}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where (`deploy.web.env[1]`).
        problem: String,
        /// How to fix it.
        fix: &'static str,
    },
    /// A leftover `deploy.yml` of the older layout sits beside the deploy file.
    #[error(
        "{} is the older per-host deploy file, which charly no longer reads: move its `images:` \
         entries into {} under `deploy:` (singular keys: port, env, volume, secret) and delete it",
        legacy.display(),
        path.display()
    )]
    Legacy {
        /// The leftover file.
        legacy: PathBuf,
        /// The deploy file.
        path: PathBuf,
    },
    /// A deployment name names no entry.
    #[error("no deploy entry {key:?} in {} (entries: {}){hint}", path.display(), list_or_none(known))]
    NoEntry {
        /// The deployment name (`web`, `web/2`).
        key: String,
        /// The file looked in.
        path: PathBuf,
        /// The entries it has.
        known: Vec<String>,
        /// What to do instead (may be empty).
        hint: String,
    },
    /// Neither `$HOME` (nor a home in `/etc/passwd`) nor an absolute `$XDG_CONFIG_HOME`: the
    /// deploy file has no place.
    #[error(
        "cannot locate the deploy file: $HOME is unset and /etc/passwd has no home for this user, and \
         $XDG_CONFIG_HOME is not an absolute directory; set HOME (the file is then \
         $HOME/.config/charly/charly.yml) or XDG_CONFIG_HOME (then $XDG_CONFIG_HOME/charly/charly.yml)"
    )]
    NoHome,
    /// A box or instance name that no container could have.
    #[error(transparent)]
    Name(#[from] crate::engine::EngineError),
    /// The lossless editor refused an edit (a value in the way that is not a map).
    #[error(transparent)]
    Edit(crate::project::ProjectError),
    /// A file could not be written or removed; the old file is unchanged.
    #[error("cannot {action} {} (nothing was changed): {source}", path.display())]
    Write {
        /// `write`, `remove`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The call was cancelled before the write; nothing was changed.
    #[error("cancelled; nothing was changed")]
    Cancelled,
}

impl From<crate::project::ProjectError> for DeployFileError {
    fn from(e: crate::project::ProjectError) -> Self {
        match e {
            crate::project::ProjectError::Cancelled { .. } => DeployFileError::Cancelled,
            other => DeployFileError::Edit(other),
        }
    }
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() { "none".into() } else { items.join(", ") }
}

/// The deployment name of `box_name` and `instance`: `web`, or `web/2` — checked as the
/// container `charly-<box>[-<instance>]` it runs as.
///
/// # Errors
///
/// [`DeployFileError::Name`] naming the argument podman would refuse.
pub fn key(box_name: &str, instance: Option<&str>) -> Result<String, DeployFileError> {
    Ok(crate::engine::names::Target::new(box_name, instance)?.key())
}

/// The container of deployment name `key` (`web/2` → `charly-web-2`), checked.
///
/// # Errors
///
/// [`DeployFileError::Name`] when a part is not a name podman accepts.
pub fn container_of(key: &str) -> Result<String, DeployFileError> {
    let (box_name, instance) = match key.split_once('/') {
        Some((b, i)) => (b, Some(i)),
        None => (key, None),
    };
    Ok(crate::engine::names::Target::new(box_name, instance)?.container)
}
