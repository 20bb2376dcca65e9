//! The `charly` binary.
//!
//! Exit status: 0 on success (a broken pipe on stdout counts as success), 1 when a check
//! found problems or a probed tool call failed (the output says what), 2 on any other error,
//! printed once to stderr as `charly: <message>`. clap's own usage errors exit with 2 as well.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use charly_cli::cli::{Cli, Command, McpCmd};
use charly_cli::commands;
use clap::Parser;

fn main() -> ExitCode {
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
        let runtime = match tokio::runtime::Runtime::new() {
            Ok(rt) => rt,
            Err(e) => return fail(format_args!("cannot start the async runtime: {e}"), 2),
        };
        let served = runtime.block_on(charly_cli::serve::serve(args, cli.dir.clone()));
        // A command still running on the blocking pool cannot be interrupted: do not wait for it.
        runtime.shutdown_timeout(std::time::Duration::from_secs(2));
        return match served {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format_args!("{e}"), 2),
        };
    }
    let root = match commands::project_root(&cli) {
        Ok(root) => root,
        Err(e) => return fail(format_args!("cannot read the working directory: {e}"), 2),
    };
    let mut stdout = std::io::stdout().lock();
    let result =
        commands::run(&cli, &root, commands::Scope::Terminal, &mut stdout).and_then(|()| Ok(stdout.flush()?));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => fail(format_args!("{e}"), e.exit_status()),
    }
}

fn fail(message: std::fmt::Arguments<'_>, status: u8) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "charly: {message}");
    ExitCode::from(status)
}
