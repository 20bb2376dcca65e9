//! Running a parsed command: `fn(args, &Ctx) -> Result<Reply, CommandError>`, the same code for
//! a terminal and an MCP call.
//!
//! Each leaf calls the domain function that does its work ([`crate::project`],
//! [`crate::check`], [`crate::probe`]) and turns its report into a [`Reply`]; nothing here
//! prints. `main` prints the reply (text, or JSON with `--json`); `charly mcp serve` returns it
//! as `text` content and `structuredContent`.

mod cdp;
mod check;
mod config;
mod dbus;
mod deploy;
mod deployfile;
mod host;
mod live;
mod project;
mod secrets;
mod settings;
mod tmux;
mod vm;
mod vnc;
mod wl;

use crate::cli::{Cli, Command, McpCmd};
use crate::context::Ctx;
use crate::error::CommandError;
use crate::hosts;
use crate::project::Project;
use crate::report::{Reply, Report, Version};

/// Runs `cli`'s command in `ctx`.
///
/// # Errors
///
/// [`CommandError`] when the command could not do its work; a command that ran and found
/// problems returns a [`Reply`] whose `failure` says so.
pub fn run(cli: &Cli, ctx: &Ctx) -> Result<Reply, CommandError> {
    let project = || Project::at(ctx.root().to_owned()).with_cancel(ctx.cancel());
    match &cli.command {
        Command::Version => reply(Version::current()),
        Command::Doctor => {
            let mut report = crate::project::doctor(Project::open(ctx.root()).ok().as_ref())?;
            report.vm = Some(crate::vm::host(ctx, &crate::vm::state::root()));
            reply(report)
        }
        Command::Box(cmd) => self::project::run_box(cmd, ctx, &project()),
        Command::Candy(cmd) => self::project::run_candy(cmd, &project()),
        Command::Check(cmd) => check::run(cmd, ctx),
        Command::Settings(cmd) => settings::run(cmd, ctx),
        Command::Secrets(cmd) => secrets::run(cmd, ctx),
        Command::Alias(cmd) => host::run_alias(cmd, ctx),
        Command::Udev(cmd) => host::run_udev(cmd, ctx),
        Command::Config(cmd) => config::run(cmd, ctx, &project()),
        Command::Deploy(cmd) => deployfile::run(cmd, ctx),
        Command::Tmux(cmd) => tmux::run_tmux(cmd, ctx),
        Command::Record(cmd) => tmux::run_record(cmd, ctx),
        Command::Vm(cmd) => vm::run(cmd, ctx, &project()),
        Command::Mcp(cmd) => mcp(cmd, cli, ctx),
        Command::Completions(args) => reply(crate::shell::completions(args.shell)),
        Command::Man(args) => reply(crate::shell::man(&args.command)?),
        lifecycle => {
            deploy::run(lifecycle, ctx, &project()).expect("every other command is a lifecycle leaf")
        }
    }
}

/// `charly mcp install|uninstall` (`serve` runs from `main`). The stdio entry pins the project
/// directory (`-C`) for a project-scope file, and for a user-scope one when `-C` was named.
fn mcp(cmd: &McpCmd, cli: &Cli, ctx: &Ctx) -> Result<Reply, CommandError> {
    let place = hosts::Place { root: ctx.root(), scope: ctx.scope() };
    match cmd {
        McpCmd::Serve(_) => Err(CommandError::TerminalOnly("mcp serve")),
        McpCmd::Install(args) => {
            if ctx.scope() == crate::context::Scope::Served {
                hosts::check_served("install", args.host, args.scope, args.command.as_deref())?;
            }
            let request = hosts::Request {
                host: args.host,
                scope: args.scope,
                name: args.name.clone(),
                print: args.print,
            };
            let transport = match &args.url {
                Some(url) => hosts::http(url, args.token_env.as_deref())?,
                None => {
                    // A project-scope file pins its project, as does a named -C.
                    let scope = args.scope.unwrap_or_else(|| hosts::default_scope(args.host));
                    let pin = cli.dir.is_some() || scope == hosts::ConfigScope::Project;
                    hosts::stdio(&hosts::StdioServer {
                        command: args.command.clone(),
                        dir: pin.then(|| ctx.root().canonicalize().unwrap_or_else(|_| ctx.root().to_owned())),
                        dir_named: cli.dir.is_some(),
                        read_only: args.read_only,
                    })?
                }
            };
            ctx.check_cancelled()?;
            reply(hosts::install(&request, &transport, place)?)
        }
        McpCmd::Uninstall(args) => {
            if ctx.scope() == crate::context::Scope::Served {
                hosts::check_served("uninstall", args.host, args.scope, None)?;
            }
            let request = hosts::Request {
                host: args.host,
                scope: args.scope,
                name: args.name.clone(),
                print: args.print,
            };
            ctx.check_cancelled()?;
            reply(hosts::uninstall(&request, place)?)
        }
    }
}

/// Whether a command may prompt: a person at a terminal, never an MCP call.
fn interactive(ctx: &Ctx) -> bool {
    ctx.scope() == crate::context::Scope::Terminal && crate::credentials::prompt::stdin_is_terminal()
}

/// The path an argument (`name`) gives: on a terminal relative to the project directory (an
/// absolute one as it is); over MCP it must resolve beneath the project root (no absolute path,
/// no `..`, no symlink out), else the call is refused naming the argument. Defaults that come
/// from settings or the home (the configured KDBX file, `~/.local/bin`, `/`) are not given
/// paths and do not come through here.
fn arg_path(ctx: &Ctx, name: &str, path: &std::path::Path) -> Result<std::path::PathBuf, CommandError> {
    match ctx.scope() {
        crate::context::Scope::Terminal => {
            Ok(if path.is_absolute() { path.to_owned() } else { ctx.root().join(path) })
        }
        crate::context::Scope::Served => crate::project::Project::at(ctx.root().to_owned())
            .resolve_inside(path)
            .map(|(absolute, _)| absolute)
            .map_err(|e| CommandError::Usage(format!("argument `{name}`: {e}"))),
    }
}

/// A path refusal ([`crate::project::ProjectError::UnsafePath`]) named by the argument it came
/// from, as [`arg_path`] names it (`argument `path`: refusing path "../x": ...`); other errors
/// as they are.
fn named(arg: &'static str) -> impl Fn(crate::project::ProjectError) -> CommandError {
    move |e| match e {
        e @ crate::project::ProjectError::UnsafePath { .. } => {
            CommandError::Usage(format!("argument `{arg}`: {e}"))
        }
        other => other.into(),
    }
}

/// The reply of a report.
fn reply<R: Report>(report: R) -> Result<Reply, CommandError> {
    Ok(Reply::new(&report))
}
