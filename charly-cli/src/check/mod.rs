//! Declarative check plans: YAML checks that run client methods and match their output.
//!
//! | item | what it does |
//! |---|---|
//! | [`Plan::parse`], [`Plan::load`] | YAML → [`Check`]s, with every [`Problem`] collected |
//! | [`Matcher`] | `stdout:`/`stderr:` conditions: equals, not_equals, contains, not_contains, matches, not_matches, lt, le, gt, ge |
//! | [`run_plan`] → [`Report`] | runs the checks; the report's text, [`write_junit`] |
//! | [`run`], [`live`], [`run_box`], [`validate`] → [`Validation`] | the `charly check run/live/box/validate` commands |
//!
//! Validation (each message names the check): the verb must be known (`mcp`); the method
//! must be in the allowlist (the message lists it); `call` needs `tool:`, `read` needs
//! `uri:`; `mcp:` steps need `context: [deploy]`. Under the build context (`charly check
//! box`) `mcp:` steps are skipped with `mcp: <method> requires a running container (skip
//! under charly check box)`.
//!
//! A step's `timeout:` bounds each attempt (connect, every request): a request that runs past
//! it is cancelled on the server and the step fails with `... timed out after <timeout>`.
//! `eventually: <window>` retries a failing step every `retry_interval:` (default 1 s) until it
//! passes or the window has passed.
//!
//! ```
//! use charly_cli::check::Plan;
//!
//! let plan = Plan::parse("ping:\n  check: answers\n  mcp: pong\n  context: [deploy]\n", "plan.yml");
//! assert_eq!(
//!     plan.problems[0].to_string(),
//!     "plan.yml:1: check ping: mcp: unknown method \"pong\" (allowed: ping, servers, list-tools, \
//!      list-resources, list-prompts, call, read, lint, list-skills, read-skill)"
//! );
//! ```

mod artifact;
mod cdp_step;
mod context;
mod dbus_step;
mod dnsq;
mod host;
mod junit;
mod matcher;
mod mcp_step;
mod plan;
mod plan_file;
mod probes;
mod run;
mod step;
mod system;
mod vars;
mod venue;
mod verbs;
mod vnc_step;
mod wl_fields;
mod wl_step;

use std::fmt;
use std::io;
use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

pub use cdp_step::{CDP_KEYS, CDP_METHODS, CdpStep};
pub use dbus_step::{DBUS_KEYS, DBUS_METHODS, DbusStep};
pub use junit::{escape as xml_escape, write_junit};
pub use matcher::{MATCHER_KINDS, Matcher};
pub use plan::{
    CHECK_KEYS, Check, Context, DEFAULT_EVENTUALLY, DEFAULT_RETRY_INTERVAL, McpStep, Plan, Problem, VERBS,
    allowed_keys, check_node_problems,
};
pub use probes::{MISSING as MISSING_TOOL, ProbeOutput};
pub use run::{CheckResult, ERROR_EXIT_STATUS, Endpoints, Report, RunOptions, Verdict, run_check, run_plan};
pub use vars::{Vars, substitute};
pub use venue::Venue;
pub use verbs::{COMMON_SYSTEM_KEYS, SystemStep, Verb};
pub use vnc_step::{VNC_KEYS, VNC_METHODS, VncStep};
pub use wl_step::{WL_KEYS, WL_METHODS, WlStep};

/// Why a check command could not produce results.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CheckError {
    /// The plan has problems (it was not run); one per line.
    #[error("invalid check plan:\n{}", .0.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Problem>),
    /// Writing the JUnit file failed.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// `--filter` selects no check of the plan (nothing was run).
    #[error("{0}")]
    Filter(String),
}

impl CheckError {
    /// True when the error is a closed output pipe (a CLI reports it as success).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CheckError::Io(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }
}

/// `charly check run`: runs `plan` in `options.context`, and writes the JUnit XML to `junit`
/// when given.
///
/// # Errors
///
/// [`CheckError::Invalid`] for a plan with problems (nothing runs), [`CheckError::Io`] when
/// the JUnit file cannot be written.
pub async fn run(
    plan: &Plan,
    endpoints: &Endpoints,
    options: &RunOptions,
    junit: Option<&Path>,
) -> Result<Report, CheckError> {
    if plan.problems.is_empty() {
        run::filter_problem(plan, options).map_err(CheckError::Filter)?;
    }
    let report = run_plan(plan, endpoints, options).await.map_err(CheckError::Invalid)?;
    if let Some(path) = junit {
        let mut xml = Vec::new();
        write_junit(&report, &mut xml)?;
        std::fs::write(path, xml)
            .map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
    }
    Ok(report)
}

/// `charly check live <box>`: the deploy context against the box's running container:
/// `mcp:` steps through `endpoints` (from [`crate::resolve::box_endpoints`]), in-container
/// verbs through `podman exec` ([`Venue::Container`]), `${...}` from its `podman inspect`.
///
/// # Errors
///
/// As [`run`].
pub async fn live(
    plan: &Plan,
    endpoints: &Endpoints,
    options: RunOptions,
    junit: Option<&Path>,
) -> Result<Report, CheckError> {
    let options = RunOptions { context: Context::Deploy, ..options };
    run(plan, endpoints, &options, junit).await
}

/// `charly check box <box>` and `box.test`: the build context in `venue` (a disposable
/// container per check); `mcp:` steps are skipped with `mcp: <method> requires a running
/// container (skip under charly check box)`, and so are checks that need published ports.
///
/// # Errors
///
/// As [`run`].
pub async fn run_box(
    plan: &Plan,
    venue: Venue,
    filter: Option<String>,
    junit: Option<&Path>,
) -> Result<Report, CheckError> {
    let options = RunOptions { context: Context::Build, venue, filter, ..RunOptions::default() };
    let endpoints = Endpoints::Unavailable("charly check box runs no container".into());
    run(plan, &endpoints, &options, junit).await
}

/// The `ai.opencharly.check` label value for a box: its checks by section, `{"candy":
/// [...], "box": [...]}`, each entry the node as written with its name as `id` (what
/// `box.test` reads back with [`Plan::from_entries`], never the project files).
pub fn check_label(sections: &[(&str, &Plan)]) -> String {
    let mut out = serde_json::Map::new();
    for (section, plan) in sections {
        let entries: Vec<serde_json::Value> = plan
            .checks
            .iter()
            .map(|c| {
                let mut node = c.raw.clone();
                node.insert("id".into(), serde_json::Value::String(c.name.clone()));
                serde_json::Value::Object(node)
            })
            .collect();
        out.insert((*section).to_owned(), serde_json::Value::Array(entries));
    }
    serde_json::Value::Object(out).to_string()
}

/// The label `box.test` reads the checks from.
pub const CHECK_LABEL: &str = "ai.opencharly.check";

/// `charly check validate`: the plan's problems, or how many checks it has.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Validation {
    /// How many checks the plan has.
    pub checks: usize,
    /// Every problem (its file, its check, what is wrong); empty when the plan is valid.
    pub problems: Vec<Problem>,
}

/// `charly check validate`: validates `plan` without running it.
pub fn validate(plan: &Plan) -> Validation {
    Validation { checks: plan.checks.len(), problems: plan.problems.clone() }
}

impl fmt::Display for Validation {
    /// Every problem, one per line, or `ok: N checks`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.problems.is_empty() {
            return writeln!(f, "ok: {} checks", self.checks);
        }
        self.problems.iter().try_for_each(|p| writeln!(f, "{p}"))
    }
}

impl crate::report::Report for Validation {
    /// `the check plan has problems` when it has any.
    fn failure(&self) -> Option<String> {
        (!self.problems.is_empty()).then(|| "the check plan has problems".to_owned())
    }
}
