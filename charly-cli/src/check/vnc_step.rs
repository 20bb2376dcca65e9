//! The `vnc:` verb of a check (REFERENCE.md §18.9): a `check.vnc.*` leaf run as a step, its
//! report's text as stdout, its error as stderr (exit status 2), then the shared matchers and,
//! for `screenshot`, the `artifact` (written there) with at least `artifact_min_bytes` bytes.
//!
//! ```yaml
//! desktop-up:
//!   check: the desktop answers
//!   vnc: status
//!   stdout: {contains: "Size:       1280x720"}
//! desktop-shot:
//!   check: a screenshot of it
//!   vnc: screenshot
//!   artifact: desktop.png
//!   artifact_min_bytes: 2000
//! ```
//!
//! The server: `vnc_addr:` when given (`${HOST_PORT:5900}` and other variables resolve), else
//! the running container of `charly check live <box>` (its published port 5900), else this
//! machine at 127.0.0.1:5900. The password: `VNC_PASSWORD`, else the credential store's
//! `charly/vnc/<box[-instance]>` (`.` for this machine). A VeNCrypt server's certificate is
//! checked as `check run`'s `--ca-file`/`--insecure` say. `timeout:` bounds each read.
//! `passwd` is not a step: it replaces a stored password, and a plan only looks. Under
//! `charly check box` the step is skipped (no desktop runs there).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::step::{self, Attempt};
use super::venue::Venue;
use crate::vnc::{self, Button, Op};

/// The methods of `vnc:` (the `check.vnc.*` leaves but `passwd`).
pub const VNC_METHODS: [&str; 7] = ["status", "screenshot", "click", "mouse", "type", "key", "rfb"];

/// The keys a `vnc:` step may carry besides the common ones.
pub const VNC_KEYS: [&str; 11] = [
    "vnc",
    "vnc_addr",
    "x",
    "y",
    "button",
    "text",
    "key",
    "method",
    "params",
    "artifact",
    "artifact_min_bytes",
];

/// A parsed `vnc:` step.
#[derive(Clone, Debug, PartialEq)]
pub struct VncStep {
    /// The method (`status`, `click` ...).
    pub method: String,
    /// The operation (a screenshot's file is the artifact).
    pub op: Op,
    /// `artifact:` — where `screenshot` writes, checked after.
    pub artifact: Option<PathBuf>,
    /// `artifact_min_bytes:` (default 1).
    pub artifact_min_bytes: u64,
    /// `vnc_addr:`.
    pub vnc_addr: Option<String>,
}

/// Parses the `vnc:` step of `node`; every problem goes to `problems`.
pub(super) fn parse_vnc(node: &Map<String, Value>, problems: &mut Vec<String>) -> Option<VncStep> {
    if node.get("vnc").and_then(Value::as_str) == Some("passwd") {
        problems.push(
            "vnc: passwd is not a plan step (it replaces the stored password): run `charly check vnc passwd`"
                .into(),
        );
        return None;
    }
    let method = step::method(node, "vnc", &VNC_METHODS, problems)?;
    let before = problems.len();
    let text = |key: &str, required: bool, problems: &mut Vec<String>| {
        step::text(node.get(key), ("vnc", &method), key, required, problems)
    };
    let coord = |key: &str, problems: &mut Vec<String>| match node.get(key) {
        Some(Value::Number(n)) => match n.as_u64().and_then(|v| u16::try_from(v).ok()) {
            Some(v) => v,
            None => {
                problems.push(format!("{key}: expects desktop pixels 0-65535, got {n}"));
                0
            }
        },
        // A variable: checked again once resolved.
        Some(Value::String(s)) if s.contains("${") => 0,
        None | Some(Value::Null) => {
            problems.push(format!("vnc: {method} needs {key}: (desktop pixels 0-65535)"));
            0
        }
        Some(other) => {
            problems.push(format!("{key}: expects desktop pixels 0-65535, got {other}"));
            0
        }
    };
    let vnc_addr = text("vnc_addr", false, problems);
    let artifact = text("artifact", false, problems).map(PathBuf::from);
    let op = match method.as_str() {
        "status" => Op::Status,
        "screenshot" => Op::Screenshot {
            file: artifact.clone(),
            shown: artifact.as_ref().map(|p| p.display().to_string()),
        },
        "click" => {
            let (x, y) = (coord("x", problems), coord("y", problems));
            let button = match text("button", false, problems).as_deref() {
                None | Some("left") => Button::Left,
                Some("middle") => Button::Middle,
                Some("right") => Button::Right,
                Some(other) => {
                    problems
                        .push(format!("button: {other:?} is not a button (allowed: left, middle, right)"));
                    Button::Left
                }
            };
            Op::Click { x, y, button }
        }
        "mouse" => Op::Mouse { x: coord("x", problems), y: coord("y", problems) },
        "type" => Op::Type { text: text("text", true, problems).unwrap_or_default() },
        "key" => {
            let name = text("key", true, problems).unwrap_or_default();
            // A bad key name is found when the plan is read, not when the step runs (a
            // variable is checked once resolved).
            if !name.is_empty()
                && !name.contains("${")
                && let Err(e) = crate::vnc::keys::keysym(&name)
            {
                problems.push(format!("key: {e}"));
            }
            Op::Key { name }
        }
        _ => {
            let params = match node.get("params") {
                None | Some(Value::Null) => None,
                Some(v @ Value::Object(_)) => Some(v.to_string()),
                Some(Value::String(s)) => Some(s.clone()),
                Some(other) => {
                    problems.push(format!("params: expects a map (the message's fields), got {other}"));
                    None
                }
            };
            Op::Rfb { method: text("method", true, problems).unwrap_or_default(), params }
        }
    };
    let artifact_min_bytes = step::artifact_min_bytes(node, ("vnc", &method), artifact.is_some(), problems);
    (problems.len() == before).then_some(VncStep { method, op, artifact, artifact_min_bytes, vnc_addr })
}

/// Runs `raw` (the check node, variables substituted first) once: what it printed, its exit
/// status, and the artifact's failures.
pub(super) async fn attempt(
    raw: &Map<String, Value>,
    options: &super::RunOptions,
    timeout: Duration,
) -> Attempt {
    let (mut step, placed) = match step::prepare(raw, options, parse_vnc, |s| s.artifact.as_deref()) {
        Ok(prepared) => prepared,
        Err(failed) => return failed,
    };
    if let (Op::Screenshot { file, .. }, Some(p)) = (&mut step.op, &placed) {
        *file = Some(p.clone());
    }
    let server = match (&step.vnc_addr, &options.venue) {
        (Some(addr), _) => vnc::Server::new(addr.clone(), ".", vec![".".into()]),
        (None, Venue::Container { engine, container }) => {
            let key = container.strip_prefix("charly-").unwrap_or(container).to_owned();
            match vnc::published(engine, container, None).await {
                Ok(addr) => vnc::Server::new(addr, key.clone(), vec![key]),
                Err(e) => return Attempt::failed(e),
            }
        }
        (None, _) => vnc::Server::new(vnc::DEFAULT_ADDR, ".", vec![".".into()]),
    };
    let server = vnc::Server { tls: options.tls.clone(), ..server };
    // The credential store's keyring probe runs a runtime of its own: off this one's thread
    // (on a reachable session bus it panicked with "Cannot start a runtime from within a
    // runtime": trial finding).
    let password = {
        let (root, probe) = (options.root.clone(), server.clone());
        tokio::task::spawn_blocking(move || password(root.as_deref(), &probe)).await.ok().flatten()
    };
    if let Some(path) = &placed {
        super::artifact::clear(path);
    }
    let op = step.op.clone();
    let done = tokio::task::spawn_blocking(move || {
        let value = password.as_ref().map(|p| p.value.as_str());
        vnc::perform(&server, value, &op, timeout)
            .map_err(|e| e.with_password_from(password.as_ref().map(|p| p.from.as_str())))
    })
    .await
    .map_err(|e| format!("the VNC worker ended: {e}"));
    let attempt = match done {
        Ok(Ok(reply)) => Attempt::done(reply.text, 0),
        Ok(Err(e)) => Attempt::failed(e),
        Err(why) => Attempt::failed(why),
    };
    attempt.checked(placed.as_deref().zip(step.artifact.as_deref()), step.artifact_min_bytes)
}

/// `VNC_PASSWORD`, else the credential store of the project at `root` (when the run knows it).
fn password(root: Option<&Path>, server: &vnc::Server) -> Option<vnc::Password> {
    if let Some(p) = vnc::from_env() {
        return Some(p);
    }
    let settings = crate::config::Settings::load(root?).ok()?;
    vnc::password(&crate::credentials::Store::open(settings, false), server)
}
