//! `charly check wl ...`: each leaf as a [`wl::Op`], run in the session its target names.

use std::time::Duration;

use crate::cli::{OriginArgs, OverlayCmd, OverlayPosition, SwayCmd, WlCmd, WlPoint, WlTarget};
use crate::context::Ctx;
use crate::engine::Engine;
use crate::error::CommandError;
use crate::report::Reply;
use crate::wl::{self, Op, Origin, OverlayOp, OverlaySpec, Point, WindowAction};

/// Runs a `check wl` leaf.
///
/// # Errors
///
/// [`CommandError::Wl`] (no session, a box not running, a missing tool, bad input, sway's
/// refusal), [`CommandError::Usage`] for a screenshot path outside the project over MCP.
pub(super) fn run(cmd: &WlCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let (on, op) = op_of(cmd, ctx)?;
    let engine = Engine::podman(ctx.cancel_token()).knowing(crate::resolve::project_boxes(ctx.root()));
    let outcome = ctx.block_until_interrupted(async {
        let session = wl::session::resolve(&engine, &on.target, on.instance.as_deref()).await?;
        wl::perform(&session, &engine, &op, on.timeout.into()).await
    })?;
    Ok(outcome.reply())
}

/// The origin `--from-*` name.
pub(crate) fn origin(o: &OriginArgs) -> Origin {
    match (&o.from_sway, &o.from_x11, &o.from_cdp) {
        (Some(w), _, _) => Origin::Sway(w.clone()),
        (None, Some(c), _) => Origin::X11(c.clone()),
        (None, None, Some(tab)) => Origin::Cdp {
            tab: if tab == "first" { String::new() } else { tab.clone() },
            cdp_url: o.cdp_url.clone(),
        },
        (None, None, None) => Origin::Desktop,
    }
}

fn at(p: &WlPoint) -> Point {
    Point { x: p.x.into(), y: p.y.into() }
}

fn op_of<'a>(cmd: &'a WlCmd, ctx: &Ctx) -> Result<(&'a WlTarget, Op), CommandError> {
    let window = |action, w: &crate::cli::WindowArgs| Op::Window { action, target: w.window.clone() };
    Ok(match cmd {
        WlCmd::Status(on) => (on, Op::Status),
        WlCmd::Screenshot { on, file, output, region } => {
            let (file, shown) = match file {
                Some(f) => (Some(super::arg_path(ctx, "file", f)?), Some(f.display().to_string())),
                None => (None, None),
            };
            (on, Op::Screenshot { file, shown, output: output.clone(), region: region.clone() })
        }
        WlCmd::Click { point, button } => (
            &point.on,
            Op::Click { at: at(point), origin: origin(&point.origin), button: *button, double: None },
        ),
        WlCmd::DoubleClick { point, button, delay } => (
            &point.on,
            Op::Click {
                at: at(point),
                origin: origin(&point.origin),
                button: *button,
                double: Some(Duration::from_millis((*delay).into())),
            },
        ),
        WlCmd::Mouse(point) => (&point.on, Op::Mouse { at: at(point), origin: origin(&point.origin) }),
        WlCmd::Scroll { point, direction, amount } => (
            &point.on,
            Op::Scroll {
                at: at(point),
                origin: origin(&point.origin),
                direction: *direction,
                amount: *amount,
            },
        ),
        WlCmd::Drag { on, x1, y1, x2, y2, button, duration } => (
            on,
            Op::Drag {
                from: Point { x: (*x1).into(), y: (*y1).into() },
                to: Point { x: (*x2).into(), y: (*y2).into() },
                button: *button,
                duration: Duration::from_millis((*duration).into()),
            },
        ),
        WlCmd::Type { on, text } => (on, Op::Type { text: text.clone() }),
        WlCmd::Key { on, key_name } => (on, Op::Key { name: key_name.clone() }),
        WlCmd::KeyCombo { on, combo } => (on, Op::Combo { combo: combo.clone() }),
        WlCmd::Windows(on) => (on, Op::Windows { brief: false }),
        WlCmd::Toplevel(on) => (on, Op::Windows { brief: true }),
        WlCmd::Focus(w) => (&w.on, window(WindowAction::Focus, w)),
        WlCmd::Close(w) => (&w.on, window(WindowAction::Close, w)),
        WlCmd::Fullscreen(w) => (&w.on, window(WindowAction::Fullscreen, w)),
        WlCmd::Minimize(w) => (&w.on, window(WindowAction::Minimize, w)),
        WlCmd::Geometry(w) => (&w.on, Op::Geometry { target: w.window.clone() }),
        WlCmd::Xprop { on, window } => (on, Op::Xprop { target: window.clone() }),
        WlCmd::Atspi { on, action, query } => (on, Op::Atspi { action: *action, query: query.clone() }),
        WlCmd::Clipboard { on, action, text, primary } => {
            (on, Op::Clipboard { action: *action, text: text.clone(), primary: *primary })
        }
        WlCmd::Exec { on, command } => (on, Op::Exec { argv: command.clone() }),
        WlCmd::Resolution { on, size, output } => {
            (on, Op::Resolution { size: size.clone(), output: output.clone() })
        }
        WlCmd::Sway(sway) => sway_op(sway)?,
        WlCmd::Overlay(overlay) => overlay_op(overlay),
    })
}

/// `--position`'s word, as charly-overlay takes it.
pub(crate) fn position_word(p: OverlayPosition) -> &'static str {
    match p {
        OverlayPosition::Center => "center",
        OverlayPosition::Top => "top",
        OverlayPosition::Bottom => "bottom",
        OverlayPosition::Left => "left",
        OverlayPosition::Right => "right",
        OverlayPosition::TopLeft => "top-left",
        OverlayPosition::TopRight => "top-right",
        OverlayPosition::BottomLeft => "bottom-left",
        OverlayPosition::BottomRight => "bottom-right",
    }
}

fn overlay_op(cmd: &OverlayCmd) -> (&WlTarget, Op) {
    match cmd {
        OverlayCmd::Show {
            on,
            r#type,
            text,
            subtitle,
            name,
            position,
            bg,
            color,
            font_size,
            opacity,
            duration,
            seconds,
            region,
        } => (
            on,
            Op::Overlay(OverlayOp::Show(Box::new(OverlaySpec {
                kind: Some(*r#type),
                text: text.clone(),
                subtitle: subtitle.clone(),
                name: name.clone(),
                position: position.map(|p| position_word(p).to_owned()),
                bg: bg.clone(),
                color: color.clone(),
                font_size: *font_size,
                opacity: *opacity,
                duration: *duration,
                seconds: *seconds,
                region: region.clone(),
            }))),
        ),
        OverlayCmd::Hide { on, name, all } => {
            (on, Op::Overlay(OverlayOp::Hide { name: name.clone(), all: *all }))
        }
        OverlayCmd::List(on) => (on, Op::Overlay(OverlayOp::List)),
        OverlayCmd::Status(on) => (on, Op::Overlay(OverlayOp::Status)),
    }
}

fn sway_op(cmd: &SwayCmd) -> Result<(&WlTarget, Op), CommandError> {
    let command = |leaf: &'static str, command: String| Op::SwayCommand { leaf, command };
    let get = |leaf: &'static str, kind: u32| Op::SwayGet { leaf, kind };
    Ok(match cmd {
        SwayCmd::Msg { on, command: c } => (on, command("sway.msg", c.clone())),
        SwayCmd::Tree(on) => (on, get("sway.tree", wl::ipc::GET_TREE)),
        SwayCmd::Workspaces(on) => (on, get("sway.workspaces", wl::ipc::GET_WORKSPACES)),
        SwayCmd::Outputs(on) => (on, get("sway.outputs", wl::ipc::GET_OUTPUTS)),
        SwayCmd::Focus { on, criteria } => (on, command("sway.focus", wl::sway::focus(criteria)?)),
        SwayCmd::Move { on, place } => (on, command("sway.move", wl::sway::move_command(place)?)),
        SwayCmd::Resize { on, dimension, amount } => {
            (on, command("sway.resize", wl::sway::resize(dimension, amount)?))
        }
        SwayCmd::Layout { on, mode } => (on, command("sway.layout", wl::sway::layout(mode)?)),
        SwayCmd::Workspace { on, number } => {
            (on, command("sway.workspace", format!("workspace number {number}")))
        }
        SwayCmd::Kill(on) => (on, command("sway.kill", "kill".into())),
        SwayCmd::Floating(on) => (on, command("sway.floating", "floating toggle".into())),
        SwayCmd::Reload(on) => (on, command("sway.reload", "reload".into())),
    })
}
