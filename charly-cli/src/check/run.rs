//! Running a [`Plan`]: each check's attempt(s), its verdict, and the [`Report`].

use std::fmt;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use super::plan::{Check, Context, McpStep, Plan, Problem};
use super::system::{self, Prepared};
use super::vars::Vars;
use super::venue::Venue;
use super::verbs::Verb;
use charly::client::{self, ChildStderr, ConnectOptions, DEFAULT_TIMEOUT, Endpoint, format_duration};

use crate::probe::{self, Outcome};

/// The exit status a step records when the method could not run at all (connection refused,
/// timeout, JSON-RPC error): 2, so that `exit_status: 1` (a tool's `isError`) never passes
/// on an unreachable server.
pub const ERROR_EXIT_STATUS: i64 = 2;

/// The MCP servers `mcp:` steps can use.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoints {
    /// Resolved endpoints (one from `--url`, several from a `.mcp.json` or a box label); a
    /// step picks one by `mcp_name:`.
    Resolved(Vec<Endpoint>),
    /// None could be resolved; every `mcp:` step that runs fails with this reason.
    Unavailable(String),
}

impl From<Result<Vec<Endpoint>, crate::resolve::ResolveError>> for Endpoints {
    /// A failed resolution (e.g. the box is not running) becomes [`Endpoints::Unavailable`],
    /// so the plan still runs and each `mcp:` step fails with the reason.
    fn from(result: Result<Vec<Endpoint>, crate::resolve::ResolveError>) -> Self {
        match result {
            Ok(list) => Endpoints::Resolved(list),
            Err(e) => Endpoints::Unavailable(e.to_string()),
        }
    }
}

/// How a plan runs.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// `build` or `deploy` (default). `mcp:` steps are skipped under `build`.
    pub context: Context,
    /// `--filter VERB`: only checks with this verb run (the others are left out of the report).
    pub filter: Option<String>,
    /// The timeout of a step without `timeout:` (default 30 s).
    pub timeout: Duration,
    /// What happens to a stdio server's stderr.
    pub child_stderr: ChildStderr,
    /// Where in-container verbs (`file`, `package` ...) run.
    pub venue: Venue,
    /// `${...}` variables (from `podman inspect` of the running container).
    pub vars: Vars,
    /// How `mcp:` steps check an https server's certificate (`--ca-file`, `--insecure`).
    pub tls: charly::client::TlsOptions,
    /// How `mcp:` steps log in to an OAuth-protected server (unattended).
    pub oauth: charly::client::OAuthOptions,
    /// The project root, whose credential store `vnc:` steps read the VNC password from
    /// (`VNC_PASSWORD` otherwise only), and which relative `artifact:` paths are relative to.
    pub root: Option<std::path::PathBuf>,
    /// An MCP call's run: `artifact:` paths must lie beneath [`RunOptions::root`] (no
    /// absolute path, no `..`, no symlink leading out), as every path a served call names.
    pub confined: bool,
    /// `charly check run <box>`: the box whose checks these are, run without its container
    /// (only `mcp:` steps reach it, through its published ports). Its desktop steps (`cdp:`,
    /// `vnc:` without an address of their own, `dbus:`, `wl:`) fail naming `charly check live
    /// <box>`, rather than probe this machine's browser, desktop or bus.
    pub box_not_live: Option<String>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            context: Context::Deploy,
            filter: None,
            timeout: DEFAULT_TIMEOUT,
            child_stderr: ChildStderr::Discard,
            venue: Venue::default(),
            vars: Vars::default(),
            tls: charly::client::TlsOptions::default(),
            oauth: charly::client::OAuthOptions::default(),
            root: None,
            confined: false,
            box_not_live: None,
        }
    }
}

/// A check's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Verdict {
    /// Every matcher held.
    Pass,
    /// A matcher failed; [`CheckResult::reasons`] says which (one reason per failed matcher).
    Fail,
    /// It did not run; [`CheckResult::reasons`] says why.
    Skip,
}

/// One check's result.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CheckResult {
    /// The check's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// Its file.
    pub source: String,
    /// Its section (`candy`, `box`, `deploy`); empty for a plan file.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub section: String,
    /// `mcp.<method>` or the system verb (`file`, `http` ...), used as the JUnit class name.
    pub kind: String,
    /// The outcome.
    pub verdict: Verdict,
    /// Why it failed (one per failed matcher) or why it was skipped (one); empty on a pass.
    pub reasons: Vec<String>,
    /// Wall time over all attempts, in seconds.
    #[serde(rename = "seconds", serialize_with = "seconds")]
    #[schemars(rename = "seconds", with = "f64")]
    pub duration: Duration,
    /// How many times it ran (more than 1 only with `eventually:`).
    pub attempts: u32,
    /// The last attempt's stdout.
    pub stdout: String,
    /// The last attempt's stderr.
    pub stderr: String,
}

/// The results of a plan run, in plan order: `charly check run`, `live` and `box`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct Report {
    /// One per check that was not filtered out.
    pub results: Vec<CheckResult>,
    /// How many passed.
    pub passed: usize,
    /// How many failed.
    pub failed: usize,
    /// How many were skipped.
    pub skipped: usize,
    /// Wall time of the run, in seconds.
    #[serde(rename = "seconds", serialize_with = "seconds")]
    #[schemars(rename = "seconds", with = "f64")]
    pub duration: Duration,
}

fn seconds<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Report {
    /// A report of `results`, counted.
    pub fn new(results: Vec<CheckResult>, duration: Duration) -> Report {
        let count = |v: Verdict| results.iter().filter(|r| r.verdict == v).count();
        let (passed, failed, skipped) = (count(Verdict::Pass), count(Verdict::Fail), count(Verdict::Skip));
        Report { results, passed, failed, skipped, duration }
    }
}

impl fmt::Display for Report {
    /// A line per check, then `checks: N passed, N failed, N skipped`.
    ///
    /// `PASS name: description (0.12s)`; a failure adds an indented line per reason; a skip
    /// gives its reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for r in &self.results {
            let took = format_duration(round_ms(r.duration));
            match r.verdict {
                Verdict::Pass => writeln!(f, "PASS {}: {} ({took})", r.name, r.description)?,
                Verdict::Fail => {
                    let tries =
                        if r.attempts > 1 { format!(", {} attempts", r.attempts) } else { String::new() };
                    writeln!(f, "FAIL {}: {} ({took}{tries})", r.name, r.description)?;
                    for reason in &r.reasons {
                        writeln!(f, "    {reason}")?;
                    }
                }
                Verdict::Skip => writeln!(f, "SKIP {}: {}", r.name, r.reasons.join("; "))?,
            }
        }
        writeln!(f, "checks: {} passed, {} failed, {} skipped", self.passed, self.failed, self.skipped)
    }
}

impl crate::report::Report for Report {
    /// `some checks failed` when any check failed.
    fn failure(&self) -> Option<String> {
        (self.failed > 0).then(|| "some checks failed".to_owned())
    }
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(d.as_millis() as u64)
}

/// `Err(why)` when `options.filter` selects no check of `plan`: a run of nothing that passes
/// would say the plan passed (issue 14's second trial).
pub(super) fn filter_problem(plan: &Plan, options: &RunOptions) -> Result<(), String> {
    let Some(filter) = &options.filter else { return Ok(()) };
    if plan.checks.iter().any(|c| c.verb.as_deref() == Some(filter.as_str())) {
        return Ok(());
    }
    let mut verbs: Vec<&str> = plan.checks.iter().filter_map(|c| c.verb.as_deref()).collect();
    verbs.sort_unstable();
    verbs.dedup();
    let known = super::plan::VERBS.contains(&filter.as_str());
    Err(format!(
        "--filter {filter}: {}; the plan's checks have verbs: {} (nothing was run)",
        if known { "no check of the plan has this verb" } else { "not a check verb" },
        if verbs.is_empty() { "none".to_owned() } else { verbs.join(", ") }
    ))
}

/// Runs every check of `plan` in order.
///
/// # Errors
///
/// The plan's problems, when it has any: an invalid plan does not run.
pub async fn run_plan(
    plan: &Plan,
    endpoints: &Endpoints,
    options: &RunOptions,
) -> Result<Report, Vec<Problem>> {
    if !plan.problems.is_empty() {
        return Err(plan.problems.clone());
    }
    let started = Instant::now();
    let mut results = Vec::new();
    for check in &plan.checks {
        if let Some(filter) = &options.filter
            && check.verb.as_deref() != Some(filter.as_str())
        {
            continue;
        }
        results.push(run_check(check, endpoints, options).await);
    }
    Ok(Report::new(results, started.elapsed()))
}

/// Runs one check (all its `eventually` attempts).
pub async fn run_check(check: &Check, endpoints: &Endpoints, options: &RunOptions) -> CheckResult {
    let step = check.request.as_ref();
    let mut result = CheckResult {
        name: check.name.clone(),
        description: check.description.clone(),
        source: check.source.clone(),
        section: check.section.clone(),
        kind: match (step, &check.cdp) {
            (Some(s), _) => format!("mcp.{}", s.method),
            (None, Some(c)) => format!("cdp.{}", c.method),
            (None, None) => match (&check.dbus, &check.vnc, &check.wl) {
                (Some(d), _, _) => format!("dbus.{}", d.method),
                (None, Some(v), _) => format!("vnc.{}", v.method),
                (None, None, Some(w)) => format!("wl.{}", w.method),
                (None, None, None) => check.verb.clone().unwrap_or_default(),
            },
        },
        verdict: Verdict::Pass,
        reasons: Vec::new(),
        duration: Duration::ZERO,
        attempts: 0,
        stdout: String::new(),
        stderr: String::new(),
    };
    // A system verb without `context:` runs in every context; `mcp:` steps always name theirs.
    let in_context = check.contexts.contains(&options.context)
        || (check.contexts.is_empty()
            && (check.system.is_some()
                || check.cdp.is_some()
                || check.dbus.is_some()
                || check.vnc.is_some()
                || check.wl.is_some()));
    let skip = match (step, options.context) {
        _ if check.skip => Some("skip: true".to_owned()),
        (Some(step), Context::Build) => {
            Some(format!("mcp: {} requires a running container (skip under charly check box)", step.method))
        }
        (None, Context::Build) if check.dbus.is_some() => Some(format!(
            "dbus: {} talks to a running session bus (skip under charly check box)",
            check.dbus.as_ref().map(|d| d.method.as_str()).unwrap_or_default()
        )),
        (None, Context::Build) if check.vnc.is_some() => Some(format!(
            "vnc: {} requires a running desktop (skip under charly check box)",
            check.vnc.as_ref().map(|v| v.method.as_str()).unwrap_or_default()
        )),
        (None, Context::Build) if check.wl.is_some() => Some(format!(
            "wl: {} requires a running desktop (skip under charly check box)",
            check.wl.as_ref().map(|w| w.method.as_str()).unwrap_or_default()
        )),
        (None, Context::Build) if check.cdp.is_some() => Some(format!(
            "cdp: {} requires a running browser (skip under charly check box)",
            check.cdp.as_ref().map(|c| c.method.as_str()).unwrap_or_default()
        )),
        _ if !in_context => Some(format!(
            "runs in context {}, not {}",
            check.contexts.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", "),
            options.context
        )),
        _ => None,
    };
    if let Some(why) = skip {
        result.verdict = Verdict::Skip;
        result.reasons = vec![why];
        return result;
    }
    if let Some(why) = options.box_not_live.as_deref().and_then(|b| not_live(check, b)) {
        result.verdict = Verdict::Fail;
        result.reasons = vec![why];
        return result;
    }
    let system_step = match check.system.as_ref().map(|_| system::prepare(check, &options.vars)) {
        None => None,
        Some(Prepared::Ready(step)) => {
            let build_skip = match step.verb() {
                Verb::Port if step.has_flag("reachable") => Some(format!(
                    "port {} reachable: needs a running container's published port",
                    step.subject
                )),
                Verb::Command if system::on_host(&step) => {
                    Some("command on the host: runs only against a live deployment".to_owned())
                }
                _ => None,
            };
            if let Some(why) = build_skip.filter(|_| options.context == Context::Build) {
                result.verdict = Verdict::Skip;
                result.reasons = vec![format!("{why} (skip under charly check box)")];
                return result;
            }
            Some(step)
        }
        Some(Prepared::Skip(why)) => {
            result.verdict = Verdict::Skip;
            result.reasons = vec![why];
            return result;
        }
        Some(Prepared::Invalid(problems)) => {
            result.verdict = Verdict::Fail;
            result.reasons = problems;
            return result;
        }
    };
    if step.is_none()
        && system_step.is_none()
        && check.cdp.is_none()
        && check.dbus.is_none()
        && check.vnc.is_none()
        && check.wl.is_none()
    {
        result.verdict = Verdict::Fail;
        result.reasons = vec!["nothing to run".into()];
        return result;
    }
    let started = Instant::now();
    let deadline = check.eventually.map(|window| started + window);
    loop {
        result.attempts += 1;
        let (observed, mut reasons) = match (&system_step, step) {
            (Some(s), _) => {
                let default =
                    if s.verb() == Verb::Http { super::host::HTTP_TIMEOUT } else { options.timeout };
                let timeout = check.timeout.unwrap_or(default);
                let (out, fails) = system::attempt(s, &options.venue, &options.vars, timeout).await;
                let observed =
                    Observed { stdout: out.stdout, stderr: out.stderr, exit_status: i64::from(out.status) };
                (observed, fails)
            }
            (None, Some(mcp)) => (attempt(check, mcp, endpoints, options).await, Vec::new()),
            (None, None) if check.dbus.is_some() => {
                let timeout = check.timeout.unwrap_or(options.timeout);
                let d = check.dbus.as_ref().expect("checked by the guard");
                let (stdout, stderr, exit_status) =
                    super::dbus_step::attempt(d, &options.venue, timeout).await;
                (Observed { stdout, stderr, exit_status }, Vec::new())
            }
            (None, None) if check.wl.is_some() => {
                let timeout = check.timeout.unwrap_or(options.timeout);
                let a = super::wl_step::attempt(&check.raw, options, timeout).await;
                (Observed { stdout: a.stdout, stderr: a.stderr, exit_status: a.exit_status }, a.reasons)
            }
            (None, None) if check.vnc.is_some() => {
                let timeout = check.timeout.unwrap_or(options.timeout);
                let a = super::vnc_step::attempt(&check.raw, options, timeout).await;
                (Observed { stdout: a.stdout, stderr: a.stderr, exit_status: a.exit_status }, a.reasons)
            }
            (None, None) => {
                let timeout = check.timeout.unwrap_or(options.timeout);
                let a = super::cdp_step::attempt(&check.raw, options, timeout).await;
                (Observed { stdout: a.stdout, stderr: a.stderr, exit_status: a.exit_status }, a.reasons)
            }
        };
        // exit_status/stdout/stderr: an mcp step's and a command's (a failed probe already
        // said why).
        let is_command = system_step.as_ref().is_some_and(|s| s.verb() == Verb::Command);
        if step.is_some()
            || check.cdp.is_some()
            || check.dbus.is_some()
            || check.vnc.is_some()
            || check.wl.is_some()
            || (is_command && reasons.is_empty())
        {
            reasons.extend(evaluate(check, &observed));
        }
        result.stdout = observed.stdout;
        result.stderr = observed.stderr;
        let again = deadline.is_some_and(|d| Instant::now() + check.retry_interval < d);
        if reasons.is_empty() || !again {
            result.verdict = if reasons.is_empty() { Verdict::Pass } else { Verdict::Fail };
            result.reasons = reasons;
            break;
        }
        tokio::time::sleep(check.retry_interval).await;
    }
    result.duration = started.elapsed();
    result
}

/// Why `check` (a check of box `b` run by `charly check run b`) must not run: a desktop step
/// that would otherwise probe this machine's browser, desktop or bus instead of the box's.
fn not_live(check: &Check, b: &str) -> Option<String> {
    let (verb, method, own) = match (&check.cdp, &check.vnc, &check.dbus, &check.wl) {
        (Some(c), ..) if c.cdp_url.is_none() => ("cdp", c.method.as_str(), "; or give the step cdp_url:"),
        (_, Some(v), ..) if v.vnc_addr.is_none() => {
            ("vnc", v.method.as_str(), "; or give the step vnc_addr:")
        }
        (_, _, Some(d), _) => ("dbus", d.method.as_str(), ""),
        (_, _, _, Some(w)) => ("wl", w.method.as_str(), ""),
        _ => return None,
    };
    Some(format!(
        "{verb}: {method} is for box {b}'s desktop, which `charly check run {b}` does not reach (it runs the \
         box's mcp: steps only): run `charly check live {b}`, which runs every step against the box's running \
         container{own}"
    ))
}

/// What one attempt produced.
#[derive(Debug, Default)]
struct Observed {
    stdout: String,
    stderr: String,
    exit_status: i64,
}

async fn attempt(check: &Check, step: &McpStep, endpoints: &Endpoints, options: &RunOptions) -> Observed {
    let list = match endpoints {
        Endpoints::Resolved(list) => list,
        Endpoints::Unavailable(why) => return failed(why.clone()),
    };
    let Some(request) = &step.request else {
        // `servers`: list, dial nothing.
        return finish(Ok(Outcome::Servers(probe::servers(list))));
    };
    let endpoint = match pick(list, step.mcp_name.as_deref()) {
        Ok(endpoint) => endpoint,
        Err(why) => return failed(why),
    };
    let timeout = check.timeout.unwrap_or(options.timeout);
    let connect_options = ConnectOptions {
        timeout,
        child_stderr: options.child_stderr,
        answers: step.answers.clone(),
        tls: options.tls.clone(),
        oauth: options.oauth.clone(),
        ..ConnectOptions::default()
    };
    // The step's own `headers:`, after the run's `--header` and a .mcp.json's `headers`, their
    // `${VAR}` from the environment.
    let mut headers = Vec::new();
    for (name, value) in &step.headers {
        match crate::resolve::mcp_json::expand(value, &|var| std::env::var(var).ok()) {
            Ok(value) => headers.push((name.clone(), value)),
            Err(why) => return failed(format!("headers: {name}: {why}")),
        }
    }
    let with_headers = endpoint.clone().with_headers(headers);
    let endpoint = &with_headers;
    // The step's timeout bounds the whole attempt (connect, every page, the call), not the
    // polite close after it; the client's per-request timeout, equal to it, normally fires
    // first and cancels on the server with `notifications/cancelled`.
    let work = async {
        if matches!(request, probe::Request::Lint) {
            // As `check mcp lint` does: one connection per host's client name, each host's row
            // judged on what the server lists to that host (`crate::lint::lint`).
            return Ok((None, crate::lint::lint(endpoint, &connect_options).await.map(Outcome::Lint)));
        }
        let client = client::connect(endpoint, &connect_options).await?;
        let outcome = probe::run_on(&client, request).await;
        Ok::<_, client::ClientError>((Some(client), outcome))
    };
    match tokio::time::timeout(timeout + Duration::from_millis(500), work).await {
        Ok(Ok((client, outcome))) => {
            if let Some(client) = client {
                client.close().await;
            }
            finish(outcome)
        }
        Ok(Err(e)) => finish(Err(e)),
        Err(_) => Observed {
            stdout: String::new(),
            stderr: format!("mcp: {} timed out after {}\n", step.method, format_duration(timeout)),
            exit_status: ERROR_EXIT_STATUS,
        },
    }
}

fn pick<'a>(list: &'a [Endpoint], name: Option<&str>) -> Result<&'a Endpoint, String> {
    match (list, name) {
        ([], _) => Err("no mcp endpoint: give --url, --server or a box that provides one".into()),
        // A lone unnamed endpoint (`--url`) serves every step, whatever its mcp_name.
        ([only], _) if only.name.is_empty() => Ok(only),
        (_, Some(name)) => list.iter().find(|e| e.name == name).ok_or_else(|| {
            format!(
                "no mcp server named {name:?} (available: {})",
                list.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
            )
        }),
        ([only], None) => Ok(only),
        (_, None) => Err(format!(
            "several mcp servers ({}): choose one with mcp_name:",
            list.iter().map(|e| e.name.as_str()).collect::<Vec<_>>().join(", ")
        )),
    }
}

fn failed(why: String) -> Observed {
    Observed { stdout: String::new(), stderr: format!("{why}\n"), exit_status: ERROR_EXIT_STATUS }
}

/// What a method's outcome looks like to a check: its text on stdout, exit status 1 when it
/// records a failure; an error on stderr with [`ERROR_EXIT_STATUS`].
fn finish(outcome: Result<Outcome, client::ClientError>) -> Observed {
    match outcome {
        Ok(outcome) => Observed {
            stdout: outcome.to_string(),
            stderr: String::new(),
            exit_status: if outcome.failure().is_some() { 1 } else { 0 },
        },
        Err(e) => {
            Observed { stdout: String::new(), stderr: format!("{e}\n"), exit_status: ERROR_EXIT_STATUS }
        }
    }
}

fn evaluate(check: &Check, observed: &Observed) -> Vec<String> {
    let mut reasons = Vec::new();
    if observed.exit_status != check.exit_status {
        let detail = observed.stderr.lines().next().map(|l| format!(": {l}")).unwrap_or_default();
        reasons.push(format!("exit status {}, expected {}{detail}", observed.exit_status, check.exit_status));
    }
    reasons.extend(check.stdout.iter().filter_map(|m| m.check("stdout", &observed.stdout).err()));
    reasons.extend(check.stderr.iter().filter_map(|m| m.check("stderr", &observed.stderr).err()));
    reasons
}
