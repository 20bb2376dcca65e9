//! `check.dbus.*`: the session bus (REFERENCE.md §17) over zbus, for `.` (this machine, at
//! `DBUS_SESSION_BUS_ADDRESS`).
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
//! method does not take is the service's `InvalidArgs` error. A box (its container's bus) is not
//! reached yet: the reference runs the verb with the binary inside the container.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use zbus::zvariant::{self, Value};

use crate::report::Report;

/// Why a `check.dbus.*` leaf could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DbusError {
    /// An argument is not usable; the message names it and what is allowed.
    #[error("{0}")]
    Usage(String),
    /// The session bus could not be reached.
    #[error("cannot connect to the session bus at DBUS_SESSION_BUS_ADDRESS={address:?}: {why}")]
    Connect {
        /// The address tried (empty when unset).
        address: String,
        /// What zbus said.
        why: String,
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

/// The argument types `call` takes, for messages.
pub const ARG_TYPES: &str = "string, uint32, int32, int64, uint64, boolean (bool), double, byte, objpath; \
     array:TYPE:a,b,... and dict:KEYTYPE:VALUETYPE:k1,v1,k2,v2,... of those (as dbus-send spells them)";

/// A basic D-Bus type as text: parsed from a `type:value` argument.
trait Scalar: Sized + zvariant::Type + Into<Value<'static>> {
    /// What the text must be, for messages.
    const WHAT: &'static str;
    fn parse(text: &str) -> Option<Self>;
}

macro_rules! scalar {
    ($t:ty, $what:literal) => {
        impl Scalar for $t {
            const WHAT: &'static str = $what;
            fn parse(text: &str) -> Option<Self> {
                text.parse().ok()
            }
        }
    };
}
scalar!(String, "a string");
scalar!(u8, "a byte (0 to 255)");
scalar!(u32, "a uint32 (0 to 4294967295)");
scalar!(i32, "an int32");
scalar!(i64, "an int64");
scalar!(u64, "a uint64");
scalar!(bool, "true or false");
scalar!(f64, "a double");

impl Scalar for zvariant::OwnedObjectPath {
    const WHAT: &'static str = "an object path (/a/b)";
    fn parse(text: &str) -> Option<Self> {
        zvariant::OwnedObjectPath::try_from(text.to_owned()).ok()
    }
}

fn one<T: Scalar>(arg: &str, text: &str) -> Result<T, DbusError> {
    T::parse(text).ok_or_else(|| DbusError::Usage(format!("argument {arg:?}: {text:?} is not {}", T::WHAT)))
}

/// The items of an array or dict: comma-separated, none for empty text.
fn items(text: &str) -> Vec<&str> {
    if text.is_empty() { Vec::new() } else { text.split(',').collect() }
}

fn unknown(arg: &str, ty: &str) -> DbusError {
    DbusError::Usage(format!("argument {arg:?}: unknown type {ty:?} (types: {ARG_TYPES})"))
}

fn array_of<T: Scalar>(arg: &str, text: &str) -> Result<Value<'static>, DbusError> {
    let v = items(text).into_iter().map(|t| one::<T>(arg, t)).collect::<Result<Vec<T>, _>>()?;
    Ok(Value::from(v))
}

fn dict_of<K, V>(arg: &str, text: &str) -> Result<Value<'static>, DbusError>
where
    K: Scalar + std::hash::Hash + Eq,
    V: Scalar,
{
    let parts = items(text);
    if !parts.len().is_multiple_of(2) {
        return Err(DbusError::Usage(format!(
            "argument {arg:?}: a dict needs key,value pairs (k1,v1,k2,v2,...), got {} items",
            parts.len()
        )));
    }
    let mut map = HashMap::new();
    for pair in parts.chunks(2) {
        let key = one::<K>(arg, pair[0])?;
        if map.insert(key, one::<V>(arg, pair[1])?).is_some() {
            return Err(DbusError::Usage(format!("argument {arg:?}: key {:?} appears twice", pair[0])));
        }
    }
    Ok(Value::from(map))
}

/// Dispatches on a hashable element type name: `$f::<T>($arg, $text)` (callers take `double`
/// first where it is allowed).
macro_rules! by_type {
    ($ty:expr, $arg:expr, $text:expr, $f:ident $(, $pre:ty)*) => {
        match $ty {
            "string" => $f::<$($pre,)* String>($arg, $text),
            "objpath" => $f::<$($pre,)* zvariant::OwnedObjectPath>($arg, $text),
            "byte" => $f::<$($pre,)* u8>($arg, $text),
            "uint32" => $f::<$($pre,)* u32>($arg, $text),
            "int32" => $f::<$($pre,)* i32>($arg, $text),
            "int64" => $f::<$($pre,)* i64>($arg, $text),
            "uint64" => $f::<$($pre,)* u64>($arg, $text),
            "boolean" | "bool" => $f::<$($pre,)* bool>($arg, $text),
            "double" => Err(DbusError::Usage(format!(
                "argument {:?}: a dict key cannot be a double (D-Bus keys are basic, hashable types)",
                $arg
            ))),
            other => Err(unknown($arg, other)),
        }
    };
}

fn dict_keyed<K: Scalar + std::hash::Hash + Eq>(
    arg: &str,
    rest: (&str, &str),
) -> Result<Value<'static>, DbusError> {
    match rest {
        ("double", text) => dict_of::<K, f64>(arg, text),
        (vty, text) => by_type!(vty, arg, text, dict_of, K),
    }
}

/// `type:value` as a D-Bus value: a basic type, `array:TYPE:a,b,...` or
/// `dict:KEYTYPE:VALUETYPE:k1,v1,...` (items split at commas, as dbus-send does).
///
/// # Errors
///
/// [`DbusError::Usage`] naming the argument, the type and what is allowed.
pub fn parse_arg(arg: &str) -> Result<Value<'static>, DbusError> {
    let Some((ty, text)) = arg.split_once(':') else {
        return Err(DbusError::Usage(format!("argument {arg:?}: expects type:value (types: {ARG_TYPES})")));
    };
    let shape = |what: &str| DbusError::Usage(format!("argument {arg:?}: expects {what}"));
    match ty {
        "array" => {
            let (ety, items) = text.split_once(':').ok_or_else(|| shape("array:TYPE:a,b,..."))?;
            if ety == "array" || ety == "dict" {
                return Err(shape("an array of a basic type (nested arrays and dicts are not spelled here)"));
            }
            match ety {
                "double" => array_of::<f64>(arg, items),
                _ => by_type!(ety, arg, items, array_of),
            }
        }
        "dict" => {
            let (kty, rest) =
                text.split_once(':').ok_or_else(|| shape("dict:KEYTYPE:VALUETYPE:k1,v1,..."))?;
            let rest = rest.split_once(':').ok_or_else(|| shape("dict:KEYTYPE:VALUETYPE:k1,v1,..."))?;
            by_type!(kty, arg, rest, dict_keyed)
        }
        "string" => Ok(Value::from(text.to_owned())),
        "objpath" => Ok(Value::from(one::<zvariant::OwnedObjectPath>(arg, text)?)),
        "byte" => Ok(Value::U8(one(arg, text)?)),
        "uint32" => Ok(Value::U32(one(arg, text)?)),
        "int32" => Ok(Value::I32(one(arg, text)?)),
        "int64" => Ok(Value::I64(one(arg, text)?)),
        "uint64" => Ok(Value::U64(one(arg, text)?)),
        "boolean" | "bool" => Ok(Value::Bool(one(arg, text)?)),
        "double" => Ok(Value::F64(one(arg, text)?)),
        other => Err(unknown(arg, other)),
    }
}

/// A connection to the session bus.
async fn session() -> Result<zbus::Connection, DbusError> {
    let address = std::env::var("DBUS_SESSION_BUS_ADDRESS").unwrap_or_default();
    // Each call is bounded by the leaf's --timeout (tokio::time::timeout around it).
    zbus::connection::Builder::session()
        .map_err(|e| DbusError::Connect { address: address.clone(), why: e.to_string() })?
        .build()
        .await
        .map_err(|e| DbusError::Connect { address, why: e.to_string() })
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

/// `org.freedesktop.DBus.Error.ServiceUnknown: The name ... was not provided`.
fn reply_error(e: zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(name, text, _) => format!("{name}: {}", text.unwrap_or_default()),
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

/// `call`: the reply's values.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BusReply {
    /// The reply's signature, e.g. `as`, `u` (empty for none).
    pub signature: String,
    /// Each returned value in GVariant text (`"a"`, `uint32 7`, `["x", "y"]`).
    pub values: Vec<String>,
}

impl fmt::Display for BusReply {
    /// One value per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.values.iter().try_for_each(|v| writeln!(f, "{v}"))
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
pub async fn list(timeout: Duration) -> Result<BusNames, DbusError> {
    let conn = session().await?;
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
    dest: &str,
    path: &str,
    member: &str,
    args: &[String],
    timeout: Duration,
) -> Result<BusReply, DbusError> {
    let values = args.iter().map(|a| parse_arg(a)).collect::<Result<Vec<_>, _>>()?;
    let conn = session().await?;
    let reply = call(&conn, dest, path, member, values, timeout).await?;
    let body = reply.body();
    let signature = body.signature().to_string();
    if signature.is_empty() {
        return Ok(BusReply { signature, values: Vec::new() });
    }
    let values = match body.deserialize::<zvariant::Structure<'_>>() {
        Ok(s) => s.fields().iter().map(ToString::to_string).collect(),
        Err(_) => match body.deserialize::<Value<'_>>() {
            Ok(v) => vec![v.to_string()],
            Err(e) => {
                return Err(DbusError::Call {
                    call: member.into(),
                    why: format!("unreadable reply ({signature}): {e}"),
                });
            }
        },
    };
    Ok(BusReply { signature, values })
}

/// `introspect`.
///
/// # Errors
///
/// As [`list`].
pub async fn introspect(dest: &str, path: &str, timeout: Duration) -> Result<BusXml, DbusError> {
    let conn = session().await?;
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
pub async fn notify(title: &str, body: &str, timeout: Duration) -> Result<Notified, DbusError> {
    let conn = session().await?;
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
