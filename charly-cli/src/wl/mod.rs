//! `check.wl.*`: a Wayland desktop (REFERENCE.md §15), this machine's (`.`) or a box's.
//!
//! **Reach** ([`session`]): the session's sockets are found from the host; sway's IPC socket is
//! spoken to directly ([`ipc`]), and so is the Wayland socket for a virtual pointer ([`vpointer`]); every other tool runs inside the target as the desktop's
//! user, always as an argv ([`tool`]): `podman exec --user UID:GID --env ... <container> wtype
//! -- TEXT`, never a shell string.
//!
//! | leaf | how | report |
//! |---|---|---|
//! | `status` | the sockets, sway's version and outputs, the tools present | [`WlStatus`] |
//! | `screenshot [FILE] [--output O] [--region "X,Y WxH"]` | `grim ... -` (PNG; `image` content over MCP) | [`Screenshot`] |
//! | `click`, `double-click`, `mouse`, `scroll`, `drag` | a virtual pointer for the action ([`pointer`], [`vpointer`]) | [`WlAction`] |
//! | `type TEXT`, `key NAME`, `key-combo COMBO` | `wtype -- TEXT`, `wtype -k NAME`, `wtype -M ... -m ...` ([`keys`]) | [`WlAction`] |
//! | `windows`, `toplevel` | sway's tree ([`tree`]) | [`WlWindows`] |
//! | `focus`, `close`, `fullscreen`, `minimize TARGET` | `[con_id=N] focus`, `kill`, `fullscreen toggle`, `move scratchpad` / `scratchpad show` | [`WlAction`] |
//! | `geometry TARGET` | the window's content rectangle | [`WlGeometry`] |
//! | `xprop [TARGET]` | `xprop -id WID ...`, `xdotool getwindowgeometry` (XWayland) | [`WlText`] |
//! | `atspi tree\|find\|click [QUERY]` | python3 with `gi.repository.Atspi` | [`WlJson`] |
//! | `clipboard get\|set\|clear [TEXT] [--primary]` | `wl-paste`, `wl-copy` | [`WlText`] |
//! | `exec PROGRAM [ARG]...` | started detached as the desktop's user | [`WlAction`] |
//! | `resolution WxH [--output O]` | `output O mode --custom WxH` (`wlr-randr` without sway) | [`WlAction`] |
//! | `sway.msg`, `sway.focus|move|resize|layout|workspace|kill|floating|reload` | sway commands ([`sway`]) | [`SwayReply`] |
//! | `sway.tree|workspaces|outputs` | `GET_TREE`, `GET_WORKSPACES`, `GET_OUTPUTS` | [`WlJson`] |
//! | `overlay.show|hide|list|status` | `charly-overlay show --type T ...` and its daemon ([`overlay`]) | [`WlOverlays`], [`WlOverlayStatus`] |
//!
//! Bad input is refused before anything reaches the desktop: a key name outside the table
//! (with the nearest name), a combo without a key, a point off the outputs (with their sizes),
//! a window that does not exist (with the windows there are), a sway command sway refuses (its
//! own error). Text is typed as it is: quotes, `$()`, backticks and newlines are keys.

mod atspi;
mod desktop;
pub use desktop::{REGION_FORM, SIZE_FORM, parse_region, parse_size};
mod error;
pub mod ipc;
pub mod keys;
pub mod overlay;
pub mod pointer;
mod report;
pub mod session;
pub mod sway;
pub mod tool;
pub mod tree;
pub mod vpointer;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

pub use self::error::WlError;
use self::ipc::Sway;
pub use self::overlay::{OverlayKind, OverlayOp, OverlaySpec, WlOverlayStatus, WlOverlays};
pub use self::pointer::{Button, Direction, Origin};
pub use self::report::{
    OutputInfo, Screenshot, SwayReply, WlAction, WlGeometry, WlJson, WlStatus, WlText, WlWindows,
};
pub use self::session::{Place, Session};
use self::tool::Tools;
pub use self::tree::Window;
use crate::engine::Engine;
use crate::report::Reply;

/// What wtype sleeps (ms) before its first key: each run makes a new virtual keyboard with its
/// own keymap, and a key sent at once is read with the old one by the focused client (foot
/// lost the first key of most runs; with 30 ms none in 10).
pub const WTYPE_SETTLE: &str = "50";

/// A point in layout pixels (or relative to an [`Origin`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// X.
    pub x: i64,
    /// Y.
    pub y: i64,
}

/// A window action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowAction {
    /// `focus`.
    Focus,
    /// `close` (sway's `kill`: the client is asked to close).
    Close,
    /// `fullscreen` (toggles).
    Fullscreen,
    /// `minimize` (toggles: into the scratchpad, or back out of it).
    Minimize,
}

/// `atspi`'s actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum AtspiAction {
    /// Every accessible node.
    Tree,
    /// Nodes whose name or role contains the query (`name`, `role` or `name:role`).
    Find,
    /// Performs the first match's click, press or activate action.
    Click,
}

/// `clipboard`'s actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ClipAction {
    /// Print the clipboard.
    Get,
    /// Replace it with the text.
    Set,
    /// Empty it.
    Clear,
}

/// One `check.wl.*` operation, as the CLI leaf or a plan's `wl:` step asks for it.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Op {
    Status,
    Screenshot {
        file: Option<PathBuf>,
        shown: Option<String>,
        output: Option<String>,
        region: Option<String>,
    },
    Click {
        at: Point,
        origin: Origin,
        button: Button,
        double: Option<Duration>,
    },
    Mouse {
        at: Point,
        origin: Origin,
    },
    Scroll {
        at: Point,
        origin: Origin,
        direction: Direction,
        amount: u32,
    },
    Drag {
        from: Point,
        to: Point,
        button: Button,
        duration: Duration,
    },
    Type {
        text: String,
    },
    Key {
        name: String,
    },
    Combo {
        combo: String,
    },
    Windows {
        brief: bool,
    },
    Window {
        action: WindowAction,
        target: String,
    },
    Geometry {
        target: String,
    },
    Xprop {
        target: Option<String>,
    },
    Atspi {
        action: AtspiAction,
        query: Option<String>,
    },
    Clipboard {
        action: ClipAction,
        text: Option<String>,
        primary: bool,
    },
    Exec {
        argv: Vec<String>,
    },
    Resolution {
        size: String,
        output: Option<String>,
    },
    /// `sway.msg` and the leaves that build a command: (leaf, command).
    SwayCommand {
        leaf: &'static str,
        command: String,
    },
    /// `sway.tree`, `sway.workspaces`, `sway.outputs`: (leaf, IPC message type).
    SwayGet {
        leaf: &'static str,
        kind: u32,
    },
    /// `overlay.show`, `overlay.hide`, `overlay.list`, `overlay.status`.
    Overlay(OverlayOp),
}

impl Op {
    /// The leaf's name, for messages (`click`, `sway.tree`).
    pub fn leaf(&self) -> &'static str {
        match self {
            Op::Status => "status",
            Op::Screenshot { .. } => "screenshot",
            Op::Click { double: None, .. } => "click",
            Op::Click { .. } => "double-click",
            Op::Mouse { .. } => "mouse",
            Op::Scroll { .. } => "scroll",
            Op::Drag { .. } => "drag",
            Op::Type { .. } => "type",
            Op::Key { .. } => "key",
            Op::Combo { .. } => "key-combo",
            Op::Windows { brief: false } => "windows",
            Op::Windows { brief: true } => "toplevel",
            Op::Window { action: WindowAction::Focus, .. } => "focus",
            Op::Window { action: WindowAction::Close, .. } => "close",
            Op::Window { action: WindowAction::Fullscreen, .. } => "fullscreen",
            Op::Window { action: WindowAction::Minimize, .. } => "minimize",
            Op::Geometry { .. } => "geometry",
            Op::Xprop { .. } => "xprop",
            Op::Atspi { .. } => "atspi",
            Op::Clipboard { .. } => "clipboard",
            Op::Exec { .. } => "exec",
            Op::Resolution { .. } => "resolution",
            Op::SwayCommand { leaf, .. } | Op::SwayGet { leaf, .. } => leaf,
            Op::Overlay(o) => o.leaf(),
        }
    }
}

/// What an operation gave.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Outcome {
    Status(WlStatus),
    Screenshot(Screenshot),
    Action(WlAction),
    Windows(WlWindows),
    Geometry(WlGeometry),
    Text(WlText),
    Json(WlJson),
    Sway(SwayReply),
    Overlays(WlOverlays),
    OverlayStatus(WlOverlayStatus),
}

impl Outcome {
    /// The report as a [`Reply`] (text, JSON, images).
    pub fn reply(&self) -> Reply {
        match self {
            Outcome::Status(r) => Reply::new(r),
            Outcome::Screenshot(r) => Reply::new(r),
            Outcome::Action(r) => Reply::new(r),
            Outcome::Windows(r) => Reply::new(r),
            Outcome::Geometry(r) => Reply::new(r),
            Outcome::Text(r) => Reply::new(r),
            Outcome::Json(r) => Reply::new(r),
            Outcome::Sway(r) => Reply::new(r),
            Outcome::Overlays(r) => Reply::new(r),
            Outcome::OverlayStatus(r) => Reply::new(r),
        }
    }
}

/// Runs `op` in `session`, each tool and IPC request bounded by `timeout`; `engine` runs the
/// container's tools (and is cancelled with the command).
///
/// # Errors
///
/// [`WlError`]: bad input (before anything reached the desktop), a missing tool, a window
/// that does not exist, sway's refusal, a tool's failure, a timeout.
pub async fn perform(
    session: &Session,
    engine: &Engine,
    op: &Op,
    timeout: Duration,
) -> Result<Outcome, WlError> {
    let tools = Tools { session, engine, timeout };
    let sway = Sway { tools: tools.clone() };
    let what = format!("check.wl.{}", op.leaf());
    let action = |message: String| WlAction { action: op.leaf().into(), message, ..WlAction::default() };
    Ok(match op {
        Op::Status => Outcome::Status(desktop::status(&sway).await),
        Op::Screenshot { file, shown, output, region } => Outcome::Screenshot(
            desktop::screenshot(&sway, file.as_deref(), shown.clone(), output.as_deref(), region.as_deref())
                .await?,
        ),
        Op::Click { at, origin, button, double } => {
            let ((x, y), outputs) = desktop::resolve_point(&sway, *at, origin, &what).await?;
            let mut vp = pointer::open(&sway, &outputs).await?;
            let done = async {
                vp.move_to(x, y).await?;
                pointer::click(&mut vp, *button).await?;
                if let Some(delay) = double {
                    tokio::time::sleep(*delay).await;
                    pointer::click(&mut vp, *button).await?;
                }
                Ok::<_, WlError>(())
            }
            .await;
            vp.close().await;
            done?;
            let verb = if double.is_some() { "Double-clicked" } else { "Clicked" };
            Outcome::Action(WlAction {
                x: Some(x),
                y: Some(y),
                ..action(format!("{verb} {} at ({x}, {y})", button.word()))
            })
        }
        Op::Mouse { at, origin } => {
            let ((x, y), outputs) = desktop::resolve_point(&sway, *at, origin, &what).await?;
            let mut vp = pointer::open(&sway, &outputs).await?;
            let done = vp.move_to(x, y).await;
            vp.close().await;
            done?;
            Outcome::Action(WlAction {
                x: Some(x),
                y: Some(y),
                ..action(format!("Moved the pointer to ({x}, {y})"))
            })
        }
        Op::Scroll { at, origin, direction, amount } => {
            if *amount == 0 {
                return Err(WlError::Usage("scroll: --amount must be at least 1".into()));
            }
            let ((x, y), outputs) = desktop::resolve_point(&sway, *at, origin, &what).await?;
            let mut vp = pointer::open(&sway, &outputs).await?;
            let done = async {
                vp.move_to(x, y).await?;
                pointer::scroll(&mut vp, *direction, *amount).await
            }
            .await;
            vp.close().await;
            done?;
            let message = format!("Scrolled {} {amount} at ({x}, {y})", direction.word());
            Outcome::Action(WlAction { x: Some(x), y: Some(y), ..action(message) })
        }
        Op::Drag { from, to, button, duration } => {
            let outputs = sway.output_rects(&what).await?;
            pointer::check_point(&outputs, from.x, from.y, "drag: the start")?;
            pointer::check_point(&outputs, to.x, to.y, "drag: the end")?;
            let mut vp = pointer::open(&sway, &outputs).await?;
            let done = pointer::drag(&mut vp, (from.x, from.y), (to.x, to.y), *button, *duration).await;
            vp.close().await;
            done?;
            let message =
                format!("Dragged {} from ({}, {}) to ({}, {})", button.word(), from.x, from.y, to.x, to.y);
            Outcome::Action(WlAction { x: Some(to.x), y: Some(to.y), ..action(message) })
        }
        Op::Type { text } => {
            if text.is_empty() {
                return Err(WlError::Usage("type: the text is empty".into()));
            }
            tools.require("wtype", "wtype", &what)?;
            tools.run_ok(&["wtype", "-s", WTYPE_SETTLE, "--", text], None).await?;
            Outcome::Action(action(format!("Typed {} characters", text.chars().count())))
        }
        Op::Key { name } => {
            let key = keys::key(name, false).map_err(WlError::Usage)?;
            tools.require("wtype", "wtype", &what)?;
            let mut argv = vec!["wtype".to_owned(), "-s".to_owned(), WTYPE_SETTLE.to_owned()];
            argv.extend(key.wtype_args());
            tools.run_ok(&argv.iter().map(String::as_str).collect::<Vec<_>>(), None).await?;
            Outcome::Action(action(format!("Pressed key {name}")))
        }
        Op::Combo { combo } => {
            let parsed = keys::combo(combo).map_err(WlError::Usage)?;
            tools.require("wtype", "wtype", &what)?;
            let mut argv = vec!["wtype".to_owned(), "-s".to_owned(), WTYPE_SETTLE.to_owned()];
            argv.extend(parsed.wtype_args());
            tools.run_ok(&argv.iter().map(String::as_str).collect::<Vec<_>>(), None).await?;
            Outcome::Action(action(format!("Pressed {combo}")))
        }
        Op::Windows { brief } => {
            Outcome::Windows(WlWindows { windows: sway.windows(&what).await?, brief: *brief })
        }
        Op::Window { action: act, target } => {
            let window = sway.window(target, &what).await?;
            let id = window.id;
            let (command, message) = match act {
                WindowAction::Focus => (format!("[con_id={id}] focus"), "Focused"),
                WindowAction::Close => (format!("[con_id={id}] kill"), "Closed"),
                WindowAction::Fullscreen => {
                    (format!("[con_id={id}] fullscreen toggle"), "Toggled fullscreen of")
                }
                WindowAction::Minimize if window.minimized => {
                    (format!("[con_id={id}] scratchpad show; [con_id={id}] floating disable"), "Restored")
                }
                WindowAction::Minimize => (format!("[con_id={id}] move scratchpad"), "Minimized"),
            };
            sway.command(&command, &what).await?;
            let message = format!("{message} {}", window.describe());
            Outcome::Action(WlAction { window: Some(window), ..action(message) })
        }
        Op::Geometry { target } => {
            let w = sway.window(target, &what).await?;
            Outcome::Geometry(WlGeometry { x: w.x, y: w.y, width: w.width, height: w.height, window: w })
        }
        Op::Xprop { target } => Outcome::Text(desktop::xprop(&sway, target.as_deref(), &what).await?),
        Op::Atspi { action: act, query } => {
            Outcome::Json(atspi::run(&tools, *act, query.as_deref(), &what).await?)
        }
        Op::Clipboard { action: act, text, primary } => {
            desktop::clipboard(&tools, *act, text.as_deref(), *primary, &what).await?
        }
        Op::Exec { argv } => {
            let Some(program) = argv.first().filter(|p| !p.is_empty() && !p.starts_with('-')) else {
                return Err(WlError::Usage(
                    "exec: expects a program and its arguments, e.g. foot -a term".into(),
                ));
            };
            if !program.contains('/') && !tools.has(program) {
                return Err(WlError::Missing(format!(
                    "exec: {program} is not installed {} (not on its PATH)",
                    session.at()
                )));
            }
            // A path is checked too: started detached, a file that cannot run would fail
            // unseen (setpriv or podman exec --detach report nothing back).
            if program.starts_with('/') && !tools.has(program) {
                let what = match std::fs::metadata(session.host_path(program)) {
                    Ok(m) if m.is_dir() => "is a directory",
                    Ok(_) => "is not executable",
                    Err(_) => "does not exist",
                };
                return Err(WlError::Usage(format!(
                    "exec: {program} {what} {}: give a program (an executable file, or a name on its PATH)",
                    session.at()
                )));
            }
            let args: Vec<&str> = argv.iter().map(String::as_str).collect();
            let pid = tools.launch(&args).await?;
            let shown = crate::report::shown_argv(argv);
            let message = match pid {
                Some(pid) => format!("Launched {shown} (pid {pid})"),
                None => format!("Launched {shown} {}", session.at()),
            };
            Outcome::Action(WlAction { pid, ..action(message) })
        }
        Op::Resolution { size, output } => {
            Outcome::Action(desktop::resolution(&sway, size, output.as_deref(), &what).await?)
        }
        Op::SwayCommand { command, .. } => {
            if command.trim().is_empty() {
                return Err(WlError::Usage(format!("{what}: the sway command is empty")));
            }
            let results = sway.command(command, &what).await?;
            let results = results.into_iter().filter_map(|r| match r {
                Value::Object(m) => Some(m),
                _ => None,
            });
            Outcome::Sway(SwayReply { command: command.clone(), results: results.collect() })
        }
        Op::SwayGet { leaf, kind } => {
            let reply = sway.request(*kind, "", &what).await?;
            let items = match reply {
                Value::Array(list) => list
                    .into_iter()
                    .filter_map(|v| match v {
                        Value::Object(m) => Some(m),
                        _ => None,
                    })
                    .collect(),
                Value::Object(m) => vec![m],
                _ => Vec::new(),
            };
            Outcome::Json(WlJson { what: (*leaf).into(), items })
        }
        Op::Overlay(o) => match overlay::run(&tools, o).await? {
            overlay::OverlayOutcome::Overlays(r) => Outcome::Overlays(r),
            overlay::OverlayOutcome::Status(r) => Outcome::OverlayStatus(r),
        },
    })
}
