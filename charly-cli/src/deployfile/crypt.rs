//! Where a deployment's encrypted volumes live on the host, whose a directory is, and whether
//! one is mounted: what `config.*` (which makes and mounts them, [`crate::setup::encrypted`])
//! and a direct `start` (which bind-mounts the plain directory) both need.
//!
//! Each deployment (box and instance) has its own directory per volume,
//! `~/.local/share/charly/encrypted/charly-<box>[-<instance>]-<volume>`, named as its podman
//! volume would be. Those names collide as container names do (`charly-a-b-c-data` is box `a`
//! instance `b-c`'s and box `a-b` instance `c`'s), so the directory holds an owner file,
//! [`OWNER_FILE`], naming the deployment and the volume: a directory another deployment owns
//! is never initialised, mounted or removed for this one.

use std::path::{Path, PathBuf};

use crate::engine::Target;

/// The file in an encrypted volume's directory that names its deployment and volume
/// (`<box>[/<instance>] <volume>`).
pub const OWNER_FILE: &str = "charly.owner";

/// The host directory of encrypted volume `volume` of `target` (`host`: the entry's `host:`).
pub fn host_dir(target: &Target, volume: &str, host: Option<&str>) -> PathBuf {
    match host {
        Some(h) => PathBuf::from(h),
        None => crate::hostfile::home().join(".local/share/charly/encrypted").join(target.volume(volume)),
    }
}

/// Whose an encrypted volume's directory is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirOwner {
    /// This deployment's volume, or a directory without an owner file (not there yet, or
    /// made before charly wrote one).
    Ours,
    /// Another deployment's, or another volume's: its owner file's text.
    Other(String),
}

fn owner_line(target: &Target, volume: &str) -> String {
    format!("{} {volume}", target.key())
}

/// Whose `dir` is, by its owner file.
pub fn owner(dir: &Path, target: &Target, volume: &str) -> DirOwner {
    match std::fs::read_to_string(dir.join(OWNER_FILE)) {
        Ok(text) if text.trim() != owner_line(target, volume) => DirOwner::Other(text.trim().to_owned()),
        _ => DirOwner::Ours,
    }
}

/// Writes `dir`'s owner file for `target`'s `volume`.
///
/// # Errors
///
/// The file cannot be written.
pub fn mark(dir: &Path, target: &Target, volume: &str) -> std::io::Result<()> {
    std::fs::write(dir.join(OWNER_FILE), format!("{}\n", owner_line(target, volume)))
}

/// The problem of a directory another deployment owns, for messages.
pub fn not_ours(dir: &Path, other: &str) -> String {
    format!(
        "{} is the encrypted volume of deployment {other:?} (its {OWNER_FILE}; charly-<box>[-<instance>] \
         names collide), not this one's; it is left as it is: use another instance or volume name",
        dir.display()
    )
}

/// Whether `dir/cipher` is an initialised gocryptfs tree.
pub fn initialized(dir: &Path) -> bool {
    dir.join("cipher/gocryptfs.conf").is_file()
}

/// Whether `dir/plain` is a gocryptfs mount (`/proc/mounts`).
pub fn mounted(dir: &Path) -> bool {
    let plain = dir.join("plain");
    let plain = plain.canonicalize().unwrap_or(plain);
    std::fs::read_to_string("/proc/mounts").unwrap_or_default().lines().any(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        f.len() > 2 && f[2] == "fuse.gocryptfs" && Path::new(&f[1].replace("\\040", " ")) == plain
    })
}
