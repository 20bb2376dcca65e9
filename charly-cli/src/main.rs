//! The `charly` binary.
//!
//! Exit status: 0 on success (a broken pipe on stdout counts as success), 1 when a command's
//! report records a failure (a check found problems, a probed tool call's result is an error:
//! the report says what, and stderr says `charly: <why>`), 2 on any other error, printed once
//! to stderr as `charly: <message>`. clap's own usage errors exit with 2 as well.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use charly_cli::cli::{Cli, Command, McpCmd};
use charly_cli::{CommandError, Ctx, commands};
use clap::Parser;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "charly: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}

fn run() -> Result<ExitCode, CommandError> {
    let cli = Cli::parse();
    if let Command::Mcp(McpCmd::Serve(args)) = &cli.command {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_env("CHARLY_LOG")
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .init();
        let runtime = tokio::runtime::Runtime::new()
            .map_err(|e| CommandError::Usage(format!("cannot start the async runtime: {e}")))?;
        let served = runtime.block_on(charly_cli::serve::serve(args, cli.dir.clone()));
        // A command still running on the blocking pool cannot be interrupted: do not wait for it.
        runtime.shutdown_timeout(std::time::Duration::from_secs(2));
        served?;
        return Ok(ExitCode::SUCCESS);
    }
    let ctx = Ctx::terminal(project_root(cli.dir.as_ref())?);
    let reply = commands::run(&cli, &ctx);
    ctx.finish();
    let reply = reply?;
    for warning in &reply.warnings {
        let _ = writeln!(std::io::stderr(), "charly: warning: {warning}");
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(if cli.json { reply.json_text() } else { reply.text.clone() }.as_bytes())?;
    stdout.flush()?;
    Ok(match reply.failure {
        Some(why) => {
            let _ = writeln!(std::io::stderr(), "charly: {why}");
            ExitCode::from(1)
        }
        None => ExitCode::SUCCESS,
    })
}

/// The project directory a command works on: `-C/--dir` (or `CHARLY_PROJECT_DIR`, which clap
/// reads into the same flag), else the working directory.
fn project_root(dir: Option<&PathBuf>) -> Result<PathBuf, CommandError> {
    let cwd = || {
        std::env::current_dir()
            .map_err(|e| CommandError::Usage(format!("cannot read the working directory: {e}")))
    };
    match dir {
        Some(dir) if dir.is_absolute() => Ok(dir.clone()),
        Some(dir) => Ok(cwd()?.join(dir)),
        None => cwd(),
    }
}
