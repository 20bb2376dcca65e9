//! `check.dbus.*`: the session bus (REFERENCE.md §17) over zbus, of `.` (this machine, at
//! `DBUS_SESSION_BUS_ADDRESS`) or of a box: its running container's dbus-daemon, at the
//! `unix:path=` of the container's `DBUS_SESSION_BUS_ADDRESS`, reached from the host through
//! `/proc/<pid>/root` ([`container`]).
//!
//! | leaf | what it does | report |
//! |---|---|---|
//! | `list` | `org.freedesktop.DBus.ListNames`, sorted | [`BusNames`] |
//! | `call DEST PATH IFACE.METHOD [type:value...]` | a method call with typed arguments | [`BusReply`] |
//! | `introspect DEST PATH` | `org.freedesktop.DBus.Introspectable.Introspect` | [`BusXml`] |
//! | `notify TITLE [BODY]` | `org.freedesktop.Notifications.Notify("charly", 0, "", title, body, [], {}, -1)` | [`Notified`] |
//!
//! Arguments are typed `string:`, `objpath:`, `byte:`, `uint32:`, `int32:`, `int64:`, `uint64:`,
//! `boolean:`/`bool:`, `double:`, and, as dbus-send spells them, `array:TYPE:a,b,...` and
//! `dict:KEYTYPE:VALUETYPE:k1,v1,k2,v2,...` of those (items split at commas); a value that does not fit its type is refused before anything is sent, one the
//! method does not take is the service's `InvalidArgs` error ([`parse_arg`]).

mod args;
pub mod container;

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use zbus::zvariant::{self, Value};

pub use self::args::{ARG_TYPES, parse_arg};
pub use self::container::{Bus, ContainerBus, SUGGESTED_ADDRESS, container_bus, resolve};
use crate::report::Report;

/// Why a `check.dbus.*` leaf could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbusError {
    /// An argument is not usable; the message names it and what is allowed.
    #[error("{0}")]
    Usage(String),
    /// The session bus could not be reached.
    #[error("cannot connect to {bus}: {why}")]
    Connect {
        /// The bus and its address, e.g. `the session bus at DBUS_SESSION_BUS_ADDRESS="..."`.
        bus: String,
        /// What went wrong (zbus's words, or the missing socket).
        why: String,
    },
    /// The box's container could not be used: no such container (how to start it), not
    /// running, no podman.
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// The box's container has no `DBUS_SESSION_BUS_ADDRESS` in its environment.
    #[error(
        "container {container} has no DBUS_SESSION_BUS_ADDRESS in its environment, so where its session bus \
         listens is unknown: add `env: [\"DBUS_SESSION_BUS_ADDRESS={SUGGESTED_ADDRESS}\"]` (the address the \
         box's dbus-daemon listens at) to box {box_name} and recreate the container with `charly update {fix}`"
    )]
    NoAddress {
        /// The container name.
        container: String,
        /// The box.
        box_name: String,
        /// The box and `-i`, as `charly update` takes them.
        fix: String,
    },
    /// The box's bus address is not a socket path the host can reach.
    #[error(
        "container {container}: DBUS_SESSION_BUS_ADDRESS={address:?} cannot be reached from the host: charly \
         connects to a box's bus at a unix:path=/ABSOLUTE/PATH socket (through the container's root under \
         /proc); abstract sockets (unix:abstract=), tcp: and the listen-only unix:dir=/tmpdir=/runtime= are \
         not supported: run the box's dbus-daemon with --address=unix:path=/tmp/dbus-session and set \
         DBUS_SESSION_BUS_ADDRESS to that"
    )]
    Unsupported {
        /// The container name.
        container: String,
        /// The address as set.
        address: String,
    },
    /// The call failed: an error reply (unknown destination, method, bad arguments).
    #[error("{call}: {why}")]
    Call {
        /// `dest path iface.method`.
        call: String,
        /// The error name and message, e.g. `org.freedesktop.DBus.Error.ServiceUnknown: ...`.
        why: String,
    },
    /// No reply within the timeout.
    #[error("{call}: no reply within {}", charly::client::format_duration(*.after))]
    Timeout {
        /// `dest path iface.method`.
        call: String,
        /// The timeout.
        after: Duration,
    },
}

/// Calls `iface.method` on `dest` at `path` with `args` (a structure of them, or none).
async fn call(
    conn: &zbus::Connection,
    dest: &str,
    path: &str,
    member: &str,
    args: Vec<Value<'static>>,
    timeout: Duration,
) -> Result<zbus::Message, DbusError> {
    let shown = format!("{dest} {path} {member}");
    let Some((iface, method)) = member.rsplit_once('.') else {
        return Err(DbusError::Usage(format!(
            "method {member:?}: expects Interface.Method, e.g. org.freedesktop.DBus.ListNames"
        )));
    };
    check_names(dest, path, iface, method, member)?;
    let failed = |e: zbus::Error| DbusError::Call { call: shown.clone(), why: reply_error(e) };
    let sent = async {
        if args.is_empty() {
            conn.call_method(Some(dest), path, Some(iface), method, &()).await
        } else {
            let body = args.into_iter().fold(zvariant::StructureBuilder::new(), |b, v| b.append_field(v));
            let body = body.build().map_err(zbus::Error::from)?;
            conn.call_method(Some(dest), path, Some(iface), method, &body).await
        }
    };
    match tokio::time::timeout(timeout, sent).await {
        Ok(reply) => reply.map_err(failed),
        Err(_) => Err(DbusError::Timeout { call: shown, after: timeout }),
    }
}

/// The names a `dbus:` plan step gives, checked when the plan is read by the rules a call
/// checks before sending ([`call`]): `dest` a bus name, `path` an object path, `method`
/// `Interface.Method`; each absent one is not checked.
///
/// # Errors
///
/// The first bad one, as [`DbusError::Usage`] naming it and the rule.
pub fn check_step_names(
    dest: Option<&str>,
    path: Option<&str>,
    member: Option<&str>,
) -> Result<(), DbusError> {
    let dest = dest.unwrap_or("org.freedesktop.DBus");
    let path = path.unwrap_or("/");
    let member = member.unwrap_or("org.freedesktop.DBus.Ping");
    let Some((iface, method)) = member.rsplit_once('.') else {
        return Err(DbusError::Usage(format!(
            "method {member:?}: expects Interface.Method, e.g. org.freedesktop.DBus.ListNames"
        )));
    };
    check_names(dest, path, iface, method, member)
}

/// The destination, object path, interface and method checked before anything is sent: a
/// bad one is a [`DbusError::Usage`] naming the argument and the rule.
fn check_names(dest: &str, path: &str, iface: &str, method: &str, member: &str) -> Result<(), DbusError> {
    let bad = |what: &str, value: &str, rule: &str, e: zbus::names::Error| {
        DbusError::Usage(format!("{what} {value:?} is not a D-Bus {rule}: {e}"))
    };
    zbus::names::BusName::try_from(dest)
        .map_err(|e| bad("destination", dest, "bus name (e.g. org.freedesktop.Notifications or :1.42)", e))?;
    zvariant::ObjectPath::try_from(path).map_err(|e| {
        DbusError::Usage(format!(
            "path {path:?} is not a D-Bus object path (`/`, or `/` then elements of [A-Za-z0-9_] \
             joined by `/`, e.g. /org/freedesktop/DBus): {e}"
        ))
    })?;
    zbus::names::InterfaceName::try_from(iface)
        .map_err(|e| bad("method", member, "Interface.Method (the interface part is not valid)", e))?;
    zbus::names::MemberName::try_from(method)
        .map_err(|e| bad("method", member, "Interface.Method (the method part is not valid)", e))?;
    Ok(())
}

/// `org.freedesktop.DBus.Error.ServiceUnknown: The name ... was not provided`.
fn reply_error(e: zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(name, text, _) => format!("{name}: {}", text.unwrap_or_default()),
        // The socket failed under the call: the bus (its dbus-daemon) went away, said as such.
        e @ zbus::Error::InputOutput(_) => format!(
            "the connection to the bus failed during the call ({e}): did its dbus-daemon stop? \
             `charly check dbus list` says whether the bus answers again"
        ),
        other => other.to_string(),
    }
}

/// `list`: the names on the bus.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BusNames {
    /// Sorted.
    pub names: Vec<String>,
}

impl fmt::Display for BusNames {
    /// One name per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.names.iter().try_for_each(|n| writeln!(f, "{n}"))
    }
}

impl Report for BusNames {}

/// `call`: the reply's values. Its JSON also has `values`: each returned value as JSON
/// (integers and doubles as numbers, booleans, strings, object paths and signatures as
/// strings, variants as their content, arrays and structures as arrays, dicts as objects).
// `values` items have no one JSON type, which a strict schema needs for every `items`: the
// schema leaves it out of `properties` and admits it as an additional property.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
pub struct BusReply {
    /// The reply's signature, e.g. `as`, `u` (empty for none).
    pub signature: String,
    /// Each returned value as JSON ([`to_json`]; see the type's docs).
    #[schemars(skip)]
    pub values: Vec<serde_json::Value>,
    /// Each returned value in GVariant text (`"a"`, `uint32 7`, `["x", "y"]`), as printed. The
    /// values themselves, as JSON of their own types, are `values`.
    pub text: Vec<String>,
}

impl fmt::Display for BusReply {
    /// One value per line, in GVariant text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.text.iter().try_for_each(|v| writeln!(f, "{v}"))
    }
}

/// A D-Bus value as JSON: integers and doubles as numbers (a NaN or infinite double as
/// `null`), booleans, strings, object paths and signatures as strings, a variant as its
/// content, arrays and structures as arrays, dicts as objects (keys as text: `"1"` for an
/// integer key), a file descriptor as its number.
pub fn to_json(v: &Value<'_>) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        Value::U8(n) => J::from(*n),
        Value::Bool(b) => J::from(*b),
        Value::I16(n) => J::from(*n),
        Value::U16(n) => J::from(*n),
        Value::I32(n) => J::from(*n),
        Value::U32(n) => J::from(*n),
        Value::I64(n) => J::from(*n),
        Value::U64(n) => J::from(*n),
        Value::F64(n) => serde_json::Number::from_f64(*n).map_or(J::Null, J::Number),
        Value::Str(s) => J::from(s.as_str()),
        Value::Signature(s) => J::from(s.to_string()),
        Value::ObjectPath(p) => J::from(p.as_str()),
        Value::Value(inner) => to_json(inner),
        Value::Array(a) => J::Array(a.iter().map(to_json).collect()),
        Value::Dict(d) => J::Object(
            d.iter()
                .map(|(k, v)| {
                    let key = match to_json(k) {
                        J::String(s) => s,
                        other => other.to_string(),
                    };
                    (key, to_json(v))
                })
                .collect(),
        ),
        Value::Structure(s) => J::Array(s.fields().iter().map(to_json).collect()),
        #[cfg(unix)]
        Value::Fd(fd) => {
            use std::os::fd::AsRawFd as _;
            J::from(fd.as_raw_fd())
        }
        #[allow(unreachable_patterns)]
        other => J::from(other.to_string()),
    }
}

impl Report for BusReply {}

/// `introspect`: the object's introspection XML.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BusXml {
    /// The XML as the service sent it.
    pub xml: String,
}

impl fmt::Display for BusXml {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.xml)?;
        if !self.xml.ends_with('\n') {
            f.write_str("\n")?;
        }
        Ok(())
    }
}

impl Report for BusXml {}

/// `notify`: the id the notification server gave.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Notified {
    /// The notification id.
    pub id: u32,
}

impl fmt::Display for Notified {
    /// `Notification N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Notification {}", self.id)
    }
}

impl Report for Notified {}

/// `list`.
///
/// # Errors
///
/// [`DbusError::Connect`], [`DbusError::Call`], [`DbusError::Timeout`].
pub async fn list(bus: &Bus, timeout: Duration) -> Result<BusNames, DbusError> {
    let conn = bus.connect(timeout).await?;
    let reply = call(
        &conn,
        "org.freedesktop.DBus",
        "/org/freedesktop/DBus",
        "org.freedesktop.DBus.ListNames",
        Vec::new(),
        timeout,
    )
    .await?;
    let mut names: Vec<String> = reply
        .body()
        .deserialize()
        .map_err(|e| DbusError::Call { call: "ListNames".into(), why: e.to_string() })?;
    names.sort();
    Ok(BusNames { names })
}

/// `call`: `args` are `type:value`, checked before anything is sent.
///
/// # Errors
///
/// [`DbusError::Usage`] for a bad argument or method name, and as [`list`].
pub async fn call_typed(
    bus: &Bus,
    dest: &str,
    path: &str,
    member: &str,
    args: &[String],
    timeout: Duration,
) -> Result<BusReply, DbusError> {
    let mut values = args.iter().map(|a| parse_arg(a)).collect::<Result<Vec<_>, _>>()?;
    let conn = bus.connect(timeout).await?;
    if let Some(wanted) = in_types(&conn, dest, path, member, timeout).await {
        args::check_against(member, &wanted, args, &mut values)?;
    }
    let reply = call(&conn, dest, path, member, values, timeout).await?;
    let body = reply.body();
    let signature = body.signature().to_string();
    if signature.is_empty() {
        return Ok(BusReply { signature, values: Vec::new(), text: Vec::new() });
    }
    let (signature, values): (String, Vec<Value<'_>>) = match body.deserialize::<zvariant::Structure<'_>>() {
        // Several values: zbus holds their signature as one structure's; D-Bus writes it
        // without the parentheses (`su`, not `(su)`).
        Ok(s) => (body.signature().to_string_no_parens(), s.into_fields()),
        Err(_) => match body.deserialize::<Value<'_>>() {
            Ok(v) => (signature, vec![v]),
            Err(e) => {
                return Err(DbusError::Call {
                    call: member.into(),
                    why: format!("unreadable reply ({signature}): {e}"),
                });
            }
        },
    };
    Ok(BusReply {
        signature,
        text: values.iter().map(ToString::to_string).collect(),
        values: values.iter().map(to_json).collect(),
    })
}

/// The in-argument types of `member` (`Interface.Method`) as the object at `dest` `path`
/// introspects it; `None` when it cannot say (no `Introspectable`, the method not listed, a
/// bad name: the call then goes as given and [`call`] reports what is wrong).
async fn in_types(
    conn: &zbus::Connection,
    dest: &str,
    path: &str,
    member: &str,
    timeout: Duration,
) -> Option<Vec<String>> {
    let (iface, method) = member.rsplit_once('.')?;
    let introspect = "org.freedesktop.DBus.Introspectable.Introspect";
    let reply = call(conn, dest, path, introspect, Vec::new(), timeout).await.ok()?;
    let xml: String = reply.body().deserialize().ok()?;
    args::method_in_types(&xml, iface, method)
}

/// `introspect`.
///
/// # Errors
///
/// As [`list`].
pub async fn introspect(bus: &Bus, dest: &str, path: &str, timeout: Duration) -> Result<BusXml, DbusError> {
    let conn = bus.connect(timeout).await?;
    let member = "org.freedesktop.DBus.Introspectable.Introspect";
    let reply = call(&conn, dest, path, member, Vec::new(), timeout).await?;
    let xml: String = reply
        .body()
        .deserialize()
        .map_err(|e| DbusError::Call { call: member.into(), why: e.to_string() })?;
    Ok(BusXml { xml })
}

/// `notify`: `Notify("charly", 0, "", title, body, [], {}, -1)`.
///
/// # Errors
///
/// As [`list`]; no notification server is `ServiceUnknown`.
pub async fn notify(bus: &Bus, title: &str, body: &str, timeout: Duration) -> Result<Notified, DbusError> {
    let conn = bus.connect(timeout).await?;
    let shown =
        "org.freedesktop.Notifications /org/freedesktop/Notifications org.freedesktop.Notifications.Notify";
    let hints: HashMap<&str, Value<'_>> = HashMap::new();
    let args = ("charly", 0u32, "", title, body, Vec::<&str>::new(), hints, -1i32);
    let sent = conn.call_method(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        Some("org.freedesktop.Notifications"),
        "Notify",
        &args,
    );
    let reply = match tokio::time::timeout(timeout, sent).await {
        Ok(r) => r.map_err(|e| DbusError::Call { call: shown.into(), why: reply_error(e) })?,
        Err(_) => return Err(DbusError::Timeout { call: shown.into(), after: timeout }),
    };
    let id: u32 =
        reply.body().deserialize().map_err(|e| DbusError::Call { call: shown.into(), why: e.to_string() })?;
    Ok(Notified { id })
}
