//! The reports of the lifecycle leaves: what each did to which container, as data with the
//! lines a person reads.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::PortMap;
use crate::report::Report;

/// `start`: a box's container runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Started {
    /// The box.
    #[serde(rename = "box")]
    pub box_name: String,
    /// The instance, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The container name, `charly-<box>[-<instance>]`.
    pub container: String,
    /// The container id (12 hex digits).
    pub id: String,
    /// The image it runs.
    pub image: String,
    /// The published ports.
    pub ports: Vec<PortMap>,
    /// The command it runs.
    pub command: Vec<String>,
    /// Whether an exited container of the same name was removed first.
    pub replaced_exited: bool,
    /// The volumes the image's data was seeded into by this start: volumes seeded once, when
    /// they were empty (a volume holding data is left as it is).
    pub seeded: Vec<String>,
    /// The image's `post_enable` hooks, run in the container once this start made it (best
    /// effort: a failing hook is reported, the container keeps running).
    pub post_enable: Vec<HookRun>,
    /// Why the image's `post_enable` hooks were not run (a restart of an exited container).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub post_enable_skipped: Option<String>,
}

impl fmt::Display for Started {
    /// `started charly-web (3f2a…) from IMAGE`, then one line per published port and per
    /// seeded volume.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "started {} ({}) from {}", self.container, self.id, self.image)?;
        for p in &self.ports {
            writeln!(f, "  {}:{} -> {}/{}", p.host_ip, p.host, p.container, p.protocol)?;
        }
        for v in &self.seeded {
            writeln!(f, "  seeded volume {v}")?;
        }
        for h in &self.post_enable {
            writeln!(f, "  post_enable hook `{}` exited with status {}", h.command, h.exit_status)?;
        }
        if let Some(why) = &self.post_enable_skipped {
            writeln!(f, "  post_enable hooks not run: {why}")?;
        }
        Ok(())
    }
}

impl Report for Started {}

/// `stop`: a box's container stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Stopped {
    /// The container name.
    pub container: String,
    /// How long podman waited before killing it, in seconds.
    pub timeout_secs: u32,
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "stopped {}", self.container)
    }
}

impl Report for Stopped {}

/// One probe of a running container (`status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Probe {
    /// What was probed: `port`, `mcp`.
    pub name: String,
    /// `ok` or `failed`.
    pub status: String,
    /// The host port probed, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// What the probe saw: `127.0.0.1:8080 accepts connections`, the server's name.
    pub detail: String,
}

/// One container in a `status` report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ContainerStatus {
    /// The box.
    #[serde(rename = "box")]
    pub box_name: String,
    /// The instance, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// The container name.
    pub container: String,
    /// `running`, `exited (<code>)`, `created`, ...
    pub status: String,
    /// Its image.
    pub image: String,
    /// The container id (12 hex digits).
    pub id: String,
    /// Seconds since it started (running containers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime_secs: Option<u64>,
    /// Its published ports.
    pub ports: Vec<PortMap>,
    /// The probes run against it (running containers), concurrently.
    pub probes: Vec<Probe>,
}

/// A container of a box's image that charly did not create (a plain `podman run` of the
/// image: it has the image's box label, but not charly's run or deploy label). `status`
/// names it and leaves it alone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ForeignContainer {
    /// The container name.
    pub container: String,
    /// The box its image's label names.
    #[serde(rename = "box")]
    pub box_name: String,
    /// Its image.
    pub image: String,
    /// `running`, `exited (<code>)`, `created`, ...
    pub status: String,
}

/// `status`: charly's containers and what answers in them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct StatusReport {
    /// The box asked about, when one was.
    #[serde(rename = "box", skip_serializing_if = "Option::is_none")]
    pub box_name: Option<String>,
    /// The instance asked about, when one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
    /// When the box (instance) has no container but its container name is another box's or
    /// instance's (names collide): why `start` would refuse it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_taken: Option<String>,
    /// The containers, by name.
    pub containers: Vec<ContainerStatus>,
    /// Containers of the box's (or any box's) image that charly did not create, by name: not
    /// charly's to manage or probe.
    pub foreign: Vec<ForeignContainer>,
}

impl fmt::Display for StatusReport {
    /// A table `CONTAINER STATUS PORTS PROBES`; a line saying so when there is none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.containers.is_empty() {
            let instance = self.instance.as_ref().map(|i| format!(" -i {i}")).unwrap_or_default();
            match (&self.box_name, &self.name_taken) {
                (Some(b), Some(taken)) => writeln!(f, "box {b}{instance} has no container: {taken}")?,
                (Some(b), None) => writeln!(
                    f,
                    "box {b}{instance} has no container (start it with `charly start {b}{instance}`)"
                )?,
                (None, _) => writeln!(f, "no charly containers")?,
            }
            return self.foreign_lines(f);
        }
        let rows: Vec<[String; 4]> = self
            .containers
            .iter()
            .map(|c| {
                let ports =
                    c.ports.iter().map(|p| format!("{}->{}", p.host, p.container)).collect::<Vec<_>>();
                let probes = c.probes.iter().map(|p| {
                    let port = p.port.map(|p| format!(":{p}")).unwrap_or_default();
                    format!("{}{port} {}", p.name, p.status)
                });
                let status = match c.uptime_secs {
                    Some(secs) => format!("{} {}", c.status, uptime(secs)),
                    None => c.status.clone(),
                };
                [c.container.clone(), status, ports.join(","), probes.collect::<Vec<_>>().join(", ")]
            })
            .collect();
        let header = ["CONTAINER", "STATUS", "PORTS", "PROBES"].map(str::to_owned);
        let widths: Vec<usize> = (0..4)
            .map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0))
            .collect();
        for row in std::iter::once(&header).chain(&rows) {
            let line = (0..4).map(|i| format!("{:w$}", row[i], w = widths[i])).collect::<Vec<_>>().join("  ");
            writeln!(f, "{}", line.trim_end())?;
        }
        self.foreign_lines(f)
    }
}

impl StatusReport {
    /// One line per [`ForeignContainer`].
    fn foreign_lines(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.foreign {
            writeln!(
                f,
                "not charly's: {} ({}, image {} of box {}) was not created by charly (a plain `podman run` \
                 of the image): left alone, not probed",
                c.container, c.status, c.image, c.box_name
            )?;
        }
        Ok(())
    }
}

fn uptime(secs: u64) -> String {
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 7200 => format!("{}m", s / 60),
        s if s < 172_800 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

impl Report for StatusReport {}

/// `logs`: the last lines of a container's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Logs {
    /// The container name.
    pub container: String,
    /// The lines, oldest first, stdout and stderr in their order.
    pub lines: Vec<String>,
    /// Whether the log was followed on the terminal instead (then `lines` is empty).
    pub followed: bool,
}

impl fmt::Display for Logs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.lines.iter().try_for_each(|l| writeln!(f, "{l}"))
    }
}

impl Report for Logs {}

/// `shell` and `cmd`: a command run in a box's container, or in a disposable one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Executed {
    /// The container it ran in (for a disposable container, the image).
    pub container: String,
    /// The command (`sh -c` text), or empty for an interactive shell.
    pub command: String,
    /// Its exit status.
    pub exit_status: i32,
    /// Its stdout (empty when it ran on the terminal).
    pub stdout: String,
    /// Its stderr (empty when it ran on the terminal).
    pub stderr: String,
    /// It ran in a disposable container (`podman run --rm`) because the box's container
    /// was not running.
    pub disposable: bool,
    /// It ran attached to the terminal.
    pub interactive: bool,
}

impl fmt::Display for Executed {
    /// The command's stdout, then its stderr.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.stdout)?;
        f.write_str(&self.stderr)
    }
}

impl Report for Executed {
    fn failure(&self) -> Option<String> {
        (self.exit_status != 0).then(|| format!("the command exited with status {}", self.exit_status))
    }

    /// The command's own status (an alias wrapper passes it on); 1 for one out of 1-255 (a
    /// signal's -1).
    fn exit_status(&self) -> u8 {
        u8::try_from(self.exit_status).ok().filter(|s| *s != 0).unwrap_or(1)
    }
}

/// `update`: the image rebuilt, and the container recreated from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Updated {
    /// The container name.
    pub container: String,
    /// The image reference.
    pub image: String,
    /// The image id the container ran before (when it existed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_image_id: Option<String>,
    /// The image id after the build (12 hex digits).
    pub image_id: String,
    /// Whether the image changed.
    pub image_changed: bool,
    /// Whether the running container was recreated from the new image.
    pub restarted: bool,
    /// The dangling images of this box removed after the container was recreated (earlier
    /// builds and their build cache), by id.
    pub pruned_images: Vec<String>,
    /// What the recreated container took from the new image besides the image itself
    /// (ports it newly declares, its changed env), in words.
    pub changes: Vec<String>,
    /// What happened to the container, in words.
    pub summary: String,
    /// The build's output.
    pub build_log: String,
}

impl fmt::Display for Updated {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary)
    }
}

impl Report for Updated {}

/// `remove`: what was removed of a box's container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Removed {
    /// The container name.
    pub container: String,
    /// Whether a container was removed (false: there was none).
    pub removed_container: bool,
    /// The named volumes removed (`--purge`): only those labelled as this container's.
    pub volumes: Vec<String>,
    /// The quadlet unit files removed (`--purge`).
    pub units: Vec<String>,
    /// Whether the deployment's entry in the deploy file was removed (`--purge`).
    pub entry_removed: bool,
    /// The podman secrets removed (`--purge`).
    pub secrets: Vec<String>,
    /// The encrypted volumes' host directories removed (`--purge`).
    pub encrypted: Vec<String>,
    /// The image's `pre_remove` hooks run in the container before it went (when it ran).
    pub pre_remove: Vec<HookRun>,
    /// Why the image's `pre_remove` hooks were not run though it declares some (the
    /// container was not running, `--no-hooks`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pre_remove_skipped: Option<String>,
}

/// A hook command run in a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HookRun {
    /// The command (`sh -c`).
    pub command: String,
    /// Its exit status (-1: it could not run).
    pub exit_status: i32,
    /// Its stdout and stderr.
    pub output: String,
}

impl fmt::Display for Removed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.removed_container
            && self.volumes.is_empty()
            && self.units.is_empty()
            && !self.entry_removed
            && self.secrets.is_empty()
            && self.encrypted.is_empty()
        {
            return writeln!(f, "nothing to remove for {}", self.container);
        }
        for h in &self.pre_remove {
            writeln!(f, "pre_remove hook `{}` exited with status {}", h.command, h.exit_status)?;
        }
        if let Some(why) = &self.pre_remove_skipped {
            writeln!(f, "pre_remove hooks not run: {why}")?;
        }
        if self.removed_container {
            writeln!(f, "removed container {}", self.container)?;
        }
        for v in &self.volumes {
            writeln!(f, "removed volume {v}")?;
        }
        for u in &self.units {
            writeln!(f, "removed unit {u}")?;
        }
        for s in &self.secrets {
            writeln!(f, "removed podman secret {s}")?;
        }
        for d in &self.encrypted {
            writeln!(f, "removed encrypted directory {d}")?;
        }
        if self.entry_removed {
            writeln!(f, "removed the deploy entry")?;
        }
        Ok(())
    }
}

impl Report for Removed {}
