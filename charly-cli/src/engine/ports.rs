//! The port pre-flight `start` and `config setup` both run before they change anything: every
//! host port a container would publish must be free on its address, and a port in use is
//! named with who holds it (a charly box's container, another container, or a host process
//! read from `/proc`) and how to free it.

use super::names::Target;
use super::ps::{BOX_LABEL, INSTANCE_LABEL, parse_ps};
use super::spec::PortMap;
use super::{Engine, EngineError, owner};

/// A host port that is not free.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortTaken {
    /// The mapping whose host port is taken.
    pub port: PortMap,
    /// Who holds it: `container charly-x (box x)`, `container y`, `process nginx (pid 12)`,
    /// or `another process`.
    pub owner: String,
    /// How to free it: `stop it (`charly stop x`)`, `stop it (`kill 12`)`.
    pub fix: String,
    /// Whether the holder is `target`'s own container.
    pub own: bool,
}

/// Whether `p`'s host port can be bound on its address now (TCP listen, or a UDP bind).
pub fn is_free(p: &PortMap) -> bool {
    match p.protocol.as_str() {
        "udp" => std::net::UdpSocket::bind((p.host_ip.as_str(), p.host)).is_ok(),
        _ => std::net::TcpListener::bind((p.host_ip.as_str(), p.host)).is_ok(),
    }
}

/// `p` as `--port`/`-p` read it: `[IP:]HOST:CONTAINER[/udp]`, the address only when it is not
/// the default 127.0.0.1.
pub fn spec(p: &PortMap) -> String {
    let ip = if p.host_ip == crate::deploy::args::BIND_ADDRESS {
        String::new()
    } else {
        format!("{}:", p.host_ip)
    };
    let proto = if p.protocol == "udp" { "/udp" } else { "" };
    format!("{ip}{}:{}{proto}", p.host, p.container)
}

/// The `--port`/`-p` value that remaps `p` to a host port that is free now on its address
/// (the next after `p.host` of the same protocol that none of `ports` uses), as [`spec`]
/// writes it: run as printed, it publishes the same container port.
pub fn remap(p: &PortMap, ports: &[PortMap]) -> String {
    let mut next = p.clone();
    for host in p.host.saturating_add(1)..=u16::MAX {
        next.host = host;
        let used = ports.iter().any(|o| o.host == host && o.protocol == p.protocol && o.host_ip == p.host_ip);
        if !used && is_free(&next) {
            break;
        }
    }
    spec(&next)
}

/// The first of `ports` whose host port is taken, with its holder; `None` when all are free.
/// With `own_ok`, a port held by `target`'s own container counts as free (`config setup`
/// re-provisions a running deployment; `start` must not run a second container on it).
///
/// # Errors
///
/// podman failures of the `podman ps` that looks for the holder.
pub async fn preflight(
    engine: &Engine,
    target: &Target,
    ports: &[PortMap],
    own_ok: bool,
) -> Result<Option<PortTaken>, EngineError> {
    for p in ports {
        if is_free(p) {
            continue;
        }
        let containers = parse_ps(&engine.query(&["ps", "--format", "json"]).await?)?;
        let holder = containers
            .iter()
            .find(|c| c.published().iter().any(|(_, h, proto)| *h == p.host && *proto == p.protocol));
        // Its own only when the labels say so (a colliding name is another box's container).
        let own = holder.is_some_and(|c| {
            c.name() == target.container && super::claim::check_container(target, c).is_ok()
        });
        if own && own_ok {
            continue;
        }
        let (owner, fix) = match holder {
            Some(c) if own => (
                format!("its own container {}", c.name()),
                format!("it is running: `charly stop {}` first", super::start_args(target)),
            ),
            Some(c) => match c.label(BOX_LABEL) {
                Some(b) => {
                    let i = c.label(INSTANCE_LABEL).map(|i| format!(" -i {i}")).unwrap_or_default();
                    (format!("container {} (box {b})", c.name()), format!("stop it (`charly stop {b}{i}`)"))
                }
                None => (format!("container {}", c.name()), format!("stop it (`podman stop {}`)", c.name())),
            },
            None => match owner::holders(p.host, &p.protocol).first() {
                Some(h) => (h.to_string(), format!("stop it (`kill {}`)", h.pid)),
                None => ("another process (not readable in /proc)".into(), "stop that process".into()),
            },
        };
        return Ok(Some(PortTaken { port: p.clone(), owner, fix, own }));
    }
    Ok(None)
}
