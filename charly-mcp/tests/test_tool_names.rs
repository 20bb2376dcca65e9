//! Tool names per client (`ToolNameStyle`): `_`-joined names to the clients of
//! `DOTLESS_CLIENTS`, by the `clientInfo.name` they send, dotted names to the others; both
//! spellings routed on `tools/call`. Over stdio, stateful Streamable HTTP (the list cache and
//! rmcp's own path), stateless 2026-07-28 requests and stateless older-protocol requests
//! (no session, so `_`-joined names under `auto`). Also the request-size limit, the same
//! on both transports.

mod common;

use std::time::Duration;

use charly_mcp::client::{ConnectOptions, Endpoint, Protocol, TransportKind, connect};
use charly_mcp::server::{
    DOTLESS_CLIENTS, MAX_REQUEST_BYTES, Server, ServerOptions, Tool, ToolError, ToolNameStyle, ToolOutput,
};
use common::http::{loopback, messages, post};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};

/// Clients that accept dots (or rename them themselves), which keep dotted names under `auto`.
const DOTTED_CLIENTS: [&str; 3] = ["cursor-vscode", "Visual Studio Code", "rmcp"];

fn server(style: ToolNameStyle) -> Server {
    Server::new(common::options().tool_names(style))
}

fn initialize(client: &str) -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": client, "version": "1.0.0"}}})
    .to_string()
}

fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

fn call(id: u64, name: &str) -> String {
    request(id, "tools/call", json!({"name": name, "arguments": {}}))
}

/// The names in a `tools/list` answer.
fn names(answer: &Value) -> Vec<String> {
    answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The text of a `tools/call` answer.
fn text(answer: &Value) -> String {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
        .to_owned()
}

/// Asserts `names` is the fixture's tools spelled `_`-joined (`underscored`) or dotted.
fn assert_spelling(names: &[String], underscored: bool, client: &str) {
    let (want, not) = if underscored { ("box_list", "box.list") } else { ("box.list", "box_list") };
    assert!(names.iter().any(|n| n == want), "{client}: {want} missing from {names:?}");
    assert!(!names.iter().any(|n| n == not), "{client}: {not} listed in {names:?}");
    if underscored {
        assert!(names.iter().all(|n| !n.contains('.')), "{client}: {names:?}");
    }
}

/// One stdio session of `server` over an in-memory pipe, as client `client`: the `tools/list`
/// answer, then the answers to calling `box_list` and `box.list`.
async fn stdio_session(server: &Server, client: &str) -> (Value, Value, Value) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn({
        let server = server.clone();
        async move { server.serve_io(read, write).await.unwrap().waiting().await }
    });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(client_read).lines();
    let mut next = async |line: String| -> Value {
        client_write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        if line.contains(r#""id""#) {
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap()
        } else {
            Value::Null
        }
    };
    next(initialize(client)).await;
    next(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()).await;
    let list = next(request(2, "tools/list", json!({}))).await;
    let under = next(call(3, "box_list")).await;
    let dotted = next(call(4, "box.list")).await;
    serving.abort();
    (list, under, dotted)
}

/// `auto` over stdio: every client of the table gets `_`-joined names, the others dotted
/// ones; both spellings call the tool for each.
#[tokio::test]
async fn stdio_auto_spells_names_per_client_and_routes_both() {
    let server = server(ToolNameStyle::Auto);
    let clients = DOTLESS_CLIENTS.iter().map(|c| (c.name, true)).chain(DOTTED_CLIENTS.map(|c| (c, false)));
    for (client, underscored) in clients {
        let (list, under, dotted) = stdio_session(&server, client).await;
        assert_spelling(&names(&list), underscored, client);
        assert_eq!(text(&under), "web\ndb\n", "{client}: box_list");
        assert_eq!(text(&dotted), "web\ndb\n", "{client}: box.list");
    }
}

/// `dotted` keeps dots even for Claude Code; `underscore` joins with `_` for every client.
#[tokio::test]
async fn fixed_styles_ignore_the_client() {
    for (style, underscored) in [(ToolNameStyle::Dotted, false), (ToolNameStyle::Underscored, true)] {
        let server = server(style);
        for client in ["claude-code", "rmcp"] {
            let (list, under, dotted) = stdio_session(&server, client).await;
            assert_spelling(&names(&list), underscored, &format!("{style:?}, {client}"));
            assert_eq!(text(&under), "web\ndb\n");
            assert_eq!(text(&dotted), "web\ndb\n");
        }
    }
}

/// POSTs `body` in `session`, returns the last JSON-RPC message of the answer.
async fn in_session(url: &str, session: &str, body: String) -> Value {
    let response = post(url, &body).header("mcp-session-id", session).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{body}");
    messages(response).await.pop().unwrap()
}

/// `auto` over stateful Streamable HTTP: a plain `tools/list` (answered from the list cache's
/// pages of the client's spelling) and one with `_meta` (served by rmcp's path) give the same
/// spelling; both spellings call the tool.
#[tokio::test]
async fn http_auto_spells_names_per_session_from_cache_and_rmcp() {
    let handle = server(ToolNameStyle::Auto).serve_http(loopback()).await.unwrap();
    let url = handle.url();
    let clients = DOTLESS_CLIENTS.iter().map(|c| (c.name, true)).chain(DOTTED_CLIENTS.map(|c| (c, false)));
    for (client, underscored) in clients {
        let response = post(&url, &initialize(client)).send().await.unwrap();
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        assert_eq!(messages(response).await.last().unwrap()["id"], 1);
        let initialized = post(&url, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert!(initialized.status().is_success());
        let cached = post(&url, &request(2, "tools/list", json!({})))
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        // The cache answers `application/json`; rmcp answers SSE.
        assert_eq!(cached.headers()["content-type"], "application/json", "{client}");
        let cached = messages(cached).await.pop().unwrap();
        assert_spelling(&names(&cached), underscored, client);
        let rmcp = in_session(&url, &session, request(3, "tools/list", json!({"_meta": {"x": 1}}))).await;
        assert_eq!(names(&rmcp), names(&cached), "{client}: rmcp's path and the cache");
        for (id, name) in [(4, "box_list"), (5, "box.list")] {
            assert_eq!(
                text(&in_session(&url, &session, call(id, name)).await),
                "web\ndb\n",
                "{client}: {name}"
            );
        }
    }
    handle.shutdown().await.unwrap();
}

/// Protocol 2026-07-28 over stateless HTTP: no `initialize`; the client names itself in every
/// request's `_meta` (`io.modelcontextprotocol/clientInfo`), and each request is answered in
/// its client's spelling. charly's own client, with `client_name`, sends exactly that.
#[tokio::test]
async fn stateless_2026_requests_are_spelled_per_request() {
    let handle = server(ToolNameStyle::Auto).serve_http(loopback().stateless(true)).await.unwrap();
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    for (client, underscored) in [("claude-code", true), ("codex-mcp-client", true), ("cursor-vscode", false)]
    {
        let options = ConnectOptions {
            protocol: Protocol::Stateless,
            client_name: Some(client.to_owned()),
            ..ConnectOptions::default()
        };
        let session = connect(&endpoint, &options).await.unwrap();
        let names: Vec<String> =
            session.list_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
        assert_spelling(&names, underscored, client);
        for name in ["box_list", "box.list"] {
            let result = session.call_tool(name, None).await.unwrap();
            assert_eq!(result.is_error, Some(false), "{client}: {name}: {result:?}");
        }
        session.close().await;
    }
    handle.shutdown().await.unwrap();
}

/// Stateless HTTP with a 2025-11-25 client (Claude Code, Codex today): its `initialize` is
/// answered, but its later requests carry no session, so the server cannot know the client.
/// Under `auto` they get the `_`-joined names, which every client accepts; `dotted` keeps dots.
#[tokio::test]
async fn stateless_old_protocol_requests_get_underscored_names_under_auto() {
    for (style, underscored) in [(ToolNameStyle::Auto, true), (ToolNameStyle::Dotted, false)] {
        let handle = server(style).serve_http(loopback().stateless(true)).await.unwrap();
        let url = handle.url();
        for client in ["claude-code", "cursor-vscode"] {
            let init = post(&url, &initialize(client)).send().await.unwrap();
            assert_eq!(init.status(), StatusCode::OK);
            for params in [
                json!({}),
                json!({"_meta": {"io.modelcontextprotocol/clientInfo": {"name": "cursor-vscode", "version": "1"}}}),
            ] {
                let list = post(&url, &request(2, "tools/list", params.clone()))
                    .header("mcp-protocol-version", "2025-11-25")
                    .send()
                    .await
                    .unwrap();
                assert_eq!(list.status(), StatusCode::OK, "{style:?} {client} {params}");
                let list = messages(list).await.pop().unwrap();
                assert_spelling(
                    &names(&list),
                    underscored,
                    &format!("{style:?}, stateless, {client}, {params}"),
                );
            }
        }
        handle.shutdown().await.unwrap();
    }
}

/// In a 2025-11-25 session the `initialize` decides: a request's `_meta` clientInfo (which only
/// 2026-07-28 requests use) changes neither way, on rmcp's path.
#[tokio::test]
async fn a_session_keeps_the_spelling_its_initialize_chose() {
    let handle = server(ToolNameStyle::Auto).serve_http(loopback()).await.unwrap();
    let url = handle.url();
    for (client, other, underscored) in
        [("claude-code", "foo", true), ("foo", "claude-code", false), ("claude-code", "", true)]
    {
        let response = post(&url, &initialize(client)).send().await.unwrap();
        let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
        messages(response).await;
        let initialized = post(&url, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert!(initialized.status().is_success());
        let meta = json!({"_meta": {"io.modelcontextprotocol/clientInfo": {"name": other, "version": "1"}}});
        let list = in_session(&url, &session, request(2, "tools/list", meta)).await;
        assert_spelling(&names(&list), underscored, &format!("session {client}, _meta {other:?}"));
    }
    handle.shutdown().await.unwrap();
}

/// Two hand-written tools whose names meet once dots become `_` cannot be served: both
/// spellings are routed, so one would hide the other.
#[test]
#[should_panic(expected = "tools `a.b` and `a_b` are both reachable as `a_b`; rename one")]
fn colliding_spellings_are_a_construction_error() {
    let tool = |name: &str| {
        Tool::new(name, "x", json!({"type": "object", "properties": {}}), Default::default(), |_, _| async {
            Ok(ToolOutput::text(""))
        })
    };
    Server::new(ServerOptions::new("s", "1").tool(tool("a.b")).tool(tool("a_b")));
}

// ===== texts that name tools =====

/// The answers to `requests` (each with an id) in one stdio session of `server` as `client`.
async fn stdio_answers(server: Server, client: &str, requests: Vec<String>) -> Vec<Value> {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn(async move { server.serve_io(read, write).await.unwrap().waiting().await });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(client_read).lines();
    for line in [initialize(client), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()] {
        client_write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }
    lines.next_line().await.unwrap().unwrap();
    let mut answers = Vec::new();
    for line in requests {
        client_write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        answers.push(serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap());
    }
    serving.abort();
    answers
}

/// A session given `_`-joined names reads them in every text that names a tool: the
/// descriptions (the tool's and its schema's), the argument errors of the tool it called, and
/// a handler's own error naming another tool; whole names only (`box.writer` and a path
/// `notes/box.write.txt` stay). A session given dotted names reads them as written.
#[tokio::test]
async fn texts_name_tools_as_the_session_sees_them() {
    let annotations = charly_mcp::Annotations::default();
    let write_schema = json!({"type": "object", "required": ["path"], "additionalProperties": false,
        "properties": {"path": {"type": "string", "description": "A file box.cat can read"}}});
    let tools = vec![
        Tool::new("box.write", "Writes a file (see box.cat)", write_schema, annotations, |_, _| async {
            Ok(ToolOutput::text("written"))
        }),
        Tool::new(
            "box.cat",
            "Reads what box.write wrote",
            json!({"type": "object", "properties": {}}),
            annotations,
            |_, _| async {
                Err(ToolError::msg("box.write: notes/box.write.txt is missing; box.writer is not a tool"))
            },
        ),
    ];
    let server = Server::new(ServerOptions::new("texts", "1").tools(tools).tool_names(ToolNameStyle::Auto));
    let requests = || {
        vec![
            request(2, "tools/list", json!({})),
            request(3, "tools/call", json!({"name": "box_write", "arguments": {"path": 7}})),
            request(4, "tools/call", json!({"name": "box.cat", "arguments": {}})),
        ]
    };
    for (client, (write, cat)) in
        [("claude-code", ("box_write", "box_cat")), ("rmcp", ("box.write", "box.cat"))]
    {
        let answers = stdio_answers(server.clone(), client, requests()).await;
        let tools = answers[0]["result"]["tools"].as_array().unwrap();
        let find = |name: &str| {
            tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{client}: no {name}"))
        };
        assert_eq!(find(write)["description"], format!("Writes a file (see {cat})"), "{client}");
        assert_eq!(
            find(write)["inputSchema"]["properties"]["path"]["description"],
            format!("A file {cat} can read"),
            "{client}"
        );
        assert_eq!(find(cat)["description"], format!("Reads what {write} wrote"), "{client}");
        assert_eq!(answers[1]["result"]["isError"], true, "{client}: {}", answers[1]);
        let invalid = text(&answers[1]);
        assert!(
            invalid.starts_with(&format!("invalid arguments for tool `{write}`: ")),
            "{client}: {invalid}"
        );
        assert_eq!(
            text(&answers[2]),
            format!("{write}: notes/box.write.txt is missing; box.writer is not a tool"),
            "{client}"
        );
    }
}

// ===== request size =====

/// A `tools/call` of `echo` whose `text` is `size` bytes.
fn big_call(id: u64, size: usize) -> String {
    request(id, "tools/call", json!({"name": "echo", "arguments": {"text": "x".repeat(size)}}))
}

/// Over stdio a 5 MiB request gets a JSON-RPC error with its id (the line is over
/// `MAX_REQUEST_BYTES`), and the session serves the next request.
#[tokio::test]
async fn stdio_refuses_a_request_over_the_limit_and_goes_on() {
    assert_eq!(MAX_REQUEST_BYTES, 4 << 20);
    let server = server(ToolNameStyle::Auto);
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn(async move { server.serve_io(read, write).await.unwrap().waiting().await });
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut lines = BufReader::new(client_read).lines();
    for line in [initialize("rmcp"), r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned()] {
        client_write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }
    lines.next_line().await.unwrap().unwrap();
    let big = big_call(2, 5 << 20);
    let writer = tokio::spawn(async move {
        client_write.write_all(format!("{big}\n").as_bytes()).await.unwrap();
        client_write
    });
    let refused: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(refused["id"], 2, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("longer than 4 MiB"), "{message}");
    let mut client_write = writer.await.unwrap();
    // An id after the first 4 KiB cannot be read: `"id": null` (JSON-RPC 2.0, section 5).
    let late_id = format!(
        r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}},"id":9}}"#,
        "x".repeat(5 << 20)
    );
    let writer = tokio::spawn(async move {
        client_write.write_all(format!("{late_id}\n").as_bytes()).await.unwrap();
        client_write
    });
    let refused: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(refused.get("id"), Some(&Value::Null), "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let mut client_write = writer.await.unwrap();
    // Just under the limit still goes through, and so does the next small request.
    let fits = big_call(3, (4 << 20) - 200);
    client_write.write_all(format!("{fits}\n").as_bytes()).await.unwrap();
    let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!((answer["id"].clone(), answer["result"]["isError"].clone()), (json!(3), json!(false)));
    client_write.write_all(format!("{}\n", call(4, "box.list")).as_bytes()).await.unwrap();
    let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(text(&answer), "web\ndb\n");
    serving.abort();
}

/// Over Streamable HTTP the same 5 MiB request gets 413, and the session serves the next
/// request.
#[tokio::test]
async fn http_refuses_a_request_over_the_limit_and_goes_on() {
    let handle = server(ToolNameStyle::Auto).serve_http(loopback()).await.unwrap();
    let url = handle.url();
    let session = common::http::initialize(&url).await;
    let response = post(&url, &big_call(2, 5 << 20)).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let fits = in_session(&url, &session, big_call(3, (4 << 20) - 200)).await;
    assert_eq!(fits["result"]["isError"], false, "{}", fits.to_string().len());
    assert_eq!(text(&in_session(&url, &session, call(4, "box.list")).await), "web\ndb\n");
    tokio::time::sleep(Duration::from_millis(10)).await;
    handle.shutdown().await.unwrap();
}
