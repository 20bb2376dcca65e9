//! A clap CLI served as MCP tools: the derive builds the catalog, an async runner executes
//! each call's argv in-process and writes to the call's output sink. The Python SDK tests in
//! `charly-mcp/tests/python/` drive it.
//!
//! ```text
//! cargo run -p charly-mcp --example cli_server -- --listen 127.0.0.1:18765 [--read-only]
//! cargo run -p charly-mcp --example cli_server -- --stdio
//! ```

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use charly_macros::McpTool;
use charly_mcp::McpTool as _;
use charly_mcp::server::{
    BearerToken, CallContext, CliRunner, HttpOptions, Server, ServerOptions, ToolError, cli_tools,
};
use clap::{Parser, Subcommand};

/// How to serve.
#[derive(Parser, Debug)]
struct Serve {
    /// Address to serve Streamable HTTP on
    #[arg(long, default_value = "127.0.0.1:18765")]
    listen: SocketAddr,
    /// Serve over stdin/stdout instead of HTTP
    #[arg(long)]
    stdio: bool,
    /// Leave destructive tools out
    #[arg(long)]
    read_only: bool,
    /// Tools per tools/list page
    #[arg(long, default_value_t = 3)]
    page_size: usize,
    /// Require the bearer token held by this environment variable
    #[arg(long)]
    token_env: Option<String>,
}

/// The served CLI: a toy with one command per behaviour the tests look at.
#[derive(Parser, McpTool, Debug)]
#[command(name = "toy")]
#[mcp_tool(crate = "charly_mcp")]
struct Toy {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
enum Cmd {
    /// Print the text
    Echo {
        /// Text to print
        text: String,
    },
    /// Count to a number, reporting progress at every step
    Count {
        /// Where to stop
        #[arg(long)]
        to: u32,
    },
    /// Run `sleep` as a child process (its pid goes to a file) until it ends or the call is cancelled
    Wait {
        /// Seconds to sleep
        #[arg(long)]
        secs: u32,
        /// File to write the child's pid to
        #[arg(long)]
        pidfile: PathBuf,
    },
    /// Always fails
    Fail,
    /// Take a number that must be even (checked by clap's value parser)
    Even {
        /// The number
        #[arg(long, value_parser = parse_even)]
        n: String,
    },
    /// Delete a thing
    #[mcp_tool(destructive)]
    Delete {
        /// What to delete
        what: String,
    },
    /// Work on boxes
    #[command(subcommand)]
    Box(BoxCmd),
}

#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
enum BoxCmd {
    /// List boxes
    List,
    /// Show one box
    Show {
        /// Box name
        name: String,
    },
}

fn parse_even(s: &str) -> Result<String, String> {
    match s.parse::<u64>() {
        Ok(n) if n % 2 == 0 => Ok(s.to_owned()),
        _ => Err(format!("{s} is not an even number")),
    }
}

async fn run(argv: Vec<String>, cx: CallContext) -> Result<(), ToolError> {
    let toy = Toy::try_parse_from(argv)?;
    let mut out = cx.out();
    match toy.cmd {
        Cmd::Echo { text } => writeln!(out, "{text}")?,
        Cmd::Count { to } => {
            for i in 1..=to {
                cx.progress().report(f64::from(i), Some(f64::from(to)), None).await;
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            writeln!(out, "counted to {to}")?;
        }
        Cmd::Wait { secs, pidfile } => {
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(format!("echo $$ > '{}'; exec sleep {secs}", pidfile.display()));
            let output = cx.run_command(&mut command).await?;
            writeln!(out, "waited: {}", output.status)?;
        }
        Cmd::Fail => return Err(ToolError::msg("fail: this command always fails")),
        Cmd::Even { n } => writeln!(out, "{n} is even")?,
        Cmd::Delete { what } => writeln!(out, "deleted {what}")?,
        Cmd::Box(BoxCmd::List) => writeln!(out, "web\ndb")?,
        Cmd::Box(BoxCmd::Show { name }) => writeln!(out, "box {name}")?,
    }
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter("warn").init();
    let serve = Serve::parse();
    let tools = cli_tools(&Toy::catalog(), CliRunner::future("toy", run));
    let server = Server::new(
        ServerOptions::new("toy", env!("CARGO_PKG_VERSION"))
            .tools(tools)
            .read_only(serve.read_only)
            .page_size(serve.page_size),
    );
    if serve.stdio {
        return Ok(server.serve_stdio().await?);
    }
    let mut options = HttpOptions::default().listen(serve.listen);
    if let Some(var) = &serve.token_env {
        options = options.bearer_token(BearerToken::from_env(var)?);
    }
    let handle = server.serve_http(options).await?;
    eprintln!("toy: serving {}", handle.url());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    handle.shutdown().await?;
    Ok(())
}
