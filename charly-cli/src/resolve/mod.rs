//! Where an MCP endpoint comes from: `--url` (+ `--transport`), a server in a `.mcp.json`, or
//! a box (its image's `ai.opencharly.mcp_provide` label and its running container).
//!
//! | source | function |
//! |---|---|
//! | `--url U [--transport T]` | [`from_url`] |
//! | `--server NAME` in `.mcp.json` | [`load_mcp_json`] / [`parse_mcp_json`], then [`select`] |
//! | a box `[--instance I] [--mcp-name N]` | [`box_endpoints`] (runs podman through an [`Inspector`]), then [`select`] |
//!
//! The box path, step by step (all pure but the podman calls, see [`podman`]):
//! `podman inspect charly-<box>[-<instance>]` gives the state, the published ports and the
//! image; `podman image inspect <image>` gives the label; each label URL gets
//! `{{.ContainerName}}` replaced, and a URL that points at the container itself (`localhost`,
//! loopback, wildcard or the container's name) is rewritten to `127.0.0.1:<host port>`. A port
//! that is not published is an error that says how to publish it ([`publish_hint`]).
//!
//! ```
//! use charly_cli::resolve::{ContainerPorts, McpProvide, host_endpoints};
//!
//! let label = [McpProvide {
//!     name: "hello".into(),
//!     url: "http://{{.ContainerName}}:18765/mcp".into(),
//!     transport: "http".into(),
//! }];
//! let ports = ContainerPorts {
//!     name: "charly-hello".into(),
//!     running: true,
//!     status: "running".into(),
//!     published: [((18765, "tcp".to_owned()), 40001)].into(),
//! };
//! let endpoints = host_endpoints(&label, "hello", &ports).unwrap();
//! assert_eq!(endpoints[0].location(), "http://127.0.0.1:40001/mcp");
//! ```

pub(crate) mod mcp_json;
pub mod podman;

pub use mcp_json::{
    load_mcp_json, load_mcp_json_for, parse_mcp_json, parse_mcp_json_for, parse_mcp_json_with_env,
};
pub use podman::{
    CONTAINER_NAME_PLACEHOLDER, ContainerPorts, Inspector, MCP_PROVIDE_LABEL, McpProvide, PodmanCli,
    box_endpoints, container_image, container_name, host_endpoints, parse_container_ports, parse_mcp_provide,
    provided_endpoints, rewrite_for_host, substitute_container_name,
};

use charly::client::{Endpoint, TransportKind};

/// Why an endpoint could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A `.mcp.json` that cannot be used.
    #[error("invalid .mcp.json: {0}")]
    McpJson(String),
    /// A file that cannot be read.
    #[error("cannot read {what}: {message}")]
    Io {
        /// The path.
        what: String,
        /// The OS error.
        message: String,
    },
    /// `podman ...` failed.
    #[error("{command}: {message}")]
    Podman {
        /// The command line.
        command: String,
        /// podman's stderr, or the exit status.
        message: String,
    },
    /// Inspect output that is not what podman prints.
    #[error("{0}")]
    Inspect(String),
    /// A bad `ai.opencharly.mcp_provide` label or entry.
    #[error("{0}")]
    Label(String),
    /// The box's container is not running.
    #[error("container {container} is {status}: start the box first (mcp checks need a running container)")]
    NotRunning {
        /// The container name.
        container: String,
        /// Its state.
        status: String,
    },
    /// A container-local URL whose port is not published to the host.
    #[error(
        "mcp server \"{server}\" listens on port {port} of container {container}, which is not published to \
         the host: {}", publish_hint(box_name, instance.as_deref(), *port)
    )]
    NotPublished {
        /// The label entry's name.
        server: String,
        /// The container name.
        container: String,
        /// The box.
        box_name: String,
        /// The instance (`-i`), when the container is one.
        instance: Option<String>,
        /// The container port.
        port: u16,
    },
    /// No servers at all.
    #[error("{0}")]
    NoServers(String),
    /// `--server`/`--mcp-name` names no server.
    #[error("no mcp server named {wanted:?} (available: {available})")]
    UnknownServer {
        /// The name asked for.
        wanted: String,
        /// The names there are, comma-separated.
        available: String,
    },
    /// Several servers and no name to choose one.
    #[error("{source_name} provides several mcp servers ({available}): choose one with --mcp-name")]
    Ambiguous {
        /// `.mcp.json` or `box X`.
        source_name: String,
        /// The names, comma-separated.
        available: String,
    },
    /// A bad `--url`/`--transport`.
    #[error("{0}")]
    Endpoint(String),
}

/// How to publish container port `port` of a box's running container `charly-<box>[-<instance>]`
/// to the host: the one fix every "port not published" error prints (CDP's 9222, VNC's 5900,
/// an MCP server's port). Two ways, both checked by running them (tests/deploy/publish.rs):
/// declare the port in a candy and `charly update` (which publishes ports the rebuilt image
/// newly declares, [`crate::deploy::refresh`]), or recreate the container now with
/// `charly start -p` (the box's ports, plus this one).
///
/// ```
/// assert_eq!(
///     charly_cli::resolve::publish_hint("web", Some("2"), 9222),
///     "add a `port: [9222]` node to one of box web's candies and run `charly update web -i 2`, \
///      or publish it now with `charly stop web -i 2 && charly start web -i 2 -p 9222:9222` \
///      (any free host port before the colon)"
/// );
/// ```
pub fn publish_hint(box_name: &str, instance: Option<&str>, port: u16) -> String {
    publish_hint_keeping(box_name, instance, port, &[])
}

/// [`publish_hint`] for a container that publishes `kept` now (`-p` specs, [`published_specs`]):
/// its `charly start` repeats them, so following one hint does not unpublish what an earlier
/// one published (trial 2 M7: CDP's hint, then VNC's, left 9222 unpublished again).
///
/// ```
/// assert_eq!(
///     charly_cli::resolve::publish_hint_keeping("web", None, 5900, &["34911:9222".into()]),
///     "add a `port: [5900]` node to one of box web's candies and run `charly update web`, \
///      or publish it now with `charly stop web && charly start web -p 34911:9222 -p 5900:5900` \
///      (any free host port before the colon)"
/// );
/// ```
pub fn publish_hint_keeping(box_name: &str, instance: Option<&str>, port: u16, kept: &[String]) -> String {
    let args = match instance {
        Some(i) => format!("{box_name} -i {i}"),
        None => box_name.to_owned(),
    };
    let kept: String = kept.iter().map(|k| format!(" -p {k}")).collect();
    format!(
        "add a `port: [{port}]` node to one of box {box_name}'s candies and run `charly update {args}`, \
         or publish it now with `charly stop {args} && charly start {args}{kept} -p {port}:{port}` \
         (any free host port before the colon)"
    )
}

/// The `-p` specs (`[IP:]HOST:CONTAINER[/udp]`) of what `podman port CONTAINER` prints
/// (`5900/tcp -> 127.0.0.1:34911`, one a line): the host address kept unless it is any
/// address; an IPv6 line of a port already listed for IPv4 is left out.
///
/// ```
/// let out = "9222/tcp -> 0.0.0.0:9222\n5900/tcp -> 127.0.0.1:34911\n53/udp -> [::]:5353\n9222/tcp -> [::]:9222\n";
/// assert_eq!(
///     charly_cli::resolve::published_specs(out),
///     ["9222:9222", "127.0.0.1:34911:5900", "5353:53/udp"]
/// );
/// ```
pub fn published_specs(podman_port: &str) -> Vec<String> {
    let mut specs = Vec::new();
    let mut seen = Vec::new();
    for line in podman_port.lines() {
        let Some((inner, outer)) = line.trim().split_once(" -> ") else { continue };
        let (cport, proto) = inner.split_once('/').unwrap_or((inner, "tcp"));
        let Some((ip, host)) = outer.rsplit_once(':') else { continue };
        if seen.contains(&(cport, proto)) {
            continue;
        }
        seen.push((cport, proto));
        let ip = match ip {
            "0.0.0.0" | "[::]" | "::" | "" => String::new(),
            ip => format!("{ip}:"),
        };
        let udp = if proto == "udp" { "/udp" } else { "" };
        specs.push(format!("{ip}{host}:{cport}{udp}"));
    }
    specs
}

/// The target `.` (this machine) with `-i`: an error, since only a box has instances (the
/// flag was silently ignored before; trial finding). `None` when no instance was given.
pub fn instance_on_local(instance: Option<&str>) -> Option<String> {
    instance.filter(|i| !i.is_empty()).map(|i| {
        format!(
            "--instance {i:?}: the target `.` is this machine, which has no instances; drop --instance, \
             or give the box whose instance it is as the target"
        )
    })
}

/// The boxes of the project at `root`, for [`crate::engine::Engine::knowing`]: `None` when
/// its files cannot be read (the engine then says what it said before).
pub fn project_boxes(root: &std::path::Path) -> Option<crate::engine::KnownBoxes> {
    let project = crate::project::Project::at(root);
    let names = if root.join(crate::project::PROJECT_FILE).is_file() {
        let (nodes, _) = project.load().ok()?;
        let boxes = nodes.into_iter().filter(|n| n.kind == Some(crate::project::Kind::Box));
        Some(boxes.map(|n| n.name).collect())
    } else {
        None
    };
    Some(crate::engine::KnownBoxes { root: root.to_owned(), names })
}

/// Why an endpoint flag for `.` (`--cdp-url`, `--vnc-addr`; `key` is its MCP name) cannot
/// go with a box `target`: a box's service is dialled at the host port its container
/// publishes for `port`, so the flag would be ignored. `None` when no endpoint was given.
pub fn endpoint_on_box(
    flag: &str,
    key: &str,
    given: Option<&str>,
    target: &str,
    port: u16,
) -> Option<String> {
    given.map(|value| {
        let value = charly::client::redacted(value);
        format!(
            "{flag} {value:?} ({key} over MCP) is the endpoint for the target `.` (this machine), but the target \
             is the box {target:?}, which is dialled at the host port its container publishes for port {port}; \
             drop {flag} to use the box, or give `.` as the target to use {value}"
        )
    })
}

/// The endpoint of `--url` with `--transport` (empty or absent: Streamable HTTP) and
/// `--header` pairs.
///
/// # Errors
///
/// [`ResolveError::Endpoint`]: an unknown transport (`unsupported mcp transport "X" (expected
/// http, sse or stdio)`), `stdio` with a URL, or a URL that is not absolute http(s).
pub fn from_url(
    url: &str,
    transport: Option<&str>,
    headers: Vec<(String, String)>,
) -> Result<Endpoint, ResolveError> {
    let kind: TransportKind =
        transport.unwrap_or("").parse().map_err(|e| ResolveError::Endpoint(format!("{e}")))?;
    Ok(Endpoint::url(url, kind).map_err(|e| ResolveError::Endpoint(e.to_string()))?.with_headers(headers))
}

/// Picks one endpoint: the one called `name`, or the only one when `name` is `None`.
/// `source_name` (`.mcp.json`, `box web`) appears in errors.
///
/// # Errors
///
/// [`ResolveError::UnknownServer`], [`ResolveError::Ambiguous`] (several and no name; the
/// message lists them), [`ResolveError::NoServers`].
pub fn select(
    endpoints: Vec<Endpoint>,
    name: Option<&str>,
    source_name: &str,
) -> Result<Endpoint, ResolveError> {
    let names = || endpoints.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ");
    match name {
        Some(wanted) => {
            let available = names();
            endpoints.into_iter().find(|e| e.name == wanted).ok_or_else(|| ResolveError::UnknownServer {
                wanted: wanted.to_owned(),
                available: if available.is_empty() { "none".into() } else { available },
            })
        }
        None => match endpoints.len() {
            0 => Err(ResolveError::NoServers(format!("{source_name} provides no mcp servers"))),
            1 => Ok(endpoints.into_iter().next().expect("one endpoint")),
            _ => Err(ResolveError::Ambiguous { source_name: source_name.to_owned(), available: names() }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn named(name: &str) -> Endpoint {
        Endpoint {
            name: name.into(),
            ..Endpoint::url("http://127.0.0.1:1/mcp", TransportKind::StreamableHttp).unwrap()
        }
    }

    #[test]
    fn selection() {
        assert_eq!(select(vec![named("a")], None, "box web").unwrap().name, "a");
        assert_eq!(select(vec![named("a"), named("b")], Some("b"), "box web").unwrap().name, "b");
        assert_eq!(
            select(vec![named("a"), named("b")], None, "box web").unwrap_err().to_string(),
            "box web provides several mcp servers (a, b): choose one with --mcp-name"
        );
        assert_eq!(
            select(vec![named("a")], Some("z"), ".mcp.json").unwrap_err().to_string(),
            "no mcp server named \"z\" (available: a)"
        );
        assert_eq!(
            select(vec![], None, "box web").unwrap_err().to_string(),
            "box web provides no mcp servers"
        );
    }

    #[test]
    fn url_flags() {
        let e = from_url("http://127.0.0.1:3001/sse", Some("sse"), vec![("A".into(), "b".into())]).unwrap();
        assert_eq!(e.transport(), TransportKind::Sse);
        assert_eq!(
            from_url("http://h/mcp", None, vec![]).unwrap().transport(),
            TransportKind::StreamableHttp
        );
        assert_eq!(
            from_url("http://h/mcp", Some("grpc"), vec![]).unwrap_err().to_string(),
            r#"unsupported mcp transport "grpc" (expected http, sse or stdio)"#
        );
    }
}
