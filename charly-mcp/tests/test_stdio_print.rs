//! A CLI leaf that prints with `println!` (and runs a child that inherits stdout), as real
//! CLIs do, served over stdio: the JSON-RPC stream stays valid, the printed lines land on the
//! server's stderr, and stdout is the program's again once serving ends (`Server::serve_stdio`).
//! Likewise a leaf that reads stdin (a prompt), or runs a child that does, reads end of file
//! instead of the client's requests, while calls sent alongside still answer.
//!
//! This test binary plays both parts (no libtest harness, whose own lines on stdout would
//! come before the server's): run plainly, it spawns itself as the server with
//! `CHARLY_TEST_PRINT_SERVER` set and is the client, a real rmcp client, reading the server's
//! stdout through a tee that keeps every line.

use std::io::Write as _;
use std::os::fd::AsFd as _;
use std::os::unix::fs::FileTypeExt as _;
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
    /// Ask for confirmation on stdin, as a plain CLI does, and say what was read
    Prompt,
    /// Run a child that inherits stdin and reads from it (`head -c 100`)
    Childin,
}

fn run(argv: Vec<String>, cx: &charly_mcp::server::CallContext) -> Result<(), ToolError> {
    let name = match Printer::try_parse_from(argv)?.cmd {
        Cmd::Hello { name } => name,
        Cmd::Prompt => {
            let mut line = String::new();
            let read = std::io::stdin().read_line(&mut line)?;
            writeln!(cx.out(), "prompt read {read} bytes: {line:?}")?;
            return Ok(());
        }
        Cmd::Childin => {
            let child = std::process::Command::new("head")
                .args(["-c", "100"])
                .stdin(Stdio::inherit())
                .stderr(Stdio::inherit())
                .output()?;
            writeln!(cx.out(), "child read {} bytes: {}", child.stdout.len(), child.status)?;
            return Ok(());
        }
    };
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
        // stdin is the client's pipe again, not /dev/null.
        let stdin = std::io::stdin().as_fd().try_clone_to_owned().expect("dup stdin");
        let kind = std::fs::File::from(stdin).metadata().expect("fstat stdin").file_type();
        assert!(kind.is_fifo(), "stdin after serving: {kind:?}");
        println!("stdout is back");
        return ExitCode::SUCCESS;
    }
    runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(60), printed_lines_stay_out_of_the_protocol())
            .await
            .expect("the test took over 60 s")
    });
    println!("test printed_lines_stay_out_of_the_protocol ... ok");
    println!("test reading_stdin_gets_eof_not_requests ... ok");
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
    reading_stdin_gets_eof_not_requests(&client).await;
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

/// A leaf reading a line of stdin and one whose child reads stdin both read end of file, and
/// the calls sent while they run (which they would otherwise read as their input) answer.
async fn reading_stdin_gets_eof_not_requests(
    client: &charly_mcp::server::rmcp::service::RunningService<charly_mcp::server::rmcp::RoleClient, ()>,
) {
    let call = |name: &'static str, args: Value| async move {
        let Value::Object(args) = args else { unreachable!() };
        let params = CallToolRequestParams::new(name).with_arguments(args);
        let result = tokio::time::timeout(Duration::from_secs(10), client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("`{name}` got no answer in 10 s"))
            .expect("call");
        assert_eq!(result.is_error, Some(false), "{result:?}");
        let text: Vec<String> =
            result.content.iter().filter_map(|c| c.as_text()).map(|t| t.text.clone()).collect();
        text.concat()
    };
    // The readers go first; the others follow while they may still be reading.
    let readers = async { tokio::join!(call("prompt", json!({})), call("childin", json!({}))) };
    let others = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let list = tokio::time::timeout(Duration::from_secs(10), client.list_tools(None));
        let (a, b, list) =
            tokio::join!(call("hello", json!({"name": "p"})), call("hello", json!({"name": "q"})), list);
        let list = list.expect("tools/list got no answer in 10 s").expect("tools/list");
        (a, b, list.tools.len())
    };
    let ((prompt, childin), (a, b, tools)) = tokio::join!(readers, others);
    assert_eq!(prompt, "prompt read 0 bytes: \"\"\n");
    assert_eq!(childin, "child read 0 bytes: exit status: 0\n");
    assert_eq!((a.as_str(), b.as_str(), tools), ("said hello to p\n", "said hello to q\n", 3));
}
