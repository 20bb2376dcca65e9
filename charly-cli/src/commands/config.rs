//! `charly config ...`.

use super::deployfile::host_path;
use super::reply;
use crate::cli::ConfigCmd;
use crate::context::Ctx;
use crate::deployfile::{self, EntryUpdate, deploy_path};
use crate::error::CommandError;
use crate::project::Project;
use crate::report::Reply;

pub(super) fn run(cmd: &ConfigCmd, ctx: &Ctx, project: &Project) -> Result<Reply, CommandError> {
    match cmd {
        ConfigCmd::Setup(a) => {
            let box_name = &a.target.r#box;
            // An unknown box is an error listing the project's boxes.
            project.resolve_box(box_name)?;
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
            let update = EntryUpdate {
                image: box_name.clone(),
                ports: a.port.clone(),
                env: a.env.clone(),
                clean_env: a.clean,
                env_file: env_file.map(|f| f.display().to_string()),
                network: a.network.clone(),
            };
            ctx.check_cancelled()?;
            reply(deployfile::write_entry(&deploy_path(), &key, &update, &ctx.cancel())?)
        }
    }
}
