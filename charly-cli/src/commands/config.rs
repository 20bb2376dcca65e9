//! `charly config ...`.

use super::deployfile::host_path;
use super::reply;
use crate::cli::ConfigCmd;
use crate::config::Settings;
use crate::context::{Ctx, Scope};
use crate::credentials::Store;
use crate::deployfile::{self, EntryUpdate, deploy_path, quadlet_dir};
use crate::engine::{Engine, Target};
use crate::error::CommandError;
use crate::project::Project;
use crate::project::runtime::Runtime;
use crate::report::Reply;
use crate::setup::{self, Request, RunMode};

pub(super) fn run(cmd: &ConfigCmd, ctx: &Ctx, project: &Project) -> Result<Reply, CommandError> {
    // Every leaf reads or writes the deploy file: none without a home to find it in.
    deployfile::checked_deploy_path()?;
    match cmd {
        ConfigCmd::Setup(a) => {
            let box_name = &a.target.r#box;
            // An unknown box is an error listing the project's boxes.
            let resolved = project.resolve_box(box_name)?;
            let key = deployfile::key(box_name, a.target.instance.as_deref())?;
            let env_file = a.env_file.as_deref().map(|f| host_path(ctx, f)).transpose()?;
            if let Some(f) = &env_file
                && !f.is_file()
            {
                return Err(CommandError::Usage(format!(
                    "--env-file {}: no such file; give an existing env file (KEY=VALUE lines)",
                    f.display()
                )));
            }
            // Every line must reach the container: podman drops a bare KEY the host lacks, and
            // knows no `export`.
            if let Some(f) = &env_file {
                let text = std::fs::read_to_string(f)
                    .map_err(|e| CommandError::Usage(format!("--env-file {}: {e}", f.display())))?;
                let problems = crate::deploy::args::env_file_problems(&text);
                if !problems.is_empty() {
                    return Err(CommandError::Usage(format!(
                        "--env-file {}: {}; every line is KEY=VALUE, blank or a # comment; nothing was changed",
                        f.display(),
                        problems.join("; ")
                    )));
                }
            }
            let update = EntryUpdate {
                image: box_name.clone(),
                ports: a.port.clone(),
                env: a.env.clone(),
                clean_env: a.clean,
                env_file: env_file.map(|f| f.display().to_string()),
                network: a.network.clone(),
                secrets: None,
                volumes: None,
                run_mode: None,
            };
            let target = Target::new(box_name, a.target.instance.as_deref())?;
            let settings = Settings::load(ctx.root()).map_err(|e| CommandError::Usage(e.to_string()))?;
            // The run mode: given, else the one the entry records (or, for an entry written
            // before it was recorded, quadlet when its unit is there), else the setting's.
            let recorded = deployfile::DeployFile::load(&deploy_path())
                .ok()
                .and_then(|f| {
                    f.schema()
                        .deploy
                        .as_ref()?
                        .get(&key)?
                        .as_ref()?
                        .run_mode
                        .as_deref()
                        .map(|m| m == "quadlet")
                })
                .or_else(|| {
                    setup::quadlet::units_of(&quadlet_dir(), &target)
                        .iter()
                        .any(|f| f.extension().is_some_and(|e| e == "container"))
                        .then_some(true)
                });
            let run_mode = a.run_mode.unwrap_or_else(|| match recorded {
                Some(true) => RunMode::Quadlet,
                Some(false) => RunMode::Direct,
                None => RunMode::from_setting(&settings.value("run_mode")),
            });
            let mut store = Store::open(settings, matches!(ctx.scope(), Scope::Terminal));
            // What the image declares (a direct start reads the same labels); the project's
            // declarations when it is not built (or podman cannot say).
            let labels = if run_mode == RunMode::Quadlet {
                let engine = Engine::podman(ctx.cancel_token());
                match ctx.block(engine.image(&resolved.image)) {
                    Ok(Some(image)) => Runtime::from_labels(&image.labels.unwrap_or_default()),
                    _ => resolved.runtime(),
                }
            } else {
                resolved.runtime()
            };
            let request = Request {
                labels,
                target,
                image: resolved.image.clone(),
                box_ports: resolved.ports(),
                declared_volumes: resolved.runtime().volumes.into_iter().map(|v| (v.name, v.path)).collect(),
                update,
                secrets: a.secret.clone(),
                volumes: a.volume.clone(),
                binds: binds(ctx, &a.bind)?,
                encrypt: a.encrypt.clone(),
                run_mode,
                password: a.password,
            };
            ctx.check_cancelled()?;
            // Not stopped half-way: the call checks the cancellation before its first change
            // and undoes its own changes on failure.
            let engine = Engine::podman(tokio_util::sync::CancellationToken::new());
            let report = through(setup::setup(
                &engine,
                &mut store,
                &deploy_path(),
                &quadlet_dir(),
                &request,
                &ctx.cancel(),
            ))?;
            reply(report)
        }
        ConfigCmd::Status(t) => {
            let target = Target::new(&t.r#box, t.instance.as_deref())?;
            let engine = Engine::podman(ctx.cancel_token());
            reply(ctx.block(setup::status(&engine, &deploy_path(), &quadlet_dir(), &target))?)
        }
        ConfigCmd::Remove(a) => {
            let target = Target::new(&a.target.r#box, a.target.instance.as_deref())?;
            ctx.check_cancelled()?;
            let engine = Engine::podman(tokio_util::sync::CancellationToken::new());
            reply(through(setup::remove(
                &engine,
                &deploy_path(),
                &quadlet_dir(),
                &target,
                a.purge,
                &ctx.cancel(),
            ))?)
        }
        ConfigCmd::Mount(a) => {
            let target = Target::new(&a.target.r#box, a.target.instance.as_deref())?;
            let store = open_store(ctx)?;
            reply(setup::mounts::mount(&store, &deploy_path(), &target, a.volume.as_deref())?)
        }
        ConfigCmd::Unmount(a) => {
            let target = Target::new(&a.target.r#box, a.target.instance.as_deref())?;
            reply(setup::mounts::unmount(&deploy_path(), &target, a.volume.as_deref())?)
        }
        ConfigCmd::Passwd(a) => {
            let target = Target::new(&a.target.r#box, a.target.instance.as_deref())?;
            let mut store = open_store(ctx)?;
            ctx.check_cancelled()?;
            reply(setup::mounts::passwd(&mut store, &deploy_path(), &target, &a.new_passphrase)?)
        }
    }
}

/// The `--bind NAME=HOST_DIR` values as setup takes them: as given on a terminal (setup checks
/// that the directory is absolute and exists), and as a tool resolved inside the project root,
/// as `start`'s `bind` is (no absolute path, no `..`, no symlink out), so that a served call
/// mounts no host directory outside the project. A refused path is a usage error naming the
/// value and what is allowed.
fn binds(ctx: &Ctx, given: &[String]) -> Result<Vec<String>, CommandError> {
    if matches!(ctx.scope(), Scope::Terminal) {
        return Ok(given.to_vec());
    }
    given
        .iter()
        .map(|text| {
            let Some((name, host)) = text.split_once('=') else {
                // Setup names the shape that is wanted.
                return Ok(text.clone());
            };
            let resolved = host_path(ctx, std::path::Path::new(host)).map_err(|e| {
                CommandError::Usage(format!(
                    "config.setup --bind {text}: {e}; as a tool, bind a directory inside the project root \
                     (relative to it)"
                ))
            })?;
            if resolved.exists() && !resolved.is_dir() {
                return Err(CommandError::Usage(format!(
                    "config.setup --bind {text}: {} is a file, not a directory; bind a directory",
                    resolved.display()
                )));
            }
            if !resolved.is_dir() {
                return Err(CommandError::Usage(format!(
                    "config.setup --bind {text}: the host directory {} does not exist; create it inside \
                     the project root, or bind another",
                    resolved.display()
                )));
            }
            Ok(format!("{name}={}", resolved.display()))
        })
        .collect()
}

fn open_store(ctx: &Ctx) -> Result<Store, CommandError> {
    let settings = Settings::load(ctx.root()).map_err(|e| CommandError::Usage(e.to_string()))?;
    Ok(Store::open(settings, matches!(ctx.scope(), Scope::Terminal)))
}

/// Runs `future` to its end on a private runtime (no cancellation cuts it in half).
fn through<T>(
    future: impl std::future::Future<Output = Result<T, setup::SetupError>>,
) -> Result<T, CommandError> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    Ok(runtime.block_on(future)?)
}
