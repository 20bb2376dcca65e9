//! Every place where charly corrects or bypasses rmcp 3.11 (`src/server/compat/`), one test
//! each. A test sends the same request to a bare rmcp server (rmcp's `StreamableHttpService`
//! or `serve_server`, no charly code) and to charly, and asserts both answers: rmcp's own, the
//! one charly corrects, and charly's. When an rmcp upgrade changes the bare answer, its
//! assertion fails, and the workaround named in the test may be able to go.
//!
//! Servers listen on 127.0.0.1, port 0; a bare server stops when its [`BareHttp`] is dropped.
//! Here: both servers and the helpers; the cases are in `http.rs`, `limits.rs` and `stdio.rs`.

// `logging/setLevel` is deprecated by SEP-2577 (2026-07-28), which the removed-methods case tests.
#![allow(deprecated)]

#[path = "../common/mod.rs"]
mod common;

/// The Streamable HTTP corrections.
mod http;

/// The caps on open sessions and on requests in flight per session.
mod limits;

/// The stdio corrections, and what charly leaves to rmcp there.
mod stdio;

use std::sync::Arc;
use std::time::Duration;

use charly_mcp::Annotations;
use charly_mcp::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    ResourceContents, ServerCapabilities, ServerConfig, SetLevelRequestParams,
};
use charly_mcp::server::rmcp::service::RequestContext;
use charly_mcp::server::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use charly_mcp::server::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use charly_mcp::server::rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use charly_mcp::server::{Resource, ServeError, Server, ServerHandle, StdioOptions, Tool, ToolOutput};
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

    /// Serves `logging/setLevel`, as a server with logging does for its older sessions.
    async fn set_level(
        &self,
        _: SetLevelRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        Ok(())
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
    ({
        charly_mcp::client::install_tls_provider();
        reqwest::Client::new()
    })
    .delete(url)
    .header("mcp-session-id", session)
}

fn content_type(response: &reqwest::Response) -> String {
    response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}
