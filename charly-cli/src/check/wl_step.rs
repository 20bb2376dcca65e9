//! The `wl:` verb of a check (REFERENCE.md §18.9): a `check.wl.*` leaf run as a step, its
//! report's text as stdout, its error as stderr (exit status 2), then the shared matchers and,
//! for `screenshot`, the `artifact` (written there) with at least `artifact_min_bytes` bytes.
//!
//! ```yaml
//! term-typed:
//!   check: a command typed into the terminal
//!   wl: type
//!   text: "echo hello > /tmp/hello\n"
//! term-shot:
//!   check: a screenshot of the desktop
//!   wl: screenshot
//!   artifact: desk.png
//!   artifact_min_bytes: 2000
//! term-window:
//!   check: sway shows the terminal
//!   wl: sway-tree
//!   stdout: {contains: "\"app_id\": \"term\""}
//! ```
//!
//! The desktop: the running container of `charly check live <box>` (its Wayland session), else
//! this machine's. Fields, by method: `x`, `y` (click, double-click, mouse, scroll; drag's
//! start), `x2`, `y2` (drag's end), `button`, `delay` and `duration` (milliseconds),
//! `from_sway`/`from_x11`/`from_cdp` (what x and y are relative to; `cdp_url` for `.`),
//! `direction` and `amount` (scroll), `text` (type, clipboard set, sway-msg's commands), `key`,
//! `combo`, `target` (a window: focus, close, fullscreen, minimize, geometry, xprop;
//! sway-focus's criteria or direction; sway-move's words), `action` and `query` (atspi),
//! `action` and `primary` (clipboard), `args` (exec: a list, the program and its arguments;
//! `command:` is the command verb's), `size` and `output` (resolution), `output` and `region`
//! (screenshot),
//! `dimension` and `amount` (sway-resize), `mode` (sway-layout), `number` (sway-workspace),
//! `type` (required), `text`, `subtitle`, `name`, `position`, `bg`, `color`, `font_size`,
//! `opacity`, `duration` (seconds), `seconds` and `region` (`X,Y,W,H`) for overlay-show, `name`
//! or `all: true` for overlay-hide.
//! `timeout:` bounds each tool and request. Under `charly check box` the step is skipped.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

use super::step::{self, Attempt};
use super::venue::Venue;
use super::wl_fields::{Fields, foreign_field, overlay_spec};
use crate::wl::{self, AtspiAction, ClipAction, Direction, Op, OverlayOp, Point, WindowAction};

/// The methods of `wl:`, as the reference names them.
pub const WL_METHODS: [&str; 38] = [
    "status",
    "toplevel",
    "windows",
    "geometry",
    "xprop",
    "atspi",
    "screenshot",
    "clipboard",
    "click",
    "double-click",
    "mouse",
    "scroll",
    "drag",
    "type",
    "key",
    "key-combo",
    "focus",
    "close",
    "fullscreen",
    "minimize",
    "exec",
    "resolution",
    "sway-tree",
    "sway-workspaces",
    "sway-outputs",
    "sway-msg",
    "sway-focus",
    "sway-move",
    "sway-resize",
    "sway-layout",
    "sway-workspace",
    "sway-kill",
    "sway-floating",
    "sway-reload",
    "overlay-show",
    "overlay-hide",
    "overlay-list",
    "overlay-status",
];

/// The keys a `wl:` step may carry besides the common ones.
pub const WL_KEYS: [&str; 41] = [
    "wl",
    "x",
    "y",
    "x2",
    "y2",
    "button",
    "delay",
    "duration",
    "from_sway",
    "from_x11",
    "from_cdp",
    "cdp_url",
    "direction",
    "amount",
    "text",
    "key",
    "combo",
    "target",
    "action",
    "query",
    "primary",
    "args",
    "size",
    "output",
    "region",
    "dimension",
    "mode",
    "number",
    "artifact",
    "artifact_min_bytes",
    "exit_status",
    "type",
    "subtitle",
    "name",
    "position",
    "bg",
    "color",
    "font_size",
    "opacity",
    "seconds",
    "all",
];

/// A parsed `wl:` step.
#[derive(Clone, Debug, PartialEq)]
pub struct WlStep {
    /// The method (`type`, `sway-tree` ...).
    pub method: String,
    /// The operation (a screenshot's file is the artifact).
    pub op: Op,
    /// `artifact:` — where `screenshot` writes, checked after.
    pub artifact: Option<PathBuf>,
    /// `artifact_min_bytes:` (default 1).
    pub artifact_min_bytes: u64,
}

/// Parses the `wl:` step of `node`; every problem goes to `problems`.
pub(super) fn parse_wl(node: &Map<String, Value>, problems: &mut Vec<String>) -> Option<WlStep> {
    let method = step::method(node, "wl", &WL_METHODS, problems)?;
    let before = problems.len();
    let mut f = Fields { node, method: &method, problems, taken: Vec::new(), said: Vec::new() };
    let artifact = f.text("artifact", false).map(PathBuf::from);
    let window = |f: &mut Fields<'_>, action| Op::Window {
        action,
        target: f.text("target", true).unwrap_or_default(),
    };
    let command = |leaf: &'static str, built: Result<String, wl::WlError>, f: &mut Fields<'_>| match built {
        Ok(command) => Op::SwayCommand { leaf, command },
        Err(e) => {
            f.problems.push(e.to_string());
            Op::SwayCommand { leaf, command: String::new() }
        }
    };
    let op = match method.as_str() {
        "status" => Op::Status,
        "toplevel" => Op::Windows { brief: true },
        "windows" => Op::Windows { brief: false },
        "geometry" => Op::Geometry { target: f.text("target", true).unwrap_or_default() },
        "xprop" => Op::Xprop { target: f.text("target", false) },
        "atspi" => {
            let action = match f.text("action", false).as_deref() {
                None | Some("tree") => AtspiAction::Tree,
                Some("find") => AtspiAction::Find,
                Some("click") => AtspiAction::Click,
                Some(other) => {
                    f.problems.push(format!(
                        "action: {other:?} is not an atspi action (allowed: tree, find, click)"
                    ));
                    AtspiAction::Tree
                }
            };
            Op::Atspi { action, query: f.text("query", false) }
        }
        "screenshot" => {
            let region = f.text("region", false);
            if let Some(r) = region.as_deref().filter(|r| !r.contains("${") && wl::parse_region(r).is_none())
            {
                f.problems.push(format!("region: {r:?} expects {}", wl::REGION_FORM));
            }
            Op::Screenshot {
                file: artifact.clone(),
                shown: artifact.as_ref().map(|p| p.display().to_string()),
                output: f.text("output", false),
                region,
            }
        }
        "clipboard" => {
            let action = match f.text("action", false).as_deref() {
                None | Some("get") => ClipAction::Get,
                Some("set") => ClipAction::Set,
                Some("clear") => ClipAction::Clear,
                Some(other) => {
                    f.problems.push(format!(
                        "action: {other:?} is not a clipboard action (allowed: get, set, clear)"
                    ));
                    ClipAction::Get
                }
            };
            let text = f.text("text", action == ClipAction::Set);
            if text.is_some() && action != ClipAction::Set {
                f.problems.push("text: only applies to wl: clipboard with action: set".into());
            }
            Op::Clipboard { action, text, primary: f.flag("primary") }
        }
        "click" | "double-click" => {
            let (at, origin, button) = (f.point(), f.origin(), f.button());
            let double = (method == "double-click").then(|| f.millis("delay", 50));
            Op::Click { at, origin, button, double }
        }
        "mouse" => Op::Mouse { at: f.point(), origin: f.origin() },
        "scroll" => {
            let (at, origin) = (f.point(), f.origin());
            let direction = match f.text("direction", true).as_deref() {
                Some("up") | None => Direction::Up,
                Some("down") => Direction::Down,
                Some("left") => Direction::Left,
                Some("right") => Direction::Right,
                Some(other) => {
                    f.problems.push(format!(
                        "direction: {other:?} is not a direction (allowed: up, down, left, right)"
                    ));
                    Direction::Up
                }
            };
            let amount = f.int("amount", Some(3)).clamp(0, i64::from(u32::MAX)) as u32;
            Op::Scroll { at, origin, direction, amount }
        }
        "drag" => {
            let from = f.point();
            let to = Point { x: f.int("x2", None), y: f.int("y2", None) };
            Op::Drag { from, to, button: f.button(), duration: f.millis("duration", 200) }
        }
        "type" => Op::Type { text: f.text("text", true).unwrap_or_default() },
        // Key names and combos are checked when the plan is read (as vnc: keys are), by the
        // same tables the leaves use.
        "key" => {
            // The other verb's field is said, not ignored.
            let misplaced = f.misplaced("combo");
            if misplaced {
                f.problems.push(
                    "wl: key takes key: (one key name); combo: belongs to `wl: key-combo`, for a combination \
                     such as ctrl+q"
                        .to_owned(),
                );
            }
            let name = if misplaced && f.node.get("key").is_none() {
                String::new()
            } else {
                f.text("key", true).unwrap_or_default()
            };
            if !name.is_empty()
                && let Err(why) = wl::keys::key(&name, false)
            {
                f.problems.push(format!("key: {why}"));
            }
            Op::Key { name }
        }
        "key-combo" => {
            let misplaced = f.misplaced("key");
            if misplaced {
                f.problems.push(
                    "wl: key-combo takes combo: (such as ctrl+q); key: belongs to `wl: key`, for one key"
                        .to_owned(),
                );
            }
            let combo = if misplaced && f.node.get("combo").is_none() {
                String::new()
            } else {
                f.text("combo", true).unwrap_or_default()
            };
            if !combo.is_empty()
                && let Err(why) = wl::keys::combo(&combo)
            {
                f.problems.push(format!("combo: {why}"));
            }
            Op::Combo { combo }
        }
        "focus" => window(&mut f, WindowAction::Focus),
        "close" => window(&mut f, WindowAction::Close),
        "fullscreen" => window(&mut f, WindowAction::Fullscreen),
        "minimize" => window(&mut f, WindowAction::Minimize),
        "exec" => Op::Exec { argv: f.list("args", false) },
        "resolution" => {
            let size = f.text("size", true).unwrap_or_default();
            if !size.is_empty() && !size.contains("${") && wl::parse_size(&size).is_none() {
                f.problems.push(format!("size: {size:?} expects {}", wl::SIZE_FORM));
            }
            Op::Resolution { size, output: f.text("output", false) }
        }
        "sway-tree" => Op::SwayGet { leaf: "sway.tree", kind: wl::ipc::GET_TREE },
        "sway-workspaces" => Op::SwayGet { leaf: "sway.workspaces", kind: wl::ipc::GET_WORKSPACES },
        "sway-outputs" => Op::SwayGet { leaf: "sway.outputs", kind: wl::ipc::GET_OUTPUTS },
        "sway-msg" => Op::SwayCommand { leaf: "sway.msg", command: f.text("text", true).unwrap_or_default() },
        "sway-focus" => {
            let target = f.text("target", true).unwrap_or_default();
            command("sway.focus", wl::sway::focus(&target), &mut f)
        }
        "sway-move" => {
            let words = f.list("target", true);
            command("sway.move", wl::sway::move_command(&words), &mut f)
        }
        "sway-resize" => {
            let (d, a) =
                (f.text("dimension", true).unwrap_or_default(), f.text("amount", true).unwrap_or_default());
            command("sway.resize", wl::sway::resize(&d, &a), &mut f)
        }
        "sway-layout" => {
            let mode = f.text("mode", true).unwrap_or_default();
            command("sway.layout", wl::sway::layout(&mode), &mut f)
        }
        "sway-workspace" => {
            let n = f.int("number", None);
            Op::SwayCommand { leaf: "sway.workspace", command: format!("workspace number {n}") }
        }
        "sway-kill" => Op::SwayCommand { leaf: "sway.kill", command: "kill".into() },
        "sway-floating" => Op::SwayCommand { leaf: "sway.floating", command: "floating toggle".into() },
        "overlay-show" => Op::Overlay(OverlayOp::Show(Box::new(overlay_spec(&mut f)))),
        "overlay-hide" => {
            let (name, all) = (f.text("name", false), f.flag("all"));
            if name.is_some() == all {
                f.problems.push("wl: overlay-hide needs name: or all: true (one of them)".into());
            }
            Op::Overlay(OverlayOp::Hide { name, all })
        }
        "overlay-list" => Op::Overlay(OverlayOp::List),
        "overlay-status" => Op::Overlay(OverlayOp::Status),
        _ => Op::SwayCommand { leaf: "sway.reload", command: "reload".into() },
    };
    // A field of another method is said, not ignored (`text:` on `wl: key`).
    let (taken, said) = (std::mem::take(&mut f.taken), std::mem::take(&mut f.said));
    for key in node.keys().filter(|k| WL_KEYS.contains(&k.as_str())) {
        if !["wl", "artifact", "artifact_min_bytes", "exit_status"].contains(&key.as_str())
            && !taken.contains(key)
            && !said.contains(&key.as_str())
        {
            let fields: Vec<&str> = taken
                .iter()
                .map(String::as_str)
                .filter(|k| *k != "artifact" || method == "screenshot")
                .collect();
            problems.push(foreign_field("wl", &method, key, &fields));
        }
    }
    let artifact_min_bytes = step::artifact_min_bytes(node, ("wl", &method), artifact.is_some(), problems);
    super::vars::defer_variables(node, problems, before);
    (problems.len() == before).then_some(WlStep { method, op, artifact, artifact_min_bytes })
}

/// Runs `raw` (the check node, variables substituted first) once, in the session of `venue`
/// (a running container's, else this machine's).
pub(super) async fn attempt(
    raw: &Map<String, Value>,
    options: &super::RunOptions,
    timeout: Duration,
) -> Attempt {
    let (mut step, placed) = match step::prepare(raw, options, parse_wl, |s| s.artifact.as_deref()) {
        Ok(prepared) => prepared,
        Err(failed) => return failed,
    };
    if let (Op::Screenshot { file, .. }, Some(p)) = (&mut step.op, &placed) {
        *file = Some(p.clone());
    }
    let (engine, session) = match &options.venue {
        Venue::Container { engine, container } => {
            (engine.clone(), wl::session::container(engine, container, None).await)
        }
        _ => {
            (crate::engine::Engine::podman(tokio_util::sync::CancellationToken::new()), wl::session::local())
        }
    };
    let session = match session {
        Ok(s) => s,
        Err(e) => return Attempt::failed(e),
    };
    if let Some(path) = &placed {
        super::artifact::clear(path);
    }
    let attempt = match wl::perform(&session, &engine, &step.op, timeout).await {
        Ok(outcome) => {
            // A report that records a failure (`status` against a sway that does not answer)
            // fails the step as it fails the leaf.
            let reply = outcome.reply();
            let mut attempt = Attempt::done(reply.text, i64::from(reply.failure.is_some()));
            attempt.reasons.extend(reply.failure);
            attempt
        }
        Err(e) => Attempt::failed(e),
    };
    attempt.checked(placed.as_deref().zip(step.artifact.as_deref()), step.artifact_min_bytes)
}
