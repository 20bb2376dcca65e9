//! `charly deploy ...`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::reply;
use crate::cli::{DeployCmd, DeployKey};
use crate::context::{Ctx, Scope};
use crate::deployfile;
use crate::engine::Engine;
use crate::error::CommandError;
use crate::project::Project;
use crate::report::Reply;

pub(super) fn run(cmd: &DeployCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let path = deployfile::checked_deploy_path()?;
    match cmd {
        DeployCmd::Export { keys, output } => {
            let output = output.as_deref().map(|o| host_path(ctx, o)).transpose()?;
            reply(deployfile::export(&path, keys, output.as_deref(), &ctx.cancel())?)
        }
        DeployCmd::Import { files, replace, r#box } => {
            let files = files.iter().map(|f| host_path(ctx, f)).collect::<Result<Vec<_>, _>>()?;
            ctx.check_cancelled()?;
            reply(deployfile::import(&path, &files, *replace, r#box.as_deref(), &ctx.cancel())?)
        }
        DeployCmd::Path => reply(deployfile::path(&path)),
        DeployCmd::Reset(k) => {
            let key = key(k)?;
            ctx.check_cancelled()?;
            reply(deployfile::reset(&path, key.as_deref(), &ctx.cancel())?)
        }
        DeployCmd::Show(k) => reply(deployfile::show(&path, key(k)?.as_deref())?),
        DeployCmd::Status => {
            let containers = containers(ctx)?;
            reply(deployfile::status(&path, &deployfile::quadlet_dir(), containers.as_ref())?)
        }
    }
}

/// The deployment name of the arguments, checked; `None` without a box.
fn key(k: &DeployKey) -> Result<Option<String>, CommandError> {
    Ok(k.r#box.as_deref().map(|b| deployfile::key(b, k.instance.as_deref())).transpose()?)
}

/// A file named on the command line: relative to the project directory, and inside it when
/// called as a tool (a tool reads or writes no other file of the host).
pub(super) fn host_path(ctx: &Ctx, path: &Path) -> Result<PathBuf, CommandError> {
    match ctx.scope() {
        Scope::Terminal if path.is_absolute() => Ok(path.to_owned()),
        Scope::Terminal => Ok(ctx.root().join(path)),
        Scope::Served => Ok(Project::at(ctx.root().to_owned()).resolve_inside(path)?.0),
    }
}

/// charly's containers (name → state), or `None` when podman cannot be asked.
fn containers(ctx: &Ctx) -> Result<Option<BTreeMap<String, String>>, CommandError> {
    match ctx.block(Engine::podman(ctx.cancel_token()).charly_containers()) {
        Ok(list) => Ok(Some(list.iter().map(|c| (c.name().to_owned(), c.state.clone())).collect())),
        Err(CommandError::Cancelled) => Err(CommandError::Cancelled),
        Err(_) => Ok(None),
    }
}
