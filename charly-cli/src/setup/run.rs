//! The three leaves' work.

use std::path::Path;

use super::provision::{Created, provision};
use super::quadlet;
use super::report::SetUp;
use super::{SECRET_SERVICE, SetupError};
use crate::credentials::Store;
use crate::deploy::args::{self, BIND_ADDRESS};
use crate::deployfile::{self, DeployFile, EntryUpdate, SecretEntry, VolumeEntry};
use crate::engine::{Engine, EngineError, PortMap, Target};
use crate::project::Cancel;

/// How the box's container is run on this host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RunMode {
    /// `charly start` runs it with `podman run -d`.
    Direct,
    /// systemd runs it from quadlet units.
    Quadlet,
}

impl RunMode {
    /// The setting's value (`run_mode`): `auto` is quadlet where systemd is PID 1.
    pub fn from_setting(value: &str) -> RunMode {
        match value {
            "quadlet" => RunMode::Quadlet,
            "direct" => RunMode::Direct,
            _ if Path::new("/run/systemd/system").is_dir() => RunMode::Quadlet,
            _ => RunMode::Direct,
        }
    }

    pub(super) fn word(self) -> &'static str {
        match self {
            RunMode::Direct => "direct",
            RunMode::Quadlet => "quadlet",
        }
    }
}

/// Where an encrypted volume's passphrase comes from (`config setup --password`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Password {
    /// It must be stored already (`charly/enc/<box>[/<instance>]`, or `$GOCRYPTFS_PASSWORD`).
    #[default]
    Stored,
    /// Generated (32 random bytes as hex) and stored as `charly/enc/<box>[/<instance>]` when none is.
    Auto,
}

/// The arguments of `config setup`, parsed.
#[derive(Clone, Debug)]
pub struct Request {
    /// The deployment.
    pub target: Target,
    /// The box's image reference (for units).
    pub image: String,
    /// The box's own ports (published when the entry has none).
    pub box_ports: Vec<u16>,
    /// `(name, container path)`: the volumes the box's candies declare (`volume:` nodes):
    /// `--bind NAME=DIR` and `--encrypt NAME` may name one without `--volume`.
    pub declared_volumes: Vec<(String, String)>,
    /// The entry's plain fields.
    pub update: EntryUpdate,
    /// `NAME[=KEY]`: a secret the container sees as `$NAME`, from `charly/secret/KEY`.
    pub secrets: Vec<String>,
    /// `NAME:PATH`: a named volume at container path PATH.
    pub volumes: Vec<String>,
    /// `NAME=HOST_DIR`: volume NAME bind-mounted from an existing absolute directory.
    pub binds: Vec<String>,
    /// `NAME`: volume NAME encrypted with gocryptfs (passphrase `charly/enc/<box>[/<instance>]`).
    pub encrypt: Vec<String>,
    /// The run mode.
    pub run_mode: RunMode,
    /// The encrypted volumes' passphrase source.
    pub password: Password,
    /// What the box's image declares for running it (its `ai.opencharly.*` labels, or the
    /// project's declarations when it is not built): env, volumes, security, supervisord as
    /// init, hooks; quadlet units run what a direct `start` runs.
    pub labels: crate::project::runtime::Runtime,
}

/// `config setup`: see the [module](super) docs. `engine` must not be cancelled half-way
/// (the caller stops before the first change, this function checks `cancel` there).
///
/// # Errors
///
/// [`SetupError`]; on every error the deploy file, podman's secrets and volumes and the unit
/// files are as they were (a replaced secret's old value excepted).
pub async fn setup(
    engine: &Engine,
    store: &mut Store,
    path: &Path,
    units_dir: &Path,
    req: &Request,
    cancel: &Cancel,
) -> Result<SetUp, SetupError> {
    let target = &req.target;
    let key = target.key();
    let arg =
        |argument: String, problem: String| SetupError::Argument { key: key.clone(), argument, problem };
    let file = DeployFile::load(path)?;
    let saved = file.schema().deploy.as_ref().and_then(|d| d.get(&key)).and_then(|n| n.as_ref());

    // Secrets: the saved list, the given ones merged in by name.
    let mut secrets = deployfile::saved_secrets(saved);
    for text in &req.secrets {
        let (name, source) = match text.split_once('=') {
            Some((n, s)) => (n, Some(s.to_owned())),
            None => (text.as_str(), None),
        };
        args::env_line(&format!("{name}=")).map_err(|_| {
            arg(format!("--secret {text}"), format!("{name:?} is not a variable name (letters, digits and `_`); write NAME or NAME=CREDENTIAL_KEY"))
        })?;
        if source.as_deref().is_some_and(|s| s.is_empty() || s.contains(char::is_whitespace)) {
            return Err(arg(
                format!("--secret {text}"),
                "the credential key is empty or holds spaces".into(),
            ));
        }
        let entry = SecretEntry { name: name.to_owned(), source };
        match secrets.iter_mut().find(|s| s.name == name) {
            Some(s) => *s = entry,
            None => secrets.push(entry),
        }
    }

    // Volumes: saved, then --volume (named), then --bind.
    let mut volumes = deployfile::saved_volumes(saved);
    for text in &req.volumes {
        args::volume_spec(text).map_err(|p| arg(format!("--volume {text}"), p))?;
        let (name, cpath) = text.split_once(':').expect("checked");
        let entry =
            VolumeEntry { name: name.into(), kind: "volume".into(), host: None, path: Some(cpath.into()) };
        match volumes.iter_mut().find(|v| v.name == name) {
            Some(v) => *v = entry,
            None => volumes.push(entry),
        }
    }
    let mut bind_args = std::collections::BTreeMap::new();
    for text in &req.binds {
        let Some((name, host)) = text.split_once('=') else {
            return Err(arg(
                format!("--bind {text}"),
                "write NAME=HOST_DIR (an absolute, existing directory)".into(),
            ));
        };
        adopt_declared(&mut volumes, &req.declared_volumes, name);
        let Some(v) = volumes.iter_mut().find(|v| v.name == name) else {
            let mut known: Vec<&str> = volumes.iter().map(|v| v.name.as_str()).collect();
            known.extend(req.declared_volumes.iter().map(|(n, _)| n.as_str()));
            // A declared volume the entry holds too is one volume: named once.
            let mut seen = std::collections::BTreeSet::new();
            known.retain(|n| seen.insert(*n));
            return Err(arg(
                format!("--bind {text}"),
                format!(
                    "the deployment has no volume {name:?} (volumes: {}); declare where it goes in the container with --volume {name}:/path",
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                ),
            ));
        };
        v.kind = "bind".into();
        v.host = Some(host.to_owned());
        bind_args.insert(name.to_owned(), format!("--bind {text}"));
    }
    for name in &req.encrypt {
        adopt_declared(&mut volumes, &req.declared_volumes, name);
        let Some(v) = volumes.iter_mut().find(|v| v.name == *name) else {
            return Err(arg(
                format!("--encrypt {name}"),
                format!("the deployment has no volume {name:?}; declare it with --volume {name}:/path"),
            ));
        };
        if v.kind != "encrypted" {
            v.kind = "encrypted".into();
            v.host = None;
        }
    }
    // An encrypted volume's directory of this name that another deployment owns is refused.
    for v in volumes.iter().filter(|v| v.kind == "encrypted") {
        let dir = super::encrypted::host_dir(target, &v.name, v.host.as_deref());
        if let super::encrypted::DirOwner::Other(other) = super::encrypted::owner(&dir, target, &v.name) {
            return Err(arg(format!("--encrypt {}", v.name), super::encrypted::not_ours(&dir, &other)));
        }
    }
    // The passphrase: stored, or (--password auto) generated now and stored once the
    // volumes are initialised with it.
    let mut generated = false;
    let enc_passphrase = if volumes.iter().any(|v| v.kind == "encrypted") {
        match (super::mounts::passphrase(store, target), req.password) {
            (Ok(p), _) => Some(p),
            (Err(_), Password::Auto) => {
                for v in volumes.iter().filter(|v| v.kind == "encrypted") {
                    let dir = super::encrypted::host_dir(target, &v.name, v.host.as_deref());
                    if super::encrypted::initialized(&dir)
                        && super::encrypted::owner(&dir, target, &v.name) == super::encrypted::DirOwner::Ours
                    {
                        return Err(arg(
                            format!("--password auto (volume {})", v.name),
                            format!(
                                "{} is already encrypted with a passphrase that is not stored; store it with `charly secrets set {} {} <PASSPHRASE>`",
                                dir.display(),
                                super::encrypted::ENC_SERVICE,
                                super::encrypted::passphrase_key(target)
                            ),
                        ));
                    }
                }
                generated = true;
                Some(random_hex(32).map_err(|e| arg("--password auto".into(), e))?)
            }
            (Err(e), Password::Stored) => {
                return Err(match e {
                    SetupError::Argument { key, argument, problem } => SetupError::Argument {
                        key,
                        argument,
                        problem: format!("{problem}, or let charly make one: --password auto"),
                    },
                    other => other,
                });
            }
        }
    } else {
        None
    };
    for v in &volumes {
        let at = bind_args.get(&v.name).cloned().unwrap_or_else(|| format!("deploy entry volume {}", v.name));
        let Some(cpath) = v.path.as_deref().filter(|p| p.starts_with('/')) else {
            return Err(arg(at, "no absolute container path; give --volume NAME:/path".into()));
        };
        let _ = cpath;
        if v.kind == "bind" {
            let host = v.host.as_deref().unwrap_or("");
            if !host.starts_with('/') {
                return Err(arg(
                    at,
                    format!("the host path {host:?} is not absolute; give an absolute directory"),
                ));
            }
            if Path::new(host).exists() && !Path::new(host).is_dir() {
                return Err(arg(at, format!("{host} is a file, not a directory; bind a directory")));
            }
            if !Path::new(host).is_dir() {
                return Err(arg(
                    at,
                    format!(
                        "the host directory {host} does not exist; create it (mkdir -p {host}) or give another"
                    ),
                ));
            }
        }
    }
    // One volume per container path (the box's own volumes that the entry does not replace
    // by name count too): podman refuses a duplicate destination only at start.
    let mut paths: Vec<(String, String)> = req
        .declared_volumes
        .iter()
        .filter(|(name, _)| !volumes.iter().any(|v| v.name == *name))
        .map(|(name, path)| (path.clone(), format!("the box's volume {name}")))
        .collect();
    for v in &volumes {
        let path = v.path.clone().unwrap_or_default();
        if let Some((_, first)) = paths.iter().find(|(p, _)| *p == path) {
            return Err(arg(
                bind_args.get(&v.name).cloned().unwrap_or_else(|| format!("volume {}", v.name)),
                format!(
                    "{path} is where {first} is mounted: one volume per container path; give it another path"
                ),
            ));
        }
        paths.push((path, format!("volume {}", v.name)));
    }

    // Ports: the given ones, else the entry's, else the box's own.
    let texts: Vec<String> =
        if !req.update.ports.is_empty() { req.update.ports.clone() } else { deployfile::saved_ports(saved) };
    let mut ports: Vec<PortMap> = Vec::new();
    if texts.is_empty() {
        ports.extend(req.box_ports.iter().map(|p| PortMap {
            host_ip: BIND_ADDRESS.into(),
            host: *p,
            container: *p,
            protocol: "tcp".into(),
        }));
    }
    for text in &texts {
        ports.push(args::parse_port(text).map_err(|p| arg(format!("--port {text}"), p))?);
    }
    // A container of the deployment's name that is another box's or instance's (or not
    // charly's) is refused before anything; a host without podman still gets its entry.
    let podman = match engine.claimed(target).await {
        Ok(_) => true,
        Err(EngineError::Missing { .. }) => false,
        Err(e) => return Err(arg("box".into(), e.to_string())),
    };
    // The network must exist (podman says so only at start, with its whole command line).
    if let Some(network) = &req.update.network
        && podman
        && !engine.network_exists(network).await.unwrap_or(true)
    {
        return Err(arg(
            format!("--network {network}"),
            format!(
                "podman has no such network; create it first (`podman network create {network}`) or give another"
            ),
        ));
    }
    other_entries(&file, &key, &ports).map_err(|(argument, problem)| arg(argument, problem))?;
    preflight(engine, target, &ports).await?;
    // What passed the pre-flight but cannot be bound now is its own container's.
    let own_ports: Vec<u16> =
        ports.iter().filter(|p| !crate::engine::ports::is_free(p)).map(|p| p.host).collect();

    // Secret values, all before any change.
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for s in &secrets {
        let ckey = s.source.clone().unwrap_or_else(|| s.name.clone());
        let found = store.resolve(None, SECRET_SERVICE, &ckey);
        match found.value {
            Some(value) => {
                values.push((s, format!("{SECRET_SERVICE}/{ckey}"), found.source.to_string(), value))
            }
            None => missing.push((s.name.clone(), ckey)),
        }
    }
    if !missing.is_empty() {
        return Err(super::missing::missing_secrets(store, key, &missing));
    }
    if req.run_mode == RunMode::Quadlet {
        let mut files = vec![units_dir.join(format!("{}.container", target.container))];
        files.extend(
            volumes
                .iter()
                .filter(|v| v.kind == "volume")
                .map(|v| units_dir.join(format!("{}.volume", target.volume(&v.name)))),
        );
        quadlet::check_units(&files, target).map_err(|p| arg("the unit files".into(), p))?;
    }
    cancel.check(path).map_err(|_| SetupError::Cancelled)?;

    // Changes from here on; undone on failure.
    let mut created = Created::default();
    let result = provision(
        engine,
        path,
        units_dir,
        req,
        &secrets,
        &volumes,
        &values,
        &ports,
        saved,
        enc_passphrase.as_deref(),
        &mut created,
        cancel,
    )
    .await;
    // A generated passphrase is stored once the volumes are encrypted with it; if it cannot
    // be, what this call made is removed (a volume nobody can open is not left behind).
    let result = match (result, generated, enc_passphrase.as_deref()) {
        (Ok(mut report), true, Some(passphrase)) => {
            let key = super::encrypted::passphrase_key(target);
            match store.set(super::encrypted::ENC_SERVICE, &key, passphrase) {
                Ok(source) => {
                    report.passphrase_stored =
                        Some(format!("{}/{key} ({source})", super::encrypted::ENC_SERVICE));
                    Ok(report)
                }
                Err(e) => Err(arg(
                    "--password auto".into(),
                    format!("the generated passphrase could not be stored: {e}"),
                )),
            }
        }
        (other, _, _) => other,
    };
    match result {
        Ok(mut report) => {
            report.own_ports = own_ports;
            Ok(report)
        }
        Err(e) => {
            created.undo(engine).await;
            Err(e)
        }
    }
}

/// `bytes` random bytes as lowercase hex.
fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| format!("no random bytes from the system: {e}"))?;
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// A volume the box declares but the entry does not hold yet joins the entry's list (as a
/// named volume at its declared path) when an argument names it.
fn adopt_declared(volumes: &mut Vec<VolumeEntry>, declared: &[(String, String)], name: &str) {
    if volumes.iter().any(|v| v.name == name) {
        return;
    }
    if let Some((_, path)) = declared.iter().find(|(n, _)| n == name) {
        volumes.push(VolumeEntry {
            name: name.into(),
            kind: "volume".into(),
            host: None,
            path: Some(path.clone()),
        });
    }
}

/// `Err((argument, problem))` when a host port of `ports` is one another entry of the deploy
/// file publishes too (on the same address and protocol): whichever container starts second
/// would find it taken.
fn other_entries(file: &DeployFile, key: &str, ports: &[PortMap]) -> Result<(), (String, String)> {
    let mut recorded: Vec<(String, PortMap)> = Vec::new();
    for (other, node) in file.schema().deploy.iter().flatten() {
        if other == key {
            continue;
        }
        for text in deployfile::saved_ports(node.as_ref()) {
            if let Ok(p) = args::parse_port(&text) {
                recorded.push((other.clone(), p));
            }
        }
    }
    for p in ports {
        let Some((other, _)) = recorded
            .iter()
            .find(|(_, o)| o.host == p.host && o.protocol == p.protocol && o.host_ip == p.host_ip)
        else {
            continue;
        };
        let mut taken: Vec<PortMap> = recorded.iter().map(|(_, o)| o.clone()).collect();
        taken.extend(ports.iter().cloned());
        return Err((
            format!("port {}", crate::engine::ports::spec(p)),
            format!(
                "host port {} is deploy entry {other}'s too: the second container to start would find it taken; \
                 remap it: `-p {}`",
                p.host,
                crate::engine::ports::remap(p, &taken)
            ),
        ));
    }
    Ok(())
}

/// Every host port must be free, or held by this deployment's own container.
async fn preflight(engine: &Engine, target: &Target, ports: &[PortMap]) -> Result<(), SetupError> {
    let taken = crate::engine::ports::preflight(engine, target, ports, true)
        .await
        .map_err(|source| SetupError::Engine { key: target.key(), source: Box::new(source) })?;
    let Some(taken) = taken else { return Ok(()) };
    Err(SetupError::PortInUse {
        key: target.key(),
        address: taken.port.host_ip.clone(),
        port: taken.port.host,
        container_port: taken.port.container,
        remap: crate::engine::ports::remap(&taken.port, ports),
        owner: taken.owner,
        fix: taken.fix,
    })
}
