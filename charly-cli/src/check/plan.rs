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
use std::str::FromStr;
use std::time::Duration;

use serde_json::{Map, Value};

use super::matcher::Matcher;
use crate::probe::{Method, Request};
use charly::client::{Answers, parse_duration};

/// Where checks run: `build` (`charly check box`, no container) or `deploy` (`charly check
/// live`, against the running container).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
#[non_exhaustive]
pub enum Context {
    /// While building a box: no container runs.
    Build,
    /// Against a deployed, running container.
    Deploy,
}

impl Context {
    /// `build` or `deploy`.
    pub fn as_str(self) -> &'static str {
        match self {
            Context::Build => "build",
            Context::Deploy => "deploy",
        }
    }
}

impl fmt::Display for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Context {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "build" => Ok(Context::Build),
            "deploy" => Ok(Context::Deploy),
            other => Err(format!("unknown context {other:?} (expected build or deploy)")),
        }
    }
}

/// The verbs a check can carry (one per check). Only `mcp` exists today.
pub const VERBS: [&str; 1] = ["mcp"];

/// Every key a check node may have.
pub const CHECK_KEYS: [&str; 16] = [
    "check",
    "mcp",
    "context",
    "tool",
    "input",
    "uri",
    "mcp_name",
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
}

/// A mistake in a plan, tied to the check it is in.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Problem {
    /// The file (empty for text without a file).
    pub source: String,
    /// The check's name (empty for a problem with the file itself).
    pub check: String,
    /// What is wrong and, where it helps, what to write instead.
    pub message: String,
}

impl fmt::Display for Problem {
    /// `file: check NAME: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.source.is_empty() {
            write!(f, "{}: ", self.source)?;
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
    /// check; every check's problems are collected.
    pub fn parse(text: &str, source: &str) -> Plan {
        let mut plan = Plan::default();
        let file_problem =
            |message: String| Problem { source: source.to_owned(), check: String::new(), message };
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
        for (key, node) in nodes {
            let is_check = node.as_mapping().is_some_and(|m| m.contains_key("check"));
            if !is_check {
                continue;
            }
            let name = match &key {
                yaml_serde::Value::String(s) => s.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            let node = match serde_json::to_value(&node) {
                Ok(Value::Object(map)) => map,
                Ok(_) => continue,
                Err(e) => {
                    plan.problems.push(Problem {
                        source: source.to_owned(),
                        check: name,
                        message: format!("cannot read the node: {e}"),
                    });
                    continue;
                }
            };
            let mut problems = Vec::new();
            let check = parse_check(&name, source, &node, &mut problems);
            plan.problems.extend(problems.into_iter().map(|message| Problem {
                source: source.to_owned(),
                check: name.clone(),
                message,
            }));
            plan.checks.push(check);
        }
        plan
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
}

/// The problems of one check node (`name`, its body as JSON), as [`Plan::parse`] finds them:
/// the one home of the check-node rules, which `box.validate` applies to the project's files.
pub fn check_node_problems(name: &str, node: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    parse_check(name, "", node, &mut problems);
    problems
}

fn parse_check(name: &str, source: &str, node: &Map<String, Value>, problems: &mut Vec<String>) -> Check {
    for key in node.keys() {
        if !CHECK_KEYS.contains(&key.as_str()) {
            problems.push(format!("unknown key {key:?} (expected one of: {})", CHECK_KEYS.join(", ")));
        }
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

    let verbs: Vec<&str> = VERBS.iter().copied().filter(|v| node.contains_key(*v)).collect();
    let (verb, request) = match verbs.as_slice() {
        [] => {
            problems.push(format!("no verb: a check needs one of: {}", VERBS.join(", ")));
            (None, None)
        }
        ["mcp", ..] => (Some("mcp".to_owned()), parse_mcp(node, &contexts, problems)),
        [other, ..] => (Some((*other).to_owned()), None),
    };
    if verb.as_deref() != Some("mcp") {
        for key in ["tool", "input", "uri", "mcp_name", "elicit", "sample", "roots"] {
            if node.contains_key(key) {
                problems.push(format!("{key}: only applies to mcp: steps"));
            }
        }
    }
    Check {
        name: name.to_owned(),
        description,
        source: source.to_owned(),
        verb,
        request,
        contexts,
        timeout,
        stdout,
        stderr,
        exit_status,
        eventually,
        retry_interval,
    }
}

fn parse_mcp(node: &Map<String, Value>, contexts: &[Context], problems: &mut Vec<String>) -> Option<McpStep> {
    let method = match node.get("mcp") {
        Some(Value::String(s)) => match s.parse::<Method>() {
            Ok(m) => Some(m),
            Err(_) => {
                problems.push(format!("mcp: unknown method {s:?} (allowed: {})", Method::allowed()));
                None
            }
        },
        _ => {
            problems.push(format!("mcp: needs a method (allowed: {})", Method::allowed()));
            None
        }
    };
    let text = |key: &str, problems: &mut Vec<String>| match node.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(_) => {
            problems.push(format!("{key}: expects a non-empty string"));
            None
        }
    };
    let tool = text("tool", problems);
    let uri = text("uri", problems);
    let mcp_name = text("mcp_name", problems);
    let input = match node.get("input") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => Some(map),
            _ => {
                problems.push("input: must be a map (the tool's arguments) or a JSON object string".into());
                None
            }
        },
        Some(_) => {
            problems.push("input: must be a map (the tool's arguments) or a JSON object string".into());
            None
        }
    };
    let answers = parse_answers(node, problems);
    let method = method?;
    if ![Method::Call, Method::Read].contains(&method) && answers != Answers::default() {
        problems.push(format!("elicit/sample/roots: only apply to mcp: call and read, not {method}"));
    }
    if !contexts.contains(&Context::Deploy) {
        problems
            .push(format!("mcp: {method} needs context: [deploy] (mcp steps talk to a running container)"));
    }
    if method != Method::Call && (tool.is_some() || input.is_some()) {
        problems.push(format!("tool/input: only apply to mcp: call, not {method}"));
    }
    if ![Method::Read, Method::ReadSkill].contains(&method) && uri.is_some() {
        problems.push(format!("uri: only applies to mcp: read and read-skill, not {method}"));
    }
    let request = match method {
        Method::Servers => None,
        Method::Ping => Some(Request::Ping),
        Method::ListTools => Some(Request::ListTools),
        Method::ListResources => Some(Request::ListResources),
        Method::ListPrompts => Some(Request::ListPrompts),
        Method::Call => match tool {
            Some(tool) => Some(Request::Call { tool, input }),
            None => {
                problems.push("mcp: call needs tool: <tool name>".into());
                return None;
            }
        },
        Method::Lint => Some(Request::Lint),
        Method::Read => match uri {
            Some(uri) => Some(Request::Read { uri }),
            None => {
                problems.push("mcp: read needs uri: <resource uri>".into());
                return None;
            }
        },
        Method::ListSkills => Some(Request::ListSkills),
        Method::ReadSkill => match uri {
            Some(uri) => Some(Request::ReadSkill { uri }),
            None => {
                problems.push("mcp: read-skill needs uri: <uri of the skill's SKILL.md>".into());
                return None;
            }
        },
        #[allow(unreachable_patterns)]
        _ => None,
    };
    Some(McpStep { method, request, mcp_name, answers })
}

/// `elicit:` (a map of form fields to scalars), `sample:` (text), `roots:` (a list of URIs).
fn parse_answers(node: &Map<String, Value>, problems: &mut Vec<String>) -> Answers {
    let mut answers = Answers::default();
    match node.get("elicit") {
        None | Some(Value::Null) => {}
        Some(Value::Object(fields)) => {
            for (field, value) in fields {
                match value {
                    Value::String(s) => answers.fields.insert(field.clone(), s.clone()),
                    Value::Number(_) | Value::Bool(_) => {
                        answers.fields.insert(field.clone(), value.to_string())
                    }
                    Value::Array(items) => answers.fields.insert(
                        field.clone(),
                        items
                            .iter()
                            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                            .collect::<Vec<_>>()
                            .join(","),
                    ),
                    _ => {
                        problems.push(format!("elicit: {field}: expects a string, number, boolean or list"));
                        None
                    }
                };
            }
        }
        Some(_) => problems.push("elicit: expects a map of form fields, e.g. elicit: {name: Alice}".into()),
    }
    match node.get("sample") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => answers.sample = Some(s.clone()),
        Some(_) => problems.push("sample: expects the text a sampling request is answered with".into()),
    }
    match node.get("roots") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            answers.roots = items.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        }
        Some(_) => problems.push("roots: expects a list of URIs, e.g. roots: [file:///srv]".into()),
    }
    answers
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
