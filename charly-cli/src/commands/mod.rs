//! Running a parsed command: `fn(args, &Ctx) -> Result<Reply, CommandError>`, the same code for
//! a terminal and an MCP call.
//!
//! Each leaf calls the domain function that does its work ([`crate::project`],
//! [`crate::check`], [`crate::probe`]) and turns its report into a [`Reply`]; nothing here
//! prints. `main` prints the reply (text, or JSON with `--json`); `charly mcp serve` returns it
//! as `text` content and `structuredContent`.

mod check;
mod project;

use crate::cli::{Cli, Command};
use crate::context::Ctx;
use crate::error::CommandError;
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
        Command::Doctor => reply(crate::project::doctor(Project::open(ctx.root()).ok().as_ref())?),
        Command::Box(cmd) => self::project::run_box(cmd, ctx, &project()),
        Command::Candy(cmd) => self::project::run_candy(cmd, &project()),
        Command::Check(cmd) => check::run(cmd, ctx),
        Command::Mcp(_) => Err(CommandError::TerminalOnly("mcp serve")),
    }
}

/// The reply of a report.
fn reply<R: Report>(report: R) -> Result<Reply, CommandError> {
    Ok(Reply::new(&report))
}
