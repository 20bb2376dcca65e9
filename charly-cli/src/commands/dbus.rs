//! `charly check dbus ...`: each leaf against the session bus its target names: `.` (this
//! machine's) or a box's (its running container's dbus-daemon, [`dbus::resolve`]).

use crate::cli::DbusCmd;
use crate::context::Ctx;
use crate::dbus;
use crate::engine::Engine;
use crate::error::CommandError;
use crate::report::Reply;

/// Runs a `check dbus` leaf.
///
/// # Errors
///
/// [`CommandError::Dbus`]: no bus, a box not running or without a reachable bus address, an
/// error reply, a bad argument.
pub(super) fn run(cmd: &DbusCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let on = match cmd {
        DbusCmd::List(on)
        | DbusCmd::Call { on, .. }
        | DbusCmd::Introspect { on, .. }
        | DbusCmd::Notify { on, .. } => on,
    };
    let timeout = on.timeout.into();
    let engine = Engine::podman(ctx.cancel_token()).knowing(crate::resolve::project_boxes(ctx.root()));
    let bus = ctx.block_until_interrupted(async {
        dbus::resolve(&engine, &on.target, on.instance.as_deref()).await
    })?;
    Ok(match cmd {
        DbusCmd::List(_) => Reply::new(&ctx.block_until_interrupted(dbus::list(&bus, timeout))?),
        DbusCmd::Call { dest, path, method, args, .. } => Reply::new(
            &ctx.block_until_interrupted(dbus::call_typed(&bus, dest, path, method, args, timeout))?,
        ),
        DbusCmd::Introspect { dest, path, .. } => {
            Reply::new(&ctx.block_until_interrupted(dbus::introspect(&bus, dest, path, timeout))?)
        }
        DbusCmd::Notify { title, body, .. } => Reply::new(&ctx.block_until_interrupted(dbus::notify(
            &bus,
            title,
            body.as_deref().unwrap_or(""),
            timeout,
        ))?),
    })
}
