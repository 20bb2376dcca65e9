//! `config mount`, `config unmount`, `config passwd`: a deployment's encrypted volumes.

use std::path::Path;

use super::SetupError;
use super::encrypted::{self, ENC_SERVICE, PASSPHRASE_ENV};
use super::report::{CryptVolume, Crypted};
use crate::credentials::Store;
use crate::deployfile::{self, DeployFile};
use crate::engine::Target;

/// The encrypted volumes of `target`'s entry (only `volume`, when given): `(name, dir)`.
fn volumes(
    path: &Path,
    target: &Target,
    only: Option<&str>,
) -> Result<Vec<(String, std::path::PathBuf)>, SetupError> {
    let key = target.key();
    let file = DeployFile::load(path)?;
    let node = file.schema().deploy.as_ref().and_then(|d| d.get(&key)).and_then(|n| n.as_ref());
    let all: Vec<_> = deployfile::saved_volumes(node)
        .into_iter()
        .filter(|v| v.kind == "encrypted")
        .map(|v| (v.name.clone(), encrypted::host_dir(target, &v.name, v.host.as_deref())))
        .collect();
    if all.is_empty() {
        let has_entry = file.schema().deploy.as_ref().is_some_and(|d| d.contains_key(&key));
        return Err(SetupError::Argument {
            argument: "encrypted volumes".into(),
            problem: format!(
                "{}; add one with `charly config setup {} -v NAME:/path --encrypt NAME`",
                if has_entry { "its deploy entry has none" } else { "it has no deploy entry" },
                crate::engine::start_args(target)
            ),
            key,
        });
    }
    // A directory of this name that another deployment owns is never touched for this one.
    for (name, dir) in &all {
        if let encrypted::DirOwner::Other(other) = encrypted::owner(dir, target, name) {
            return Err(failed(target, name, encrypted::not_ours(dir, &other)));
        }
    }
    match only {
        None => Ok(all),
        Some(name) => {
            let names: Vec<String> = all.iter().map(|(n, _)| n.clone()).collect();
            let picked: Vec<_> = all.into_iter().filter(|(n, _)| n == name).collect();
            if picked.is_empty() {
                return Err(SetupError::Argument {
                    key,
                    argument: format!("--volume {name}"),
                    problem: format!(
                        "not an encrypted volume of the entry (encrypted: {})",
                        names.join(", ")
                    ),
                });
            }
            Ok(picked)
        }
    }
}

/// The passphrase of `target`'s deployment: `$GOCRYPTFS_PASSWORD`, else
/// `charly/enc/<box>[/<instance>]` ([`encrypted::passphrase_key`]).
pub(super) fn passphrase(store: &Store, target: &Target) -> Result<String, SetupError> {
    let key = encrypted::passphrase_key(target);
    store.resolve(Some(PASSPHRASE_ENV), ENC_SERVICE, &key).value.ok_or_else(|| SetupError::Argument {
        key: target.key(),
        argument: "encrypted volumes".into(),
        problem: format!(
            "no passphrase: store one with `charly secrets set {ENC_SERVICE} {key} <PASSPHRASE>` (or set ${PASSPHRASE_ENV})"
        ),
    })
}

fn row(name: &str, dir: &Path, changed: bool) -> CryptVolume {
    CryptVolume {
        name: name.to_owned(),
        dir: dir.display().to_string(),
        initialized: encrypted::initialized(dir),
        mounted: encrypted::mounted(dir),
        changed,
    }
}

fn failed(target: &Target, name: &str, problem: String) -> SetupError {
    SetupError::Argument { key: target.key(), argument: format!("volume {name}"), problem }
}

/// `config mount`: every (or one) encrypted volume mounted; mounted ones are left alone
/// without asking for the passphrase.
///
/// # Errors
///
/// No encrypted volume, no passphrase, an uninitialised volume, gocryptfs's failure.
pub fn mount(store: &Store, path: &Path, target: &Target, only: Option<&str>) -> Result<Crypted, SetupError> {
    let list = volumes(path, target, only)?;
    let mut rows = Vec::new();
    let mut secret = None;
    for (name, dir) in &list {
        if encrypted::mounted(dir) {
            rows.push(row(name, dir, false));
            continue;
        }
        if !encrypted::initialized(dir) {
            return Err(failed(
                target,
                name,
                format!(
                    "{} is not initialised; run `charly config setup {}` first",
                    dir.display(),
                    crate::engine::start_args(target)
                ),
            ));
        }
        if secret.is_none() {
            secret = Some(passphrase(store, target)?);
        }
        encrypted::mount(dir, secret.as_deref().unwrap_or_default())
            .map_err(|e| failed(target, name, format!("gocryptfs could not mount it: {e}")))?;
        rows.push(row(name, dir, true));
    }
    Ok(Crypted { key: target.key(), action: "mount".into(), volumes: rows, stored: None })
}

/// `config unmount`.
///
/// # Errors
///
/// No encrypted volume, fusermount3's failure (busy).
pub fn unmount(path: &Path, target: &Target, only: Option<&str>) -> Result<Crypted, SetupError> {
    let mut rows = Vec::new();
    for (name, dir) in volumes(path, target, only)? {
        let was = encrypted::mounted(&dir);
        if was {
            encrypted::unmount(&dir).map_err(|e| {
                failed(target, &name, format!("cannot unmount it: {e}; stop the container using it first"))
            })?;
        }
        rows.push(row(&name, &dir, was));
    }
    Ok(Crypted { key: target.key(), action: "unmount".into(), volumes: rows, stored: None })
}

/// `config passwd`: every initialised encrypted volume of this deployment re-keyed from its
/// current passphrase to `new`, then `new` stored as its credential
/// `charly/enc/<box>[/<instance>]` (the reference left it stale); other instances keep their
/// own passphrases. Refused while any is mounted.
///
/// # Errors
///
/// A mounted volume, no current passphrase, gocryptfs's failure, the store's.
pub fn passwd(store: &mut Store, path: &Path, target: &Target, new: &str) -> Result<Crypted, SetupError> {
    if new.is_empty() {
        return Err(SetupError::Argument {
            key: target.key(),
            argument: "--new-passphrase".into(),
            problem: "empty; give a passphrase".into(),
        });
    }
    let list = volumes(path, target, None)?;
    if let Some((name, _)) = list.iter().find(|(_, d)| encrypted::mounted(d)) {
        return Err(failed(
            target,
            name,
            format!(
                "it is mounted; `charly config unmount {}` first; nothing was changed",
                crate::engine::start_args(target)
            ),
        ));
    }
    let old = passphrase(store, target)?;
    let mut rows = Vec::new();
    let mut done: Vec<&Path> = Vec::new();
    for (name, dir) in &list {
        if !encrypted::initialized(dir) {
            rows.push(row(name, dir, false));
            continue;
        }
        if let Err(e) = encrypted::passwd(dir, &old, new) {
            // Put the ones already changed back: one passphrase for all.
            for d in &done {
                let _ = encrypted::passwd(d, new, &old);
            }
            return Err(failed(target, name, format!("gocryptfs refused: {e}; nothing was changed")));
        }
        done.push(dir);
        rows.push(row(name, dir, true));
    }
    let key = encrypted::passphrase_key(target);
    let source = store.set(ENC_SERVICE, &key, new).map_err(|e| {
        for d in &done {
            let _ = encrypted::passwd(d, new, &old);
        }
        failed(
            target,
            "passphrase",
            format!("the credential store refused the new passphrase ({e}); the volumes keep the old one"),
        )
    })?;
    Ok(Crypted {
        key: target.key(),
        action: "passwd".into(),
        volumes: rows,
        stored: Some(format!("{ENC_SERVICE}/{key} ({source})")),
    })
}
