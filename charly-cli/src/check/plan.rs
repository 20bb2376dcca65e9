//! Check plans: parsing the YAML into [`Check`]s and collecting every [`Problem`].
//!
//! A plan file is a map of name-first nodes (the project's format: a node's kind is the one
//! kind key it carries). Nodes with a `check:` key are checks; other nodes (`box:`, `candy:`,
//! `port:`, `mcp_provide:` ...) are left alone, so a candy's `charly.yml` is itself a plan.
//!
//! ```yaml
//! hello-ping:
//!   check: the hello server answers ping
//!   mcp: ping
//!   context: [deploy]
//!   stdout: ok
//! hello-echo:
//!   check: echo says what it is told
//!   mcp: call
//!   tool: echo
//!   input: {message: hi}
//!   timeout: 5s
//!   stdout: [{contains: hi}, {not_contains: error}]
//!   eventually: 30s
//!   retry_interval: 2s
//! hello-greet:
//!   check: greet asks the user's name and uses it
//!   mcp: call
//!   tool: greet
//!   elicit: {name: Alice}      # the form the server asks for (input-required or elicitation/create)
//!   stdout: {contains: Alice}
//! ```
//!
//! `elicit:` (form fields), `sample:` (the text a sampling request gets) and `roots:` (URIs)
//! answer what a `call` or `read` step's server asks for, as `charly check mcp call --elicit
//! FIELD=VALUE --sample TEXT --root URI` do; a question they leave open fails the step,
//! naming it.
//!
//! Parsing never stops at the first mistake: every problem of every check is collected (the
//! way serde_derive's `Ctxt` collects errors), and [`Plan::problems`] lists them all.

use std::fmt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value};

use super::cdp_step::{CDP_KEYS, CdpStep, parse_cdp};
pub use super::context::Context;
use super::dbus_step::{DBUS_KEYS, DbusStep, parse_dbus};
use super::matcher::Matcher;
use super::mcp_step::parse_mcp;
use super::verbs::{COMMON_SYSTEM_KEYS, SystemStep, Verb, parse_system};
use super::vnc_step::{VNC_KEYS, VncStep, parse_vnc};
use super::wl_step::{WL_KEYS, WlStep, parse_wl};
use crate::probe::{Method, Request};
use charly::client::{Answers, parse_duration};

/// The verbs a check can carry (one per check): `mcp`, `cdp` ([`CdpStep`]) and the system
/// verbs ([`Verb`]).
pub const VERBS: [&str; 20] = [
    "mcp",
    "cdp",
    "dbus",
    "vnc",
    "wl",
    "file",
    "package",
    "service",
    "port",
    "process",
    "command",
    "http",
    "dns",
    "user",
    "group",
    "interface",
    "kernel-param",
    "mount",
    "addr",
    "matching",
];

/// Every key an `mcp:` check node may have (the system verbs' keys: [`Verb::fields`] and
/// [`COMMON_SYSTEM_KEYS`]).
pub const CHECK_KEYS: [&str; 20] = [
    "check",
    "id",
    "description",
    "skip",
    "mcp",
    "context",
    "tool",
    "input",
    "uri",
    "mcp_name",
    "headers",
    "elicit",
    "sample",
    "roots",
    "timeout",
    "stdout",
    "stderr",
    "exit_status",
    "eventually",
    "retry_interval",
];

/// The window `eventually: true` gets: 30 seconds.
pub const DEFAULT_EVENTUALLY: Duration = Duration::from_secs(30);

/// The wait between `eventually` attempts when `retry_interval` is absent: 1 second.
pub const DEFAULT_RETRY_INTERVAL: Duration = Duration::from_secs(1);

/// One check node.
#[derive(Clone, Debug, PartialEq)]
pub struct Check {
    /// The node's name (its key in the file).
    pub name: String,
    /// The `check:` description.
    pub description: String,
    /// The file it came from (empty for text without a file).
    pub source: String,
    /// The verb (`mcp`); `None` when missing or unknown (a [`Problem`] says which).
    pub verb: Option<String>,
    /// The `mcp:` method and its arguments, when the verb is `mcp` and they are valid.
    pub request: Option<McpStep>,
    /// A system verb's step (`file:`, `http:` ...), parsed before variables are resolved.
    pub system: Option<SystemStep>,
    /// The `cdp:` step, parsed before variables are resolved (again at each attempt).
    pub cdp: Option<CdpStep>,
    /// The `dbus:` step.
    pub dbus: Option<DbusStep>,
    /// The `vnc:` step, parsed before variables are resolved (again at each attempt).
    pub vnc: Option<VncStep>,
    /// The `wl:` step, parsed before variables are resolved (again at each attempt).
    pub wl: Option<WlStep>,
    /// The node as written: a system step is parsed again from it once `${...}` variables
    /// are resolved.
    pub raw: Map<String, Value>,
    /// `skip: true`: never runs (reported as skipped).
    pub skip: bool,
    /// The line of the node in its file (0 when unknown).
    pub line: usize,
    /// Which section it came from (`candy`, `box`, `deploy`; empty for a plan file).
    pub section: String,
    /// `context:`; empty when absent.
    pub contexts: Vec<Context>,
    /// `timeout:` for each attempt (connect and request); the run's default when `None`.
    pub timeout: Option<Duration>,
    /// `stdout:` matchers.
    pub stdout: Vec<Matcher>,
    /// `stderr:` matchers.
    pub stderr: Vec<Matcher>,
    /// `exit_status:`, default 0.
    pub exit_status: i64,
    /// `eventually:` — retry until the check passes or this much time has passed.
    pub eventually: Option<Duration>,
    /// `retry_interval:` between `eventually` attempts.
    pub retry_interval: Duration,
}

/// The `mcp:` part of a check.
#[derive(Clone, Debug, PartialEq)]
pub struct McpStep {
    /// The method.
    pub method: Method,
    /// The request to send (`None` for `servers`, which dials nothing).
    pub request: Option<Request>,
    /// `mcp_name:` — which of several servers.
    pub mcp_name: Option<String>,
    /// `elicit:`, `sample:`, `roots:` — what the step answers when the server asks for input.
    pub answers: Answers,
    /// `headers:` — HTTP headers of the step's requests, (name, value) with `${VAR}` left for
    /// the run to expand from the environment (a value is often a secret: never in the plan).
    pub headers: Vec<(String, String)>,
}

/// A mistake in a plan, tied to the check it is in.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// The file (empty for text without a file).
    pub source: String,
    /// The line of the check in the file (0 when unknown).
    pub line: usize,
    /// The check's name (empty for a problem with the file itself).
    pub check: String,
    /// What is wrong and, where it helps, what to write instead.
    pub message: String,
}

impl fmt::Display for Problem {
    /// `file:line: check NAME: message` (the line when known; neither for text without a file).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.source.is_empty(), self.line) {
            (true, _) => {}
            (false, 0) => write!(f, "{}: ", self.source)?,
            (false, line) => write!(f, "{}:{line}: ", self.source)?,
        }
        if !self.check.is_empty() {
            write!(f, "check {}: ", self.check)?;
        }
        f.write_str(&self.message)
    }
}

/// A parsed plan: its checks in file order and every problem found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plan {
    /// The checks.
    pub checks: Vec<Check>,
    /// Everything wrong with them; a plan with problems is not run.
    pub problems: Vec<Problem>,
}

impl Plan {
    /// Parses plan text. `source` names it in problems (a path, or empty).
    ///
    /// YAML that does not parse, or a document that is not a map, is one [`Problem`] with no
    /// check; every check's problems are collected, each with the line of its node.
    pub fn parse(text: &str, source: &str) -> Plan {
        let mut plan = Plan::default();
        let file_problem =
            |message: String| Problem { source: source.to_owned(), line: 0, check: String::new(), message };
        let doc: yaml_serde::Value = match yaml_serde::from_str(text) {
            Ok(doc) => doc,
            Err(e) => {
                plan.problems.push(file_problem(format!("invalid YAML: {e}")));
                return plan;
            }
        };
        let nodes = match doc {
            yaml_serde::Value::Mapping(nodes) => nodes,
            yaml_serde::Value::Null => return plan,
            _ => {
                plan.problems.push(file_problem("a plan is a map of name-first nodes".into()));
                return plan;
            }
        };
        let lines = top_level_lines(text);
        for (key, node) in nodes {
            let is_check = node.as_mapping().is_some_and(|m| m.contains_key("check"));
            if !is_check {
                continue;
            }
            let name = match &key {
                yaml_serde::Value::String(s) => s.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            let line = lines.iter().find(|(k, _)| *k == name).map_or(0, |(_, l)| *l);
            match serde_json::to_value(&node) {
                Ok(Value::Object(map)) => plan.add(&name, source, line, &map),
                Ok(_) => continue,
                Err(e) => plan.problems.push(Problem {
                    source: source.to_owned(),
                    line,
                    check: name,
                    message: format!("cannot read the node: {e}"),
                }),
            }
        }
        plan
    }

    /// The checks of a list of check entries (a deploy node's `plan:`), named by `id:` (or
    /// `step-N`), described by `check:`/`description:` (or their verb and subject).
    pub fn from_entries(entries: &[Value], source: &str) -> Plan {
        let mut plan = Plan::default();
        for (i, entry) in entries.iter().enumerate() {
            let name = entry
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("step-{}", i + 1), str::to_owned);
            let Some(map) = entry.as_object() else {
                plan.problems.push(Problem {
                    source: source.to_owned(),
                    line: 0,
                    check: name,
                    message: "a plan entry is a map (a verb and its fields)".into(),
                });
                continue;
            };
            let mut map = map.clone();
            if !map.contains_key("check") {
                let described = map.get("description").and_then(Value::as_str).map(str::to_owned);
                let verb = VERBS.iter().find(|v| map.contains_key(**v));
                let text = described.unwrap_or_else(|| match verb {
                    Some(v) => format!("{v} {}", map.get(*v).map(display_value).unwrap_or_default()),
                    None => name.clone(),
                });
                map.insert("check".into(), Value::String(text));
            }
            plan.add(&name, source, 0, &map);
        }
        plan
    }

    fn add(&mut self, name: &str, source: &str, line: usize, node: &Map<String, Value>) {
        let mut problems = Vec::new();
        let mut check = parse_check(name, source, node, &mut problems);
        check.line = line;
        self.problems.extend(problems.into_iter().map(|message| Problem {
            source: source.to_owned(),
            line,
            check: name.to_owned(),
            message,
        }));
        self.checks.push(check);
    }

    /// Reads and parses a plan file.
    ///
    /// # Errors
    ///
    /// The file cannot be read.
    pub fn load(path: &Path) -> std::io::Result<Plan> {
        let text = std::fs::read_to_string(path)?;
        Ok(Plan::parse(&text, &path.display().to_string()))
    }

    /// Appends another plan's checks and problems (a box's plan is its candies' files).
    pub fn merge(&mut self, other: Plan) {
        self.checks.extend(other.checks);
        self.problems.extend(other.problems);
    }

    /// Marks every check as coming from `section` (`candy`, `box`, `deploy`).
    pub fn in_section(mut self, section: &str) -> Plan {
        for check in &mut self.checks {
            check.section = section.to_owned();
        }
        self
    }
}

fn display_value(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

/// The top-level keys of a YAML text and their 1-based lines (a plain scan: a line that
/// starts in column 0 with `key:`, quotes removed).
pub(super) fn top_level_lines(text: &str) -> Vec<(String, usize)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.starts_with([' ', '\t', '#', '-']) && !l.is_empty())
        .filter_map(|(i, l)| {
            let key = l.split_once(':')?.0.trim();
            let key = key.trim_matches(|c| c == '"' || c == '\'');
            Some((key.to_owned(), i + 1))
        })
        .collect()
}

/// The problems of one check node (`name`, its body as JSON), as [`Plan::parse`] finds them:
/// the one home of the check-node rules, which `box.validate` applies to the project's files.
pub fn check_node_problems(name: &str, node: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    parse_check(name, "", node, &mut problems);
    problems
}

/// The keys a check with `verb` may carry, for messages.
pub fn allowed_keys(verb: Option<&str>) -> Vec<&'static str> {
    if let Some(own) = match verb {
        Some("cdp") => Some(&CDP_KEYS[..]),
        Some("dbus") => Some(&DBUS_KEYS[..]),
        Some("vnc") => Some(&VNC_KEYS[..]),
        Some("wl") => Some(&WL_KEYS[..]),
        _ => None,
    } {
        let mut keys: Vec<&'static str> = COMMON_SYSTEM_KEYS.to_vec();
        keys.extend(own);
        keys.extend(["stdout", "stderr"]);
        return keys;
    }
    match verb.and_then(|v| v.parse::<Verb>().ok()) {
        Some(v) => {
            let mut keys: Vec<&'static str> = COMMON_SYSTEM_KEYS.to_vec();
            keys.push(v.key());
            keys.extend(v.fields());
            keys
        }
        None => CHECK_KEYS.to_vec(),
    }
}

pub(super) fn parse_check(
    name: &str,
    source: &str,
    node: &Map<String, Value>,
    problems: &mut Vec<String>,
) -> Check {
    let verbs: Vec<&str> = VERBS.iter().copied().filter(|v| node.contains_key(*v)).collect();
    if verbs.len() > 1 {
        problems.push(format!("several verbs ({}): a check has exactly one", verbs.join(", ")));
    }
    let verb = verbs.first().copied();
    // The steps whose strings charly substitutes (`mcp:` leaves `${VAR}` of its `headers:` to
    // the environment): a name that is no variable is a mistake, not a skip at run time.
    if verb.is_some_and(|v| v != "mcp" && v != "dbus") {
        let fields: Map<String, Value> =
            node.iter().filter(|(k, _)| *k != "headers").map(|(k, v)| (k.clone(), v.clone())).collect();
        let fields = Value::Object(fields);
        let unknown = super::vars::unknown(&fields);
        if !unknown.is_empty() {
            let names: Vec<String> = unknown.iter().map(|n| format!("${{{n}}}")).collect();
            problems.push(format!(
                "unknown variable{} {}: the variables are ${{HOST_PORT:N}}, ${{CONTAINER_NAME}}, ${{CONTAINER_IP}}, \
                 ${{ENV_<NAME>}}, ${{BOX}}, ${{INSTANCE}} (a shell's own variable is written $NAME)",
                if names.len() == 1 { "" } else { "s" },
                names.join(", ")
            ));
        }
        for open in super::vars::unterminated(&fields) {
            problems.push(format!(
                "{open:?}: `${{` has no closing `}}`; a variable is written ${{NAME}} (a shell's own, $NAME)"
            ));
        }
    }
    let allowed = allowed_keys(verb);
    for key in node.keys() {
        let known = allowed.contains(&key.as_str()) || (verb.is_some() && VERBS.contains(&key.as_str()));
        if known {
            continue;
        }
        let why = match verb {
            Some(v) if CHECK_KEYS.contains(&key.as_str()) || is_system_field(key) => {
                format!("{key}: does not apply to {v}: steps (allowed: {})", allowed.join(", "))
            }
            Some(v) if v != "mcp" => {
                format!("unknown key {key:?} for {v}: (allowed: {})", allowed.join(", "))
            }
            _ => format!("unknown key {key:?} (expected one of: {})", CHECK_KEYS.join(", ")),
        };
        problems.push(why);
    }
    let description = match node.get("check") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        _ => {
            problems.push("check: needs a description (check: <what it shows>)".into());
            String::new()
        }
    };
    let contexts = parse_contexts(node.get("context"), problems);
    let timeout = duration(node, "timeout", problems);
    let eventually = match node.get("eventually") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(DEFAULT_EVENTUALLY),
        Some(_) => duration(node, "eventually", problems),
    };
    let retry_interval = duration(node, "retry_interval", problems).unwrap_or(DEFAULT_RETRY_INTERVAL);
    if node.contains_key("retry_interval") && eventually.is_none() {
        problems.push("retry_interval: only means something with eventually:".into());
    }
    let skip = match node.get("skip") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            problems.push(format!("skip: expects true or false, got {other}"));
            false
        }
    };
    let exit_status = match node.get("exit_status") {
        None => 0,
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64().unwrap_or_default(),
        Some(other) => {
            problems.push(format!("exit_status: expects an integer, got {other}"));
            0
        }
    };
    let mut matchers = |key: &str| match node.get(key) {
        None => Vec::new(),
        Some(spec) => Matcher::parse_all(spec).unwrap_or_else(|errors| {
            problems.extend(errors.into_iter().map(|e| format!("{key}: {e}")));
            Vec::new()
        }),
    };
    let stdout = matchers("stdout");
    let stderr = matchers("stderr");

    let (mut cdp, mut dbus, mut vnc, mut wl) = (None, None, None, None);
    let (request, system) = match verb {
        None => {
            problems.push(format!("no verb: a check needs one of: {}", VERBS.join(", ")));
            (None, None)
        }
        Some("mcp") => (parse_mcp(node, &contexts, problems), None),
        Some("cdp") => {
            cdp = parse_cdp(node, problems);
            (None, None)
        }
        Some("dbus") => {
            dbus = parse_dbus(node, problems);
            (None, None)
        }
        Some("vnc") => {
            vnc = parse_vnc(node, problems);
            (None, None)
        }
        Some("wl") => {
            wl = parse_wl(node, problems);
            (None, None)
        }
        Some(other) => match other.parse::<Verb>() {
            Ok(v) => (None, Some(parse_system(v, node, problems))),
            Err(()) => (None, None),
        },
    };
    Check {
        name: name.to_owned(),
        description,
        source: source.to_owned(),
        verb: verb.map(str::to_owned),
        request,
        system,
        cdp,
        dbus,
        vnc,
        wl,
        raw: node.clone(),
        skip,
        line: 0,
        section: String::new(),
        contexts,
        timeout,
        stdout,
        stderr,
        exit_status,
        eventually,
        retry_interval,
    }
}

fn is_system_field(key: &str) -> bool {
    Verb::ALL.iter().any(|v| v.fields().contains(&key))
}

fn parse_contexts(value: Option<&Value>, problems: &mut Vec<String>) -> Vec<Context> {
    let items: Vec<&Value> = match value {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Array(items)) => items.iter().collect(),
        Some(single @ Value::String(_)) => vec![single],
        Some(_) => {
            problems.push("context: expects a list, e.g. context: [deploy]".into());
            return Vec::new();
        }
    };
    let mut contexts = Vec::new();
    for item in items {
        match item.as_str().map(str::parse::<Context>) {
            Some(Ok(c)) => contexts.push(c),
            Some(Err(e)) => problems.push(format!("context: {e}")),
            None => problems.push("context: expects build or deploy".into()),
        }
    }
    contexts
}

fn duration(node: &Map<String, Value>, key: &str, problems: &mut Vec<String>) -> Option<Duration> {
    let parsed = match node.get(key)? {
        Value::String(s) => parse_duration(s),
        Value::Number(n) => parse_duration(&n.to_string()),
        Value::Null => return None,
        other => Err(format!("expects a duration such as 30s, got {other}")),
    };
    match parsed {
        Ok(d) if d.is_zero() && key != "eventually" => {
            problems.push(format!("{key}: must be more than zero"));
            None
        }
        Ok(d) => Some(d),
        Err(e) => {
            problems.push(format!("{key}: {e}"));
            None
        }
    }
}
