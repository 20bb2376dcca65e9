//! Every place where charly corrects or bypasses rmcp 3.11 (`src/server/compat/`), one test
//! each. A test sends the same request to a bare rmcp server (rmcp's `StreamableHttpService`
//! or `serve_server`, no charly code) and to charly, and asserts both answers: rmcp's own, the
//! one charly corrects, and charly's. When an rmcp upgrade changes the bare answer, its
//! assertion fails, and the workaround named in the test may be able to go.
//!
//! Servers listen on 127.0.0.1, port 0; a bare server stops when its [`BareHttp`] is dropped.

mod common;

use std::sync::Arc;
use std::time::Duration;

use charly_mcp::Annotations;
use charly_mcp::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ServerCapabilities, ServerConfig,
};
use charly_mcp::server::rmcp::service::RequestContext;
use charly_mcp::server::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use charly_mcp::server::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use charly_mcp::server::rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use charly_mcp::server::{Resource, Server, ServerHandle, Tool, ToolOutput};
use common::http::{INIT, initialize, loopback, messages, post};
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The idle timeout of the session keep-alive cases, on both servers.
const IDLE: Duration = Duration::from_secs(1);

// ===== the bare rmcp server =====

/// What a `wait` call tells its test: `"started"`, then `"stopped"` (cancelled or dropped).
type Events = mpsc::UnboundedSender<&'static str>;

/// Sends `"started"` now and `"stopped"` when dropped, with the call holding it.
struct Running(Events);

impl Running {
    fn new(events: &Events) -> Running {
        let _ = events.send("started");
        Running(events.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.send("stopped");
    }
}

/// Waits until the `wait` call reports `"started"` (at most 10 s).
async fn started(events: &mut mpsc::UnboundedReceiver<&'static str>) {
    let first = tokio::time::timeout(Duration::from_secs(10), events.recv()).await;
    assert_eq!(first, Ok(Some("started")), "the wait call never started");
}

/// Whether the `wait` call reports `"stopped"` within `within`.
async fn stops(events: &mut mpsc::UnboundedReceiver<&'static str>, within: Duration) -> bool {
    tokio::time::timeout(within, events.recv()).await == Ok(Some("stopped"))
}

/// A bare rmcp handler: tool `sleep` answers after `ms` milliseconds, tool `wait` waits up
/// to 10 s for its cancellation (telling `events` when it starts and stops), and reading
/// `test://slow` takes 4 s.
#[derive(Clone)]
struct Bare {
    events: Events,
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let schema = json!({"type": "object"}).as_object().unwrap().clone();
        let tools = ["sleep", "wait"].map(|name| rmcp_tool(name, &schema)).to_vec();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        if request.name == "wait" {
            let _running = Running::new(&self.events);
            let _ = tokio::time::timeout(Duration::from_secs(10), context.ct.cancelled()).await;
            return Ok(CallToolResult::success(vec![ContentBlock::text("waited")]).into());
        }
        let ms = request.arguments.as_ref().and_then(|a| a["ms"].as_u64()).unwrap_or(0);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("slept {ms} ms"))]).into())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        tokio::time::sleep(Duration::from_secs(4)).await;
        Ok(ReadResourceResult::new(vec![ResourceContents::text("late", request.uri)]).into())
    }
}

fn rmcp_tool(name: &'static str, schema: &charly_mcp::JsonObject) -> charly_mcp::server::rmcp::model::Tool {
    charly_mcp::server::rmcp::model::Tool::new(name, name, schema.clone())
}

/// rmcp's `StreamableHttpService` serving [`Bare`] at `/mcp`, with rmcp's default config and
/// sessions closed after `idle` without an event; stops when dropped.
struct BareHttp {
    url: String,
    stop: CancellationToken,
}

impl BareHttp {
    async fn start(idle: Option<Duration>) -> (BareHttp, mpsc::UnboundedReceiver<&'static str>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let handler = Bare { events: tx };
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = idle;
        let stop = CancellationToken::new();
        let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
        let service = StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(manager), config);
        let router = axum::Router::new().route_service("/mcp", service);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let signal = stop.clone().cancelled_owned();
        tokio::spawn(async move { axum::serve(listener, router).with_graceful_shutdown(signal).await });
        (BareHttp { url, stop }, rx)
    }
}

impl Drop for BareHttp {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

// ===== charly =====

/// charly's fixture server plus tool `wait` (as [`Bare`]'s: the receiver hears when a call
/// of it starts and stops) and the 4 s resource
/// `test://slow`, over HTTP with sessions closed after `idle`.
async fn charly(idle: Option<Duration>) -> (ServerHandle, mpsc::UnboundedReceiver<&'static str>) {
    let (server, rx) = charly_server();
    let handle = server.serve_http(loopback().session_idle_timeout(idle)).await.unwrap();
    (handle, rx)
}

fn charly_server() -> (Server, mpsc::UnboundedReceiver<&'static str>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let wait = Tool::new(
        "wait",
        "Waits up to 10 s for its cancellation",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        Annotations::default(),
        move |_, cx| {
            let running = Running::new(&tx);
            async move {
                let _running = running;
                let _ = tokio::time::timeout(Duration::from_secs(10), cx.cancelled()).await;
                Ok(ToolOutput::text("waited"))
            }
        },
    );
    let slow = Resource::new(
        charly_mcp::server::rmcp::model::Resource::new("test://slow", "slow"),
        |uri| async move {
            tokio::time::sleep(Duration::from_secs(4)).await;
            Ok(vec![ResourceContents::text("late", uri)])
        },
    );
    (Server::new(common::options().tool(wait).resource(slow)), rx)
}

// ===== helpers =====

fn ping(url: &str, session: &str) -> reqwest::RequestBuilder {
    post(url, r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#).header("mcp-session-id", session)
}

fn call(url: &str, session: &str, name: &str, arguments: Value) -> reqwest::RequestBuilder {
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": name, "arguments": arguments}});
    post(url, &call.to_string()).header("mcp-session-id", session)
}

fn delete(url: &str, session: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new().delete(url).header("mcp-session-id", session)
}

fn content_type(response: &reqwest::Response) -> String {
    response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

// ===== the cases =====

/// `compat/accept.rs`: rmcp answers 406 to a POST whose `Accept` is `*/*` or missing, though
/// both accept anything (RFC 9110, section 12.5.1); charly serves it.
#[tokio::test]
async fn wildcard_or_missing_accept() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    for accept in [Some("*/*"), None] {
        let send = |url: &str| {
            let request = reqwest::Client::new().post(url).header("content-type", "application/json");
            let request = match accept {
                Some(accept) => request.header("accept", accept),
                None => request,
            };
            request.body(INIT).send()
        };
        assert_eq!(send(&bare.url).await.unwrap().status(), StatusCode::NOT_ACCEPTABLE, "rmcp, {accept:?}");
        assert_eq!(send(&charly.url()).await.unwrap().status(), StatusCode::OK, "charly, {accept:?}");
    }
    charly.shutdown().await.unwrap();
}

/// `compat/unreadable_body.rs`: rmcp answers a body that is not JSON, or not JSON-RPC, with 415
/// and a plain-text reason starting `fail to deserialize request body` (charly reads that
/// text); charly answers 400 with a JSON-RPC error, -32700 or -32600 (spec 2025-11-25,
/// "Sending Messages to the Server"; JSON-RPC 2.0, section 5.1).
#[tokio::test]
async fn unreadable_bodies() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    for (body, reason, code) in [
        (r#"{"jsonrpc":"2.0","id":2,"#, "fail to deserialize request body ", -32700),
        (r#"{"hello":1}"#, "fail to deserialize request body unrecognized JSON-RPC message", -32600),
    ] {
        let rmcp = post(&bare.url, body).send().await.unwrap();
        assert_eq!(rmcp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "rmcp, {body}");
        let text = rmcp.text().await.unwrap();
        assert!(text.starts_with(reason), "rmcp, {body}: {text}");
        let ours = post(&charly.url(), body).send().await.unwrap();
        assert_eq!(ours.status(), StatusCode::BAD_REQUEST, "charly, {body}");
        let error: Value = ours.json().await.unwrap();
        assert_eq!(error["error"]["code"], code, "charly, {body}: {error}");
    }
    // In a session the body is read before rmcp, so the error carries the id it names.
    let session = initialize(&charly.url()).await;
    for (body, code, id) in [
        (r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","para"#, -32700, 2),
        (r#"{"id":3,"hello":1}"#, -32600, 3),
    ] {
        let ours = post(&charly.url(), body).header("mcp-session-id", &session).send().await.unwrap();
        assert_eq!(ours.status(), StatusCode::BAD_REQUEST, "charly, {body}");
        let error: Value = ours.json().await.unwrap();
        assert_eq!(
            (&error["error"]["code"], &error["id"]),
            (&json!(code), &json!(id)),
            "charly, {body}: {error}"
        );
    }
    charly.shutdown().await.unwrap();
}

/// `compat/delete.rs`: rmcp answers 202 to a DELETE of any session id, live or never issued;
/// charly answers 200 for a live session (the Python SDK takes only 200 and 204 as success)
/// and 404 for an unknown one, as a POST to it gets (spec 2025-11-25, "Session Management").
#[tokio::test]
async fn delete_status() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let session = initialize(&bare.url).await;
    assert_eq!(
        delete(&bare.url, &session).send().await.unwrap().status(),
        StatusCode::ACCEPTED,
        "rmcp, live"
    );
    let unknown = delete(&bare.url, "never-a-session").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::ACCEPTED, "rmcp, unknown");
    let session = initialize(&charly.url()).await;
    assert_eq!(
        delete(&charly.url(), &session).send().await.unwrap().status(),
        StatusCode::OK,
        "charly, live"
    );
    let unknown = delete(&charly.url(), "never-a-session").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND, "charly, unknown");
    charly.shutdown().await.unwrap();
}

/// `compat/ended_session.rs`: a session idles out under a slow `resources/read` (neither
/// server counts a running read as use). While the read is still finishing, the session's
/// worker has ended but the session is still in rmcp's map, and rmcp answers its requests
/// with 500; charly answers 404, on which clients start a new session (spec 2025-11-25,
/// "Session Management").
#[tokio::test]
async fn an_ended_session_whose_last_request_is_finishing() {
    let (bare, _) = BareHttp::start(Some(IDLE)).await;
    let (charly, _) = charly(Some(IDLE)).await;
    let read =
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "test://slow"}});
    let mut reads = Vec::new();
    let mut sessions = Vec::new();
    for url in [bare.url.clone(), charly.url()] {
        let session = initialize(&url).await;
        reads.push(tokio::spawn(post(&url, &read.to_string()).header("mcp-session-id", &session).send()));
        sessions.push((url, session));
    }
    tokio::time::sleep(IDLE * 2).await;
    let rmcp = ping(&sessions[0].0, &sessions[0].1).send().await.unwrap();
    assert_eq!(rmcp.status(), StatusCode::INTERNAL_SERVER_ERROR, "rmcp");
    let ours = ping(&sessions[1].0, &sessions[1].1).send().await.unwrap();
    assert_eq!(ours.status(), StatusCode::NOT_FOUND, "charly");
    for read in reads {
        read.abort();
    }
    charly.shutdown().await.unwrap();
}

/// `compat/keep_alive.rs`, tool calls: rmcp closes a session that gets no request for its
/// idle timeout, also while one of its tool calls runs: the call's result is lost and the
/// session is gone. charly keeps a session with a call in flight.
#[tokio::test]
async fn a_running_call_keeps_its_session() {
    let (bare, _) = BareHttp::start(Some(IDLE)).await;
    let (charly, _) = charly(Some(IDLE)).await;
    let session = initialize(&bare.url).await;
    let answer = call(&bare.url, &session, "sleep", json!({"ms": 2500})).send().await.unwrap();
    let answer = messages(answer).await;
    assert!(answer.iter().all(|m| m.get("result").is_none()), "rmcp answered: {answer:?}");
    // Gone: 500 while the call still runs in the ended session (`an_ended_session_...`), 404 after.
    let status = ping(&bare.url, &session).send().await.unwrap().status();
    assert!([StatusCode::INTERNAL_SERVER_ERROR, StatusCode::NOT_FOUND].contains(&status), "rmcp: {status}");

    let session = initialize(&charly.url()).await;
    let answer = call(&charly.url(), &session, "sleep", json!({"ms": 2500})).send().await.unwrap();
    let answer = messages(answer).await;
    let text = &answer.last().unwrap_or_else(|| panic!("charly: no answer"))["result"]["content"][0]["text"];
    assert_eq!(text, "slept 2500 ms\n", "charly: {answer:?}");
    assert_eq!(ping(&charly.url(), &session).send().await.unwrap().status(), StatusCode::OK, "charly");
    charly.shutdown().await.unwrap();
}

/// `compat/keep_alive.rs`, the GET stream: rmcp closes a session whose client waits on its
/// GET stream (for resource updates, say) and sends nothing else; charly keeps it while the
/// stream is open.
#[tokio::test]
async fn an_open_get_stream_keeps_its_session() {
    let (bare, _) = BareHttp::start(Some(IDLE)).await;
    let (charly, _) = charly(Some(IDLE)).await;
    let mut open = Vec::new();
    for url in [bare.url.clone(), charly.url()] {
        let session = initialize(&url).await;
        let stream = reqwest::Client::new()
            .get(&url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), StatusCode::OK, "{url}");
        open.push((url, session, stream));
    }
    tokio::time::sleep(IDLE * 5 / 2).await;
    let rmcp = ping(&open[0].0, &open[0].1).send().await.unwrap();
    assert_eq!(rmcp.status(), StatusCode::NOT_FOUND, "rmcp");
    let ours = ping(&open[1].0, &open[1].1).send().await.unwrap();
    assert_eq!(ours.status(), StatusCode::OK, "charly");
    drop(open);
    charly.shutdown().await.unwrap();
}

/// `compat/session_end.rs`, DELETE: rmcp ends a deleted session without cancelling the tool
/// calls still running in it (its transport closes only after a drain of about 5 s); charly
/// stops them at once (their cancellation token cancelled, child processes killed).
#[tokio::test]
async fn deleting_a_session_cancels_its_running_call() {
    let (bare, mut bare_events) = BareHttp::start(None).await;
    let (charly, mut charly_events) = charly(None).await;
    for (url, events, expected) in
        [(bare.url.clone(), &mut bare_events, false), (charly.url(), &mut charly_events, true)]
    {
        let session = initialize(&url).await;
        let running = tokio::spawn(call(&url, &session, "wait", json!({})).send());
        started(events).await;
        assert!(delete(&url, &session).send().await.unwrap().status().is_success(), "{url}");
        let stopped = stops(events, Duration::from_secs(1)).await;
        assert_eq!(stopped, expected, "{url}: the call stopped within 1 s of the DELETE");
        running.abort();
    }
    charly.shutdown().await.unwrap();
}

/// `compat/malformed.rs`: rmcp reads a request whose params do not fit its method as a custom
/// request, which its default handler answers with -32601 "method not found" and the bare
/// method name; charly answers -32602 (invalid params) with serde's reason (JSON-RPC 2.0,
/// section 5.1).
#[tokio::test]
async fn params_that_do_not_fit_their_method() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {}}).to_string();
    let mut answers = Vec::new();
    for url in [bare.url.clone(), charly.url()] {
        let session = initialize(&url).await;
        let response = post(&url, &request).header("mcp-session-id", &session).send().await.unwrap();
        answers.push(messages(response).await.pop().unwrap());
    }
    assert_eq!(answers[0]["error"]["code"], -32601, "rmcp: {}", answers[0]);
    assert_eq!(answers[0]["error"]["message"], "tools/call", "rmcp: {}", answers[0]);
    assert_eq!(answers[1]["error"]["code"], -32602, "charly: {}", answers[1]);
    let message = answers[1]["error"]["message"].as_str().unwrap();
    assert!(message.contains("missing field `name`"), "charly: {message}");
    charly.shutdown().await.unwrap();
}

/// `compat/list_cache.rs`: rmcp serialises every `tools/list` page anew and frames it as an SSE
/// event; charly answers a plain `tools/list` of a live session from pages serialised once,
/// as `application/json` (spec 2025-11-25, "Sending Messages to the Server", lets a server
/// answer a POST with either). The JSON-RPC answer is the one rmcp gives on charly's own
/// server (a body over 512 bytes, padded here with spaces, is never read by the cache).
#[tokio::test]
async fn tools_list_from_pages_serialised_once() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let list = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#;
    let session = initialize(&bare.url).await;
    let rmcp = post(&bare.url, list).header("mcp-session-id", &session).send().await.unwrap();
    assert!(content_type(&rmcp).starts_with("text/event-stream"), "rmcp: {}", content_type(&rmcp));

    let url = charly.url();
    let session = initialize(&url).await;
    let cached = post(&url, list).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(content_type(&cached), "application/json", "charly");
    let padded = format!("{list}{}", " ".repeat(600));
    let uncached = post(&url, &padded).header("mcp-session-id", &session).send().await.unwrap();
    assert!(content_type(&uncached).starts_with("text/event-stream"), "charly through rmcp");
    assert_eq!(messages(cached).await, messages(uncached).await);
    charly.shutdown().await.unwrap();
}

// ===== what charly leaves to rmcp =====

/// How long after its client's end of an in-memory pipe is dropped a `wait` call, served over
/// the other end by `serve`, stops (`events` hears it); `None` if not within 10 s.
async fn stop_after_close<F, Fut>(
    serve: F,
    mut events: mpsc::UnboundedReceiver<&'static str>,
) -> Option<Duration>
where
    F: FnOnce(
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn(serve(read, write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait", "arguments": {}}});
    client_write.write_all(format!("{INIT}\n").as_bytes()).await.unwrap();
    let init = lines.next_line().await.unwrap().unwrap();
    assert!(init.contains(r#""result""#), "{init}");
    for line in [r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(), call.to_string()] {
        client_write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }
    started(&mut events).await;
    drop((lines, client_write));
    let closed = std::time::Instant::now();
    let stopped = stops(&mut events, Duration::from_secs(10)).await;
    serving.abort();
    stopped.then(|| closed.elapsed())
}

/// Not a workaround: when a session's transport closes (stdin at its end; here an in-memory
/// pipe dropped), rmcp drains the requests still running for up to 5 s, so that a client that
/// closed its end early still gets its answers, and then cancels them. charly leaves this to
/// rmcp; both stop a running call after the drain, neither before.
#[tokio::test]
async fn a_closed_transport_stops_the_running_call_after_rmcps_drain() {
    let (tx, bare_events) = mpsc::unbounded_channel();
    let bare = Bare { events: tx };
    let (server, charly_events) = charly_server();
    let (rmcp, ours) = tokio::join!(
        stop_after_close(
            move |read, write| async move {
                let running = bare.serve((read, write)).await.unwrap();
                let _ = running.waiting().await;
            },
            bare_events,
        ),
        stop_after_close(
            move |read, write| async move {
                let running = server.serve_io(read, write).await.unwrap();
                let _ = running.waiting().await;
            },
            charly_events,
        ),
    );
    for (which, after) in [("rmcp", rmcp), ("charly", ours)] {
        let after = after.unwrap_or_else(|| panic!("{which}: the call never stopped"));
        assert!(
            (Duration::from_secs(4)..Duration::from_secs(7)).contains(&after),
            "{which}: stopped after {after:?}"
        );
    }
}

// ===== stdio =====

/// The messages a session served by `serve` over an in-memory pipe writes for `lines` (raw
/// bytes, each sent with a `\n`), after `initialize` and `notifications/initialized`: read
/// until `quiet` passes without one.
async fn stdio_answers<F, Fut>(serve: F, lines: &[&[u8]], quiet: Duration) -> Vec<Value>
where
    F: FnOnce(
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn(serve(read, write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut out = tokio::io::BufReader::new(client_read).lines();
    client_write.write_all(format!("{INIT}\n").as_bytes()).await.unwrap();
    let init = out.next_line().await.unwrap().unwrap();
    assert!(init.contains(r#""result""#), "{init}");
    let mut input = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n".to_vec();
    for line in lines {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    client_write.write_all(&input).await.unwrap();
    let mut answers = Vec::new();
    while let Ok(Ok(Some(line))) = tokio::time::timeout(quiet, out.next_line()).await {
        answers.push(serde_json::from_str(&line).unwrap());
    }
    serving.abort();
    answers
}

/// The answers among `answers` with id `id`.
fn with_id<'a>(answers: &'a [Value], id: &Value) -> Vec<&'a Value> {
    answers.iter().filter(|a| &a["id"] == id).collect()
}

/// `compat/unreadable_line.rs`: over stdio rmcp drops a line that is not JSON (invalid UTF-8,
/// a truncated object) and answers JSON that is no message with -32600 and no id; charly
/// answers every one, -32700 or -32600, with the id where it can be read (JSON-RPC 2.0,
/// sections 5 and 5.1). The ping after them shows the session goes on.
#[tokio::test]
async fn unreadable_stdio_lines() {
    let lines: [&[u8]; 4] = [
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\"}}}",
        br#"{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"na"#,
        br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":100,"method":"ping"}"#,
    ];
    let quiet = Duration::from_millis(500);
    let (tx, _) = mpsc::unbounded_channel();
    let bare = Bare { events: tx };
    let rmcp = stdio_answers(
        move |read, write| async move {
            let running = bare.serve((read, write)).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        quiet,
    )
    .await;
    assert_eq!(rmcp.len(), 2, "rmcp: {rmcp:?}");
    assert_eq!(rmcp[0]["error"]["code"], -32600, "rmcp: {rmcp:?}");
    assert!(rmcp[0].get("id").is_none(), "rmcp: {rmcp:?}");
    assert_eq!(rmcp[1]["id"], 100, "rmcp: {rmcp:?}");

    let (server, _) = charly_server();
    let ours = stdio_answers(
        move |read, write| async move {
            let running = server.serve_io(read, write).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        quiet,
    )
    .await;
    assert_eq!(ours.len(), 4, "charly: {ours:?}");
    for (answer, (code, id, says)) in ours.iter().zip([
        (-32700, json!(7), "not UTF-8"),
        (-32700, json!("t"), "ends before"),
        (-32600, json!(9), "`jsonrpc` must be \"2.0\""),
    ]) {
        assert_eq!((&answer["error"]["code"], &answer["id"]), (&json!(code), &id), "charly: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "charly: {answer}");
    }
    assert_eq!(ours[3]["id"], 100, "charly: {ours:?}");
}

/// `compat/request_ids.rs`, stdio: `ping` with id 5 sent while `tools/call` id 5 runs. rmcp
/// answers the ping and drops the call's result (one answer for two requests); charly
/// refuses the ping with -32600 naming the id and the call still gets its own result.
#[tokio::test]
async fn a_reused_request_id_gets_its_own_error_over_stdio() {
    let lines: [&[u8]; 2] = [
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}"#,
        br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    ];
    let quiet = Duration::from_millis(1500);
    let (tx, _) = mpsc::unbounded_channel();
    let bare = Bare { events: tx };
    let rmcp = stdio_answers(
        move |read, write| async move {
            let running = bare.serve((read, write)).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        quiet,
    )
    .await;
    let rmcp = with_id(&rmcp, &json!(5));
    assert_eq!(rmcp.len(), 1, "rmcp answers one of the two: {rmcp:?}");
    assert_eq!(rmcp[0]["result"], json!({}), "rmcp: the ping's result; the call's is lost: {rmcp:?}");

    let (server, _) = charly_server();
    let ours = stdio_answers(
        move |read, write| async move {
            let running = server.serve_io(read, write).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        quiet,
    )
    .await;
    let ours = with_id(&ours, &json!(5));
    assert_eq!(ours.len(), 2, "charly: {ours:?}");
    assert_eq!(ours[0]["error"]["code"], -32600, "charly: the ping is refused first: {ours:?}");
    let message = ours[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("id 5 is already the id of a request in flight (`tools/call`)"), "{message}");
    assert_eq!(
        ours[1]["result"]["content"][0]["text"], "slept 300 ms\n",
        "charly: the call's own result: {ours:?}"
    );
}

/// `compat/request_ids.rs`, stdio: an id reused right after its request was cancelled, while
/// the cancelled call is still finishing. Each new request gets its own result, never the
/// cancelled `wait` call's `waited` (which rmcp drops), 20 times over.
#[tokio::test]
async fn an_id_reused_after_a_cancel_gets_its_own_result() {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for id in 0..20 {
        lines.push(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "wait", "arguments": {}}})
            .to_string()
            .into_bytes(),
        );
        lines.push(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": id}})
            .to_string()
            .into_bytes(),
        );
        lines.push(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "echo", "arguments": {"text": format!("new {id}")}}})
            .to_string()
            .into_bytes(),
        );
    }
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let (server, _) = charly_server();
    let ours = stdio_answers(
        move |read, write| async move {
            let running = server.serve_io(read, write).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        Duration::from_millis(1000),
    )
    .await;
    for id in 0..20 {
        let answers = with_id(&ours, &json!(id));
        assert_eq!(answers.len(), 1, "id {id}: {answers:?}");
        assert_eq!(answers[0]["result"]["content"][0]["text"], format!("new {id}\n"), "id {id}: {answers:?}");
    }
}

/// `compat/request_ids_http.rs`: the same over Streamable HTTP, in one session. rmcp answers
/// the ping (`{}`, id 5) and the call's POST never gets its result; charly refuses the ping's
/// POST with -32600 naming the id and the call's POST carries the call's result.
#[tokio::test]
async fn a_reused_request_id_gets_its_own_error_over_http() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let mut seen = Vec::new();
    for (url, tool) in [
        (bare.url.clone(), json!({"name": "sleep", "arguments": {"ms": 300}})),
        (charly.url(), json!({"name": "sleep", "arguments": {"ms": 300}})),
    ] {
        let session = initialize(&url).await;
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": tool}).to_string();
        let first = {
            let (url, session) = (url.clone(), session.clone());
            tokio::spawn(async move {
                let response = post(&url, &call).header("mcp-session-id", &session).send().await.unwrap();
                tokio::time::timeout(Duration::from_secs(3), messages(response)).await.ok()
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let ping = post(&url, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        let ping = messages(ping).await;
        seen.push((ping, first.await.unwrap()));
    }
    let (ping, call) = &seen[0];
    assert_eq!(ping.last().unwrap()["result"], json!({}), "rmcp answers the ping: {ping:?}");
    assert!(call.is_none(), "rmcp: the 300 ms call's POST is still unanswered after 3 s: {call:?}");

    let (ping, call) = &seen[1];
    assert_eq!(ping.len(), 1, "charly: {ping:?}");
    assert_eq!((&ping[0]["id"], &ping[0]["error"]["code"]), (&json!(5), &json!(-32600)), "charly: {ping:?}");
    let call = call.as_ref().expect("charly: the call's POST is answered");
    let result = call.iter().find(|m| m["id"] == 5).expect("charly: the call's result");
    assert_eq!(result["result"]["content"][0]["text"], "slept 300 ms\n", "charly: {call:?}");
    charly.shutdown().await.unwrap();
}
