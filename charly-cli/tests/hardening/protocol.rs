//! The real `charly mcp serve` at the protocol's edges (issue 18, items 1, 4, 5 and 8): a
//! read-only server answers for a destructive tool exactly as for a tool that does not exist,
//! every line on stdio gets an answer, and a request reusing the id of one in flight gets an
//! error of its own while the one in flight gets its result. Over stdio and Streamable HTTP.
//! Over HTTP, the session cap and idle timeout flags hold.

use std::time::Duration;

use serde_json::{Value, json};

use crate::cancel::big_project;
use crate::util::{HttpServer, StdioServer, text_of};

/// The error a server gives for a tool it does not have (the `read-only` build has no
/// destructive tools, so this is its answer for them).
fn unknown_tool(name: &str) -> Value {
    json!({"code": -32602, "message": format!("unknown tool `{name}`: tools/list names the tools this server has")})
}

fn sample() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(dir.path()).unwrap();
    dir
}

#[test]
fn a_read_only_server_has_no_destructive_tools_under_any_spelling_over_stdio() {
    let dir = sample();
    let mut server = StdioServer::start_with(dir.path(), &["--read-only"]);
    let arguments = json!({"path": "x.txt", "content": "written\n"});
    for (id, name) in
        [(1, "box.write"), (2, "box_write"), (3, "box.set"), (4, "box_set"), (5, "box.nonesuch")]
    {
        server.call(id, name, arguments.clone());
        let response = server.response(id, Duration::from_secs(30));
        assert_eq!(response["error"], unknown_tool(name), "{name}: {response}");
    }
    server.send(&json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}));
    let list = server.response(6, Duration::from_secs(30));
    let names: Vec<&str> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"box.cat") && !names.contains(&"box.write"), "{names:?}");
    assert!(!dir.path().join("x.txt").exists());
}

#[test]
fn a_read_only_server_has_no_destructive_tools_under_any_spelling_over_http() {
    let dir = sample();
    let server = HttpServer::start_with(dir.path(), &["--read-only"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let session = initialize(&server.url).await;
        for (id, name) in [(1, "box.write"), (2, "box_write"), (3, "box.nonesuch")] {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": name, "arguments": {"path": "x.txt", "content": "written\n"}}});
            let answers = post(&server.url, Some(&session), &call.to_string()).await;
            assert_eq!(answers.last().unwrap()["error"], unknown_tool(name), "{name}: {answers:?}");
        }
    });
    assert!(!dir.path().join("x.txt").exists());
}

/// Lines that are no message, each answered with its id where it can be read; the session
/// goes on (the ping after them is answered).
#[test]
fn every_stdio_line_gets_an_answer() {
    let dir = sample();
    let mut server = StdioServer::start(dir.path());
    server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":{\"name\":\"box.cat\",\"arguments\":{\"path\":\"\xff\xfe\"}}}");
    server.send_raw(br#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"box.cat","argu"#);
    server.send_raw(br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"box.cat","arguments":"charly.yml"}}"#);
    server.send_raw(br#"{"jsonrpc":"2.0","id":{"n":14},"method":"ping"}"#);
    server.send_raw(b"\xc3\x28 not json at all");
    server.send(&json!({"jsonrpc": "2.0", "id": 15, "method": "ping"}));
    let messages = server.messages(Duration::from_secs(3));
    let expected = [
        (json!(11), -32700, "not UTF-8"),
        (json!(12), -32700, "ends before"),
        (json!(13), -32602, "invalid params for `tools/call`"),
        (Value::Null, -32600, "`id` must be a string or an integer"),
        (Value::Null, -32700, "not UTF-8"),
    ];
    // One answer each, in any order (the transport answers what it cannot read at once; the
    // handler answers id 13 when it gets to it).
    assert_eq!(messages.len(), expected.len() + 1, "{messages:#?}");
    for (id, code, says) in expected {
        let answered = |m: &&Value| {
            m.get("id").cloned().unwrap_or(Value::Null) == id
                && m["error"]["code"] == code
                && m["error"]["message"].as_str().is_some_and(|t| t.contains(says))
        };
        assert_eq!(messages.iter().filter(answered).count(), 1, "{id} {code} {says}: {messages:#?}");
    }
    assert!(messages.iter().any(|m| m["id"] == 15 && m["result"] == json!({})), "{messages:#?}");
}

/// `ping` with id 5 sent while `box.set` id 5 runs (a large charly.yml: over a second):
/// the ping gets -32600 naming the id, the edit its own result, and the edit lands once.
#[test]
fn a_reused_id_over_stdio_gets_its_own_error() {
    let dir = sample();
    big_project(dir.path());
    let mut server = StdioServer::start(dir.path());
    server.call(5, "box.set", json!({"path": "project.defaults.reused", "value": "yes"}));
    std::thread::sleep(Duration::from_millis(200));
    server.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    let first = server.response(5, Duration::from_secs(30));
    assert_eq!(first["error"]["code"], -32600, "the ping is refused: {first}");
    let message = first["error"]["message"].as_str().unwrap();
    assert!(message.contains("id 5 is already the id of a request in flight (`tools/call`)"), "{message}");
    let second = server.response(5, Duration::from_secs(300));
    assert!(
        second["result"].is_object() && second["result"]["isError"] != true,
        "the edit's own result: {second}"
    );
    assert!(text_of(&second["result"]).contains("reused"), "{second}");
    let text = std::fs::read_to_string(dir.path().join("charly.yml")).unwrap();
    assert_eq!(text.matches("reused: yes").count(), 1);
    // Once answered, the id is free again.
    server.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}));
    assert_eq!(server.response(5, Duration::from_secs(30))["result"], json!({}));
}

/// The same over Streamable HTTP, in one session: the second POST with id 5 is refused at
/// once, the first POST's stream carries the edit's result.
#[test]
fn a_reused_id_over_http_gets_its_own_error() {
    let dir = sample();
    big_project(dir.path());
    let server = HttpServer::start(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let session = initialize(&server.url).await;
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "box.set", "arguments": {"path": "project.defaults.reused", "value": "yes"}}});
        let url = server.url.clone();
        let edit = {
            let session = session.clone();
            tokio::spawn(async move { post(&url, Some(&session), &call.to_string()).await })
        };
        tokio::time::sleep(Duration::from_millis(300)).await;
        let ping = post(&server.url, Some(&session), r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#).await;
        assert_eq!(ping.len(), 1, "{ping:?}");
        assert_eq!(ping[0]["id"], 5, "{ping:?}");
        assert_eq!(ping[0]["error"]["code"], -32600, "{ping:?}");
        let edit = edit.await.unwrap();
        let result = edit.iter().find(|m| m["id"] == 5).expect("the edit's answer");
        assert!(result["result"].is_object() && result["result"]["isError"] != true, "{result}");
        let again = post(&server.url, Some(&session), r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#).await;
        assert_eq!(again.last().unwrap()["result"], json!({}), "free again: {again:?}");
    });
    let text = std::fs::read_to_string(dir.path().join("charly.yml")).unwrap();
    assert_eq!(text.matches("reused: yes").count(), 1);
}

/// Issue 18, item 8, through the flags: `--max-sessions 1` refuses a second session with 503
/// and `Retry-After` until `--session-idle-timeout 1` has closed the first one.
#[test]
fn the_serve_flags_cap_sessions_and_close_idle_ones() {
    let dir = sample();
    let server = HttpServer::start_with(dir.path(), &["--max-sessions", "1", "--session-idle-timeout", "1"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        initialize(&server.url).await;
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "second", "version": "0"}}});
        let refused = ({ charly::client::install_tls_provider(); reqwest::Client::new() })
            .post(&server.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(refused.status(), reqwest::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(refused.headers()["retry-after"], "5");
        assert!(refused.headers().get("mcp-session-id").is_none());
        let text = refused.text().await.unwrap();
        assert!(text.contains("--max-sessions"), "{text}");
        tokio::time::sleep(Duration::from_secs(3)).await;
        initialize(&server.url).await;
    });
}

/// POSTs `body` (with session `session`) and returns the JSON-RPC messages of the answer.
pub(crate) async fn post(url: &str, session: Option<&str>, body: &str) -> Vec<Value> {
    let mut request = ({
        charly::client::install_tls_provider();
        reqwest::Client::new()
    })
    .post(url)
    .header("content-type", "application/json")
    .header("accept", "application/json, text/event-stream")
    .body(body.to_owned());
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    let response = request.send().await.unwrap();
    let sse = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap_or_default().starts_with("text/event-stream"));
    let text = response.text().await.unwrap();
    if !sse {
        return if text.trim().is_empty() { Vec::new() } else { vec![serde_json::from_str(&text).unwrap()] };
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// Opens a session; returns its id.
pub(crate) async fn initialize(url: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hardening", "version": "0"}}});
    let response = ({
        charly::client::install_tls_provider();
        reqwest::Client::new()
    })
    .post(url)
    .header("content-type", "application/json")
    .header("accept", "application/json, text/event-stream")
    .body(init.to_string())
    .send()
    .await
    .unwrap();
    let session =
        response.headers().get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
    let _ = response.text().await;
    post(url, Some(&session), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    session
}
