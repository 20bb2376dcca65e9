//! Fixtures shared by the server tests: a small clap CLI turned into tools by the derive,
//! hand-written tools, and helpers that connect a real rmcp client in memory or over HTTP.
#![allow(dead_code, unreachable_pub, missing_docs, deprecated)]

use std::io::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use charly_macros::McpTool;
use charly_mcp::server::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    LoggingMessageNotificationParam, ProgressNotificationParam,
};
use charly_mcp::server::rmcp::service::{NotificationContext, RunningService};
use charly_mcp::server::rmcp::{ClientHandler, RoleClient, ServiceExt as _};
use charly_mcp::server::{CliRunner, Server, ServerOptions, Tool, ToolError, ToolOutput, cli_tools};
use charly_mcp::{Annotations, McpTool as _};
use clap::{Parser, Subcommand};
use serde_json::{Value, json};

pub mod http;

/// The fixture CLI.
#[derive(Parser, McpTool, Debug)]
#[command(name = "fx")]
#[mcp_tool(crate = "charly_mcp")]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
pub enum Cmd {
    /// Print the text
    Echo {
        /// Text to print
        text: String,
        /// Print it this many times
        #[arg(long, default_value_t = 1)]
        times: u8,
    },
    /// Sleep, then say so
    Sleep {
        /// Milliseconds to sleep
        #[arg(long)]
        ms: u64,
    },
    /// Always fails after writing a line
    Fail,
    /// Panics
    Boom,
    /// Takes a value only clap's value parser checks (an even number, as text)
    Even {
        /// The number
        #[arg(long, value_parser = parse_even)]
        n: String,
    },
    /// Remove something
    #[mcp_tool(destructive)]
    Remove {
        /// What to remove
        what: String,
    },
    /// Work on boxes
    #[command(subcommand)]
    Box(BoxCmd),
}

#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
pub enum BoxCmd {
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

/// Runs the fixture CLI in-process, writing to the call's output sink.
pub fn run_cli(argv: Vec<String>, cx: &charly_mcp::server::CallContext) -> Result<(), ToolError> {
    let cli = Cli::try_parse_from(argv)?;
    let mut out = cx.out();
    match cli.cmd {
        Cmd::Echo { text, times } => {
            for _ in 0..times {
                writeln!(out, "{text}")?;
            }
        }
        Cmd::Sleep { ms } => {
            std::thread::sleep(Duration::from_millis(ms));
            writeln!(out, "slept {ms} ms")?;
        }
        Cmd::Fail => {
            writeln!(out, "about to fail")?;
            return Err(ToolError::msg("fail: it failed on purpose"));
        }
        Cmd::Boom => panic!("boom went the tool"),
        Cmd::Even { n } => writeln!(out, "even {n}")?,
        Cmd::Remove { what } => writeln!(out, "removed {what}")?,
        Cmd::Box(BoxCmd::List) => writeln!(out, "web\ndb")?,
        Cmd::Box(BoxCmd::Show { name }) => writeln!(out, "box {name}")?,
    }
    Ok(())
}

/// The fixture CLI's tools plus hand-written ones.
pub fn options() -> ServerOptions {
    ServerOptions::new("fixture", "0.0.1")
        .tools(cli_tools(&Cli::catalog(), CliRunner::blocking("fx", run_cli)))
        .tool(progress_tool())
        .tool(meta_tool())
        .tool(child_tool())
        .tool(logs_tool())
        .tool(run_id_tool())
}

/// Answers with its run id.
fn run_id_tool() -> Tool {
    Tool::new("run-id", "Shows the call's run id", no_args(), Annotations::default(), |_, cx| async move {
        Ok(ToolOutput::text(cx.run_id()))
    })
}

/// Logs one message at debug, info and error.
fn logs_tool() -> Tool {
    Tool::new("logs", "Logs at three levels", no_args(), Annotations::default(), |_, cx| async move {
        cx.log().debug("a debug line").await;
        cx.log().info("an info line").await;
        cx.log().error("an error line").await;
        Ok(ToolOutput::text("logged"))
    })
}

pub fn server() -> Server {
    Server::new(options())
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// Reports progress 1, 2, 3 of 3, then answers.
fn progress_tool() -> Tool {
    Tool::new("progress", "Reports three steps", no_args(), Annotations::default(), |_, cx| async move {
        for step in 1..=3 {
            cx.progress().report(f64::from(step), Some(3.0), Some(format!("step {step}"))).await;
        }
        Ok(ToolOutput::text("done"))
    })
}

/// Answers with its context's meta.
fn meta_tool() -> Tool {
    Tool::new("meta", "Shows the call's meta", no_args(), Annotations::default(), |_, cx| async move {
        Ok(ToolOutput::text(Value::Object(cx.meta().clone()).to_string()))
    })
}

/// Starts `sleep 30` through the context, writes its pid to the file `pidfile`, waits.
fn child_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {"pidfile": {"type": "string"}},
                        "required": ["pidfile"], "additionalProperties": false});
    Tool::new(
        "child",
        "Runs a child process until cancelled",
        schema,
        Annotations::default(),
        |args, cx| async move {
            let pidfile = args["pidfile"].as_str().unwrap_or_default().to_owned();
            let mut command = tokio::process::Command::new("sh");
            command.arg("-c").arg(format!("echo $$ > {pidfile}; exec sleep 30"));
            let output = cx.run_command(&mut command).await?;
            Ok(ToolOutput::text(format!("child exited: {}", output.status)))
        },
    )
}

/// What a test client saw from the server.
#[derive(Clone, Debug, Default)]
pub struct Seen {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
    pub updated: Arc<Mutex<Vec<String>>>,
    /// How many `notifications/resources/list_changed` came.
    pub list_changed: Arc<Mutex<usize>>,
}

/// A client handler that records notifications.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub seen: Seen,
}

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        self.seen.progress.lock().unwrap().push(params);
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.seen.logs.lock().unwrap().push(params);
    }

    async fn on_resource_updated(
        &self,
        params: charly_mcp::server::rmcp::model::ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.seen.updated.lock().unwrap().push(params.uri);
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        *self.seen.list_changed.lock().unwrap() += 1;
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("charly-test-client", "0.0.1"))
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// A client connected to a server in memory; both ends live as long as this value.
pub struct Pair {
    pub client: Client,
    pub seen: Seen,
    pub server: RunningService<charly_mcp::server::rmcp::RoleServer, charly_mcp::server::Session>,
}

/// Connects a recording client to `server` over an in-memory duplex pipe.
pub async fn connect(server: &Server) -> Pair {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_io);
    let serving = tokio::spawn({
        let server = server.clone();
        async move { server.serve_io(sr, sw).await }
    });
    let recorder = Recorder::default();
    let seen = recorder.seen.clone();
    let (cr, cw) = tokio::io::split(client_io);
    let client = recorder.serve((cr, cw)).await.expect("client handshake");
    let server = serving.await.expect("server task").expect("server handshake");
    Pair { client, seen, server }
}

/// Calls `name` with `args`.
pub async fn call(
    client: &Client,
    name: &str,
    args: Value,
) -> Result<CallToolResult, charly_mcp::server::rmcp::ServiceError> {
    let Value::Object(args) = args else { panic!("arguments must be an object") };
    client.call_tool(CallToolRequestParams::new(name.to_owned()).with_arguments(args)).await
}

/// The text of every text content block, joined by newlines.
pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect::<Vec<_>>().join("\n")
}
