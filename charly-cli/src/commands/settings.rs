//! `charly settings ...`.

use super::{interactive, reply};
use crate::cli::SettingsCmd;
use crate::context::Ctx;
use crate::error::CommandError;
use crate::report::Reply;
use crate::settings;

pub(super) fn run(cmd: &SettingsCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let dir = ctx.root();
    match cmd {
        SettingsCmd::Get(k) => reply(settings::get(&k.key, dir, interactive(ctx))?),
        SettingsCmd::Set { key, value } => {
            ctx.check_cancelled()?;
            reply(settings::set(key, value, dir, interactive(ctx))?)
        }
        SettingsCmd::List => reply(settings::list(dir)?),
        SettingsCmd::Path => reply(settings::path()),
        SettingsCmd::Reset { key } => {
            ctx.check_cancelled()?;
            reply(settings::reset(key.as_deref(), dir, interactive(ctx))?)
        }
        SettingsCmd::MigrateSecrets { dry_run } => {
            ctx.check_cancelled()?;
            reply(settings::migrate_secrets(*dry_run, dir)?)
        }
    }
}
