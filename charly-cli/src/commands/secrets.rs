//! `charly secrets ...` and `charly secrets gpg ...`.

use std::path::{Path, PathBuf};

use super::{arg_path, interactive, reply};
use crate::cli::{GpgCmd, SecretsCmd};
use crate::config::Settings;
use crate::context::{Ctx, Scope};
use crate::credentials::Keyring;
use crate::error::CommandError;
use crate::gpg::{self, GpgError};
use crate::project::Project;
use crate::report::Reply;
use crate::secrets::{self, Opts};

pub(super) fn run(cmd: &SecretsCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let opts = |kdbx: &Option<PathBuf>| -> Result<(Option<PathBuf>, bool), CommandError> {
        Ok((kdbx.as_ref().map(|p| arg_path(ctx, "kdbx", p)).transpose()?, interactive(ctx)))
    };
    macro_rules! with_opts {
        ($kdbx:expr, |$o:ident| $body:expr) => {{
            let (path, interactive) = opts(&$kdbx.kdbx)?;
            let $o = Opts { kdbx: path.as_deref(), project_dir: ctx.root(), interactive };
            let reply: Result<Reply, CommandError> = $body;
            reply.map(|mut reply| {
                reply.warnings.extend(secrets::warnings(&$o));
                reply
            })
        }};
    }
    match cmd {
        SecretsCmd::Init { db_path, force, strong_kdf, kdbx } => with_opts!(kdbx, |o| {
            ctx.check_cancelled()?;
            let db_path = db_path.as_ref().map(|p| arg_path(ctx, "db_path", p)).transpose()?;
            reply(secrets::init(db_path.as_deref(), *force, *strong_kdf, &o)?)
        }),
        SecretsCmd::List { service, kdbx } => with_opts!(kdbx, |o| reply(secrets::list(service, &o)?)),
        SecretsCmd::Get { service, key, kdbx } => {
            with_opts!(kdbx, |o| reply(secrets::get(service, key, &o)?))
        }
        SecretsCmd::Set { service, key, value, generate, kdbx } => with_opts!(kdbx, |o| {
            ctx.check_cancelled()?;
            let reveal = ctx.scope() == Scope::Terminal;
            reply(secrets::set(service, key, value.as_deref(), *generate, reveal, &o)?)
        }),
        SecretsCmd::Delete { service, key, kdbx } => with_opts!(kdbx, |o| {
            ctx.check_cancelled()?;
            reply(secrets::delete(service, key, &o)?)
        }),
        SecretsCmd::Export { format, kdbx } => with_opts!(kdbx, |o| reply(secrets::export(format, &o)?)),
        SecretsCmd::Import { dry_run, kdbx } => with_opts!(kdbx, |o| {
            ctx.check_cancelled()?;
            reply(secrets::import(*dry_run, &o)?)
        }),
        SecretsCmd::Path { kdbx } => with_opts!(kdbx, |o| reply(secrets::path(&o)?)),
        SecretsCmd::Gpg(cmd) => run_gpg(cmd, ctx),
    }
}

/// A host path (a KDBX file, a key directory): relative to the project directory.
fn host_path(ctx: &Ctx, path: &Path) -> PathBuf {
    if path.is_absolute() { path.to_owned() } else { ctx.root().join(path) }
}

/// A project file (the encrypted dotenv file, a plaintext output): relative to the project
/// directory, and inside it when called as a tool.
fn project_path(ctx: &Ctx, arg: &'static str, path: &Path) -> Result<PathBuf, CommandError> {
    match ctx.scope() {
        Scope::Terminal => Ok(host_path(ctx, path)),
        Scope::Served => {
            Ok(Project::at(ctx.root().to_owned()).resolve_inside(path).map_err(super::named(arg))?.0)
        }
    }
}

fn keyring(ctx: &Ctx) -> Keyring {
    let label = Settings::load(ctx.root()).ok().and_then(|s| s.keyring_collection_label());
    Keyring::new(label)
}

fn run_gpg(cmd: &GpgCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let file = |f: &crate::cli::SecretsFile| project_path(ctx, "file", &f.file);
    let keys = keyring(ctx);
    let unlock = |var: &Option<String>| gpg::Unlock::from_env(var.as_deref(), Some(&keys));
    match cmd {
        GpgCmd::Show(f) => reply(gpg::show(&file(f)?, &unlock(&f.passphrase_env)?)?),
        GpgCmd::Env(f) => reply(gpg::env(&file(f)?, &unlock(&f.passphrase_env)?)?),
        GpgCmd::Decrypt { input, output, passphrase_env } => {
            let input = project_path(ctx, "input", input)?;
            let output = match (output, ctx.scope()) {
                (Some(o), _) => Some(project_path(ctx, "output", o)?),
                (None, Scope::Terminal) => None,
                (None, Scope::Served) => {
                    return Err(GpgError::NeedsTerminal(
                        "secrets.gpg.decrypt as a tool writes the plaintext to a file: give `output` \
                         (secrets.gpg.show returns it)"
                            .into(),
                    )
                    .into());
                }
            };
            ctx.check_cancelled()?;
            reply(gpg::decrypt(&input, output.as_deref(), &unlock(passphrase_env)?)?)
        }
        GpgCmd::Encrypt { input, output, recipient } => {
            let (input, output) = (project_path(ctx, "input", input)?, project_path(ctx, "output", output)?);
            ctx.check_cancelled()?;
            reply(gpg::encrypt(&input, &output, recipient)?)
        }
        GpgCmd::Edit(f) => {
            if !interactive(ctx) {
                return Err(GpgError::NeedsTerminal(
                    "secrets gpg edit opens an editor and runs on a terminal only; use secrets.gpg.set and \
                     secrets.gpg.unset to change one variable"
                        .into(),
                )
                .into());
            }
            reply(gpg::edit(&file(f)?, &unlock(&f.passphrase_env)?)?)
        }
        GpgCmd::Set { key, value, file: f, recipient } => {
            let path = file(f)?;
            ctx.check_cancelled()?;
            reply(gpg::set(&path, key, value, recipient, &unlock(&f.passphrase_env)?)?)
        }
        GpgCmd::Unset { key, file: f } => {
            let path = file(f)?;
            ctx.check_cancelled()?;
            reply(gpg::unset(&path, key, &unlock(&f.passphrase_env)?)?)
        }
        GpgCmd::AddRecipient { key_id, file: f } => {
            let path = file(f)?;
            ctx.check_cancelled()?;
            reply(gpg::add_recipient(&path, key_id, &unlock(&f.passphrase_env)?)?)
        }
        GpgCmd::Recipients(f) => reply(gpg::recipients(&file(f)?)?),
        GpgCmd::ImportKey { path, from_keystore, key_id, passphrase } => {
            let path = path.as_ref().map(|p| arg_path(ctx, "path", p)).transpose()?;
            ctx.check_cancelled()?;
            reply(gpg::import_key(
                path.as_deref(),
                *from_keystore,
                key_id.as_deref(),
                passphrase.as_deref(),
                &keys,
            )?)
        }
        GpgCmd::ExportKey { path, to_keystore, key_id, passphrase } => {
            let path = path.as_ref().map(|p| arg_path(ctx, "path", p)).transpose()?;
            ctx.check_cancelled()?;
            reply(gpg::export_key(
                path.as_deref(),
                *to_keystore,
                key_id.as_deref(),
                passphrase.as_deref(),
                &keys,
            )?)
        }
        GpgCmd::Setup {
            import,
            from_keystore,
            passphrase,
            key_id,
            name,
            email,
            algo,
            skip_secret_service,
        } => {
            let import = import.as_ref().map(|p| arg_path(ctx, "import", p)).transpose()?;
            let args = gpg::SetupArgs {
                import: import.as_deref(),
                from_keystore: *from_keystore,
                passphrase: passphrase.as_deref(),
                key_id: key_id.as_deref(),
                name: name.as_deref(),
                email: email.as_deref(),
                algo,
                skip_secret_service: *skip_secret_service,
            };
            ctx.check_cancelled()?;
            reply(gpg::setup(&args, &keys)?)
        }
        GpgCmd::Doctor(f) => reply(gpg::doctor(&file(f)?, &keys, &unlock(&f.passphrase_env)?)?),
    }
}
