//! `charly alias ...` and `charly udev ...`.

use std::path::{Path, PathBuf};

use super::{arg_path, reply};
use crate::alias;
use crate::cli::{AliasCmd, AliasDest, UdevCmd, UdevRoot};
use crate::context::Ctx;
use crate::error::CommandError;
use crate::report::Reply;
use crate::udev;

/// The alias directory: `--dest` (beneath the project root over MCP), else `~/.local/bin`.
fn dest(ctx: &Ctx, d: &AliasDest) -> Result<PathBuf, CommandError> {
    d.dest.as_deref().map_or_else(|| Ok(alias::default_dest()), |p| arg_path(ctx, "dest", p))
}

/// The root udev works under: `/` (the default, the real system), or another one (beneath the
/// project root over MCP).
fn root(ctx: &Ctx, r: &UdevRoot) -> Result<PathBuf, CommandError> {
    if r.root == Path::new("/") { Ok(r.root.clone()) } else { arg_path(ctx, "root", &r.root) }
}

pub(super) fn run_alias(cmd: &AliasCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    match cmd {
        AliasCmd::Add { name, r#box, command, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::add(name, r#box, command.as_deref(), &dest(ctx, d)?, ctx.root())?)
        }
        AliasCmd::Install { r#box, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::install(r#box, &dest(ctx, d)?, ctx.root())?)
        }
        AliasCmd::List(d) => reply(alias::list(&dest(ctx, d)?)?),
        AliasCmd::Remove { name, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::remove(name, &dest(ctx, d)?)?)
        }
        AliasCmd::Uninstall { r#box, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::uninstall(r#box, &dest(ctx, d)?)?)
        }
    }
}

pub(super) fn run_udev(cmd: &UdevCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    match cmd {
        UdevCmd::Generate(r) => reply(udev::generate(&root(ctx, r)?)),
        UdevCmd::Install(r) => {
            ctx.check_cancelled()?;
            reply(udev::install(&root(ctx, r)?)?)
        }
        UdevCmd::Remove(r) => {
            ctx.check_cancelled()?;
            reply(udev::remove(&root(ctx, r)?)?)
        }
        UdevCmd::Status(r) => reply(udev::status(&root(ctx, r)?)),
    }
}
