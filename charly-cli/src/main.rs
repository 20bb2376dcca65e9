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
    // One rustls crypto provider (ring) for every HTTP client of the process.
    charly::client::install_tls_provider();
    match run() {
        Ok(code) => code,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            say(&format!("charly: {e}"));
            ExitCode::from(e.exit_status())
        }
    }
}

fn run() -> Result<ExitCode, CommandError> {
    let cli = Cli::parse();
    if let Command::Mcp(McpCmd::Serve(args)) = &cli.command {
        init_logging();
        let runtime = tokio::runtime::Runtime::new()
            .map_err(|e| CommandError::Usage(format!("cannot start the async runtime: {e}")))?;
        let served = runtime.block_on(charly_cli::serve::serve(args, cli.dir.clone()));
        // A command still running on the blocking pool cannot be interrupted: do not wait for it.
        runtime.shutdown_timeout(std::time::Duration::from_secs(2));
        served?;
        return Ok(ExitCode::SUCCESS);
    }
    let ctx = Ctx::terminal(project_root(cli.dir.as_ref())?).with_json(cli.json);
    let reply = commands::run(&cli, &ctx);
    ctx.finish();
    let reply = reply?;
    for warning in &reply.warnings {
        say(&format!("charly: warning: {warning}"));
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(if cli.json { reply.json_text() } else { reply.text.clone() }.as_bytes())?;
    stdout.flush()?;
    Ok(match reply.failure {
        Some(why) => {
            say(&format!("charly: {why}"));
            ExitCode::from(reply.exit_status)
        }
        None => ExitCode::SUCCESS,
    })
}

/// Writes `line` and a newline to stderr in one write (stderr is unbuffered: `writeln!` would
/// write the pieces of a formatted line apart, and another writer's output could land between
/// them).
fn say(line: &str) {
    let _ = std::io::stderr().write_all(format!("{line}\n").as_bytes());
}

/// The log of `charly mcp serve`: stderr, filtered by `CHARLY_LOG` (an `EnvFilter` directive
/// such as `debug` or `charly_mcp=trace`; default `warn`).
///
/// rmcp's own events are capped at INFO whatever `CHARLY_LOG` says, by a second filter on
/// the target prefix `rmcp` that no directive can widen: at DEBUG rmcp logs every request it
/// receives with its arguments ("received request") and every result it sends with its content
/// ("response message"), which are the values of `secrets.set`, `settings.set vnc.password.*`
/// and `secrets.gpg.set`, and the secrets `secrets.get` and `settings.get` return. A secret
/// value never appears in a log line (issue 13). charly-mcp's own debug lines carry tool
/// names, ids and error messages, never arguments or results.
///
/// One rmcp ERROR is left out: [`QuietDrain`].
fn init_logging() {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let from_env = tracing_subscriber::EnvFilter::try_from_env("CHARLY_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let no_payloads = tracing_subscriber::filter::filter_fn(|meta| {
        let target = meta.target();
        let rmcp = target == "rmcp" || target.starts_with("rmcp::");
        !(rmcp && *meta.level() > tracing::Level::INFO)
    });
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(|| Redacting(std::io::stderr()))
        .with_ansi(std::io::stderr().is_terminal())
        .with_filter(from_env)
        .with_filter(no_payloads)
        .with_filter(QuietDrain);
    tracing_subscriber::registry().with(layer).init();
}

/// Leaves rmcp's `ERROR rmcp::service: failed to send pending response during drain` out of
/// the log (trial 28, L10). rmcp 3.11 logs it when a session ends (its client deleted it or
/// went away) while the answer of a call it cancelled is still on its way: every cancelled or
/// timed-out call of such a client. The answer has nobody left to read it, so this is the
/// normal end of a cancellation, not an error; the call's cancellation itself is logged at
/// DEBUG by charly-mcp (`CHARLY_LOG=charly_mcp=debug`). rmcp's other errors pass.
struct QuietDrain;

impl QuietDrain {
    const TARGET: &'static str = "rmcp::service";
    const MESSAGE: &'static str = "failed to send pending response during drain";
}

impl<S> tracing_subscriber::layer::Filter<S> for QuietDrain {
    fn enabled(&self, _: &tracing::Metadata<'_>, _: &tracing_subscriber::layer::Context<'_, S>) -> bool {
        true
    }

    fn event_enabled(
        &self,
        event: &tracing::Event<'_>,
        _: &tracing_subscriber::layer::Context<'_, S>,
    ) -> bool {
        let meta = event.metadata();
        if *meta.level() != tracing::Level::ERROR || meta.target() != Self::TARGET {
            return true;
        }
        let mut message = MessageIs { text: Self::MESSAGE, matched: false };
        event.record(&mut message);
        !message.matched
    }
}

/// Whether an event's `message` field is `text`.
struct MessageIs {
    text: &'static str,
    matched: bool,
}

impl tracing::field::Visit for MessageIs {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.matched = format!("{value:?}") == self.text;
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.matched = value == self.text;
        }
    }
}

/// A log writer that masks the secrets of every URL in a line before it reaches stderr
/// ([`charly::client::redact_urls`]): rmcp logs a failed client transport with its server's
/// whole URL, query values included. The fmt layer writes each event in one `write`.
struct Redacting(std::io::Stderr);

impl Write for Redacting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match std::str::from_utf8(buf) {
            Ok(text) if text.contains("://") => {
                self.0.write_all(charly::client::redact_urls(text).as_bytes())?;
                Ok(buf.len())
            }
            _ => self.0.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
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
