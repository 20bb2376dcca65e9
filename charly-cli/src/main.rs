//! The `charly` binary.
//!
//! Exit status: 0 on success (a broken pipe on stdout counts as success), 1 when a check
//! found problems (`box validate`), 2 on any other error, printed once to stderr as
//! `charly: <message>`. clap's own usage errors exit with 2 as well.

use std::io::Write;
use std::process::ExitCode;

use charly_cli::cli::{Cli, Command, McpCmd};
use charly_cli::commands;
use clap::Parser;

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Command::Mcp(McpCmd::Serve(args)) = &cli.command {
        tracing_subscriber::fmt()
            .with_writer(std::io::stderr)
            .with_env_filter(
                tracing_subscriber::EnvFilter::try_from_env("CHARLY_LOG")
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
            )
            .init();
        let runtime = match tokio::runtime::Runtime::new() {
            Ok(rt) => rt,
            Err(e) => return fail(format_args!("cannot start the async runtime: {e}"), 2),
        };
        return match runtime.block_on(charly_cli::serve::serve(args, cli.dir.clone())) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(format_args!("{e}"), 2),
        };
    }
    let root = match commands::project_root(&cli) {
        Ok(root) => root,
        Err(e) => return fail(format_args!("cannot read the working directory: {e}"), 2),
    };
    let mut stdout = std::io::stdout().lock();
    let result = commands::run(&cli, &root, &mut stdout).and_then(|()| Ok(stdout.flush()?));
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
