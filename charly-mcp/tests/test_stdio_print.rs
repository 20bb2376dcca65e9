//! A CLI leaf that prints with `println!` (and runs a child that inherits stdout), as real
//! CLIs do, served over stdio: the JSON-RPC stream stays valid, the printed lines land on the
//! server's stderr, and stdout is the program's again once serving ends (`Server::serve_stdio`).
//!
//! This test binary plays both parts (no libtest harness, whose own lines on stdout would
//! come before the server's): run plainly, it spawns itself as the server with
//! `CHARLY_TEST_PRINT_SERVER` set and is the client, a real rmcp client, reading the server's
//! stdout through a tee that keeps every line.

use std::io::Write as _;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use charly_macros::McpTool;
use charly_mcp::McpTool as _;
use charly_mcp::server::rmcp::ServiceExt as _;
use charly_mcp::server::rmcp::model::CallToolRequestParams;
use charly_mcp::server::{CliRunner, Server, ServerOptions, ToolError, cli_tools};
use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};

const SERVER_ENV: &str = "CHARLY_TEST_PRINT_SERVER";

#[derive(Parser, McpTool, Debug)]
#[command(name = "printer")]
#[mcp_tool(crate = "charly_mcp")]
struct Printer {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
enum Cmd {
    /// Say hello on stdout, as a plain CLI does, and to the caller
    Hello {
        /// Who to greet
        name: String,
    },
}

fn run(argv: Vec<String>, cx: &charly_mcp::server::CallContext) -> Result<(), ToolError> {
    let Cmd::Hello { name } = Printer::try_parse_from(argv)?.cmd;
    println!("hello {name}");
    // A child inheriting the server's stdout.
    std::process::Command::new("echo").arg(format!("child says hello {name}")).status()?;
    writeln!(cx.out(), "said hello to {name}")?;
    Ok(())
}

fn main() -> ExitCode {
    let runtime = tokio::runtime::Runtime::new().expect("a Tokio runtime");
    if std::env::var_os(SERVER_ENV).is_some() {
        println!("before serving");
        let server = Server::new(
            ServerOptions::new("printer", "0")
                .tools(cli_tools(&Printer::catalog(), CliRunner::blocking("printer", run))),
        );
        runtime.block_on(server.serve_stdio()).expect("serve");
        println!("stdout is back");
        return ExitCode::SUCCESS;
    }
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), printed_lines_stay_out_of_the_protocol())
            .await
            .expect("the test took over 60 s")
    });
    println!("test printed_lines_stay_out_of_the_protocol ... ok");
    ExitCode::SUCCESS
}

async fn printed_lines_stay_out_of_the_protocol() {
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(SERVER_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the server");
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let mut stderr = child.stderr.take().unwrap();
    let stderr = tokio::spawn(async move {
        let mut text = String::new();
        stderr.read_to_string(&mut text).await.unwrap();
        text
    });
    // Every line of the server's stdout is kept, and passed on to the client.
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let (client_read, mut tee) = tokio::io::duplex(1 << 16);
    let tee_task = tokio::spawn({
        let lines = lines.clone();
        async move {
            let mut stdout = BufReader::new(stdout).lines();
            while let Some(line) = stdout.next_line().await.unwrap() {
                lines.lock().unwrap().push(line.clone());
                // The client may be gone while the server still prints.
                let _ = tee.write_all(format!("{line}\n").as_bytes()).await;
            }
        }
    });

    let client = ().serve((client_read, stdin)).await.expect("client handshake");
    for name in ["x", "y"] {
        let Value::Object(args) = json!({"name": name}) else { unreachable!() };
        let result =
            client.call_tool(CallToolRequestParams::new("hello").with_arguments(args)).await.expect("call");
        assert_eq!(result.is_error, Some(false), "{result:?}");
        let text: Vec<&str> =
            result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.as_str()).collect();
        assert_eq!(text, [format!("said hello to {name}\n")], "{result:?}");
    }
    client.cancel().await.expect("close the client");

    let status = child.wait().await.unwrap();
    assert!(status.success(), "server: {status}");
    tee_task.await.unwrap();
    let stderr = stderr.await.unwrap();
    let lines = lines.lock().unwrap().clone();
    // stdout: what was printed before serving, JSON-RPC only while serving, then stdout again.
    assert_eq!(lines.first().map(String::as_str), Some("before serving"), "{lines:#?}");
    assert_eq!(lines.last().map(String::as_str), Some("stdout is back"), "{lines:#?}");
    for line in &lines[1..lines.len() - 1] {
        let message: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?} on stdout: {e}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
    }
    // What the command and its child printed is on stderr.
    for printed in ["hello x", "hello y", "child says hello x", "child says hello y"] {
        assert!(stderr.lines().any(|l| l == printed), "{printed:?} not on stderr: {stderr}");
    }
    assert!(!lines.iter().any(|l| l.contains("hello x") && !l.contains("jsonrpc")), "{lines:#?}");
}
