//! `charly settings ...`.

use super::{interactive, reply};
use crate::cli::SettingsCmd;
use crate::context::{Ctx, Scope};
use crate::error::CommandError;
use crate::report::Reply;
use crate::settings;

pub(super) fn run(cmd: &SettingsCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let dir = ctx.root();
    match cmd {
        SettingsCmd::Get(k) => reply(settings::get(&k.key, dir, interactive(ctx))?),
        SettingsCmd::Set { key, value } => {
            // A path setting points charly at a host file it later writes (`secrets init
            // --force` replaced what secrets.kdbx_path named: trial 29, H2); every path a tool
            // names stays in the project, so such a setting is made on the host.
            // Nor where this host keeps credentials: `secret_backend config` sent passwords to
            // the plaintext file (trial 30, M2). The keys a project's `.env` may not set either.
            if ctx.scope() == Scope::Served
                && let Some(k) = crate::config::KEYS.iter().find(|k| k.name == key.as_str())
                && !k.from_dotenv()
            {
                let what = match k.kind {
                    crate::config::Kind::Path => {
                        "a path on the host, and a tool's paths stay inside the project"
                    }
                    _ => "where this host keeps its credentials, which a tool does not choose",
                };
                return Err(CommandError::Usage(format!(
                    "settings.set: {key} is {what}; set it on the host's terminal (`charly settings set {key} VALUE`)"
                )));
            }
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
