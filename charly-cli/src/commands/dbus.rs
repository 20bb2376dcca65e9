//! `charly check dbus ...`: each leaf against this machine's session bus.

use crate::cli::{BusTarget, DbusCmd};
use crate::context::Ctx;
use crate::dbus::{self, DbusError};
use crate::error::CommandError;
use crate::report::Reply;

/// Runs a `check dbus` leaf.
///
/// # Errors
///
/// [`CommandError::Dbus`]: no bus, an error reply, a bad argument, a box target.
pub(super) fn run(cmd: &DbusCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let on = match cmd {
        DbusCmd::List(on)
        | DbusCmd::Call { on, .. }
        | DbusCmd::Introspect { on, .. }
        | DbusCmd::Notify { on, .. } => on,
    };
    local(on)?;
    let timeout = on.timeout.into();
    Ok(match cmd {
        DbusCmd::List(_) => Reply::new(&ctx.block_until_interrupted(dbus::list(timeout))?),
        DbusCmd::Call { dest, path, method, args, .. } => {
            Reply::new(&ctx.block_until_interrupted(dbus::call_typed(dest, path, method, args, timeout))?)
        }
        DbusCmd::Introspect { dest, path, .. } => {
            Reply::new(&ctx.block_until_interrupted(dbus::introspect(dest, path, timeout))?)
        }
        DbusCmd::Notify { title, body, .. } => Reply::new(&ctx.block_until_interrupted(dbus::notify(
            title,
            body.as_deref().unwrap_or(""),
            timeout,
        ))?),
    })
}

/// Only `.`: a box's bus is reached through the binary inside its container, not built yet.
fn local(on: &BusTarget) -> Result<(), DbusError> {
    if on.target == "." {
        return Ok(());
    }
    let i = on.instance.as_ref().map(|i| format!(" -i {i}")).unwrap_or_default();
    Err(DbusError::Usage(format!(
        "target {:?}: check.dbus reaches this machine's session bus (`.`) only; for box {0}'s bus run it \
         inside the container: `charly cmd {0}{i} -- charly check dbus ... .`",
        on.target
    )))
}
