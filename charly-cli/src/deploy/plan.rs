//! What a direct `start` runs: the box's image labels, its entry in the deploy file
//! (`~/.config/charly/charly.yml`, written by `config setup`) and the command-line flags,
//! merged into one [`RunSpec`].
//!
//! | field | from, later wins |
//! |---|---|
//! | ports | the entry's `port:` when it has any, else the box's candies' ports; then `--port` (same container port: remapped) |
//! | env | the image's `ai.opencharly.env`, the entry's `env:` (by key), then `--env` (by key); the entry's `env_file:` as `--env-file` |
//! | volumes | the image's `ai.opencharly.volume` as named volumes `charly-<box>[-<instance>]-<name>`; the entry's `volume:` by name (`volume`, `bind` from `host:`, `encrypted` bind-mounts its mounted plain directory); then `--volume`, `--bind` |
//! | secrets | the entry's `secret:`: podman secret `charly-<box>[-<instance>]-<NAME>` as `$NAME` |
//! | network | the entry's `network:` |
//! | security | the image's `ai.opencharly.security` as podman flags |
//! | command | the given command, else supervisord when the image's init is supervisord, else [`KEEP_ALIVE`] |

use std::path::{Path, PathBuf};

use super::args::{self, BIND_ADDRESS};
use super::lifecycle::{KEEP_ALIVE, StartRequest};
use super::{Deploy, DeployError};
use crate::context::Scope;
use crate::deployfile::{self, DeployFile, SecretEntry, VolumeEntry, schema};
use crate::engine::{Bind, Given, PortMap, RunSpec, SecretEnv, Target, Volume};
use crate::project::runtime::{Runtime, SUPERVISORD_CONF};

/// The deploy entry of `target` in the deploy file at `path`, when it has one.
///
/// # Errors
///
/// A deploy file that cannot be read or is not valid (nothing is started).
pub fn entry(path: &Path, target: &Target) -> Result<Option<schema::Node>, DeployError> {
    let file = DeployFile::load(path)?;
    let key = target.key();
    let text = file.text().to_owned();
    // The schema types are not Clone: read the one node again from the checked text.
    let parsed = schema::check(&text).map_err(|problem| deployfile::DeployFileError::Invalid {
        path: path.to_owned(),
        problem,
        fix: "fix the file by hand where it says, or remove only that entry (`charly deploy reset <box>[/<instance>]`)",
    })?;
    Ok(parsed.deploy.and_then(|mut d| d.remove(&key)).flatten())
}

fn key_of(line: &str) -> &str {
    line.split_once('=').map_or(line, |(k, _)| k)
}

/// `later` over `earlier`, by key.
fn merge_env(env: &mut Vec<String>, later: &[String]) {
    for line in later {
        env.retain(|l| key_of(l) != key_of(line));
        env.push(line.clone());
    }
}

/// The values of a deploy entry that a start uses: read from the deploy file
/// ([`EntryValues::of`]), or the ones `config setup` is about to write.
#[derive(Clone, Debug, Default)]
pub struct EntryValues {
    /// `port:` values (`[[IP:]HOST:]CONTAINER[/udp]`); empty: the box's own ports.
    pub ports: Vec<String>,
    /// `volume:` entries.
    pub volumes: Vec<VolumeEntry>,
    /// `secret:` entries.
    pub secrets: Vec<SecretEntry>,
    /// `env:` lines.
    pub env: Vec<String>,
    /// `env_file:` (absolute).
    pub env_file: Option<String>,
    /// `network:`.
    pub network: Option<String>,
    /// `run_mode:` (`direct`, `quadlet`; none: direct).
    pub run_mode: Option<String>,
}

impl EntryValues {
    /// Whether the entry records run mode `quadlet` (systemd runs the container).
    pub fn quadlet(&self) -> bool {
        self.run_mode.as_deref() == Some("quadlet")
    }

    /// The values of a saved entry (none: empty).
    pub fn of(entry: Option<&schema::Node>) -> EntryValues {
        EntryValues {
            ports: deployfile::saved_ports(entry),
            volumes: deployfile::saved_volumes(entry),
            secrets: deployfile::saved_secrets(entry),
            env: entry.and_then(|n| n.env.clone()).unwrap_or_default(),
            env_file: entry.and_then(|n| n.env_file.clone()),
            network: entry.and_then(|n| n.network.clone()),
            run_mode: entry.and_then(|n| n.run_mode.clone()),
        }
    }
}

/// When a [`RunSpec`] is made: by `start`, right before `podman run` (bind directories must
/// exist and encrypted volumes be mounted now), or by `config setup` for a quadlet unit
/// (the unit mounts encrypted volumes itself, before the container starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// `charly start`.
    Now,
    /// A quadlet unit, run later by systemd.
    Unit,
}

/// The [`RunSpec`] of `target`: see the [module](self) docs. `r`'s binds are given resolved
/// (`binds`); `box_ports` are published when the entry has no ports.
///
/// # Errors
///
/// A bad `--port`, `--env` or `--volume`; a saved value that is not usable (an entry port
/// that does not parse, a volume without a container path; with [`When::Now`] a bind
/// directory gone or an encrypted volume not mounted).
#[allow(clippy::too_many_arguments)]
pub fn run_spec(
    target: &Target,
    image: &str,
    box_ports: &[u16],
    labels: &Runtime,
    entry: &EntryValues,
    r: &StartRequest<'_>,
    binds_given: Vec<Bind>,
    when: When,
) -> Result<RunSpec, DeployError> {
    let key = target.key();
    let saved = |field: &str| format!("deploy entry {key}: {field}");
    let mut ports: Vec<PortMap> = Vec::new();
    if entry.ports.is_empty() {
        ports.extend(box_ports.iter().map(|p| PortMap {
            host_ip: BIND_ADDRESS.into(),
            host: *p,
            container: *p,
            protocol: "tcp".into(),
        }));
    }
    for text in &entry.ports {
        let port = args::parse_port(text).map_err(|problem| DeployError::Saved {
            at: saved("port"),
            value: text.clone(),
            problem,
        })?;
        ports.push(port);
    }
    for text in r.ports {
        let given = args::parse_port(text).map_err(|problem| DeployError::Argument {
            argument: "--port",
            value: text.clone(),
            problem,
        })?;
        match ports.iter_mut().find(|p| p.container == given.container && p.protocol == given.protocol) {
            Some(existing) => *existing = given,
            None => ports.push(given),
        }
    }

    for text in r.env {
        args::env_line(text).map_err(|problem| DeployError::Argument {
            argument: "--env",
            value: text.clone(),
            problem,
        })?;
    }
    let mut env = labels.env.clone();
    merge_env(&mut env, &entry.env);
    merge_env(&mut env, r.env);

    // Volumes: the image's named volumes, then the entry's by name.
    let mut volumes: Vec<Volume> = labels
        .volumes
        .iter()
        .map(|v| Volume { name: target.volume(&v.name), path: v.path.clone() })
        .collect();
    let mut binds: Vec<Bind> = Vec::new();
    for v in &entry.volumes {
        let at = saved(&format!("volume {}", v.name));
        let path = v
            .path
            .clone()
            .or_else(|| labels.volumes.iter().find(|l| l.name == v.name).map(|l| l.path.clone()))
            .ok_or_else(|| DeployError::Saved {
                at: at.clone(),
                value: v.name.clone(),
                problem: format!(
                    "no container path: the image declares no such volume; give it one with \
                     `charly config setup {} --volume {}:/path`",
                    crate::engine::start_args(target),
                    v.name
                ),
            })?;
        volumes.retain(|n| n.name != target.volume(&v.name));
        binds.retain(|b| b.path != path);
        match v.kind.as_str() {
            "bind" => {
                let host = v.host.clone().unwrap_or_default();
                if when == When::Now && !Path::new(&host).is_dir() {
                    return Err(DeployError::Saved {
                        at,
                        value: host.clone(),
                        problem: format!(
                            "{}; bind another (`charly config setup {} --bind {}=DIR`)",
                            if Path::new(&host).exists() {
                                "it is a file, not a directory".to_owned()
                            } else {
                                format!("the host directory does not exist; create it (mkdir -p {host})")
                            },
                            crate::engine::start_args(target),
                            v.name
                        ),
                    });
                }
                binds.push(Bind { host, path, read_only: false });
            }
            "encrypted" => {
                let dir = deployfile::crypt::host_dir(target, &v.name, v.host.as_deref());
                if when == When::Now && !deployfile::crypt::mounted(&dir) {
                    return Err(DeployError::Saved {
                        at,
                        value: dir.display().to_string(),
                        problem: format!(
                            "the encrypted volume is not mounted; mount it first (`charly config mount {}`)",
                            crate::engine::start_args(target)
                        ),
                    });
                }
                binds.push(Bind { host: dir.join("plain").display().to_string(), path, read_only: false });
            }
            _ => volumes.push(Volume { name: target.volume(&v.name), path }),
        }
    }
    for text in r.volumes {
        args::volume_spec(text).map_err(|problem| DeployError::Argument {
            argument: "--volume",
            value: text.clone(),
            problem,
        })?;
        let (name, path) = text.split_once(':').expect("checked");
        volumes.retain(|v| v.path != path);
        volumes.push(Volume { name: target.volume(name), path: path.to_owned() });
    }
    for bind in binds_given {
        binds.retain(|b| b.path != bind.path);
        volumes.retain(|v| v.path != bind.path);
        binds.push(bind);
    }
    // One mount per container path: podman refuses a duplicate destination with its whole
    // command line, naming neither the box nor the entry's field.
    let mut mounted: Vec<(&str, String)> = Vec::new();
    for (path, what) in volumes
        .iter()
        .map(|v| (v.path.as_str(), format!("volume {}", v.name)))
        .chain(binds.iter().map(|b| (b.path.as_str(), format!("bind {}", b.host))))
    {
        if let Some((_, first)) = mounted.iter().find(|(p, _)| *p == path) {
            return Err(DeployError::Saved {
                at: format!("box {key}: {what}"),
                value: path.to_owned(),
                problem: format!(
                    "{first} is mounted there too: one volume per container path; give one of them another \
                     path (`charly config setup {} --volume NAME:/other/path`, or the flags of this start)",
                    crate::engine::start_args(target)
                ),
            });
        }
        mounted.push((path, what));
    }
    if when == When::Now {
        if let Some(file) = &entry.env_file {
            let problem = match std::fs::read_to_string(file) {
                Err(e) => Some(format!("cannot read it ({e})")),
                Ok(text) => {
                    let problems = args::env_file_problems(&text);
                    (!problems.is_empty()).then(|| problems.join("; "))
                }
            };
            if let Some(problem) = problem {
                return Err(DeployError::Saved {
                    at: saved("env_file"),
                    value: file.clone(),
                    problem: format!(
                        "{problem}; fix the file, or give another (`charly config setup {} --env-file FILE`)",
                        crate::engine::start_args(target)
                    ),
                });
            }
        }
        for device in &labels.security.devices {
            let host = device.split(':').next().unwrap_or_default();
            if !Path::new(host).exists() {
                return Err(DeployError::Saved {
                    at: format!("box {key}: security.devices"),
                    value: device.clone(),
                    problem: format!(
                        "{host} does not exist on this host; remove it from the candy's `security: {{devices: \
                         [...]}}` and rebuild (`charly box build {}`), or run where the device is",
                        target.box_name
                    ),
                });
            }
        }
    }

    let secrets = entry
        .secrets
        .iter()
        .map(|s| SecretEnv { secret: target.volume(&s.name), env: s.name.clone() })
        .collect();
    let supervised = labels.init() == Some("supervisord");
    let command = if !r.command.is_empty() {
        r.command.to_vec()
    } else if supervised {
        ["supervisord", "-n", "-c", SUPERVISORD_CONF].map(str::to_owned).to_vec()
    } else {
        KEEP_ALIVE.map(str::to_owned).to_vec()
    };
    // supervisord starts as root and runs each program as the box's user (the conf's
    // `user=`, see Runtime::supervisord_conf): a `--user` would make supervisord itself
    // unprivileged, unable to switch to any program's user.
    let mut security = labels.security.clone();
    if supervised && r.command.is_empty() {
        security.user = None;
    }
    // Always under an init: a command as PID 1 ignores SIGTERM (busybox httpd, sleep),
    // so `stop` would wait for its timeout and SIGKILL.
    Ok(RunSpec {
        image: image.to_owned(),
        env,
        ports,
        volumes,
        binds,
        command,
        init: true,
        secrets,
        env_file: entry.env_file.clone(),
        network: entry.network.clone(),
        security: security.run_args(),
        given: None,
    })
}

impl Deploy<'_> {
    /// [`DeployError::Saved`] when `spec`'s network (the deploy entry's `network:`) does not
    /// exist: podman would refuse it with its whole command line.
    pub(super) fn check_network(&self, target: &Target, spec: &RunSpec) -> Result<(), DeployError> {
        let Some(network) = &spec.network else { return Ok(()) };
        if self.block(self.engine.network_exists(network))? {
            return Ok(());
        }
        Err(DeployError::Saved {
            at: format!("deploy entry {}: network", target.key()),
            value: network.clone(),
            problem: format!(
                "podman has no such network; create it (`podman network create {network}`) or run on another \
                 (`charly config setup {} --network NAME`)",
                crate::engine::start_args(target)
            ),
        })
    }

    /// The [`RunSpec`] of a `start`: see the [module](self) docs.
    pub(super) fn plan(
        &self,
        target: &Target,
        image: &str,
        box_ports: &[u16],
        labels: &Runtime,
        entry: Option<&schema::Node>,
        r: &StartRequest<'_>,
    ) -> Result<RunSpec, DeployError> {
        let binds = r.binds.iter().map(|text| self.bind(text)).collect::<Result<Vec<_>, _>>()?;
        let given = Given {
            env: r.env.to_vec(),
            ports: r.ports.to_vec(),
            volumes: r.volumes.to_vec(),
            binds: binds.clone(),
            command: r.command.to_vec(),
        };
        let mut spec =
            run_spec(target, image, box_ports, labels, &EntryValues::of(entry), r, binds, When::Now)?;
        spec.given = Some(given);
        Ok(spec)
    }

    /// A `--bind` value with its host path resolved: on a terminal as the shell would, as a
    /// tool inside the project root. The directory must exist.
    fn bind(&self, text: &str) -> Result<Bind, DeployError> {
        let bad =
            |problem: String| DeployError::Argument { argument: "--bind", value: text.to_owned(), problem };
        let mut bind = args::parse_bind(text).map_err(bad)?;
        let host = Path::new(&bind.host);
        let resolved: PathBuf = match self.scope {
            Scope::Terminal => std::path::absolute(host).map_err(|e| bad(e.to_string()))?,
            Scope::Served => self.project.resolve_inside(host).map_err(|e| bad(e.to_string()))?.0,
        };
        if !resolved.exists() {
            return Err(bad(format!(
                "the host path {} does not exist; create it, or bind an existing directory",
                resolved.display()
            )));
        }
        bind.host = resolved.to_string_lossy().into_owned();
        Ok(bind)
    }
}
