//! One attempt of a system-verb check: variables resolved, the step parsed again from the
//! resolved node, then run in the venue (in-container verbs) or on the host.

use std::time::Duration;

use serde_json::Value;

use super::host;
use super::plan::Check;
use super::probes::{self, ProbeOutput};
use super::vars::{Vars, substitute_json};
use super::venue::Venue;
use super::verbs::{SystemStep, Verb, parse_system};

/// A check ready to run, or why it is not.
#[derive(Debug)]
pub(super) enum Prepared {
    /// Its variables resolved; the step to run.
    Ready(Box<SystemStep>),
    /// Skipped: the variables that do not resolve.
    Skip(String),
    /// After substitution a field is wrong (a `${HOST_PORT:N}` that is not a port ...).
    Invalid(Vec<String>),
}

/// `check`'s system step with `vars` substituted into every string of its node.
pub(super) fn prepare(check: &Check, vars: &Vars) -> Prepared {
    let Some(verb) = check.system.as_ref().and_then(|s| s.verb) else {
        return Prepared::Invalid(vec!["nothing to run".into()]);
    };
    let mut missing = Vec::new();
    let node = substitute_json(&Value::Object(check.raw.clone()), vars, &mut missing);
    if !missing.is_empty() {
        let names: Vec<String> = missing.iter().map(|m| format!("${{{m}}}")).collect();
        return Prepared::Skip(format!("unresolved variable{} {}", plural(names.len()), names.join(", ")));
    }
    let Value::Object(node) = node else { return Prepared::Invalid(vec!["nothing to run".into()]) };
    let mut problems = Vec::new();
    let step = parse_system(verb, &node, &mut problems);
    if problems.is_empty() { Prepared::Ready(Box::new(step)) } else { Prepared::Invalid(problems) }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Whether `step` runs on the host rather than in the venue.
pub(super) fn on_host(step: &SystemStep) -> bool {
    match step.verb() {
        Verb::Command => step.flag("from_host", false) || !step.flag("in_container", true),
        Verb::Port => step.has_flag("reachable"),
        v => v.host_only(),
    }
}

/// One attempt: what it printed (for `command`'s matchers and the report) and its failures.
pub(super) async fn attempt(
    step: &SystemStep,
    venue: &Venue,
    vars: &Vars,
    timeout: Duration,
) -> (ProbeOutput, Vec<String>) {
    let verb = step.verb();
    if on_host(step) {
        if verb == Verb::Command {
            return (host::sh(&step.subject, timeout).await, Vec::new());
        }
        return (ProbeOutput::default(), host::run(step, vars, timeout).await);
    }
    let Some(script) = probes::script(step) else {
        return (ProbeOutput::default(), host::run(step, vars, timeout).await);
    };
    match venue.sh(&script, timeout).await {
        Ok(out) => {
            let fails = probes::judge(step, &out);
            (out, fails)
        }
        Err(why) => {
            let out = ProbeOutput {
                status: super::ERROR_EXIT_STATUS as i32,
                stdout: String::new(),
                stderr: why.clone(),
            };
            let reason = match venue {
                Venue::Unavailable(_) => format!("{verb} {}: {why}", step.subject),
                _ => format!("{verb} {}: cannot run in {}: {why}", step.subject, venue.describe()),
            };
            (out, vec![reason])
        }
    }
}
