//! `config setup`'s changes, once everything that can fail has been checked: named volumes,
//! encrypted directories, podman secrets, quadlet units, the deploy entry, the secrets the
//! entry no longer declares. [`Created`] is what was made, removed again on a failure.

use std::path::{Path, PathBuf};

use super::SetupError;
use super::podman;
use super::quadlet::{self, UnitSpec};
use super::report::{ProvisionedSecret, ProvisionedVolume, SetUp};
use super::run::{Request, RunMode};
use crate::deploy::lifecycle::StartRequest;
use crate::deploy::plan::{EntryValues, When, run_spec};
use crate::deployfile::{self, EntryUpdate, SecretEntry, VolumeEntry};
use crate::engine::{Engine, EngineError, PortMap};
use crate::project::Cancel;

/// What a setup created, to remove again when a later step fails.
#[derive(Default)]
pub(super) struct Created {
    volumes: Vec<String>,
    secrets: Vec<String>,
    units: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

impl Created {
    pub(super) async fn undo(&self, engine: &Engine) {
        for s in &self.secrets {
            let _ = podman::remove_secret(engine, s).await;
        }
        for v in &self.volumes {
            let _ = engine.remove_volume(v).await;
        }
        for u in &self.units {
            let _ = std::fs::remove_file(u);
        }
        for d in &self.dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn provision(
    engine: &Engine,
    path: &Path,
    units_dir: &Path,
    req: &Request,
    secrets: &[SecretEntry],
    volumes: &[VolumeEntry],
    values: &[(&SecretEntry, String, String, String)],
    ports: &[PortMap],
    saved: Option<&deployfile::schema::Node>,
    enc_passphrase: Option<&str>,
    created: &mut Created,
    cancel: &Cancel,
) -> Result<SetUp, SetupError> {
    let target = &req.target;
    let key = target.key();
    let engine_err = |source: EngineError| SetupError::Engine { key: key.clone(), source: Box::new(source) };
    let mut vol_report = Vec::new();
    for v in volumes {
        let cpath = v.path.clone().unwrap_or_default();
        match v.kind.as_str() {
            "volume" => {
                let name = target.volume(&v.name);
                let made = podman::ensure_volume(engine, target, &name).await.map_err(engine_err)?;
                if made {
                    created.volumes.push(name.clone());
                }
                vol_report.push(ProvisionedVolume {
                    name: v.name.clone(),
                    kind: v.kind.clone(),
                    podman: Some(name),
                    host: None,
                    path: cpath,
                    created: made,
                });
            }
            "encrypted" => {
                let dir = super::encrypted::host_dir(target, &v.name, v.host.as_deref());
                let failed = |problem: String| SetupError::Argument {
                    key: key.clone(),
                    argument: format!("--encrypt {}", v.name),
                    problem: format!("gocryptfs could not initialise {}: {problem}", dir.display()),
                };
                let made =
                    super::encrypted::init(&dir, enc_passphrase.unwrap_or_default()).map_err(failed)?;
                if made {
                    created.dirs.push(dir.clone());
                }
                super::encrypted::mark(&dir, target, &v.name).map_err(|e| failed(e.to_string()))?;
                vol_report.push(ProvisionedVolume {
                    name: v.name.clone(),
                    kind: v.kind.clone(),
                    podman: None,
                    host: Some(dir.join("plain").display().to_string()),
                    path: cpath,
                    created: made,
                })
            }
            kind => vol_report.push(ProvisionedVolume {
                name: v.name.clone(),
                kind: kind.to_owned(),
                podman: None,
                host: v.host.clone(),
                path: cpath,
                created: false,
            }),
        }
    }
    let mut sec_report = Vec::new();
    // podman is asked only when secrets are (or were) declared: an entry of plain fields is
    // written on a host without podman too.
    let had_secrets = !deployfile::saved_secrets(saved).is_empty();
    let before = if values.is_empty() {
        Vec::new()
    } else {
        podman::secrets_of(engine, target).await.map_err(engine_err)?
    };
    for (s, credential, source, value) in values {
        let name = target.volume(&s.name);
        podman::put_secret(engine, target, &name, value).await.map_err(engine_err)?;
        if !before.contains(&name) {
            created.secrets.push(name.clone());
        }
        sec_report.push(ProvisionedSecret {
            name: s.name.clone(),
            podman: name,
            credential: credential.clone(),
            source: source.clone(),
        });
    }

    // Quadlet units, written before the entry (and removed again if it cannot be).
    let mut units = Vec::new();
    let mut units_removed = Vec::new();
    let mut stale: Vec<PathBuf> = Vec::new();
    if req.run_mode == RunMode::Quadlet {
        let unit_err =
            |p: &Path, source| SetupError::Unit { key: key.clone(), path: p.display().to_string(), source };
        std::fs::create_dir_all(units_dir).map_err(|e| unit_err(units_dir, e))?;
        let saved_env = saved.and_then(|n| n.env.clone()).unwrap_or_default();
        let env = if req.update.env.is_empty() && !req.update.clean_env {
            saved_env
        } else if req.update.clean_env {
            req.update.env.clone()
        } else {
            let mut out = saved_env;
            for line in &req.update.env {
                let k = line.split_once('=').map_or(line.as_str(), |(k, _)| k);
                match out.iter().position(|s| s.split_once('=').map_or(s.as_str(), |(x, _)| x) == k) {
                    Some(i) => out[i] = line.clone(),
                    None => out.push(line.clone()),
                }
            }
            out
        };
        // What a direct `start` would run (the same merge of image labels and entry), with
        // the entry as this call writes it.
        let entry = EntryValues {
            ports: ports.iter().map(PortMap::publish).collect(),
            volumes: volumes.to_vec(),
            secrets: secrets.to_vec(),
            env,
            env_file: req.update.env_file.clone().or_else(|| saved.and_then(|n| n.env_file.clone())),
            network: req.update.network.clone().or_else(|| saved.and_then(|n| n.network.clone())),
            run_mode: Some("quadlet".into()),
        };
        let run = run_spec(
            target,
            &req.image,
            &[],
            &req.labels,
            &entry,
            &StartRequest {
                box_name: &target.box_name,
                instance: target.instance.as_deref(),
                ..StartRequest::default()
            },
            Vec::new(),
            When::Unit,
        )
        .map_err(|e| SetupError::Argument {
            key: key.clone(),
            argument: "the unit".into(),
            problem: e.to_string(),
        })?;
        let spec = UnitSpec {
            run,
            post_start: req.labels.hooks.post_enable.clone(),
            pre_start: vol_report.iter().any(|v| v.kind == "encrypted").then(|| {
                let exe =
                    std::env::current_exe().map_or_else(|_| "charly".into(), |p| p.display().to_string());
                let mut words = vec![exe, "config".into(), "mount".into(), target.box_name.clone()];
                if let Some(i) = &target.instance {
                    words.extend(["-i".into(), i.clone()]);
                }
                words
            }),
        };
        let mut files = vec![(
            units_dir.join(format!("{}.container", target.container)),
            quadlet::container_unit(target, &spec).map_err(|problem| SetupError::Argument {
                key: key.clone(),
                argument: "the unit".into(),
                problem,
            })?,
        )];
        for v in &spec.run.volumes {
            files.push((units_dir.join(format!("{}.volume", v.name)), quadlet::volume_unit(target, &v.name)));
        }
        for (file, text) in &files {
            let existed = file.exists();
            crate::hostfile::write_atomic(file, text.as_bytes(), 0o600).map_err(|e| unit_err(file, e))?;
            if !existed {
                created.units.push(file.clone());
            }
            units.push(file.display().to_string());
        }
        // Units of this deployment it no longer has (a volume no longer mounted as a named
        // volume), removed once the entry is written.
        stale.extend(
            quadlet::units_of(units_dir, target).into_iter().filter(|f| !files.iter().any(|(w, _)| w == f)),
        );
    } else {
        // Run mode direct: `charly start` runs it; the units of an earlier quadlet setup go
        // once the entry is written.
        stale.extend(quadlet::units_of(units_dir, target));
    }

    let saved_secrets = deployfile::saved_secrets(saved);
    let saved_volumes = deployfile::saved_volumes(saved);
    let update = EntryUpdate {
        secrets: (!secrets.is_empty() || !saved_secrets.is_empty()).then(|| secrets.to_vec()),
        volumes: (!volumes.is_empty() || !saved_volumes.is_empty()).then(|| volumes.to_vec()),
        run_mode: Some(req.run_mode.word().into()),
        ..req.update.clone()
    };
    let written = deployfile::write_entry(path, &key, &update, cancel)?;
    for file in stale {
        std::fs::remove_file(&file).map_err(|source| SetupError::Unit {
            key: key.clone(),
            path: file.display().to_string(),
            source,
        })?;
        units_removed.push(file.display().to_string());
    }

    // Secrets of this deployment it no longer declares.
    let mut secrets_removed = Vec::new();
    let now = if values.is_empty() && !had_secrets {
        Vec::new()
    } else {
        podman::secrets_of(engine, target).await.map_err(engine_err)?
    };
    for name in now {
        if !sec_report.iter().any(|s| s.podman == name) {
            podman::remove_secret(engine, &name).await.map_err(engine_err)?;
            secrets_removed.push(name);
        }
    }
    Ok(SetUp {
        path: written.path,
        key,
        container: target.container.clone(),
        changed: written.changed,
        entry: written.entry,
        run_mode: req.run_mode.word().into(),
        ports: ports.to_vec(),
        secrets: sec_report,
        secrets_removed,
        volumes: vol_report,
        units,
        units_removed,
        passphrase_stored: None,
        own_ports: Vec::new(),
    })
}
