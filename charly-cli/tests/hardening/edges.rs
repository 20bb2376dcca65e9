//! Trial 28's findings at the protocol's edges, against the real `charly mcp serve`: what
//! comes back is bounded (M5), protocol details follow JSON-RPC and MCP (L8), and a cancelled
//! call is no error in the log (L10). Over stdio and Streamable HTTP.

use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};

use crate::protocol::{initialize, post};
use crate::util::{HttpServer, StdioServer, text_of};

const WAIT: Duration = Duration::from_secs(30);

fn sample() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(dir.path()).unwrap();
    dir
}

/// The JSON-RPC message `message` as sent, in bytes.
fn size(message: &Value) -> usize {
    message.to_string().len()
}

/// L8: a line whose id cannot be read is answered with `"id": null` (JSON-RPC 2.0, section 5),
/// as over HTTP, not without an id.
#[test]
fn an_unreadable_line_is_answered_with_id_null() {
    let dir = sample();
    let mut server = StdioServer::start(dir.path());
    server.send_raw(b"not json");
    server.send_raw(b"[1, 2]");
    let answers = server.messages(Duration::from_secs(2));
    assert_eq!(answers.len(), 2, "{answers:#?}");
    for answer in &answers {
        assert_eq!(answer.get("id"), Some(&Value::Null), "{answer}");
    }
    assert_eq!(answers[0]["error"]["code"], -32700, "{answers:#?}");
    assert_eq!(answers[1]["error"]["code"], -32600, "{answers:#?}");
}

/// L8: `tools/list` before `initialize` is told the session is not initialized (and what a
/// 2026-07-28 client gives instead); after `initialize` the same request is served.
#[test]
fn a_request_before_initialize_says_the_session_is_not_initialized() {
    let dir = sample();
    let mut server = StdioServer::spawn(dir.path(), &[]);
    server.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let refused = server.response(1, WAIT);
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("not initialized") && message.contains("`initialize`"), "{message}");
    assert!(message.contains("io.modelcontextprotocol/protocolVersion"), "{message}");
    server.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(server.response(2, WAIT)["result"], json!({}));
    server.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "edges", "version": "0"}}}));
    assert!(server.response(3, WAIT)["result"]["serverInfo"].is_object());
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    assert!(server.response(4, WAIT)["result"]["tools"].is_array());
}

/// The list and call requests of the L8 cases, with ids from `first`.
fn l8_requests(first: u64) -> [(u64, Value, &'static str); 4] {
    [
        (
            first,
            json!({"jsonrpc": "2.0", "id": first, "method": "tools/list", "params": {"cursor": 5}}),
            "invalid params for `tools/list`",
        ),
        (
            first + 1,
            json!({"jsonrpc": "2.0", "id": first + 1, "method": "resources/list", "params": {"cursor": {"page": 2}}}),
            "invalid params for `resources/list`",
        ),
        (
            first + 2,
            json!({"jsonrpc": "2.0", "id": first + 2, "method": "tools/call", "params": {
                "name": "box.list.boxes", "arguments": {}, "_meta": {"progressToken": {"x": 1}}}}),
            "`_meta.progressToken` must be a string or an integer",
        ),
        (
            first + 3,
            json!({"jsonrpc": "2.0", "id": first + 3, "method": "tools/call", "params": {
                "name": "box.list.boxes", "arguments": {}, "_meta": {"progressToken": 1.5}}}),
            "`_meta.progressToken` must be a string or an integer",
        ),
    ]
}

/// L8: a cursor that is not a string gets -32602 (it was taken as no cursor: the first page),
/// and so does a progress token that is neither a string nor an integer (it was ignored).
#[test]
fn a_cursor_or_progress_token_of_the_wrong_type_is_invalid_params_over_stdio() {
    let dir = sample();
    let mut server = StdioServer::start(dir.path());
    for (id, request, says) in l8_requests(1) {
        server.send(&request);
        let answer = server.response(id, WAIT);
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "{answer}");
    }
    // A string token still gets its call served.
    server.send(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "box.list.boxes", "arguments": {}, "_meta": {"progressToken": "t"}}}));
    assert_eq!(server.response(9, WAIT)["result"]["isError"], false);
}

#[test]
fn a_cursor_or_progress_token_of_the_wrong_type_is_invalid_params_over_http() {
    let dir = sample();
    for flags in [&[][..], &["--stateless"][..]] {
        let server = HttpServer::start_with(dir.path(), flags);
        tokio::runtime::Runtime::new().unwrap().block_on(async {
            let session = match flags.is_empty() {
                true => Some(initialize(&server.url).await),
                false => None,
            };
            for (id, request, says) in l8_requests(1) {
                let answers = post(&server.url, session.as_deref(), &request.to_string()).await;
                let answer = answers.iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("{answers:?}"));
                assert_eq!(answer["error"]["code"], -32602, "{flags:?}: {answer}");
                assert!(answer["error"]["message"].as_str().unwrap().contains(says), "{flags:?}: {answer}");
            }
        });
    }
}

/// M5: `box.cat` as a tool refuses a file over 1 MiB with a short answer naming the size and
/// the limit (a 20 MB file came back as a 40 MB answer: the text and `structuredContent`);
/// a file of exactly 1 MiB comes back whole.
#[test]
fn box_cat_refuses_a_file_over_one_mib() {
    let dir = sample();
    std::fs::write(dir.path().join("big.txt"), "a".repeat(20_000_000)).unwrap();
    std::fs::write(dir.path().join("mib.txt"), "b".repeat(1024 * 1024)).unwrap();
    let mut server = StdioServer::start(dir.path());
    server.call(1, "box.cat", json!({"path": "big.txt"}));
    let refused = server.response(1, WAIT);
    assert!(size(&refused) < 1024, "{} bytes", size(&refused));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = text_of(&refused["result"]);
    assert!(text.contains("20000000 bytes") && text.contains("1048576 bytes (1 MiB)"), "{text}");
    assert!(text.contains("charly box cat big.txt"), "{text}");
    // No resource is named for a file that is none (trial 30: it named charly://project/big.txt).
    assert!(!text.contains("charly://"), "{text}");
    server.call(2, "box.cat", json!({"path": "mib.txt"}));
    let whole = server.response(2, WAIT);
    assert_eq!(whole["result"]["structuredContent"]["content"].as_str().map(str::len), Some(1024 * 1024));
}

/// `resources/read` is capped as `box.cat` is (trial 30, L3: a 5.8 MB file came back whole):
/// over 1 MiB it is refused with a short answer naming the size, the limit and the terminal
/// command; exactly 1 MiB comes back whole.
#[test]
fn resources_read_refuses_a_file_over_one_mib() {
    let dir = sample();
    let line = "# padding padding padding padding\n";
    for (name, bytes) in [("big", 2_000_000), ("mib", 1024 * 1024)] {
        std::fs::create_dir_all(dir.path().join("candy").join(name)).unwrap();
        let text: String = line.repeat(bytes / line.len() + 1).chars().take(bytes).collect();
        std::fs::write(dir.path().join(format!("candy/{name}/charly.yml")), text).unwrap();
    }
    let mut server = StdioServer::start(dir.path());
    let read = |id: u64, name: &str| {
        let uri = format!("charly://project/candy/{name}/charly.yml");
        json!({"jsonrpc": "2.0", "id": id, "method": "resources/read", "params": {"uri": uri}})
    };
    server.send(&read(1, "big"));
    let refused = server.response(1, WAIT);
    assert!(size(&refused) < 1024, "{} bytes", size(&refused));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("2000000 bytes")
            && message.contains("at most 1048576 bytes (1 MiB)")
            && message.contains("charly box cat candy/big/charly.yml"),
        "{message}"
    );
    server.send(&read(2, "mib"));
    let whole = server.response(2, WAIT);
    assert_eq!(
        whole["result"]["contents"][0]["text"].as_str().map(str::len),
        Some(1024 * 1024),
        "{}",
        size(&whole)
    );
}

/// M5: values a client sent come back in errors shortened to 80 characters and their length,
/// in the answer and in the server's log: a tool name, a path, a settings key, a value clap
/// refuses, a value outside an enum. Each answer was as long as the value (3 MiB for the path).
#[test]
fn long_values_come_back_shortened() {
    let dir = sample();
    let mut server = StdioServer::start(dir.path());
    let long = "x".repeat(100_000);
    let calls = [
        (1, long.as_str(), json!({})),
        (2, "box.cat", json!({"path": "y".repeat(3 << 20)})),
        (3, "settings.get", json!({"key": long})),
        (4, "check.mcp.ping", json!({"url": "http://127.0.0.1:1/mcp", "timeout": long})),
        (5, "check.mcp.ping", json!({"url": "http://127.0.0.1:1/mcp", "transport": long})),
        (6, "box.write", json!({"path": long, "content": "x"})),
    ];
    for (id, tool, arguments) in calls {
        server.call(id, tool, arguments);
        let answer = server.response(id, WAIT);
        assert!(size(&answer) < 1024, "{id}: {} bytes: {}", size(&answer), &answer.to_string()[..300]);
        let text = match &answer["error"] {
            Value::Null => text_of(&answer["result"]),
            error => error["message"].as_str().unwrap().to_owned(),
        };
        assert!(text.contains(" characters)") && text.contains("…"), "{id}: {text}");
    }
    let log = server.log();
    assert!(log.len() < 4096, "{} bytes of log: {}", log.len(), &log[..log.len().min(300)]);
    assert!(log.contains("unknown tool") && log.contains("(100000 characters)"), "{log}");
}

/// L10: a call cancelled because its session was deleted (what a client does after its
/// timeout) logs no ERROR; rmcp logged `failed to send pending response during drain` for each.
#[test]
fn a_cancelled_call_logs_no_error() {
    let dir = sample();
    // Accepts connections and never answers: the probe waits for its 20 s timeout.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", silent.local_addr().unwrap());
    let server = HttpServer::start(dir.path());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let session = initialize(&server.url).await;
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "check.mcp.ping", "arguments": {"url": url, "timeout": "20s"}}});
        let (endpoint, id) = (server.url.clone(), session.clone());
        let running = tokio::spawn(async move { post(&endpoint, Some(&id), &call.to_string()).await });
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let deleted = reqwest::Client::new()
            .delete(&server.url)
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert!(deleted.status().is_success(), "{}", deleted.status());
        tokio::time::timeout(Duration::from_secs(10), running).await.expect("the call ends").unwrap();
        // rmcp's drain runs once the session's worker stops.
        tokio::time::sleep(Duration::from_secs(3)).await;
    });
    let log = server.log();
    assert!(!log.contains("ERROR"), "{log}");
}
