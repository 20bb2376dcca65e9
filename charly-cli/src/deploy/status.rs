//! `status`: charly's containers from one `podman ps --all --format json`, and for the running
//! ones probes run concurrently from the host: every published TCP port (does it accept a
//! connection?) and every MCP server of the image's `ai.opencharly.mcp_provide` label (does
//! it answer `ping`?). No probe runs `podman exec`, so status stays one podman call plus
//! loopback dials, however many containers run. A container of a box's image that charly
//! did not create (a plain `podman run` of it) is listed apart as foreign, never as the box's
//! ([`crate::engine::claim::created_by_charly`]) and never probed.

use std::time::Duration;

use tokio::task::JoinSet;

use super::report::{ContainerStatus, ForeignContainer, Probe, StatusReport};
use super::{Deploy, DeployError, short_id};
use crate::engine::{BOX_LABEL, ContainerSummary, INSTANCE_LABEL, PortMap, Target, state_word};
use crate::resolve::{ContainerPorts, MCP_PROVIDE_LABEL, McpProvide, host_endpoints};

/// How long a port probe waits for a connection.
pub const PORT_TIMEOUT: Duration = Duration::from_millis(500);
/// How long an MCP probe waits for `initialize` and `ping`.
pub const MCP_TIMEOUT: Duration = Duration::from_secs(3);

impl Deploy<'_> {
    /// `status`: every charly container, or those of `box_name` (and `instance`), with
    /// probes for the running ones.
    ///
    /// # Errors
    ///
    /// A bad name, podman failures.
    pub fn status(
        &self,
        box_name: Option<&str>,
        instance: Option<&str>,
    ) -> Result<StatusReport, DeployError> {
        let target = box_name.map(|b| Target::new(b, instance)).transpose()?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0);
        let (containers, foreign) = self.block(async {
            let mut all = self.engine.charly_containers().await?;
            all.retain(|c| {
                box_name.is_none_or(|b| c.label(BOX_LABEL) == Some(b))
                    && instance.is_none_or(|i| c.label(INSTANCE_LABEL) == Some(i))
            });
            all.sort_by(|a, b| a.name().cmp(b.name()));
            // Containers of a box's image that charly did not create are not that box's (the
            // claim check's rule): named apart, never probed.
            let (ours, foreign): (Vec<_>, Vec<_>) = all
                .into_iter()
                .partition(|c| c.labels.as_ref().is_some_and(crate::engine::claim::created_by_charly));
            let all = ours;
            let mut probes: JoinSet<(usize, usize, Probe)> = JoinSet::new();
            for (i, c) in all.iter().enumerate().filter(|(_, c)| c.is_running()) {
                for (j, probe) in plan(c).into_iter().enumerate() {
                    probes.spawn(async move { (i, j, probe.run().await) });
                }
            }
            let mut results: Vec<Vec<(usize, Probe)>> = vec![Vec::new(); all.len()];
            while let Some(done) = probes.join_next().await {
                if let Ok((i, j, probe)) = done {
                    results[i].push((j, probe));
                }
            }
            let foreign: Vec<ForeignContainer> = foreign
                .iter()
                .map(|c| ForeignContainer {
                    container: c.name().to_owned(),
                    box_name: c.label(BOX_LABEL).unwrap_or_default().to_owned(),
                    image: c.image.clone(),
                    status: state_word(c),
                })
                .collect();
            let containers: Vec<ContainerStatus> = all
                .into_iter()
                .zip(results)
                .map(|(c, mut probes)| {
                    probes.sort_by_key(|(j, _)| *j);
                    entry(&c, probes.into_iter().map(|(_, p)| p).collect(), now)
                })
                .collect();
            Ok((containers, foreign))
        })?;
        // No container of the box: its name may be another's (`charly-a-b-c` is box `a-b`
        // instance `c` and box `a` instance `b-c`), which `start` would refuse.
        let name_taken = match &target {
            Some(t) if containers.is_empty() => match self.block(self.engine.claimed(t)) {
                Err(DeployError::Engine(e @ crate::engine::EngineError::Claimed { .. })) => {
                    Some(e.to_string())
                }
                _ => None,
            },
            _ => None,
        };
        // A box the project does not have, with no container: an error, as `start` and `stop`
        // say (it suggested `charly start nosuch` and exited 0: trial 29).
        if let Some(t) = &target
            && containers.is_empty()
            && foreign.is_empty()
            && name_taken.is_none()
            && let e @ crate::engine::EngineError::UnknownBox { .. } = self.engine.missing(t)
        {
            return Err(e.into());
        }
        Ok(StatusReport {
            box_name: box_name.map(str::to_owned),
            instance: target.and_then(|t| t.instance),
            containers,
            foreign,
            name_taken,
        })
    }
}

fn entry(c: &ContainerSummary, probes: Vec<Probe>, now: i64) -> ContainerStatus {
    let ports = c
        .published()
        .into_iter()
        .map(|(container, host, protocol)| {
            let host_ip = c
                .ports
                .iter()
                .flatten()
                .find(|p| p.host_port <= host && host < p.host_port.saturating_add(p.range.max(1)))
                .map(|p| p.host_ip.clone())
                .unwrap_or_default();
            PortMap { host_ip, host, container, protocol }
        })
        .collect();
    ContainerStatus {
        box_name: c.label(BOX_LABEL).unwrap_or_default().to_owned(),
        instance: c.label(INSTANCE_LABEL).map(str::to_owned),
        container: c.name().to_owned(),
        status: state_word(c),
        image: c.image.clone(),
        id: short_id(&c.id),
        uptime_secs: (c.is_running() && c.started_at > 0)
            .then(|| now.saturating_sub(c.started_at).max(0) as u64),
        ports,
        probes,
    }
}

/// A probe to run.
enum Planned {
    Port { address: String, port: u16 },
    Mcp { name: String, endpoint: Result<charly::client::Endpoint, String> },
}

/// The probes of a running container: its published TCP ports, then its MCP servers.
fn plan(c: &ContainerSummary) -> Vec<Planned> {
    let mut planned = Vec::new();
    let published = c.published();
    for (_, host, protocol) in &published {
        if protocol == "tcp" {
            let address = c
                .ports
                .iter()
                .flatten()
                .find(|p| p.host_port <= *host && *host < p.host_port.saturating_add(p.range.max(1)))
                .map(|p| {
                    if p.host_ip.is_empty() || p.host_ip == "0.0.0.0" {
                        "127.0.0.1".to_owned()
                    } else {
                        p.host_ip.clone()
                    }
                })
                .unwrap_or_else(|| "127.0.0.1".into());
            planned.push(Planned::Port { address, port: *host });
        }
    }
    let Some(label) = c.label(MCP_PROVIDE_LABEL) else { return planned };
    let Ok(provides) = serde_json::from_str::<Vec<McpProvide>>(label) else {
        planned.push(Planned::Mcp {
            name: MCP_PROVIDE_LABEL.into(),
            endpoint: Err("the label is not a list of {name, url, transport}".into()),
        });
        return planned;
    };
    let ports = ContainerPorts {
        name: c.name().to_owned(),
        running: true,
        status: c.state.clone(),
        published: published.iter().map(|(cp, h, proto)| ((*cp, proto.clone()), *h)).collect(),
    };
    let box_name = c.label(BOX_LABEL).unwrap_or_default();
    for p in provides {
        let endpoint = host_endpoints(std::slice::from_ref(&p), box_name, &ports)
            .map_err(|e| e.to_string())
            .and_then(|mut e| e.pop().ok_or_else(|| "no endpoint".to_owned()));
        planned.push(Planned::Mcp { name: p.name.clone(), endpoint });
    }
    planned
}

impl Planned {
    async fn run(self) -> Probe {
        match self {
            Planned::Port { address, port } => {
                let dial = tokio::net::TcpStream::connect((address.as_str(), port));
                let (status, detail) = match tokio::time::timeout(PORT_TIMEOUT, dial).await {
                    Ok(Ok(_)) => ("ok", format!("{address}:{port} accepts connections")),
                    Ok(Err(e)) => ("failed", format!("{address}:{port}: {e}")),
                    Err(_) => ("failed", format!("{address}:{port}: no answer within {PORT_TIMEOUT:?}")),
                };
                Probe { name: "port".into(), status: status.into(), port: Some(port), detail }
            }
            Planned::Mcp { name, endpoint } => {
                let endpoint = match endpoint {
                    Ok(endpoint) => endpoint,
                    Err(e) => {
                        return Probe {
                            name: "mcp".into(),
                            status: "failed".into(),
                            port: None,
                            detail: format!("{name}: {e}"),
                        };
                    }
                };
                let port = url::Url::parse(&endpoint.location()).ok().and_then(|u| u.port());
                let options = charly::client::ConnectOptions { timeout: MCP_TIMEOUT, ..Default::default() };
                let result = async {
                    let client = charly::client::connect(&endpoint, &options).await?;
                    let pinged = client.ping().await;
                    client.close().await;
                    pinged
                }
                .await;
                let (status, detail) = match result {
                    Ok(()) => ("ok", format!("{name} answers ping at {}", endpoint.location())),
                    Err(e) => ("failed", format!("{name}: {e}")),
                };
                Probe { name: "mcp".into(), status: status.into(), port, detail }
            }
        }
    }
}
