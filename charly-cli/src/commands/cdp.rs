//! `charly check cdp ...`: each leaf as an [`Op`], run against the browser its target names.

use crate::cdp::{self, Op};
use crate::cli::{CdpCmd, CdpTarget, SelectorArgs, SpaCmd, SpaPoint, TabArgs};
use crate::context::Ctx;
use crate::engine::Engine;
use crate::error::CommandError;
use crate::report::Reply;

/// Runs a `check cdp` leaf.
///
/// # Errors
///
/// [`CommandError::Cdp`] (unreachable browser, no port mapping, unknown tab, a CDP error, a
/// script that threw, no element), [`CommandError::Usage`] for a bad `--scale` or a
/// screenshot path outside the project over MCP.
pub(super) fn run(cmd: &CdpCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let (on, op) = op_of(cmd, ctx)?;
    let timeout = on.timeout.into();
    let engine = Engine::podman(ctx.cancel_token()).knowing(crate::resolve::project_boxes(ctx.root()));
    let outcome = ctx.block_until_interrupted(async {
        let browser =
            cdp::resolve(&engine, &on.target, on.instance.as_deref(), on.cdp_url.as_deref()).await?;
        cdp::perform(&browser, &op, timeout).await
    })?;
    Ok(outcome.reply())
}

fn tab(t: &TabArgs) -> String {
    t.tab.clone()
}

fn sel(s: &SelectorArgs) -> (String, String) {
    (s.tab.tab.clone(), s.selector.clone())
}

/// `--scale sx,sy` as two positive numbers.
fn scale(p: &SpaPoint) -> Result<Option<(f64, f64)>, CommandError> {
    let Some(text) = &p.scale else { return Ok(None) };
    let parsed = text
        .split_once(',')
        .and_then(|(a, b)| Some((a.trim().parse::<f64>().ok()?, b.trim().parse::<f64>().ok()?)))
        .filter(|(a, b)| *a > 0.0 && *b > 0.0);
    parsed.map(Some).ok_or_else(|| {
        CommandError::Usage(format!("--scale {text:?}: expects two positive numbers sx,sy, e.g. 1.5,1.5"))
    })
}

fn op_of<'a>(cmd: &'a CdpCmd, ctx: &Ctx) -> Result<(&'a CdpTarget, Op), CommandError> {
    Ok(match cmd {
        CdpCmd::Status(on) => (on, Op::Status),
        CdpCmd::List(on) => (on, Op::List),
        CdpCmd::Open { on, url } => (on, Op::Open { url: url.clone() }),
        CdpCmd::Close(t) => (&t.on, Op::Close { tab: tab(t) }),
        CdpCmd::Url(t) => (&t.on, Op::Url { tab: tab(t) }),
        CdpCmd::Text(t) => (&t.on, Op::Text { tab: tab(t) }),
        CdpCmd::Html(t) => (&t.on, Op::Html { tab: tab(t) }),
        CdpCmd::Eval { tab: t, expression } => {
            (&t.on, Op::Eval { tab: tab(t), expression: expression.clone() })
        }
        CdpCmd::Wait(s) => {
            let (tab, selector) = sel(s);
            (&s.tab.on, Op::Wait { tab, selector })
        }
        CdpCmd::Click(s) => {
            let (tab, selector) = sel(s);
            (&s.tab.on, Op::Click { tab, selector })
        }
        CdpCmd::Type { element, text } => {
            let (tab, selector) = sel(element);
            (&element.tab.on, Op::Type { tab, selector, text: text.clone() })
        }
        CdpCmd::Coords(s) => {
            let (tab, selector) = sel(s);
            (&s.tab.on, Op::Coords { tab, selector })
        }
        CdpCmd::Axtree { tab: t, query } => (&t.on, Op::Axtree { tab: tab(t), query: query.clone() }),
        CdpCmd::Raw { tab: t, method, params } => {
            (&t.on, Op::Raw { tab: tab(t), method: method.clone(), params: params.clone() })
        }
        CdpCmd::Screenshot { tab: t, file } => {
            let file = match file {
                Some(f) => Some(super::arg_path(ctx, "file", f)?),
                None => None,
            };
            (&t.on, Op::Screenshot { tab: tab(t), file })
        }
        CdpCmd::Spa(spa) => match spa {
            SpaCmd::Status(t) => (&t.on, Op::SpaStatus { tab: tab(t) }),
            SpaCmd::Click { point, button } => (
                &point.tab.on,
                Op::SpaClick {
                    tab: tab(&point.tab),
                    x: point.x.into(),
                    y: point.y.into(),
                    button: *button,
                    scale: scale(point)?,
                },
            ),
            SpaCmd::Mouse(point) => (
                &point.tab.on,
                Op::SpaMouse {
                    tab: tab(&point.tab),
                    x: point.x.into(),
                    y: point.y.into(),
                    scale: scale(point)?,
                },
            ),
            SpaCmd::Type { tab: t, text } => (&t.on, Op::SpaType { tab: tab(t), text: text.clone() }),
            SpaCmd::Key { tab: t, key_name } => (&t.on, Op::SpaKey { tab: tab(t), key: key_name.clone() }),
            SpaCmd::KeyCombo { tab: t, combo } => (&t.on, Op::SpaCombo { tab: tab(t), combo: combo.clone() }),
        },
    })
}
