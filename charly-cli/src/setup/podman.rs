//! The podman secrets and volumes of a deployment, labelled with its box and instance
//! ([`BOX_LABEL`], [`INSTANCE_LABEL`]) and its key ([`DEPLOY_LABEL`]), so that re-setup and
//! `config remove` find exactly this deployment's: never by name (`charly-a-b-c-TOKEN` is a
//! name of box `a` instance `b-c` and of box `a-b` instance `c` alike), never another
//! instance's.

use crate::engine::claim::{Owner, claimed};
use crate::engine::{BOX_LABEL, Engine, EngineError, INSTANCE_LABEL, Target};

pub use crate::engine::DEPLOY_LABEL;

/// The podman secrets labelled as `target`'s.
///
/// # Errors
///
/// podman's failures.
pub async fn secrets_of(engine: &Engine, target: &Target) -> Result<Vec<String>, EngineError> {
    let names = engine.query(&["secret", "ls", "--format", "{{.Name}}"]).await?;
    // podman 4.3's `secret ls` has no label filter: one inspect per secret of charly's
    // prefix; a secret removed meanwhile (by another call) is skipped.
    let mut found = Vec::new();
    for name in names.lines().map(str::trim).filter(|n| n.starts_with("charly-")) {
        if let Some(labels) = engine.secret_labels(name).await?
            && Owner::of(&labels, target, false) == Owner::Ours
        {
            found.push(name.to_owned());
        }
    }
    found.sort();
    Ok(found)
}

/// Whether a podman secret `name` exists.
///
/// # Errors
///
/// podman's failures.
pub async fn secret_exists(engine: &Engine, name: &str) -> Result<bool, EngineError> {
    let names = engine.query(&["secret", "ls", "--format", "{{.Name}}"]).await?;
    Ok(names.lines().any(|n| n.trim() == name))
}

/// Creates podman secret `name` labelled as `target`'s, the value on podman's stdin (never on
/// a command line); an existing secret of that name is replaced when it is `target`'s own.
///
/// # Errors
///
/// [`EngineError::Claimed`] when a secret of that name is another deployment's (or not
/// charly's): it is left as it is; podman's failures.
pub async fn put_secret(
    engine: &Engine,
    target: &Target,
    name: &str,
    value: &str,
) -> Result<(), EngineError> {
    if let Some(labels) = engine.secret_labels(name).await? {
        match Owner::of(&labels, target, false) {
            Owner::Ours => engine.change(&["secret", "rm", name]).await.map(drop)?,
            owner => return Err(claimed("secret", name, target, &owner)),
        }
    }
    let mut args: Vec<String> = ["secret", "create"].map(str::to_owned).to_vec();
    for label in labels(target) {
        args.extend(["--label".into(), label]);
    }
    args.extend([name.to_owned(), "-".into()]);
    engine.change_with_stdin(&args, Some(value.as_bytes())).await?;
    Ok(())
}

/// The labels of what a deployment makes: box, instance, key.
fn labels(target: &Target) -> Vec<String> {
    let mut out = vec![format!("{BOX_LABEL}={}", target.box_name)];
    if let Some(i) = &target.instance {
        out.push(format!("{INSTANCE_LABEL}={i}"));
    }
    out.push(format!("{DEPLOY_LABEL}={}", target.key()));
    out
}

/// `podman secret rm name`.
///
/// # Errors
///
/// podman's failures.
pub async fn remove_secret(engine: &Engine, name: &str) -> Result<(), EngineError> {
    engine.change(&["secret", "rm", name]).await.map(drop)
}

/// Whether podman volume `name` exists.
///
/// # Errors
///
/// podman's failures.
pub async fn volume_exists(engine: &Engine, name: &str) -> Result<bool, EngineError> {
    Ok(engine.output(&["volume", "exists", name], None, false).await?.status == 0)
}

/// Creates named volume `name` for `target` (labelled with its box, instance, container and
/// key), unless it exists as `target`'s; whether it was created.
///
/// # Errors
///
/// [`EngineError::Claimed`] for a volume of that name that is not `target`'s; podman's failures.
pub async fn ensure_volume(engine: &Engine, target: &Target, name: &str) -> Result<bool, EngineError> {
    engine.ensure_volume_labelled(target, name, &[format!("{DEPLOY_LABEL}={}", target.key())]).await
}

/// The volumes labelled as `target`'s (by `config setup` or by `start`).
///
/// # Errors
///
/// podman's failures.
pub async fn volumes_of(engine: &Engine, target: &Target) -> Result<Vec<String>, EngineError> {
    engine.volumes_of(target).await
}
