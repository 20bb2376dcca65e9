//! What the desktop verbs' steps (`cdp:`, `vnc:`, `wl:`) share: reading the method and the
//! text fields of a node when a plan is parsed, and, when a step runs, its variables
//! substituted, its artifact placed, and the outcome of one [`Attempt`].

use std::fmt::Display;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::RunOptions;
use super::vars::substitute_json;

/// The method `node[verb]` names, one of `allowed`; a missing or unknown one is a problem
/// that lists them.
pub(super) fn method(
    node: &Map<String, Value>,
    verb: &str,
    allowed: &[&str],
    problems: &mut Vec<String>,
) -> Option<String> {
    let list = || allowed.join(", ");
    match node.get(verb) {
        Some(Value::String(m)) if allowed.contains(&m.as_str()) => Some(m.clone()),
        Some(Value::String(m)) => {
            problems.push(format!("{verb}: unknown method {m:?} (allowed: {})", list()));
            None
        }
        _ => {
            problems.push(format!("{verb}: needs a method (allowed: {})", list()));
            None
        }
    }
}

/// The text of field `key` (`value`, as the node gives it) of step `verb: method`: a
/// non-empty string, or a number's text. Missing is `None`, and a problem when `required`;
/// any other value is a problem.
pub(super) fn text(
    value: Option<&Value>,
    (verb, method): (&str, &str),
    key: &str,
    required: bool,
    problems: &mut Vec<String>,
) -> Option<String> {
    match value {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        None | Some(Value::Null) if !required => None,
        None | Some(Value::Null) => {
            problems.push(format!("{verb}: {method} needs {key}:"));
            None
        }
        Some(other) => {
            problems.push(format!("{key}: expects a non-empty string, got {other}"));
            None
        }
    }
}

/// `artifact_min_bytes:` (default 1), which only a step with `artifact:` may give, and
/// `artifact:` only a `screenshot`.
pub(super) fn artifact_min_bytes(
    node: &Map<String, Value>,
    (verb, method): (&str, &str),
    has_artifact: bool,
    problems: &mut Vec<String>,
) -> u64 {
    if has_artifact && method != "screenshot" {
        problems.push(format!("artifact: only applies to {verb}: screenshot, not {method}"));
    }
    let min_bytes = match node.get("artifact_min_bytes") {
        None => 1,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(1),
        Some(other) => {
            problems.push(format!("artifact_min_bytes: expects a number of bytes, got {other}"));
            1
        }
    };
    if node.contains_key("artifact_min_bytes") && !has_artifact {
        problems.push("artifact_min_bytes: only means something with artifact:".into());
    }
    min_bytes
}

/// What one attempt of a step printed, its exit status, and its artifact's failures.
#[derive(Debug)]
pub(super) struct Attempt {
    pub stdout: String,
    pub stderr: String,
    pub exit_status: i64,
    pub reasons: Vec<String>,
}

impl Attempt {
    /// An attempt that printed `stdout` and exited with `exit_status`.
    pub(super) fn done(stdout: String, exit_status: i64) -> Self {
        Self { stdout, stderr: String::new(), exit_status, reasons: Vec::new() }
    }

    /// An attempt that could not run or failed: `why` on stderr, the error exit status.
    pub(super) fn failed(why: impl Display) -> Self {
        Self {
            stdout: String::new(),
            stderr: format!("{why}\n"),
            exit_status: super::ERROR_EXIT_STATUS,
            reasons: Vec::new(),
        }
    }

    /// This attempt, with a reason when the artifact at `placed` (`given` in the plan) was
    /// not written or is shorter than `min_bytes`.
    pub(super) fn checked(mut self, artifact: Option<(&Path, &Path)>, min_bytes: u64) -> Self {
        if let Some((placed, given)) = artifact {
            self.reasons.extend(super::artifact::verify(placed, given, min_bytes));
        }
        self
    }
}

/// `raw` (a check node) with its variables substituted, parsed by `parse`, and the path its
/// `artifact` (as `artifact_of` reads it) is written to, its directory made.
///
/// # Errors
///
/// The failed attempt: an unresolved variable, the parse's problems, or an artifact path
/// that is refused or whose directory cannot be made.
pub(super) fn prepare<T>(
    raw: &Map<String, Value>,
    options: &RunOptions,
    parse: fn(&Map<String, Value>, &mut Vec<String>) -> Option<T>,
    artifact_of: fn(&T) -> Option<&Path>,
) -> Result<(T, Option<PathBuf>), Attempt> {
    let mut missing = Vec::new();
    let node = substitute_json(&Value::Object(raw.clone()), &options.vars, &mut missing);
    if !missing.is_empty() {
        return Err(Attempt::failed(format_args!("unresolved variables: {}", missing.join(", "))));
    }
    let mut problems = Vec::new();
    let Some(step) = node.as_object().and_then(|n| parse(n, &mut problems)) else {
        return Err(Attempt::failed(problems.join("; ")));
    };
    let placed = artifact_of(&step)
        .map(|a| super::artifact::place(a, options))
        .transpose()
        .map_err(Attempt::failed)?;
    Ok((step, placed))
}
