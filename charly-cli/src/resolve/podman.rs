//! A box's MCP servers: the `ai.opencharly.mcp_provide` image label, the container name and
//! its published ports, all read from `podman ... inspect` JSON.
//!
//! The parsing here is pure (text in, values out) and tested on saved `podman inspect`
//! output; [`PodmanCli`] is the thin part that runs podman.

use std::collections::BTreeMap;
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

use super::ResolveError;
use charly::client::{Endpoint, TransportKind};

/// The OCI image label listing a box's MCP servers: a JSON list of
/// `{"name": ..., "url": ..., "transport": ...}`.
pub const MCP_PROVIDE_LABEL: &str = "ai.opencharly.mcp_provide";

/// The placeholder in a label URL that stands for the container's name.
pub const CONTAINER_NAME_PLACEHOLDER: &str = "{{.ContainerName}}";

/// One entry of the `ai.opencharly.mcp_provide` label (the `mcp_provide:` node of a candy).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct McpProvide {
    /// The server's name (what `--mcp-name` selects).
    pub name: String,
    /// Its URL, possibly with `{{.ContainerName}}`.
    pub url: String,
    /// `http` (default), `sse`; see [`TransportKind`].
    #[serde(default)]
    pub transport: String,
}

/// The container charly runs a box as: `charly-<box>`, or `charly-<box>-<instance>`.
pub fn container_name(box_name: &str, instance: Option<&str>) -> String {
    match instance.filter(|i| !i.is_empty()) {
        Some(instance) => format!("charly-{box_name}-{instance}"),
        None => format!("charly-{box_name}"),
    }
}

/// Reads the `ai.opencharly.mcp_provide` label from `podman image inspect` output (a JSON
/// list of one image object; the label is looked up in `Labels`, then `Config.Labels`).
/// An image without the label provides no servers (an empty list).
///
/// # Errors
///
/// [`ResolveError::Inspect`] when the text is not inspect output, [`ResolveError::Label`]
/// when the label is not a JSON list of `{name, url, transport}`.
pub fn parse_mcp_provide(image_inspect: &str) -> Result<Vec<McpProvide>, ResolveError> {
    let image = first_object(image_inspect, "podman image inspect")?;
    let label = ["/Labels", "/Config/Labels"]
        .iter()
        .filter_map(|p| image.pointer(p))
        .find_map(|labels| labels.get(MCP_PROVIDE_LABEL))
        .and_then(Value::as_str);
    let Some(label) = label else { return Ok(Vec::new()) };
    serde_json::from_str::<Vec<McpProvide>>(label).map_err(|e| {
        ResolveError::Label(format!(
            "{MCP_PROVIDE_LABEL} is not a JSON list of {{name, url, transport}}: {e}"
        ))
    })
}

/// The name of the image a container runs, from `podman inspect <container>` output
/// (`ImageName`, else `Config.Image`, else the `Image` id).
///
/// # Errors
///
/// [`ResolveError::Inspect`] when the text is not inspect output or names no image.
pub fn container_image(container_inspect: &str) -> Result<String, ResolveError> {
    let c = first_object(container_inspect, "podman inspect")?;
    ["/ImageName", "/Config/Image", "/Image"]
        .iter()
        .filter_map(|p| c.pointer(p).and_then(Value::as_str))
        .find(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| ResolveError::Inspect("podman inspect output names no image".into()))
}

/// What `podman inspect <container>` says about a container's ports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContainerPorts {
    /// The container's name as podman reports it (without a leading `/`).
    pub name: String,
    /// Whether it is running (`State.Running`).
    pub running: bool,
    /// Its state word (`running`, `exited`, `created`, ...).
    pub status: String,
    /// Published ports: (container port, protocol) → host port.
    pub published: BTreeMap<(u16, String), u16>,
}

/// Parses `podman inspect <container>` output: name, state and published ports, from
/// `NetworkSettings.Ports` (`{"18765/tcp": [{"HostIp": "", "HostPort": "18765"}]}`), falling
/// back to `HostConfig.PortBindings` (present before the container first runs).
///
/// # Errors
///
/// [`ResolveError::Inspect`] when the text is not inspect output or a port is malformed.
pub fn parse_container_ports(container_inspect: &str) -> Result<ContainerPorts, ResolveError> {
    let c = first_object(container_inspect, "podman inspect")?;
    let name = c.get("Name").and_then(Value::as_str).unwrap_or("").trim_start_matches('/').to_owned();
    let running = c.pointer("/State/Running").and_then(Value::as_bool).unwrap_or(false);
    let status = c.pointer("/State/Status").and_then(Value::as_str).unwrap_or("").to_owned();
    let mut published = BTreeMap::new();
    for pointer in ["/NetworkSettings/Ports", "/HostConfig/PortBindings"] {
        let Some(ports) = c.pointer(pointer).and_then(Value::as_object) else { continue };
        for (key, bindings) in ports {
            let (port, proto) = key.split_once('/').unwrap_or((key.as_str(), "tcp"));
            let port: u16 =
                port.parse().map_err(|_| ResolveError::Inspect(format!("{pointer}: bad port {key:?}")))?;
            let host_port = bindings
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b.get("HostPort").and_then(Value::as_str))
                .find_map(|p| p.parse::<u16>().ok().filter(|p| *p != 0));
            if let Some(host_port) = host_port {
                published.entry((port, proto.to_ascii_lowercase())).or_insert(host_port);
            }
        }
    }
    Ok(ContainerPorts { name, running, status, published })
}

/// Replaces `{{.ContainerName}}` (spaces inside the braces allowed) by `container`.
pub fn substitute_container_name(url: &str, container: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    while let Some(start) = rest.find("{{") {
        let Some(end) = rest[start..].find("}}") else { break };
        let inner = rest[start + 2..start + end].trim();
        out.push_str(&rest[..start]);
        if inner == ".ContainerName" {
            out.push_str(container);
        } else {
            out.push_str(&rest[start..start + end + 2]);
        }
        rest = &rest[start + end + 2..];
    }
    out.push_str(rest);
    out
}

/// Rewrites a URL that points at the container itself (`localhost`, a loopback or wildcard
/// address, or the container's name) to `127.0.0.1:<published host port>`, so it can be
/// dialled from the host. Other hosts are returned unchanged.
///
/// # Errors
///
/// [`ResolveError::NotPublished`] when the port is not published; its message says how to
/// publish it ([`super::publish_hint`]). [`ResolveError::Label`] for a URL that does not parse.
pub fn rewrite_for_host(
    url: &str,
    container: &str,
    box_name: &str,
    server: &str,
    ports: &ContainerPorts,
) -> Result<String, ResolveError> {
    let mut parsed = url::Url::parse(url)
        .map_err(|e| ResolveError::Label(format!("mcp server {server:?}: invalid url {url:?}: {e}")))?;
    let host = parsed.host_str().unwrap_or("").trim_start_matches('[').trim_end_matches(']').to_owned();
    let local = matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1" | "0.0.0.0" | "::")
        || host.eq_ignore_ascii_case(container);
    if !local {
        return Ok(url.to_owned());
    }
    let port = parsed.port_or_known_default().unwrap_or(80);
    let Some(host_port) = ports.published.get(&(port, "tcp".to_owned())) else {
        // The instance is what the container's name has after the box's.
        let instance = container
            .strip_prefix(&container_name(box_name, None))
            .and_then(|rest| rest.strip_prefix('-'))
            .filter(|i| !i.is_empty())
            .map(str::to_owned);
        return Err(ResolveError::NotPublished {
            server: server.to_owned(),
            container: container.to_owned(),
            box_name: box_name.to_owned(),
            instance,
            port,
        });
    };
    parsed.set_host(Some("127.0.0.1")).map_err(|e| ResolveError::Label(e.to_string()))?;
    parsed
        .set_port(Some(*host_port))
        .map_err(|_| ResolveError::Label(format!("cannot set a port on {url}")))?;
    Ok(parsed.to_string())
}

/// The label's servers for one container, names substituted but URLs not rewritten (for
/// `servers` without a running container).
///
/// # Errors
///
/// [`ResolveError::Label`] for an unknown transport or a bad URL.
pub fn provided_endpoints(provides: &[McpProvide], container: &str) -> Result<Vec<Endpoint>, ResolveError> {
    provides
        .iter()
        .map(|p| {
            let url = substitute_container_name(&p.url, container);
            endpoint(&p.name, &url, &p.transport)
        })
        .collect()
}

/// The label's servers as dialled from the host: names substituted, container-local URLs
/// rewritten to the published ports.
///
/// # Errors
///
/// [`ResolveError::NotRunning`] when the container is not running,
/// [`ResolveError::NotPublished`] for an unpublished port, [`ResolveError::Label`] for a bad
/// entry.
pub fn host_endpoints(
    provides: &[McpProvide],
    box_name: &str,
    ports: &ContainerPorts,
) -> Result<Vec<Endpoint>, ResolveError> {
    let container = if ports.name.is_empty() { container_name(box_name, None) } else { ports.name.clone() };
    if !ports.running {
        return Err(ResolveError::NotRunning {
            container,
            status: if ports.status.is_empty() { "not running".into() } else { ports.status.clone() },
        });
    }
    provides
        .iter()
        .map(|p| {
            let url = substitute_container_name(&p.url, &container);
            let url = rewrite_for_host(&url, &container, box_name, &p.name, ports)?;
            endpoint(&p.name, &url, &p.transport)
        })
        .collect()
}

fn endpoint(name: &str, url: &str, transport: &str) -> Result<Endpoint, ResolveError> {
    let bad = |e: charly::client::ClientError| ResolveError::Label(format!("mcp server {name:?}: {e}"));
    let kind: TransportKind = transport.parse().map_err(bad)?;
    let endpoint = Endpoint::url(url, kind).map_err(bad)?;
    Ok(Endpoint { name: name.to_owned(), ..endpoint })
}

fn first_object(text: &str, what: &str) -> Result<Value, ResolveError> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| ResolveError::Inspect(format!("{what} output is not JSON: {e}")))?;
    let first = match value {
        Value::Array(mut items) if !items.is_empty() => items.swap_remove(0),
        Value::Object(_) => value,
        _ => return Err(ResolveError::Inspect(format!("{what} returned no object"))),
    };
    if !first.is_object() {
        return Err(ResolveError::Inspect(format!("{what} returned no object")));
    }
    Ok(first)
}

/// Where inspect output comes from: the podman command, or saved text in tests.
pub trait Inspector: std::fmt::Debug {
    /// `podman image inspect <image>` output.
    ///
    /// # Errors
    ///
    /// [`ResolveError::Podman`] when podman fails (no such image, podman missing).
    fn image_inspect(&self, image: &str) -> Result<String, ResolveError>;
    /// `podman inspect --type container <name>` output.
    ///
    /// # Errors
    ///
    /// [`ResolveError::Podman`] when podman fails (no such container, podman missing).
    fn container_inspect(&self, name: &str) -> Result<String, ResolveError>;
}

/// Runs the `podman` binary (or `program`, e.g. `docker`-compatible shims).
#[derive(Clone, Debug)]
pub struct PodmanCli {
    /// The program to run; `podman` by default.
    pub program: String,
}

impl Default for PodmanCli {
    fn default() -> Self {
        PodmanCli { program: "podman".into() }
    }
}

impl PodmanCli {
    fn run(&self, args: &[&str]) -> Result<String, ResolveError> {
        let command_line = format!("{} {}", self.program, args.join(" "));
        let output = Command::new(&self.program).args(args).output().map_err(|e| ResolveError::Podman {
            command: command_line.clone(),
            message: match e.kind() {
                std::io::ErrorKind::NotFound => format!(
                    "{} is not installed or not on PATH (a box's MCP servers are reached through its \
                         container; install podman: scripts/runtimes.sh)",
                    self.program
                ),
                _ => e.to_string(),
            },
        })?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr).trim().to_owned();
            return Err(ResolveError::Podman {
                command: command_line,
                message: if stderr.is_empty() { output.status.to_string() } else { stderr },
            });
        }
        String::from_utf8(output.stdout).map_err(|_| ResolveError::Podman {
            command: command_line,
            message: "output is not UTF-8".into(),
        })
    }
}

impl Inspector for PodmanCli {
    fn image_inspect(&self, image: &str) -> Result<String, ResolveError> {
        self.run(&["image", "inspect", image])
    }

    fn container_inspect(&self, name: &str) -> Result<String, ResolveError> {
        self.run(&["inspect", "--type", "container", name])
    }
}

/// A box's MCP servers as dialled from the host: inspects the container
/// `charly-<box>[-<instance>]`, reads the label of its image (or of `image`, when given) and
/// rewrites the URLs to the published ports.
///
/// # Errors
///
/// Podman failures, and as [`host_endpoints`]; [`ResolveError::NoServers`] when the image
/// has no `ai.opencharly.mcp_provide` label.
pub fn box_endpoints(
    inspector: &dyn Inspector,
    box_name: &str,
    instance: Option<&str>,
    image: Option<&str>,
) -> Result<Vec<Endpoint>, ResolveError> {
    let container = container_name(box_name, instance);
    let container_json = inspector.container_inspect(&container)?;
    let ports = parse_container_ports(&container_json)?;
    let image = match image {
        Some(image) => image.to_owned(),
        None => container_image(&container_json)?,
    };
    let provides = parse_mcp_provide(&inspector.image_inspect(&image)?)?;
    if provides.is_empty() {
        return Err(ResolveError::NoServers(format!(
            "box {box_name}: image {image} has no {MCP_PROVIDE_LABEL} label (add an mcp_provide: node to one of its candies)"
        )));
    }
    let ports =
        ContainerPorts { name: if ports.name.is_empty() { container } else { ports.name.clone() }, ..ports };
    host_endpoints(&provides, box_name, &ports)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_podman_is_named_with_the_fix() {
        let podman = PodmanCli { program: "charly-test-no-such-podman".into() };
        let err = podman.run(&["inspect", "x"]).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "charly-test-no-such-podman inspect x: charly-test-no-such-podman is not installed"
            ),
            "{err}"
        );
        assert!(err.contains("scripts/runtimes.sh"), "{err}");
    }

    #[test]
    fn container_names() {
        assert_eq!(container_name("hello", None), "charly-hello");
        assert_eq!(container_name("hello", Some("")), "charly-hello");
        assert_eq!(container_name("hello", Some("2")), "charly-hello-2");
    }

    #[test]
    fn placeholder_substitution() {
        let cases = [
            ("http://{{.ContainerName}}:18765/mcp", "http://charly-web:18765/mcp"),
            ("http://{{ .ContainerName }}:1/x", "http://charly-web:1/x"),
            ("http://{{.Other}}/{{.ContainerName}}", "http://{{.Other}}/charly-web"),
            ("http://h/{{unclosed", "http://h/{{unclosed"),
        ];
        for (url, want) in cases {
            assert_eq!(substitute_container_name(url, "charly-web"), want);
        }
    }

    fn ports(published: &[(u16, u16)]) -> ContainerPorts {
        ContainerPorts {
            name: "charly-web".into(),
            running: true,
            status: "running".into(),
            published: published.iter().map(|(c, h)| ((*c, "tcp".to_owned()), *h)).collect(),
        }
    }

    #[test]
    fn rewrites_local_hosts_only() {
        let p = ports(&[(18765, 40001), (80, 40080)]);
        let rw = |url: &str| rewrite_for_host(url, "charly-web", "web", "hello", &p);
        assert_eq!(rw("http://charly-web:18765/mcp").unwrap(), "http://127.0.0.1:40001/mcp");
        assert_eq!(rw("http://localhost:18765/mcp?x=1").unwrap(), "http://127.0.0.1:40001/mcp?x=1");
        assert_eq!(rw("http://0.0.0.0:18765/mcp").unwrap(), "http://127.0.0.1:40001/mcp");
        assert_eq!(rw("http://[::1]:18765/mcp").unwrap(), "http://127.0.0.1:40001/mcp");
        assert_eq!(rw("http://localhost/sse").unwrap(), "http://127.0.0.1:40080/sse");
        assert_eq!(rw("https://api.example.test/mcp").unwrap(), "https://api.example.test/mcp");
        let err = rw("http://charly-web:9000/mcp").unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "mcp server \"hello\" listens on port 9000 of container charly-web, which is not published \
                 to the host: {}",
                crate::resolve::publish_hint("web", None, 9000)
            )
        );
    }
}
