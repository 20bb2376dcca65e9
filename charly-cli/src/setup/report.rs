//! The reports of `config setup`, `config status` and `config remove`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::PortMap;
use crate::report::Report;

/// A podman secret `config setup` made for a deployment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProvisionedSecret {
    /// The environment variable the container sees.
    pub name: String,
    /// The podman secret (`charly-<box>[-<instance>]-<name>`).
    pub podman: String,
    /// The credential it was filled from (`charly/secret/<key>`).
    pub credential: String,
    /// Where the credential store found it (`keyring`, `kdbx`, `config`).
    pub source: String,
}

/// A volume of a deployment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProvisionedVolume {
    /// The volume's short name.
    pub name: String,
    /// `volume`, `bind` or `encrypted`.
    pub kind: String,
    /// The podman volume (named volumes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub podman: Option<String>,
    /// The host directory (bind mounts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Where it is mounted in the container.
    pub path: String,
    /// Whether this call created the podman volume (false: it was there).
    pub created: bool,
}

/// `config setup`: the deploy entry written and what was provisioned for it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SetUp {
    /// The deploy file.
    pub path: String,
    /// The deployment name (`web`, `web/2`).
    pub key: String,
    /// The container (`charly-<box>[-<instance>]`).
    pub container: String,
    /// Whether the deploy file's text changed.
    pub changed: bool,
    /// The entry as it now is.
    pub entry: serde_json::Map<String, serde_json::Value>,
    /// `direct` (podman run, by `charly start`) or `quadlet` (units written).
    pub run_mode: String,
    /// The published ports, all checked free (or held by this deployment's own container).
    pub ports: Vec<PortMap>,
    /// The podman secrets (re)created from the credential store.
    pub secrets: Vec<ProvisionedSecret>,
    /// Podman secrets of this deployment that it no longer declares, removed.
    pub secrets_removed: Vec<String>,
    /// The volumes.
    pub volumes: Vec<ProvisionedVolume>,
    /// Quadlet unit files written (quadlet mode).
    pub units: Vec<String>,
    /// Quadlet unit files of this deployment removed (volumes it no longer has).
    pub units_removed: Vec<String>,
}

impl fmt::Display for SetUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.changed {
            writeln!(f, "Wrote deploy entry {} in {}", self.key, self.path)?;
        } else {
            writeln!(f, "Deploy entry {} in {} already had these values", self.key, self.path)?;
        }
        for p in &self.ports {
            writeln!(f, "  port {} (free)", p.publish())?;
        }
        for s in &self.secrets {
            writeln!(
                f,
                "  secret {} -> podman secret {} (from {}, {})",
                s.name, s.podman, s.credential, s.source
            )?;
        }
        for s in &self.secrets_removed {
            writeln!(f, "  removed podman secret {s} (no longer declared)")?;
        }
        for v in &self.volumes {
            match (&v.podman, &v.host) {
                (Some(p), _) => {
                    let how = if v.created { "created" } else { "kept" };
                    writeln!(f, "  volume {} -> {} at {} ({how})", v.name, p, v.path)?
                }
                (None, Some(h)) => writeln!(f, "  volume {} -> bind {} at {}", v.name, h, v.path)?,
                (None, None) => writeln!(f, "  volume {} ({}) at {}", v.name, v.kind, v.path)?,
            }
        }
        for u in &self.units {
            writeln!(f, "  wrote {u}")?;
        }
        for u in &self.units_removed {
            writeln!(f, "  removed {u}")?;
        }
        Ok(())
    }
}

impl Report for SetUp {}

/// One item `config status` checked: present or not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Presence {
    /// The entry's name for it (a secret's variable, a volume's short name).
    pub name: String,
    /// What backs it: the podman secret or volume, or the host directory.
    pub backing: String,
    /// Whether it exists.
    pub present: bool,
}

/// `config status`: a deployment's entry beside what exists for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ConfigStatus {
    /// The deployment name.
    pub key: String,
    /// The container.
    pub container: String,
    /// Whether the deploy file has an entry for it.
    pub configured: bool,
    /// Its ports as recorded.
    pub ports: Vec<String>,
    /// Its secrets: podman secret present?
    pub secrets: Vec<Presence>,
    /// Its volumes: podman volume or host directory present?
    pub volumes: Vec<Presence>,
    /// The quadlet unit (`<quadlet dir>/<container>.container`), when it exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// The container's state (absent: no container).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Whether everything the entry declares exists.
    pub complete: bool,
}

impl fmt::Display for ConfigStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.configured {
            return writeln!(
                f,
                "{}: not configured (no deploy entry); run `charly config setup {}`",
                self.key,
                self.key.replacen('/', " -i ", 1)
            );
        }
        let state = self.state.as_deref().unwrap_or("none");
        let verdict = if self.complete { "complete" } else { "incomplete" };
        writeln!(f, "{} ({}): configured, {verdict}; container: {state}", self.key, self.container)?;
        if !self.ports.is_empty() {
            writeln!(f, "  ports: {}", self.ports.join(", "))?;
        }
        let yes = |b: bool| if b { "present" } else { "MISSING" };
        for s in &self.secrets {
            writeln!(f, "  secret {} -> {} ({})", s.name, s.backing, yes(s.present))?;
        }
        for v in &self.volumes {
            writeln!(f, "  volume {} -> {} ({})", v.name, v.backing, yes(v.present))?;
        }
        writeln!(f, "  quadlet unit: {}", self.unit.as_deref().unwrap_or("none"))
    }
}

impl Report for ConfigStatus {}

/// `config remove`: what was removed for a deployment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Unconfigured {
    /// The deployment name.
    pub key: String,
    /// Whether its deploy entry was removed (false: there was none).
    pub entry_removed: bool,
    /// The podman secrets removed.
    pub secrets_removed: Vec<String>,
    /// The quadlet unit files removed.
    pub units_removed: Vec<String>,
    /// The podman volumes removed (`--purge` only).
    pub volumes_removed: Vec<String>,
    /// The volumes kept (no `--purge`).
    pub volumes_kept: Vec<String>,
    /// The encrypted volumes' host directories removed (`--purge` only; unmounted first).
    pub encrypted_removed: Vec<String>,
}

impl fmt::Display for Unconfigured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.entry_removed {
            writeln!(f, "Removed deploy entry {}", self.key)?;
        } else {
            writeln!(f, "No deploy entry {} (nothing to remove there)", self.key)?;
        }
        for s in &self.secrets_removed {
            writeln!(f, "  removed podman secret {s}")?;
        }
        for u in &self.units_removed {
            writeln!(f, "  removed {u}")?;
        }
        for v in &self.volumes_removed {
            writeln!(f, "  removed volume {v}")?;
        }
        for d in &self.encrypted_removed {
            writeln!(f, "  removed encrypted directory {d}")?;
        }
        if !self.volumes_kept.is_empty() {
            writeln!(f, "  kept volumes {} (remove them with --purge)", self.volumes_kept.join(", "))?;
        }
        Ok(())
    }
}

impl Report for Unconfigured {}

/// One encrypted volume after `config mount/unmount/passwd`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CryptVolume {
    /// The volume's short name.
    pub name: String,
    /// Its host directory (`cipher/` and `plain/` inside).
    pub dir: String,
    /// Whether `cipher/gocryptfs.conf` exists.
    pub initialized: bool,
    /// Whether `plain/` is mounted now.
    pub mounted: bool,
    /// Whether this call changed it.
    pub changed: bool,
}

/// `config mount`, `config unmount`, `config passwd`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Crypted {
    /// The deployment name.
    pub key: String,
    /// `mount`, `unmount` or `passwd`.
    pub action: String,
    /// Its encrypted volumes.
    pub volumes: Vec<CryptVolume>,
    /// Whether the new passphrase was stored (`passwd`).
    pub stored: bool,
}

impl fmt::Display for Crypted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for v in &self.volumes {
            let what = match (self.action.as_str(), v.changed) {
                ("mount", true) => "mounted",
                ("mount", false) => "already mounted",
                ("unmount", true) => "unmounted",
                ("unmount", false) => "not mounted",
                ("passwd", true) => "passphrase changed",
                _ => "not initialised (skipped)",
            };
            writeln!(f, "{}: volume {} ({}): {what}", self.key, v.name, v.dir)?;
        }
        if self.stored {
            writeln!(f, "{}: new passphrase stored as charly/enc", self.key)?;
        }
        Ok(())
    }
}

impl Report for Crypted {}
