//! The podman secrets and volumes of a deployment, labelled `ai.opencharly.deploy=<key>` so
//! that re-setup and `config remove` find exactly this deployment's (never another instance's).

use crate::engine::{Engine, EngineError, OWNER_LABEL};

/// The label on every podman secret and volume `config setup` makes: the deployment name.
pub const DEPLOY_LABEL: &str = "ai.opencharly.deploy";

/// The podman secrets labelled as `key`'s.
///
/// # Errors
///
/// podman's failures.
pub async fn secrets_of(engine: &Engine, key: &str) -> Result<Vec<String>, EngineError> {
    let names = engine.query(&["secret", "ls", "--format", "{{.Name}}"]).await?;
    let ours: Vec<&str> = names.lines().map(str::trim).filter(|n| n.starts_with("charly-")).collect();
    if ours.is_empty() {
        return Ok(Vec::new());
    }
    // One inspect per secret: a secret removed meanwhile (by another call) is skipped.
    let mut found = Vec::new();
    for name in ours {
        let out = engine.output(&["secret", "inspect", name], None, false).await?;
        if out.status != 0 {
            continue;
        }
        let list: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).unwrap_or_default();
        if list.iter().any(|s| s["Spec"]["Labels"][DEPLOY_LABEL].as_str() == Some(key)) {
            found.push(name.to_owned());
        }
    }
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

/// Creates podman secret `name` labelled as `key`'s, the value on podman's stdin (never on a
/// command line); an existing secret of that name is removed first.
///
/// # Errors
///
/// podman's failures.
pub async fn put_secret(engine: &Engine, key: &str, name: &str, value: &str) -> Result<(), EngineError> {
    if secret_exists(engine, name).await? {
        engine.change(&["secret", "rm", name]).await?;
    }
    let label = format!("{DEPLOY_LABEL}={key}");
    engine
        .change_with_stdin(&["secret", "create", "--label", &label, name, "-"], Some(value.as_bytes()))
        .await?;
    Ok(())
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

/// Creates named volume `name` for `key`'s container `container` (labelled with both), unless
/// it exists; whether it was created.
///
/// # Errors
///
/// podman's failures.
pub async fn ensure_volume(
    engine: &Engine,
    key: &str,
    container: &str,
    name: &str,
) -> Result<bool, EngineError> {
    if volume_exists(engine, name).await? {
        return Ok(false);
    }
    let deploy = format!("{DEPLOY_LABEL}={key}");
    let owner = format!("{OWNER_LABEL}={container}");
    engine.change(&["volume", "create", "--label", &deploy, "--label", &owner, name]).await?;
    Ok(true)
}

/// The volumes labelled as `key`'s (by `config setup`) or as its container's (by `start`).
///
/// # Errors
///
/// podman's failures.
pub async fn volumes_of(engine: &Engine, key: &str, container: &str) -> Result<Vec<String>, EngineError> {
    let mut names = engine.volumes_of(container).await?;
    let filter = format!("label={DEPLOY_LABEL}={key}");
    let text = engine.query(&["volume", "ls", "--format", "{{.Name}}", "--filter", &filter]).await?;
    for name in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    }
    names.sort();
    Ok(names)
}
