//! `podman ps --format json` and `podman inspect` output, typed (only the fields charly reads).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::EngineError;

/// The container label naming the box a container runs (set by `charly start`).
pub const BOX_LABEL: &str = "ai.opencharly.box";
/// The container label naming its instance (absent for the default instance).
pub const INSTANCE_LABEL: &str = "ai.opencharly.instance";
/// The container label holding the [`super::RunSpec`] it was started with (JSON), so `update`
/// recreates it as it was.
pub const RUN_LABEL: &str = "ai.opencharly.run";
/// The volume label naming the container a named volume was made for (informational: names
/// collide, so `remove --purge` goes by [`BOX_LABEL`] and [`INSTANCE_LABEL`], see
/// [`super::claim`]).
pub const OWNER_LABEL: &str = "ai.opencharly.container";

/// One entry of `podman ps --all --format json` (podman 4.x field names).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ContainerSummary {
    /// The container id (64 hex digits).
    #[serde(default)]
    pub id: String,
    /// Its names (one).
    #[serde(default)]
    pub names: Vec<String>,
    /// The image reference it was created from.
    #[serde(default)]
    pub image: String,
    /// The image id.
    #[serde(default, rename = "ImageID")]
    pub image_id: String,
    /// `running`, `exited`, `created`, `paused`, `stopping`, `removing`, ...
    #[serde(default)]
    pub state: String,
    /// Its exit code (meaningful once exited).
    #[serde(default)]
    pub exit_code: i32,
    /// When it last started, in seconds since the epoch (0 or negative: never).
    #[serde(default)]
    pub started_at: i64,
    /// The host pid of its first process (its init), 0 when it does not run.
    #[serde(default)]
    pub pid: i64,
    /// Its labels: the image's, then the container's own.
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    /// Published ports.
    #[serde(default)]
    pub ports: Option<Vec<PortBinding>>,
}

/// A published port range of `podman ps` JSON.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq)]
pub struct PortBinding {
    /// The host address (empty: all).
    #[serde(default)]
    pub host_ip: String,
    /// The first container port.
    pub container_port: u16,
    /// The first host port.
    pub host_port: u16,
    /// How many consecutive ports.
    #[serde(default = "one")]
    pub range: u16,
    /// `tcp` or `udp`.
    #[serde(default)]
    pub protocol: String,
}

fn one() -> u16 {
    1
}

impl ContainerSummary {
    /// Its first name.
    pub fn name(&self) -> &str {
        self.names.first().map(String::as_str).unwrap_or_default()
    }

    /// A label's value.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.as_ref()?.get(key).map(String::as_str)
    }

    /// Whether it runs now.
    pub fn is_running(&self) -> bool {
        self.state == "running"
    }

    /// Every published port, one per port (ranges expanded): (container, host, protocol).
    pub fn published(&self) -> Vec<(u16, u16, String)> {
        let mut out = Vec::new();
        for p in self.ports.iter().flatten() {
            for i in 0..p.range.max(1) {
                let proto = if p.protocol.is_empty() { "tcp".to_owned() } else { p.protocol.clone() };
                out.push((p.container_port.saturating_add(i), p.host_port.saturating_add(i), proto));
            }
        }
        out
    }
}

/// Parses `podman ps --format json` output (a JSON array; podman prints `[]` for none).
///
/// # Errors
///
/// [`EngineError::Output`] when the text is not such an array.
pub fn parse_ps(text: &str) -> Result<Vec<ContainerSummary>, EngineError> {
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(text)
        .map_err(|e| EngineError::Output { command: "podman ps".into(), message: e.to_string() })
}

/// The part of `podman image inspect` charly reads.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ImageSummary {
    /// The image id.
    #[serde(default)]
    pub id: String,
    /// Its size in bytes (its layers unpacked).
    #[serde(default)]
    pub size: u64,
    /// Its labels.
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
}

/// Parses `podman image inspect` output (a JSON array of one image).
///
/// # Errors
///
/// [`EngineError::Output`] when the text is not such an array.
pub fn parse_image(text: &str) -> Result<ImageSummary, EngineError> {
    let bad = |message: String| EngineError::Output { command: "podman image inspect".into(), message };
    let mut images: Vec<ImageSummary> = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
    if images.is_empty() {
        return Err(bad("no image in the output".into()));
    }
    Ok(images.swap_remove(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Saved from podman 4.3.1 (`podman ps -a --format json`), trimmed.
    const PS: &str = r#"[{"AutoRemove":false,"Command":["sleep","infinity"],"Exited":false,
      "ExitedAt":-62135596800,"ExitCode":0,"Id":"5eb482d3a6be","Image":"localhost/charly-busybox:latest",
      "ImageID":"a1bf5c93a6b1","Labels":{"ai.opencharly.box":"probe"},"Mounts":["/data"],
      "Names":["charly-probe"],"Ports":[{"host_ip":"127.0.0.1","container_port":80,"host_port":18990,
      "range":2,"protocol":"tcp"}],"StartedAt":1796149151,"State":"running","Status":"Up 2 seconds"}]"#;

    #[test]
    fn ps_output() {
        let all = parse_ps(PS).unwrap();
        assert_eq!(all.len(), 1);
        let c = &all[0];
        assert_eq!(c.name(), "charly-probe");
        assert!(c.is_running());
        assert_eq!(c.label(BOX_LABEL), Some("probe"));
        assert_eq!(c.published(), vec![(80, 18990, "tcp".into()), (81, 18991, "tcp".into())]);
        assert!(parse_ps("").unwrap().is_empty());
        assert!(parse_ps("[]").unwrap().is_empty());
        assert!(parse_ps("{").is_err());
    }
}
