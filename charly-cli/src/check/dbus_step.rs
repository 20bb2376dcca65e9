//! The `dbus:` verb of a check: a `check.dbus.*` leaf run as a step, its report's text as
//! stdout, its error as stderr (exit status 2), then the shared matchers. Against a box
//! (`charly check live`) the bus is the box container's ([`crate::dbus::container_bus`]);
//! otherwise this machine's session bus.
//!
//! ```yaml
//! notifier-up:
//!   check: a notification server owns its name
//!   dbus: call
//!   dest: org.freedesktop.DBus
//!   path: /org/freedesktop/DBus
//!   method: org.freedesktop.DBus.NameHasOwner
//!   args: ["string:org.freedesktop.Notifications"]
//!   stdout: "true"
//! ```
//!
//! `notify` takes `text:` (the title) and `message:` (the body). Under `charly check box` the
//! step is skipped.

use std::time::Duration;

use serde_json::{Map, Value};

use super::venue::Venue;
use crate::dbus::{self, Bus, DbusError};

/// The methods of `dbus:`.
pub const DBUS_METHODS: [&str; 4] = ["list", "call", "introspect", "notify"];

/// The keys a `dbus:` step may carry besides the common ones.
pub const DBUS_KEYS: [&str; 8] = ["dbus", "dest", "path", "method", "args", "text", "message", "exit_status"];

/// A parsed `dbus:` step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbusStep {
    /// `list`, `call`, `introspect` or `notify`.
    pub method: String,
    /// `dest:`, `path:`, `method:` (call), `text:`/`message:` (notify).
    pub fields: Map<String, Value>,
    /// `args:` (call), each `type:value`.
    pub args: Vec<String>,
}

/// Parses the `dbus:` step of `node`; every problem goes to `problems`.
pub(super) fn parse_dbus(node: &Map<String, Value>, problems: &mut Vec<String>) -> Option<DbusStep> {
    let method = match node.get("dbus") {
        Some(Value::String(m)) if DBUS_METHODS.contains(&m.as_str()) => m.clone(),
        other => {
            let shown = other.map_or("nothing".to_owned(), Value::to_string);
            problems.push(format!("dbus: unknown method {shown} (allowed: {})", DBUS_METHODS.join(", ")));
            return None;
        }
    };
    // The method's fields: those it needs, then those it may take.
    let (needs, takes): (&[&str], &[&str]) = match method.as_str() {
        "call" => (&["dest", "path", "method"], &["dest", "path", "method", "args"]),
        "introspect" => (&["dest", "path"], &["dest", "path"]),
        "notify" => (&["text"], &["text", "message"]),
        _ => (&[], &[]),
    };
    let before = problems.len();
    // A field of another method is said, not ignored (`dest:` on `dbus: list`).
    for key in ["dest", "path", "method", "args", "text", "message"] {
        if node.contains_key(key) && !takes.contains(&key) {
            problems.push(super::wl_fields::foreign_field("dbus", &method, key, takes));
        }
    }
    for key in needs {
        if !matches!(node.get(*key), Some(Value::String(s)) if !s.is_empty()) {
            problems.push(format!("dbus: {method} needs {key}: (a string)"));
        }
    }
    // The names are checked now, as a call would before sending (only those the method uses).
    let name = |key: &str| match node.get(key) {
        Some(Value::String(s)) if needs.contains(&key) && !s.is_empty() => Some(s.as_str()),
        _ => None,
    };
    // One at a time, so that each bad one is named.
    let (dest, path, member) = (name("dest"), name("path"), name("method"));
    for names in [(dest, None, None), (None, path, None), (None, None, member)] {
        if let Err(e) = dbus::check_step_names(names.0, names.1, names.2) {
            problems.push(format!("dbus: {method}: {e}"));
        }
    }
    let args = match node.get("args") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
        }
        Some(_) => {
            problems.push(
                "args: expects a list of type:value strings, e.g. [\"string:hi\", \"uint32:1\"]".into(),
            );
            Vec::new()
        }
    };
    for arg in &args {
        if let Err(e) = dbus::parse_arg(arg) {
            problems.push(format!("args: {e}"));
        }
    }
    let fields = node
        .iter()
        .filter(|(k, _)| ["dest", "path", "method", "text", "message"].contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    super::vars::defer_variables(node, problems, before);
    (problems.len() == before).then_some(DbusStep { method, fields, args })
}

/// The bus of `venue`: a running container's, else this machine's.
async fn bus_of(venue: &Venue) -> Result<Bus, DbusError> {
    match venue {
        Venue::Container { engine, container } => {
            let fix = container.strip_prefix("charly-").unwrap_or(container);
            dbus::container_bus(engine, container, fix).await.map(Bus::Container)
        }
        _ => Ok(Bus::Local),
    }
}

/// Runs `step` once on the bus of `venue`: (stdout, stderr, exit status).
pub(super) async fn attempt(step: &DbusStep, venue: &Venue, timeout: Duration) -> (String, String, i64) {
    let text = |k: &str| step.fields.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
    let done = async {
        let bus = bus_of(venue).await?;
        match step.method.as_str() {
            "list" => dbus::list(&bus, timeout).await.map(|r| r.to_string()),
            "call" => {
                dbus::call_typed(&bus, &text("dest"), &text("path"), &text("method"), &step.args, timeout)
                    .await
                    .map(|r| r.to_string())
            }
            "introspect" => {
                dbus::introspect(&bus, &text("dest"), &text("path"), timeout).await.map(|r| r.to_string())
            }
            _ => dbus::notify(&bus, &text("text"), &text("message"), timeout).await.map(|r| r.to_string()),
        }
    };
    match done.await {
        Ok(out) => (out, String::new(), 0),
        Err(e) => (String::new(), format!("{e}\n"), super::ERROR_EXIT_STATUS),
    }
}
