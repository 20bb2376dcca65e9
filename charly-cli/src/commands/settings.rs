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
            if ctx.scope() == Scope::Served {
                host_only("set", key)?;
            }
            ctx.check_cancelled()?;
            reply(settings::set(key, value, dir, interactive(ctx))?)
        }
        SettingsCmd::List => reply(settings::list(dir)?),
        SettingsCmd::Path => reply(settings::path()),
        SettingsCmd::Reset { key } => {
            // A reset changes the same keys a set does (`secret_backend` back to `auto`, which
            // reads plaintext copies: trial 31, HIGH-2), and with no key the whole file, every
            // stored password in it included.
            if ctx.scope() == Scope::Served {
                match key {
                    Some(key) => host_only("reset", key)?,
                    None => {
                        return Err(CommandError::Usage(
                            "settings.reset: as a tool, name one key; resetting the whole config file (and \
                             the credentials it holds) is done on the host's terminal (`charly settings reset`)"
                                .into(),
                        ));
                    }
                }
            }
            ctx.check_cancelled()?;
            reply(settings::reset(key.as_deref(), dir, interactive(ctx))?)
        }
        SettingsCmd::MigrateSecrets { dry_run } => {
            ctx.check_cancelled()?;
            reply(settings::migrate_secrets(*dry_run, dir)?)
        }
    }
}

/// Refuses, for a tool, a key that is the host's choice ([`crate::config::Key::from_dotenv`]):
/// a path setting points charly at a host file it later writes (`secrets init --force`
/// replaced what secrets.kdbx_path named: trial 29, H2), while every path a tool names stays in
/// the project; where this host keeps credentials (`secret_backend config` sent passwords
/// to the plaintext file: trial 30, M2); and which interfaces it publishes on (`bind_address`).
/// The keys a project's `.env` may not set either.
fn host_only(verb: &str, key: &str) -> Result<(), CommandError> {
    let Some(k) = crate::config::KEYS.iter().find(|k| k.name == key).filter(|k| !k.from_dotenv()) else {
        return Ok(());
    };
    let what = match k.kind {
        crate::config::Kind::Path => "a path on the host, and a tool's paths stay inside the project",
        // `0.0.0.0` publishes ports on every interface (trial 31, MED-3).
        _ if k.name == "bind_address" => {
            "which of this host's network interfaces ports are published on, which a tool does not choose"
        }
        _ => "where this host keeps its credentials, which a tool does not choose",
    };
    let how = match verb {
        "set" => format!("`charly settings set {key} VALUE`"),
        _ => format!("`charly settings reset {key}`"),
    };
    Err(CommandError::Usage(format!(
        "settings.{verb}: {key} is {what}; {verb} it on the host's terminal ({how})"
    )))
}
