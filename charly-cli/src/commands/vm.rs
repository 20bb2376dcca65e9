//! `charly vm ...`: each leaf on the VM `charly-<box>[-<instance>]` in charly's data directory
//! ([`crate::vm`]).

use super::reply;
use crate::cli::VmCmd;
use crate::context::{Ctx, Scope};
use crate::error::CommandError;
use crate::project::Project;
use crate::report::Reply;
use crate::vm::{self, build, console, create, power, ssh};

/// Runs a `vm` leaf.
///
/// # Errors
///
/// [`CommandError::Vm`]: bad input (named), a VM in the wrong state, a failing tool.
pub(super) fn run(cmd: &VmCmd, ctx: &Ctx, project: &Project) -> Result<Reply, CommandError> {
    let root = vm::state::root();
    // On a terminal, SIGINT, SIGTERM and SIGHUP cancel the leaf instead of killing charly
    // outright, so what it made is removed as a cancelled tool call's is (a build's staging tree
    // in /dev/shm, its work directory, its export container). Not for the attaching leaves (an
    // interactive `vm ssh`, `vm console`): their terminal is raw and their wait is not async.
    let attaches = matches!(cmd, VmCmd::Console { .. } | VmCmd::Ssh { command: None, .. });
    let _signals = (ctx.scope() == Scope::Terminal && !attaches)
        .then(|| crate::deploy::signals::guard(&ctx.cancel_token()));
    let leaf = match cmd {
        VmCmd::Build { target, .. } => Some(("build", target)),
        VmCmd::Create { target, .. } => Some(("create", target)),
        VmCmd::Start { target, .. } => Some(("start", target)),
        VmCmd::Stop { target, .. } => Some(("stop", target)),
        VmCmd::Destroy { target, .. } => Some(("destroy", target)),
        VmCmd::Console { target, .. } => Some(("console", target)),
        VmCmd::Ssh { target, .. } => Some(("ssh", target)),
        VmCmd::List { .. } => None,
    };
    if let Some((leaf, target)) = leaf {
        vm::claim(project, &root, leaf, &target.r#box, target.instance.as_deref())?;
    }
    match cmd {
        VmCmd::Build { target, size, format } => {
            let request = build::BuildRequest {
                box_name: &target.r#box,
                instance: target.instance.as_deref(),
                size: size.as_deref(),
                format: *format,
            };
            reply(build::build(ctx, project, &root, &request)?)
        }
        VmCmd::Create { target, ram, cpus, ssh_port, ssh_key, port, accel, backend } => {
            let path = match ssh_key.as_str() {
                "auto" | "generate" | "none" => None,
                given => Some(super::arg_path(ctx, "ssh_key", std::path::Path::new(given))?),
            };
            let request = create::CreateRequest {
                box_name: &target.r#box,
                instance: target.instance.as_deref(),
                ram: ram.as_deref(),
                cpus: *cpus,
                ssh_port: *ssh_port,
                ssh_key,
                ssh_key_path: path,
                ports: port,
                accel: *accel,
                backend: *backend,
            };
            reply(create::create(ctx, &root, &request)?)
        }
        VmCmd::Start { target, wait } => {
            reply(power::start(ctx, &root, &target.r#box, target.instance.as_deref(), *wait)?)
        }
        VmCmd::Stop { target, force, timeout } => {
            reply(power::stop(ctx, &root, &target.r#box, target.instance.as_deref(), *force, *timeout)?)
        }
        VmCmd::Destroy { target, disk } => {
            reply(power::destroy(ctx, &root, &target.r#box, target.instance.as_deref(), *disk)?)
        }
        VmCmd::List { all } => reply(power::list(ctx, &root, *all)?),
        VmCmd::Console { target, lines } => {
            reply(console::console(ctx, &root, &target.r#box, target.instance.as_deref(), *lines)?)
        }
        VmCmd::Ssh { target, command, user, timeout } => {
            let request = ssh::SshRequest {
                box_name: &target.r#box,
                instance: target.instance.as_deref(),
                command: command.as_deref(),
                user,
                timeout: *timeout,
            };
            reply(ssh::ssh(ctx, &root, &request)?)
        }
    }
}
