//! The lifecycle leaves: `start`, `stop`, `status`, `logs`, `shell`, `cmd`, `update`, `remove`,
//! `service.*`.

use super::reply;
use crate::cli::{Command, ServiceCmd};
use crate::context::Ctx;
use crate::deploy::hooks::HookPolicy;
use crate::deploy::lifecycle::StartRequest;
use crate::deploy::{Deploy, ServiceAction};
use crate::error::CommandError;
use crate::project::Project;
use crate::report::Reply;

/// Runs a lifecycle leaf; `None` for other commands.
pub(super) fn run(command: &Command, ctx: &Ctx, project: &Project) -> Option<Result<Reply, CommandError>> {
    let d = Deploy::new(ctx, project);
    let result = match command {
        Command::Start(a) => {
            let request = StartRequest {
                box_name: &a.target.r#box,
                instance: a.target.instance.as_deref(),
                env: &a.env,
                ports: &a.port,
                volumes: &a.volume,
                binds: &a.bind,
                command: &a.command,
                hooks: HookPolicy { run: true, timeout_secs: a.hook_timeout },
            };
            d.start(&request).map_err(CommandError::from).and_then(reply)
        }
        Command::Stop(a) => d
            .stop(&a.target.r#box, a.target.instance.as_deref(), a.timeout)
            .map_err(Into::into)
            .and_then(reply),
        Command::Status(a) => {
            d.status(a.r#box.as_deref(), a.instance.as_deref()).map_err(Into::into).and_then(reply)
        }
        Command::Logs(a) => d
            .logs(&a.target.r#box, a.target.instance.as_deref(), a.lines, a.follow)
            .map_err(Into::into)
            .and_then(reply),
        Command::Shell(a) => d
            .shell(&a.target.r#box, a.target.instance.as_deref(), &a.env, a.command.as_deref())
            .map_err(Into::into)
            .and_then(reply),
        Command::Cmd(a) => d
            .cmd(&a.target.r#box, a.target.instance.as_deref(), &a.env, &a.command)
            .map_err(Into::into)
            .and_then(reply),
        Command::Update(a) => d
            .update(&a.target.r#box, a.target.instance.as_deref(), a.pull)
            .map_err(Into::into)
            .and_then(reply),
        Command::Remove(a) => d
            .remove(
                &a.target.r#box,
                a.target.instance.as_deref(),
                a.purge,
                a.timeout,
                HookPolicy { run: !a.no_hooks, timeout_secs: a.hook_timeout },
            )
            .map_err(Into::into)
            .and_then(reply),
        Command::Service(cmd) => {
            let (target, action, service) = match cmd {
                ServiceCmd::Start(a) => (&a.target, ServiceAction::Start, Some(a.service.as_str())),
                ServiceCmd::Stop(a) => (&a.target, ServiceAction::Stop, Some(a.service.as_str())),
                ServiceCmd::Restart(a) => (&a.target, ServiceAction::Restart, Some(a.service.as_str())),
                ServiceCmd::Status(a) => (&a.target, ServiceAction::Status, a.service.as_deref()),
            };
            d.service(&target.r#box, target.instance.as_deref(), action, service)
                .map_err(Into::into)
                .and_then(reply)
        }
        _ => return None,
    };
    Some(result)
}
