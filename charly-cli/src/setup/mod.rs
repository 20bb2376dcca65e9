//! `config setup`, `config status`, `config remove`: how this host runs a box, provisioned.
//!
//! `config setup` merges the arguments into the box's deploy entry (`deploy:` in the deploy
//! file, [`crate::deployfile`]), then, before anything is written, checks everything that can
//! fail: bind directories exist and are absolute, every published host port is free (a port in
//! use is an error naming the process or container holding it and the `-p` remap), every
//! declared secret has a value in the credential store ([`crate::credentials`], service
//! `charly/secret`). Only then does it create the named volumes and podman secrets
//! (value on podman's stdin), remove the podman secrets the entry no longer declares, write
//! the quadlet units (run mode `quadlet`) and the entry. A failure after the first podman
//! change removes what this call created: no entry, no secrets, no volumes left behind.
//!
//! | module | what |
//! |---|---|
//! | [`owner`] | who holds a host port (now [`crate::engine::owner`], re-exported) |
//! | [`podman`] | the deployment's podman secrets and volumes, labelled with its name |
//! | [`quadlet`] | `.container` and `.volume` units |
//! | [`encrypted`], [`mounts`] | gocryptfs volumes: `config mount`, `unmount`, `passwd` |
//! | [`report`] | the reports |
//! | `run`, `provision`, `inspect` | `config setup` (checks, then its changes); `config status` and `config remove` |

pub mod encrypted;
mod inspect;
mod missing;
pub mod mounts;
pub use crate::engine::owner;
pub mod podman;
mod provision;
pub mod quadlet;
pub mod report;
mod run;

pub use self::inspect::{remove, status};
pub use self::report::{
    ConfigStatus, CryptVolume, Crypted, Presence, ProvisionedSecret, ProvisionedVolume, SetUp, Unconfigured,
};
pub use self::run::{Password, Request, RunMode, setup};

/// The credential service of container secrets.
pub const SECRET_SERVICE: &str = "charly/secret";

/// Why `config setup`/`status`/`remove` could not do its work. Every variant says what was left
/// as it was.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// The deploy file could not be read or written.
    #[error(transparent)]
    Entry(#[from] crate::deployfile::DeployFileError),
    /// podman failed.
    #[error("box {key}: {source}; what this call had created was removed again")]
    Engine {
        /// The deployment.
        key: String,
        /// podman's failure.
        source: Box<crate::engine::EngineError>,
    },
    /// An argument (or a saved entry value) is not usable.
    #[error("box {key}: {argument}: {problem}; nothing was changed")]
    Argument {
        /// The deployment.
        key: String,
        /// The argument as spelled (`--bind data=/srv/x`), or the entry field.
        argument: String,
        /// What is wrong and the fix.
        problem: String,
    },
    /// Declared secrets have no value in the credential store.
    #[error(
        "box {key}: no value for {} in the credential store ({backend}); store it with {how}, and run the \
         same `charly config setup` again; nothing was changed",
        missing.join(", ")
    )]
    MissingSecrets {
        /// The deployment.
        key: String,
        /// `NAME (charly/secret/KEY)` per missing secret.
        missing: Vec<String>,
        /// The active backend, with its file.
        backend: String,
        /// The commands (or the config line) that store each value in that backend.
        how: String,
    },
    /// A host port is taken.
    #[error(
        "box {key}: host port {port} ({address}, for container port {container_port}) is in use by {owner}; {fix}, or remap it: `-p {remap}`; nothing was changed"
    )]
    PortInUse {
        /// The deployment.
        key: String,
        /// The address.
        address: String,
        /// The host port.
        port: u16,
        /// The container port.
        container_port: u16,
        /// The `-p` value that remaps it to a port free now (`8081:80`, `5354:53/udp`).
        remap: String,
        /// Who holds it.
        owner: String,
        /// How to free it.
        fix: String,
    },
    /// The container runs: `config remove` would pull secrets from under it.
    #[error(
        "box {key}: container {container} is running; stop it first (`charly stop {args}`); nothing was changed"
    )]
    Running {
        /// The deployment.
        key: String,
        /// The container.
        container: String,
        /// `web -i 2`.
        args: String,
    },
    /// A unit file could not be written or removed.
    #[error("box {key}: cannot write {path}: {source}; what this call had created was removed again")]
    Unit {
        /// The deployment.
        key: String,
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// `config remove --purge` could not take away one thing (an encrypted volume's mount or
    /// directory); the rest is gone.
    #[error("box {key}: {what}: {problem}; everything else of the deployment was removed")]
    Left {
        /// The deployment.
        key: String,
        /// What is left (`encrypted directory /home/u/.local/share/charly/encrypted/...`).
        what: String,
        /// Why, and what to do.
        problem: String,
    },
    /// The call was cancelled before a change.
    #[error("cancelled; nothing was changed")]
    Cancelled,
}
