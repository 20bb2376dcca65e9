//! Which session bus a leaf talks to ([`Bus`]): this machine's, or a box container's, found
//! through the engine and reached from the host.
//!
//! A box `web` (`-i 2`) is its running container `charly-web[-2]`; `podman inspect` gives the
//! container's main process (`.State.Pid`) and its environment (`.Config.Env`), whose
//! `DBUS_SESSION_BUS_ADDRESS` says where the box's dbus-daemon listens. Only a
//! `unix:path=PATH` socket can be reached from outside: charly connects to
//! `/proc/<pid>/root/PATH` (the container's root as the host sees it; charly runs as root and
//! podman is rootful, so the daemon's EXTERNAL authentication sees uid 0 on both sides).
//! Abstract sockets, `tcp:` and the listen-only forms (`unix:dir=`, `unix:tmpdir=`) are refused,
//! naming the address and what is supported.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::DbusError;
use crate::engine::{Engine, Target};

/// The address suggested for a box whose container has none.
pub const SUGGESTED_ADDRESS: &str = "unix:path=/tmp/dbus-session";

/// A session bus: this machine's, or the one inside a box's container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bus {
    /// This machine's, at `DBUS_SESSION_BUS_ADDRESS`.
    Local,
    /// A container's dbus-daemon, through its root under `/proc`.
    Container(ContainerBus),
}

/// Where a container's session bus is, as the host reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerBus {
    /// `charly-<box>[-<instance>]`.
    pub container: String,
    /// The container's `DBUS_SESSION_BUS_ADDRESS`, as set.
    pub address: String,
    /// The socket's path inside the container (from `unix:path=`).
    pub inner: String,
    /// The socket as the host sees it: `/proc/<pid>/root/<inner>`.
    pub socket: PathBuf,
    /// The box and `-i` as charly's commands take them (`web -i 2`), for hints.
    pub fix: String,
}

impl Bus {
    /// How the bus is named in messages.
    pub fn describe(&self) -> String {
        match self {
            Bus::Local => format!(
                "the session bus at DBUS_SESSION_BUS_ADDRESS={:?}",
                std::env::var("DBUS_SESSION_BUS_ADDRESS").unwrap_or_default()
            ),
            Bus::Container(c) => format!(
                "the session bus of container {} (DBUS_SESSION_BUS_ADDRESS={:?}, from the host {})",
                c.container,
                c.address,
                c.socket.display()
            ),
        }
    }

    /// A connection to this bus, authenticated and registered (`Hello`) within `timeout`.
    ///
    /// # Errors
    ///
    /// [`DbusError::Connect`] naming the bus and why (no socket, nothing listening, refused
    /// authentication, no answer in time).
    pub async fn connect(&self, timeout: Duration) -> Result<zbus::Connection, DbusError> {
        let failed = |why: String| DbusError::Connect { bus: self.describe(), why };
        let connecting = async {
            match self {
                Bus::Local => zbus::connection::Builder::session()
                    .map_err(|e| failed(e.to_string()))?
                    .build()
                    .await
                    .map_err(|e| failed(e.to_string())),
                Bus::Container(c) => {
                    let stream = tokio::net::UnixStream::connect(&c.socket).await.map_err(|e| {
                        failed(match e.kind() {
                            std::io::ErrorKind::NotFound => format!(
                                "there is no socket {} in the container: is its dbus-daemon running, listening \
                                 at {:?} (`charly cmd {} 'grep -lx dbus-daemon /proc/[0-9]*/comm'`)?",
                                c.inner, c.address, c.fix
                            ),
                            std::io::ErrorKind::ConnectionRefused => format!(
                                "nothing listens on {} in the container (the dbus-daemon that made it stopped?)",
                                c.inner
                            ),
                            _ => e.to_string(),
                        })
                    })?;
                    zbus::connection::Builder::unix_stream(stream)
                        .build()
                        .await
                        .map_err(|e| failed(e.to_string()))
                }
            }
        };
        match tokio::time::timeout(timeout, connecting).await {
            Ok(conn) => conn,
            Err(_) => Err(failed(format!(
                "no answer within {} (authentication and Hello)",
                charly::client::format_duration(timeout)
            ))),
        }
    }
}

/// The bus `target` names: `.` (this machine), or box `target` (instance `instance`), whose
/// container must be running.
///
/// # Errors
///
/// [`DbusError::Engine`] (a bad name, no container: how to start it, not running, no podman),
/// and as [`container_bus`].
pub async fn resolve(engine: &Engine, target: &str, instance: Option<&str>) -> Result<Bus, DbusError> {
    if target == "." {
        if let Some(why) = crate::resolve::instance_on_local(instance) {
            return Err(DbusError::Usage(why));
        }
        return Ok(Bus::Local);
    }
    let t = Target::new(target, instance)?;
    engine.running(&t).await?;
    let fix = format!("{}{}", t.box_name, t.instance_flag());
    container_bus(engine, &t.container, &fix).await.map(Bus::Container)
}

/// The session bus of `container` (`fix`: the box and `-i` as `charly update` takes them, for
/// the hints), from `podman inspect`.
///
/// # Errors
///
/// [`DbusError::Engine`] when the container is gone or not running, [`DbusError::NoAddress`],
/// [`DbusError::Unsupported`].
pub async fn container_bus(engine: &Engine, container: &str, fix: &str) -> Result<ContainerBus, DbusError> {
    let out = engine.query(&["inspect", "--type", "container", container]).await?;
    let parsed: Value = serde_json::from_str(&out).map_err(|e| {
        DbusError::Engine(crate::engine::EngineError::Output {
            command: format!("{} inspect --type container {container}", engine.program()),
            message: e.to_string(),
        })
    })?;
    let first = parsed.get(0).cloned().unwrap_or(Value::Null);
    let pid = first.pointer("/State/Pid").and_then(Value::as_u64).unwrap_or(0);
    if pid == 0 || first.pointer("/State/Running").and_then(Value::as_bool) == Some(false) {
        let state = first.pointer("/State/Status").and_then(Value::as_str).unwrap_or("not running");
        return Err(DbusError::Usage(format!(
            "container {container} is {state}, not running: start it with `charly start {fix}`"
        )));
    }
    let env = first.pointer("/Config/Env").and_then(Value::as_array).cloned().unwrap_or_default();
    let address = env
        .iter()
        .filter_map(Value::as_str)
        .find_map(|kv| kv.strip_prefix("DBUS_SESSION_BUS_ADDRESS="))
        .filter(|a| !a.is_empty());
    let Some(address) = address else {
        let box_name = fix.split(' ').next().unwrap_or(fix).to_owned();
        return Err(DbusError::NoAddress { container: container.to_owned(), box_name, fix: fix.to_owned() });
    };
    let Some(inner) = unix_path(address) else {
        return Err(DbusError::Unsupported { container: container.to_owned(), address: address.to_owned() });
    };
    let socket = PathBuf::from(format!("/proc/{pid}/root")).join(inner.trim_start_matches('/'));
    Ok(ContainerBus {
        container: container.to_owned(),
        address: address.to_owned(),
        inner,
        socket,
        fix: fix.to_owned(),
    })
}

/// The absolute `path=` of the first `unix:` entry of a D-Bus address list that has one
/// (`unix:path=/run/bus,guid=...;tcp:...`), percent escapes decoded.
pub fn unix_path(address: &str) -> Option<String> {
    address.split(';').find_map(|entry| {
        let keys = entry.strip_prefix("unix:")?;
        let path = keys.split(',').find_map(|kv| kv.strip_prefix("path="))?;
        let path = unescape(path)?;
        path.starts_with('/').then_some(path)
    })
}

/// `%2f`-style escapes of a D-Bus address value decoded; `None` for a broken escape.
fn unescape(value: &str) -> Option<String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::unix_path;

    #[test]
    fn only_unix_path_addresses_are_reachable() {
        assert_eq!(unix_path("unix:path=/run/bus").as_deref(), Some("/run/bus"));
        assert_eq!(unix_path("unix:path=/run/bus,guid=0123").as_deref(), Some("/run/bus"));
        assert_eq!(unix_path("unix:path=/tmp/a%20b%2cc").as_deref(), Some("/tmp/a b,c"));
        assert_eq!(unix_path("tcp:host=127.0.0.1,port=5;unix:path=/b").as_deref(), Some("/b"));
        assert_eq!(unix_path("unix:abstract=/tmp/dbus-x"), None);
        assert_eq!(unix_path("tcp:host=127.0.0.1,port=5"), None);
        assert_eq!(unix_path("unix:tmpdir=/tmp"), None);
        assert_eq!(unix_path("unix:path=relative/bus"), None);
        assert_eq!(unix_path("unix:path=/bad%zz"), None);
    }
}
