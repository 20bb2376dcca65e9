//! The `cdp:` verb of a check (REFERENCE.md §18.9): a `check.cdp.*` leaf run as a step, its
//! report's text as stdout, its error as stderr (exit status 2), then the shared matchers and,
//! for `screenshot`, the `artifact` (written there) with at least `artifact_min_bytes` bytes.
//!
//! ```yaml
//! page-title:
//!   check: the login page is up
//!   cdp: eval
//!   expression: document.title
//!   stdout: Log in
//! login-shot:
//!   check: a screenshot of it
//!   cdp: screenshot
//!   artifact: login.png
//!   artifact_min_bytes: 2000
//! ```
//!
//! The browser: `cdp_url:` when given (`${HOST_PORT:9222}` and other variables resolve), else
//! the running container of `charly check live <box>` (its published port 9222), else this
//! machine at `http://127.0.0.1:9222`. `tab:` is a tab id; without one the browser's first
//! page tab. `timeout:` bounds each CDP call (and `wait`'s polling). Under `charly check box`
//! the step is skipped (no browser runs there).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::step::{self, Attempt};
use super::venue::Venue;
use crate::cdp::{self, MouseButton, Op};

/// The methods of `cdp:`, as the reference names them.
pub const CDP_METHODS: [&str; 21] = [
    "status",
    "list",
    "url",
    "text",
    "html",
    "eval",
    "axtree",
    "coords",
    "raw",
    "wait",
    "screenshot",
    "open",
    "close",
    "click",
    "type",
    "spa-status",
    "spa-click",
    "spa-type",
    "spa-key",
    "spa-key-combo",
    "spa-mouse",
];

/// The keys a `cdp:` step may carry besides the common ones.
pub const CDP_KEYS: [&str; 19] = [
    "cdp",
    "tab",
    "expression",
    "url",
    "selector",
    "text",
    "query",
    "method",
    "params",
    "x",
    "y",
    "button",
    "scale",
    "key",
    "combo",
    "artifact",
    "artifact_min_bytes",
    "cdp_url",
    "exit_status",
];

/// A parsed `cdp:` step.
#[derive(Clone, Debug, PartialEq)]
pub struct CdpStep {
    /// The method (`eval`, `spa-click` ...).
    pub method: String,
    /// The operation; its tab is empty when the step names none (the first page tab).
    pub op: Op,
    /// `artifact:` — where `screenshot` writes, checked after.
    pub artifact: Option<PathBuf>,
    /// `artifact_min_bytes:` (default 1).
    pub artifact_min_bytes: u64,
    /// `cdp_url:`.
    pub cdp_url: Option<String>,
}

/// Parses the `cdp:` step of `node`; every problem goes to `problems`.
pub(super) fn parse_cdp(node: &Map<String, Value>, problems: &mut Vec<String>) -> Option<CdpStep> {
    let method = step::method(node, "cdp", &CDP_METHODS, problems)?;
    let before = problems.len();
    let text = |key: &str, required: bool, problems: &mut Vec<String>| {
        step::text(node.get(key), ("cdp", &method), key, required, problems)
    };
    let tab = text("tab", method == "close", problems).unwrap_or_default();
    let cdp_url = text("cdp_url", false, problems);
    let int = |key: &str, problems: &mut Vec<String>| match node.get(key) {
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64().unwrap_or_default(),
        Some(Value::String(s)) if s.contains("${") => 0,
        None => {
            problems.push(format!("cdp: {method} needs {key}: (an integer, canvas pixels)"));
            0
        }
        Some(other) => {
            problems.push(format!("{key}: expects an integer, got {other}"));
            0
        }
    };
    let scale = |problems: &mut Vec<String>| match node.get("scale") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            let parsed =
                s.split_once(',').and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
            if parsed.is_none() {
                problems.push(format!("scale: expects sx,sy (two numbers), got {s:?}"));
            }
            parsed
        }
        Some(other) => {
            problems.push(format!("scale: expects sx,sy (two numbers), got {other}"));
            None
        }
    };
    let op = match method.as_str() {
        "status" => Op::Status,
        "list" => Op::List,
        "open" => Op::Open { url: text("url", true, problems).unwrap_or_default() },
        "close" => Op::Close { tab: tab.clone() },
        "url" => Op::Url { tab: tab.clone() },
        "text" => Op::Text { tab: tab.clone() },
        "html" => Op::Html { tab: tab.clone() },
        "eval" => {
            Op::Eval { tab: tab.clone(), expression: text("expression", true, problems).unwrap_or_default() }
        }
        "wait" | "click" | "coords" => {
            let selector = text("selector", true, problems).unwrap_or_default();
            match method.as_str() {
                "wait" => Op::Wait { tab: tab.clone(), selector },
                "click" => Op::Click { tab: tab.clone(), selector },
                _ => Op::Coords { tab: tab.clone(), selector },
            }
        }
        "type" => Op::Type {
            tab: tab.clone(),
            selector: text("selector", true, problems).unwrap_or_default(),
            text: text("text", true, problems).unwrap_or_default(),
        },
        "axtree" => Op::Axtree { tab: tab.clone(), query: text("query", false, problems) },
        "raw" => {
            let params = match node.get("params") {
                None | Some(Value::Null) => None,
                Some(v @ Value::Object(_)) => Some(v.to_string()),
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    problems.push(format!("params: expects a map (the method's params), got {other}"));
                    None
                }
            };
            Op::Raw { tab: tab.clone(), method: text("method", true, problems).unwrap_or_default(), params }
        }
        "screenshot" => Op::Screenshot { tab: tab.clone(), file: None },
        "spa-status" => Op::SpaStatus { tab: tab.clone() },
        "spa-click" => {
            let button = match text("button", false, problems) {
                None => MouseButton::Left,
                Some(b) => MouseButton::parse(&b).unwrap_or_else(|e| {
                    problems.push(e);
                    MouseButton::Left
                }),
            };
            let (x, y) = (int("x", problems), int("y", problems));
            Op::SpaClick { tab: tab.clone(), x, y, button, scale: scale(problems) }
        }
        "spa-mouse" => {
            let (x, y) = (int("x", problems), int("y", problems));
            Op::SpaMouse { tab: tab.clone(), x, y, scale: scale(problems) }
        }
        "spa-type" => {
            Op::SpaType { tab: tab.clone(), text: text("text", true, problems).unwrap_or_default() }
        }
        // Bad key names and combos are found when the plan is read, not when the step runs
        // (a variable is checked once resolved).
        "spa-key" => {
            let key = text("key", true, problems).unwrap_or_default();
            if !key.is_empty() && !key.contains("${") && cdp::keys::named(&key).is_none() {
                problems.push(format!(
                    "key: {key:?} is not in the key table (allowed: {})",
                    cdp::keys::named_list()
                ));
            }
            Op::SpaKey { tab: tab.clone(), key }
        }
        _ => {
            let combo = text("combo", true, problems).unwrap_or_default();
            if !combo.is_empty()
                && !combo.contains("${")
                && let Err(e) = cdp::keys::combo(&combo)
            {
                problems.push(format!("combo: {e}"));
            }
            Op::SpaCombo { tab: tab.clone(), combo }
        }
    };
    let artifact = text("artifact", false, problems).map(PathBuf::from);
    let artifact_min_bytes = step::artifact_min_bytes(node, ("cdp", &method), artifact.is_some(), problems);
    let op = match (op, &artifact) {
        (Op::Screenshot { tab, .. }, Some(path)) => Op::Screenshot { tab, file: Some(path.clone()) },
        (op, _) => op,
    };
    (problems.len() == before).then_some(CdpStep { method, op, artifact, artifact_min_bytes, cdp_url })
}

/// Runs `raw` (the check node, variables substituted first) once.
pub(super) async fn attempt(
    raw: &Map<String, Value>,
    options: &super::RunOptions,
    timeout: Duration,
) -> Attempt {
    let (mut step, placed) = match step::prepare(raw, options, parse_cdp, |s| s.artifact.as_deref()) {
        Ok(prepared) => prepared,
        Err(failed) => return failed,
    };
    if let (Op::Screenshot { file, .. }, Some(p)) = (&mut step.op, &placed) {
        *file = Some(p.clone());
    }
    let browser = match (&step.cdp_url, &options.venue) {
        (Some(url), _) => cdp::resolve_local(url),
        (None, Venue::Container { engine, container }) => {
            cdp::resolve_container(engine, container, None).await
        }
        (None, _) => cdp::resolve_local(cdp::DEFAULT_URL),
    };
    let browser = match browser {
        Ok(b) => b,
        Err(e) => return Attempt::failed(e),
    };
    if let Some(tab) = step.op.tab_mut()
        && tab.is_empty()
    {
        match browser.targets(timeout).await {
            Ok(targets) => match targets.into_iter().find(|t| t.kind == "page") {
                Some(first) => *tab = first.id,
                None => {
                    return Attempt::failed(format!(
                        "cdp: {}: the browser at {} has no tab",
                        step.method, browser.base
                    ));
                }
            },
            Err(e) => return Attempt::failed(e),
        }
    }
    if let Some(path) = &placed {
        super::artifact::clear(path);
    }
    let outcome = cdp::perform(&browser, &step.op, timeout).await;
    let attempt = match outcome {
        Ok(outcome) => Attempt::done(outcome.to_string(), i64::from(outcome.failure().is_some())),
        Err(e) => Attempt::failed(e),
    };
    attempt.checked(placed.as_deref().zip(step.artifact.as_deref()), step.artifact_min_bytes)
}
