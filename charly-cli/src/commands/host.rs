//! `charly alias ...` and `charly udev ...`.

use std::path::{Path, PathBuf};

use super::reply;
use crate::alias;
use crate::cli::{AliasCmd, AliasDest, UdevCmd};
use crate::context::Ctx;
use crate::error::CommandError;
use crate::report::Reply;
use crate::udev;

fn host_path(ctx: &Ctx, path: &Path) -> PathBuf {
    if path.is_absolute() { path.to_owned() } else { ctx.root().join(path) }
}

fn dest(ctx: &Ctx, d: &AliasDest) -> PathBuf {
    d.dest.as_deref().map_or_else(alias::default_dest, |p| host_path(ctx, p))
}

pub(super) fn run_alias(cmd: &AliasCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    match cmd {
        AliasCmd::Add { name, r#box, command, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::add(name, r#box, command.as_deref(), &dest(ctx, d), ctx.root())?)
        }
        AliasCmd::Install { r#box, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::install(r#box, &dest(ctx, d), ctx.root())?)
        }
        AliasCmd::List(d) => reply(alias::list(&dest(ctx, d))?),
        AliasCmd::Remove { name, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::remove(name, &dest(ctx, d))?)
        }
        AliasCmd::Uninstall { r#box, dest: d } => {
            ctx.check_cancelled()?;
            reply(alias::uninstall(r#box, &dest(ctx, d))?)
        }
    }
}

pub(super) fn run_udev(cmd: &UdevCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    match cmd {
        UdevCmd::Generate(r) => reply(udev::generate(&host_path(ctx, &r.root))),
        UdevCmd::Install(r) => {
            ctx.check_cancelled()?;
            reply(udev::install(&host_path(ctx, &r.root))?)
        }
        UdevCmd::Remove(r) => {
            ctx.check_cancelled()?;
            reply(udev::remove(&host_path(ctx, &r.root))?)
        }
        UdevCmd::Status(r) => reply(udev::status(&host_path(ctx, &r.root))),
    }
}
