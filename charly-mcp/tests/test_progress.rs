//! Progress notifications echo the client's token exactly (numbers, `0`, strings), arrive
//! only when a token was sent, and never after the result. Spoken as raw JSON-RPC lines,
//! so the token on the wire is exactly what the test wrote.

mod common;

use std::time::Duration;

use charly_mcp::server::Session;
use charly_mcp::server::rmcp::RoleServer;
use charly_mcp::server::rmcp::service::RunningService;
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};

/// A hand-driven JSON-RPC client on one end of a duplex pipe, the server on the other.
struct Raw {
    lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
    write: WriteHalf<DuplexStream>,
    _server: RunningService<RoleServer, Session>,
}

impl Raw {
    async fn connect() -> Raw {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_io);
        let server = common::server();
        let serving = tokio::spawn(async move { server.serve_io(sr, sw).await });
        let (read, mut write) = tokio::io::split(client_io);
        let mut lines = BufReader::new(read).lines();
        let init = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        write.write_all(format!("{init}\n").as_bytes()).await.unwrap();
        let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(answer["id"], "init", "{answer}");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        write.write_all(format!("{initialized}\n").as_bytes()).await.unwrap();
        let server = serving.await.unwrap().unwrap();
        Raw { lines, write, _server: server }
    }

    async fn send(&mut self, message: Value) {
        self.write.write_all(format!("{message}\n").as_bytes()).await.unwrap();
    }

    /// The next message, or `None` when none comes within `wait`.
    async fn recv(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.lines.next_line()).await.ok()?.unwrap()?;
        Some(serde_json::from_str(&line).unwrap())
    }

    /// Calls the `progress` tool with `meta` and returns (notifications before the result,
    /// the result, anything that arrived in the 300 ms after it).
    async fn call_progress(&mut self, id: u64, meta: Value) -> (Vec<Value>, Value, Vec<Value>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "progress", "arguments": {}, "_meta": meta}}))
            .await;
        let mut before = Vec::new();
        let result = loop {
            let message = self.recv(Duration::from_secs(10)).await.expect("no result within 10 s");
            if message["id"] == json!(id) {
                break message;
            }
            before.push(message);
        };
        let mut after = Vec::new();
        while let Some(message) = self.recv(Duration::from_millis(300)).await {
            after.push(message);
        }
        (before, result, after)
    }
}

async fn assert_echoes(token: Value) {
    let mut raw = Raw::connect().await;
    let (before, result, after) = raw.call_progress(1, json!({"progressToken": token})).await;
    assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
    assert_eq!(before.len(), 3, "expected 3 progress notifications, got {before:?}");
    for (i, n) in before.iter().enumerate() {
        assert_eq!(n["method"], "notifications/progress", "{n}");
        // Exactly the token sent: same JSON type and value.
        assert_eq!(n["params"]["progressToken"], token, "{n}");
        assert_eq!(n["params"]["progress"], json!(i as f64 + 1.0), "{n}");
        assert_eq!(n["params"]["total"], json!(3.0), "{n}");
    }
    assert!(after.is_empty(), "messages after the result: {after:?}");
}

#[tokio::test]
async fn numeric_token_is_echoed() {
    assert_echoes(json!(7)).await;
}

#[tokio::test]
async fn zero_token_is_echoed() {
    assert_echoes(json!(0)).await;
}

#[tokio::test]
async fn string_token_is_echoed() {
    assert_echoes(json!("progress-test-1")).await;
}

#[tokio::test]
async fn no_token_no_progress() {
    let mut raw = Raw::connect().await;
    let (before, result, after) = raw.call_progress(1, json!({})).await;
    assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
    assert!(before.is_empty() && after.is_empty(), "unexpected messages: {before:?} {after:?}");
}
