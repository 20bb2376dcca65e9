//! `config status` and `config remove`: a deployment's entry beside what exists for it, and
//! taking it all away (only this deployment's: exact names and its labels).

use std::path::Path;

use super::SetupError;
use super::podman;
use super::report::{ConfigStatus, Presence, Unconfigured};
use crate::deployfile::{self, DeployFile};
use crate::engine::{Engine, EngineError, Target};
use crate::project::Cancel;

/// `config status`: the entry beside the podman secrets, volumes, unit and container.
///
/// # Errors
///
/// The deploy file's load errors; podman's failures.
pub async fn status(
    engine: &Engine,
    path: &Path,
    units_dir: &Path,
    target: &Target,
) -> Result<ConfigStatus, SetupError> {
    let key = target.key();
    let engine_err = |source: EngineError| SetupError::Engine { key: key.clone(), source: Box::new(source) };
    let file = DeployFile::load(path)?;
    let node = file.schema().deploy.as_ref().and_then(|d| d.get(&key));
    let configured = node.is_some();
    let node = node.and_then(|n| n.as_ref());
    let ports = node
        .and_then(|n| n.port.as_ref())
        .map(|ps| {
            ps.iter()
                .map(|p| yaml_serde::to_string(p).unwrap_or_default().trim().trim_matches('"').to_owned())
                .collect()
        })
        .unwrap_or_default();
    let mut secrets = Vec::new();
    for s in deployfile::saved_secrets(node) {
        let name = target.volume(&s.name);
        let present = podman::secret_exists(engine, &name).await.map_err(engine_err)?;
        secrets.push(Presence { name: s.name, backing: name, present });
    }
    let mut volumes = Vec::new();
    for v in deployfile::saved_volumes(node) {
        let (backing, present) = if v.kind == "volume" {
            let name = target.volume(&v.name);
            let present = podman::volume_exists(engine, &name).await.map_err(engine_err)?;
            (name, present)
        } else if v.kind == "encrypted" {
            let dir = super::encrypted::host_dir(target, &v.name, v.host.as_deref());
            let present = super::encrypted::initialized(&dir)
                && super::encrypted::owner(&dir, target, &v.name) == super::encrypted::DirOwner::Ours;
            (dir.display().to_string(), present)
        } else {
            let host = v.host.clone().unwrap_or_default();
            let present = Path::new(&host).is_dir();
            (host, present)
        };
        volumes.push(Presence { name: v.name, backing, present });
    }
    let unit = units_dir.join(format!("{}.container", target.container));
    // A container of that name that is another box's or instance's is not this one's state.
    let state = match engine.claimed(target).await {
        Ok(c) => c.map(|c| c.state),
        Err(EngineError::Claimed { owner, .. }) => {
            Some(format!("none (container {} is {owner}'s)", target.container))
        }
        Err(e) => return Err(engine_err(e)),
    };
    let complete = configured && secrets.iter().chain(&volumes).all(|p| p.present);
    Ok(ConfigStatus {
        key: key.clone(),
        container: target.container.clone(),
        configured,
        ports,
        secrets,
        volumes,
        unit: unit.exists().then(|| unit.display().to_string()),
        state,
        complete,
    })
}

/// `config remove`: the deploy entry, its podman secrets and unit files; its volumes and its
/// encrypted volumes' host directories with `purge`. Only this deployment's (exact names and its labels): other instances stay.
///
/// # Errors
///
/// [`SetupError::Running`] when its container runs; the deploy file's errors; podman's.
pub async fn remove(
    engine: &Engine,
    path: &Path,
    units_dir: &Path,
    target: &Target,
    purge: bool,
    cancel: &Cancel,
) -> Result<Unconfigured, SetupError> {
    let key = target.key();
    let engine_err = |source: EngineError| SetupError::Engine { key: key.clone(), source: Box::new(source) };
    if let Some(c) = engine.claimed(target).await.map_err(engine_err)?
        && c.is_running()
    {
        let args = format!("{}{}", target.box_name, target.instance_flag());
        return Err(SetupError::Running { key, container: target.container.clone(), args });
    }
    let file = DeployFile::load(path)?;
    let node = file.schema().deploy.as_ref().and_then(|d| d.get(&key)).and_then(|n| n.as_ref());
    // Only this deployment's directories (their owner files): a colliding name's stays.
    let encrypted: Vec<std::path::PathBuf> = deployfile::saved_volumes(node)
        .iter()
        .filter(|v| v.kind == "encrypted")
        .map(|v| (super::encrypted::host_dir(target, &v.name, v.host.as_deref()), &v.name))
        .filter(|(d, name)| {
            d.exists() && super::encrypted::owner(d, target, name) == super::encrypted::DirOwner::Ours
        })
        .map(|(d, _)| d)
        .collect();
    cancel.check(path).map_err(|_| SetupError::Cancelled)?;
    let reset = deployfile::reset(path, Some(&key), cancel)?;
    let mut secrets_removed = Vec::new();
    for name in podman::secrets_of(engine, target).await.map_err(engine_err)? {
        podman::remove_secret(engine, &name).await.map_err(engine_err)?;
        secrets_removed.push(name);
    }
    // Every unit of this deployment: the `.container` and the `.volume` units of its entry's
    // and its image's volumes (only its own: a unit of the same name may be a colliding one's).
    let mut units_removed = Vec::new();
    for f in super::quadlet::units_of(units_dir, target) {
        std::fs::remove_file(&f).map_err(|source| SetupError::Unit {
            key: key.clone(),
            path: f.display().to_string(),
            source,
        })?;
        units_removed.push(f.display().to_string());
    }
    // By labels only: a volume of the entry's name that another box or instance holds
    // (`charly-a-b-c-data` is a name of both halves of a colliding pair) is not this one's.
    let volumes = podman::volumes_of(engine, target).await.map_err(engine_err)?;
    let (mut volumes_removed, mut volumes_kept) = (Vec::new(), Vec::new());
    for v in volumes {
        if purge {
            engine.remove_volume(&v).await.map_err(engine_err)?;
            volumes_removed.push(v);
        } else {
            volumes_kept.push(v);
        }
    }
    // An encrypted volume's directory (its cipher tree and mount point) goes with --purge,
    // unmounted first; a mount that will not go is an error naming it (the rest is removed).
    let mut encrypted_removed = Vec::new();
    if purge {
        for dir in encrypted {
            let left = |problem: String| SetupError::Left {
                key: key.clone(),
                what: format!("encrypted directory {}", dir.display()),
                problem,
            };
            if super::encrypted::mounted(&dir) {
                super::encrypted::unmount(&dir).map_err(|p| {
                    left(format!("cannot unmount its plain/ ({p}); unmount it (`fusermount3 -u {}/plain`) and remove the directory", dir.display()))
                })?;
            }
            std::fs::remove_dir_all(&dir)
                .map_err(|e| left(format!("cannot remove it ({e}); remove it by hand")))?;
            encrypted_removed.push(dir.display().to_string());
        }
    }
    Ok(Unconfigured {
        encrypted_removed,
        key,
        entry_removed: reset.changed,
        secrets_removed,
        units_removed,
        volumes_removed,
        volumes_kept,
    })
}
