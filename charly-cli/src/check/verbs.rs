//! The system check verbs (`REFERENCE.md` §18.9): what each one takes, parsed into a
//! [`SystemStep`].
//!
//! | verb | subject (the verb's value) | fields | runs |
//! |---|---|---|---|
//! | `file` | a path | `exists`, `mode`, `owner`, `group_of`, `filetype`, `contains`, `sha256` | container |
//! | `package` | a package name | `installed`, `versions` | container |
//! | `service` | a supervisord program or systemd unit | `running`, `enabled` | container |
//! | `port` | a container port | `listening` (container), `reachable`, `ip` (host, published port) | both |
//! | `process` | a process name | `running` | container |
//! | `command` | a shell command | `exit_status`, `stdout`, `stderr`, `in_container`, `from_host` | container (or host) |
//! | `http` | a URL | `status`, `body`, `headers`, `method`, `request_body`, `allow_insecure`, `no_follow_redirects`, `ca_file` | host |
//! | `dns` | a host name | `resolvable`, `addrs`, `server` (`IP[:PORT]`: ask that DNS server) | host |
//! | `user` | a user name | `exists`, `uid`, `gid`, `home`, `shell`, `groups` | container |
//! | `group` | a group name | `exists`, `gid` | container |
//! | `interface` | a network interface | `exists`, `addrs`, `mtu` | container |
//! | `kernel-param` | a sysctl key | `value` | container |
//! | `mount` | a mount point | `exists`, `mount_source`, `filesystem`, `opts` | container |
//! | `addr` | `host:port` | `reachable` | host |
//! | `matching` | a literal (after variables) | `contains` | nowhere |
//!
//! Field kinds: `exists`-style flags are booleans (default `true` where the verb has one);
//! `mode`, `owner`, `versions`, `status`, `value`... are output matchers (a scalar means
//! `equals`, or maps/lists of `equals`, `contains`, `matches`, `lt`...); `contains` takes a
//! scalar or list meaning *contains*, or matcher maps; `groups`, `addrs`, `opts` are lists that
//! must all be present; `headers` maps a header name to matchers.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use super::matcher::Matcher;

/// A system verb.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
#[allow(missing_docs)]
pub enum Verb {
    File,
    Package,
    Service,
    Port,
    Process,
    Command,
    Http,
    Dns,
    User,
    Group,
    Interface,
    KernelParam,
    Mount,
    Addr,
    Matching,
}

/// How a field's value is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// `true`/`false`.
    Flag,
    /// Output matchers: a scalar means equals.
    Matchers,
    /// A scalar or list of scalars means contains; matcher maps as they are.
    Contains,
    /// One string.
    Text,
    /// A list of strings (or one string).
    List,
    /// A map of header name to matchers.
    Headers,
}

/// Every field a system verb may carry, and its kind.
const FIELD_KINDS: [(&str, Kind); 37] = [
    ("exists", Kind::Flag),
    ("mode", Kind::Matchers),
    ("owner", Kind::Matchers),
    ("group_of", Kind::Matchers),
    ("filetype", Kind::Text),
    ("contains", Kind::Contains),
    ("sha256", Kind::Matchers),
    ("installed", Kind::Flag),
    ("versions", Kind::Matchers),
    ("running", Kind::Flag),
    ("enabled", Kind::Flag),
    ("listening", Kind::Flag),
    ("reachable", Kind::Flag),
    ("ip", Kind::Text),
    ("in_container", Kind::Flag),
    ("from_host", Kind::Flag),
    ("status", Kind::Matchers),
    ("body", Kind::Matchers),
    ("headers", Kind::Headers),
    ("method", Kind::Text),
    ("request_body", Kind::Text),
    ("allow_insecure", Kind::Flag),
    ("no_follow_redirects", Kind::Flag),
    ("ca_file", Kind::Text),
    ("resolvable", Kind::Flag),
    ("addrs", Kind::List),
    ("uid", Kind::Matchers),
    ("gid", Kind::Matchers),
    ("home", Kind::Matchers),
    ("shell", Kind::Matchers),
    ("groups", Kind::List),
    ("mtu", Kind::Matchers),
    ("value", Kind::Matchers),
    ("mount_source", Kind::Matchers),
    ("filesystem", Kind::Matchers),
    ("opts", Kind::List),
    ("server", Kind::Text),
];

/// `filetype:` values and the word `stat -c %F` prints for each.
pub(super) const FILETYPES: [(&str, &str); 6] = [
    ("file", "regular file"),
    ("directory", "directory"),
    ("symlink", "symbolic link"),
    ("socket", "socket"),
    ("fifo", "fifo"),
    ("device", "device"),
];

impl Verb {
    /// Every system verb, in the reference's order.
    pub const ALL: [Verb; 15] = [
        Verb::File,
        Verb::Package,
        Verb::Service,
        Verb::Port,
        Verb::Process,
        Verb::Command,
        Verb::Http,
        Verb::Dns,
        Verb::User,
        Verb::Group,
        Verb::Interface,
        Verb::KernelParam,
        Verb::Mount,
        Verb::Addr,
        Verb::Matching,
    ];

    /// The key that carries it (`kernel-param` ...).
    pub fn key(self) -> &'static str {
        match self {
            Verb::File => "file",
            Verb::Package => "package",
            Verb::Service => "service",
            Verb::Port => "port",
            Verb::Process => "process",
            Verb::Command => "command",
            Verb::Http => "http",
            Verb::Dns => "dns",
            Verb::User => "user",
            Verb::Group => "group",
            Verb::Interface => "interface",
            Verb::KernelParam => "kernel-param",
            Verb::Mount => "mount",
            Verb::Addr => "addr",
            Verb::Matching => "matching",
        }
    }

    /// The fields it takes besides the common ones.
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Verb::File => &["exists", "mode", "owner", "group_of", "filetype", "contains", "sha256"],
            Verb::Package => &["installed", "versions"],
            Verb::Service => &["running", "enabled"],
            Verb::Port => &["listening", "reachable", "ip"],
            Verb::Process => &["running"],
            Verb::Command => &["in_container", "from_host", "exit_status", "stdout", "stderr"],
            Verb::Http => &[
                "status",
                "body",
                "headers",
                "method",
                "request_body",
                "allow_insecure",
                "no_follow_redirects",
                "ca_file",
            ],
            Verb::Dns => &["resolvable", "addrs", "server"],
            Verb::User => &["exists", "uid", "gid", "home", "shell", "groups"],
            Verb::Group => &["exists", "gid"],
            Verb::Interface => &["exists", "addrs", "mtu"],
            Verb::KernelParam => &["value"],
            Verb::Mount => &["exists", "mount_source", "filesystem", "opts"],
            Verb::Addr => &["reachable"],
            Verb::Matching => &["contains"],
        }
    }

    /// Whether it runs on the host (never in the container): `http`, `dns`, `addr`, `matching`.
    pub fn host_only(self) -> bool {
        matches!(self, Verb::Http | Verb::Dns | Verb::Addr | Verb::Matching)
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl FromStr for Verb {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        Verb::ALL.into_iter().find(|v| v.key() == s).ok_or(())
    }
}

/// A system verb's step: the verb, its subject, and its fields by kind.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SystemStep {
    /// The verb; `None` only in [`Default`].
    pub verb: Option<Verb>,
    /// The verb's value: a path, a name, a URL, a command, `host:port`, a literal.
    pub subject: String,
    /// Boolean fields (`exists`, `running` ...).
    pub flags: BTreeMap<String, bool>,
    /// Matcher fields (`mode`, `status`, `contains` ...).
    pub matchers: BTreeMap<String, Vec<Matcher>>,
    /// Text fields (`filetype`, `method`, `ip` ...).
    pub texts: BTreeMap<String, String>,
    /// List fields (`groups`, `addrs`, `opts`).
    pub lists: BTreeMap<String, Vec<String>>,
    /// `headers:` (http): a header name and its matchers.
    pub headers: Vec<(String, Vec<Matcher>)>,
}

impl SystemStep {
    /// The verb (a parsed step always has one).
    pub fn verb(&self) -> Verb {
        self.verb.unwrap_or(Verb::Matching)
    }

    /// Flag `key`, or `default` when absent.
    pub fn flag(&self, key: &str, default: bool) -> bool {
        self.flags.get(key).copied().unwrap_or(default)
    }

    /// Whether flag `key` was given at all.
    pub fn has_flag(&self, key: &str) -> bool {
        self.flags.contains_key(key)
    }

    /// Matchers of `key` (empty when absent).
    pub fn matchers(&self, key: &str) -> &[Matcher] {
        self.matchers.get(key).map_or(&[], Vec::as_slice)
    }

    /// Text `key`.
    pub fn text(&self, key: &str) -> Option<&str> {
        self.texts.get(key).map(String::as_str)
    }

    /// List `key` (empty when absent).
    pub fn list(&self, key: &str) -> &[String] {
        self.lists.get(key).map_or(&[], Vec::as_slice)
    }
}

/// Parses the system verb `verb` of check node `node`; every problem goes to `problems`,
/// naming the field and what it takes. `exit_status`/`stdout`/`stderr` are the caller's.
pub(super) fn parse_system(verb: Verb, node: &Map<String, Value>, problems: &mut Vec<String>) -> SystemStep {
    let mut step = SystemStep { verb: Some(verb), ..SystemStep::default() };
    step.subject = match node.get(verb.key()) {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => {
            problems.push(format!("{verb}: needs {}", subject_hint(verb)));
            String::new()
        }
    };
    for (key, kind) in FIELD_KINDS {
        let Some(value) = node.get(key) else { continue };
        if !verb.fields().contains(&key) {
            continue; // the caller reports fields the verb does not take
        }
        let bad = |what: &str| format!("{key}: expects {what}, got {value}");
        match kind {
            Kind::Flag => match value {
                Value::Bool(b) => {
                    step.flags.insert(key.to_owned(), *b);
                }
                _ => problems.push(bad("true or false")),
            },
            Kind::Matchers => match Matcher::parse_all(value) {
                Ok(m) => {
                    step.matchers.insert(key.to_owned(), m);
                }
                Err(errors) => problems.extend(errors.into_iter().map(|e| format!("{key}: {e}"))),
            },
            Kind::Contains => match contains_matchers(value) {
                Ok(m) => {
                    step.matchers.insert(key.to_owned(), m);
                }
                Err(errors) => problems.extend(errors.into_iter().map(|e| format!("{key}: {e}"))),
            },
            Kind::Text => match scalar(value) {
                Some(s) => {
                    step.texts.insert(key.to_owned(), s);
                }
                None => problems.push(bad("a string")),
            },
            Kind::List => {
                let items: Option<Vec<String>> = match value {
                    Value::Array(items) => items.iter().map(scalar).collect(),
                    other => scalar(other).map(|s| vec![s]),
                };
                match items {
                    Some(items) => {
                        step.lists.insert(key.to_owned(), items);
                    }
                    None => problems.push(bad("a list of strings")),
                }
            }
            Kind::Headers => match value {
                Value::Object(map) => {
                    for (name, spec) in map {
                        match Matcher::parse_all(spec) {
                            Ok(m) => step.headers.push((name.clone(), m)),
                            Err(errors) => {
                                problems.extend(errors.into_iter().map(|e| format!("headers: {name}: {e}")))
                            }
                        }
                    }
                }
                _ => problems.push(bad("a map of header name to matchers")),
            },
        }
    }
    check_values(&step, problems);
    step
}

/// The fields every system check may carry besides its verb's own.
pub const COMMON_SYSTEM_KEYS: [&str; 8] =
    ["check", "id", "description", "context", "skip", "timeout", "eventually", "retry_interval"];

fn subject_hint(verb: Verb) -> &'static str {
    match verb {
        Verb::File | Verb::Mount => "a path, e.g. /etc/passwd",
        Verb::Package => "a package name",
        Verb::Service => "a service name (a supervisord program or systemd unit)",
        Verb::Port => "a container port, e.g. 8080",
        Verb::Process => "a process name, e.g. httpd",
        Verb::Command => "a shell command",
        Verb::Http => "a URL, e.g. http://127.0.0.1:${HOST_PORT:8080}/",
        Verb::Dns => "a host name",
        Verb::User => "a user name",
        Verb::Group => "a group name",
        Verb::Interface => "an interface name, e.g. eth0",
        Verb::KernelParam => "a sysctl key, e.g. net.ipv4.ip_forward",
        Verb::Addr => "host:port, e.g. 127.0.0.1:${HOST_PORT:8080}",
        Verb::Matching => "a literal to match (usually with variables)",
    }
}

/// Values that can be checked before variables are resolved.
fn check_values(step: &SystemStep, problems: &mut Vec<String>) {
    let verb = step.verb();
    let literal = !step.subject.contains("${");
    if verb == Verb::Port && literal && step.subject.parse::<u16>().is_err() && !step.subject.is_empty() {
        problems.push(format!("port: expects a port number 1-65535, got {:?}", step.subject));
    }
    if verb == Verb::Addr && literal && !step.subject.is_empty() && !addr_shape(&step.subject) {
        problems.push(format!("addr: expects host:port, got {:?}", step.subject));
    }
    if verb == Verb::Http && literal && !step.subject.is_empty() && url::Url::parse(&step.subject).is_err() {
        problems.push(format!("http: not a URL: {:?}", step.subject));
    }
    if let Some(t) = step.text("filetype")
        && !FILETYPES.iter().any(|(k, _)| *k == t)
    {
        let allowed: Vec<&str> = FILETYPES.iter().map(|(k, _)| *k).collect();
        problems.push(format!("filetype: unknown {t:?} (allowed: {})", allowed.join(", ")));
    }
    if verb == Verb::Command && step.flag("from_host", false) && step.flag("in_container", false) {
        problems.push("in_container: true and from_host: true contradict each other".into());
    }
}

fn addr_shape(s: &str) -> bool {
    s.rsplit_once(':').is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok())
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// `contains:` — a scalar or list of scalars means contains; maps are matchers.
fn contains_matchers(value: &Value) -> Result<Vec<Matcher>, Vec<String>> {
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().collect(),
        other => vec![other],
    };
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for item in items {
        let parsed = match scalar(item) {
            Some(s) => Matcher::new("contains", &Value::String(s)).map(|m| vec![m]),
            None => Matcher::parse_all(item).map_err(|e| e.join("; ")),
        };
        match parsed {
            Ok(m) => out.extend(m),
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}
