//! JSON-RPC message handling over stdio (charly-mcp/src/server/compat/unreadable_line.rs,
//! request_ids.rs, stdio_transport.rs): a server session fed fuzzed lines.
//!
//! Input: lines (at most 16), sent after a valid `initialize` and `notifications/initialized`
//! to a real `Server` (tools `echo` and `wait`, which yields a while so requests overlap)
//! over an in-memory pipe. Checked:
//! - nothing panics, and the session ends when the input does;
//! - each line's reading: an answer is -32700 or -32600; when the line is a whole JSON object
//!   with a string or integer `id`, the answer carries that id;
//! - every answer written is one JSON-RPC message per line;
//! - every request line and every line the transport answers gets exactly one answer (when no
//!   line cancels a request: a cancelled request is not answered), and no id is answered more
//!   often than lines carried it: nothing is dropped, nothing answered twice.
#![no_main]

use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::Duration;

use charly_mcp::Annotations;
use charly_mcp::server::fuzzing::{Line, line};
use charly_mcp::server::{Server, ServerOptions, Tool, ToolOutput};
use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

const INIT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","#,
    r#""capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap())
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let echo = Tool::new("echo", "echo", schema.clone(), Annotations::default(), |args, _| async move {
            Ok(ToolOutput::text(args.get("text").and_then(Value::as_str).unwrap_or_default()))
        });
        let wait = Tool::new("wait", "yield a while", schema, Annotations::default(), |_, _| async move {
            for _ in 0..50 {
                tokio::task::yield_now().await;
            }
            Ok(ToolOutput::text("waited"))
        });
        Server::new(ServerOptions::new("fuzz", "0").tool(echo).tool(wait))
    })
}

/// The id a whole JSON object line carries, when it is a string or an integer.
fn plain_id(bytes: &[u8]) -> Option<Value> {
    let value: Value = serde_json::from_slice(bytes).ok()?;
    let id = value.as_object()?.get("id")?;
    (id.is_string() || id.as_i64().is_some()).then(|| id.clone())
}

fuzz_target!(|data: &[u8]| {
    let lines: Vec<&[u8]> = data.split(|&b| b == b'\n').take(16).collect();
    let mut expected = 0usize;
    let mut cancels = false;
    let mut per_id: HashMap<String, usize> = HashMap::new();
    for bytes in &lines {
        match line(bytes) {
            Line::Request(id, _) => {
                expected += 1;
                *per_id.entry(id.to_string()).or_default() += 1;
            }
            Line::Answer(code, id) => {
                assert!(code == -32700 || code == -32600, "code {code}");
                let plain = plain_id(bytes.strip_suffix(b"\r").unwrap_or(bytes));
                if plain.is_some() {
                    assert_eq!(id, plain, "the answer to a whole object carries its id");
                }
                if let Some(id) = id {
                    *per_id.entry(id.to_string()).or_default() += 1;
                }
                expected += 1;
            }
            Line::Cancel(_) => cancels = true,
            Line::Other | Line::Skip => {}
        }
    }
    // The fuzzed lines may reuse the initialize request's id.
    *per_id.entry("\"init\"".into()).or_default() += 1;
    runtime().block_on(async {
        let (client, served) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(served);
        let (client_read, mut client_write) = tokio::io::split(client);
        let session = tokio::spawn(async move {
            let running = server().serve_io(server_read, server_write).await.expect("initialize");
            running.waiting().await.expect("the session ends cleanly");
        });
        let mut input = INIT.as_bytes().to_vec();
        for bytes in &lines {
            input.extend_from_slice(bytes);
            input.push(b'\n');
        }
        let writer = tokio::spawn(async move {
            client_write.write_all(&input).await.unwrap();
            client_write
        });
        let mut out = BufReader::new(client_read).lines();
        let mut answers = 0usize;
        let mut answered: HashMap<String, usize> = HashMap::new();
        // The initialize result, then one answer per request and per answered line.
        while answers < expected + 1 {
            let next = tokio::time::timeout(Duration::from_secs(3), out.next_line()).await;
            let Ok(Ok(Some(text))) = next else {
                assert!(cancels, "{answers} of {} answers, then {next:?}", expected + 1);
                break;
            };
            let message: Value = serde_json::from_str(&text).expect("one JSON message per line");
            assert_eq!(message["jsonrpc"], "2.0", "{text}");
            if message.get("result").is_some() || message.get("error").is_some() {
                answers += 1;
                if let Some(id) = message.get("id") {
                    let n = answered.entry(id.to_string()).or_default();
                    *n += 1;
                    assert!(*n <= per_id.get(&id.to_string()).copied().unwrap_or(0), "id {id} answered {n} times: {text}");
                }
            }
        }
        let client_write = writer.await.unwrap();
        drop(client_write);
        drop(out);
        tokio::time::timeout(Duration::from_secs(3), session).await.expect("the session ends").unwrap();
    });
});
