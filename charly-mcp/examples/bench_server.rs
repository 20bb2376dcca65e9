//! The two servers `http_bench` measures, as one binary: a charly [`Server`] and a bare rmcp
//! 3.11 `ServerHandler`, each with the same 200-tool catalog (`echo0` .. `echo199`, one
//! required string argument) where every tool echoes its `text` argument back.
//!
//! ```text
//! bench_server --charly|--bare --stdio
//! bench_server --charly|--bare --listen 127.0.0.1:0
//! ```
//!
//! Over HTTP it prints the bound address as its first stdout line and serves at `/mcp` until
//! stdin closes (so it never outlives the driver). Over stdio it serves until stdin closes.
//! Both spell out the same `tools/list` entries (same schema, same annotations), both set
//! `TCP_NODELAY` on accepted sockets, both page `tools/list` at 100 tools, neither installs a
//! log subscriber.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::serve::ListenerExt as _;
use charly_mcp::Annotations;
use charly_mcp::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, ToolAnnotations,
};
use charly_mcp::server::rmcp::service::RequestContext;
use charly_mcp::server::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use charly_mcp::server::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use charly_mcp::server::rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use charly_mcp::server::{HttpOptions, Server, ServerOptions, Tool, ToolOutput};
use serde_json::{Value, json};
use tokio::io::AsyncReadExt as _;

const CATALOG: usize = 200;
const PAGE: usize = 100;

fn schema() -> JsonObject {
    let Value::Object(schema) = json!({
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo"}},
        "required": ["text"],
        "additionalProperties": false
    }) else {
        unreachable!()
    };
    schema
}

const ANNOTATIONS: Annotations = Annotations {
    read_only_hint: true,
    destructive_hint: false,
    idempotent_hint: false,
    open_world_hint: false,
};

/// The bare rmcp server: the same 200 tools, echo answered directly, pages cut per request.
#[derive(Clone)]
struct Bare {
    tools: Arc<Vec<charly_mcp::server::rmcp::model::Tool>>,
}

impl Bare {
    fn new() -> Bare {
        // One schema object per tool, as in any real catalog (and as the charly side builds).
        let tools = (0..CATALOG)
            .map(|i| {
                let mut tool = charly_mcp::server::rmcp::model::Tool::new(
                    format!("echo{i}"),
                    "Echo the text",
                    Arc::new(schema()),
                );
                let a = ANNOTATIONS;
                tool.annotations = Some(ToolAnnotations::from_raw(
                    None,
                    Some(a.read_only_hint),
                    Some(a.destructive_hint),
                    Some(a.idempotent_hint),
                    Some(a.open_world_hint),
                ));
                tool
            })
            .collect();
        Bare { tools: Arc::new(tools) }
    }
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let start: usize = request.and_then(|r| r.cursor).and_then(|c| c.parse().ok()).unwrap_or(0);
        let end = (start + PAGE).min(self.tools.len());
        let mut result = ListToolsResult::with_all_items(self.tools[start.min(end)..end].to_vec());
        result.next_cursor = (end < self.tools.len()).then(|| end.to_string());
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request.arguments.and_then(|a| a.get("text").and_then(Value::as_str).map(str::to_owned));
        Ok(CallToolResult::success(vec![ContentBlock::text(text.unwrap_or_default())]).into())
    }
}

fn charly() -> Server {
    let mut options = ServerOptions::new("bench", "0");
    for i in 0..CATALOG {
        options = options.tool(Tool::new(
            format!("echo{i}"),
            "Echo the text",
            Value::Object(schema()),
            ANNOTATIONS,
            |args, _| async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) },
        ));
    }
    Server::new(options)
}

/// Resolves once stdin reaches end of file (the driver exited or closed it).
async fn stdin_closed() {
    let mut stdin = tokio::io::stdin();
    let mut buf = [0u8; 256];
    while let Ok(n) = stdin.read(&mut buf).await {
        if n == 0 {
            break;
        }
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: bench_server --charly|--bare --stdio|--listen ADDR";
    let bare = match args.first().map(String::as_str) {
        Some("--bare") => true,
        Some("--charly") => false,
        _ => panic!("{usage}"),
    };
    match (args.get(1).map(String::as_str), args.get(2)) {
        (Some("--stdio"), _) => {
            if bare {
                let running = Bare::new().serve(charly_mcp::server::rmcp::transport::stdio()).await.unwrap();
                let _ = running.waiting().await;
            } else {
                charly().serve_stdio().await.unwrap();
            }
        }
        (Some("--listen"), Some(addr)) => {
            let addr: SocketAddr = addr.parse().expect("--listen takes ip:port");
            let local = if bare {
                let bare = Bare::new();
                let service = StreamableHttpService::new(
                    move || Ok(bare.clone()),
                    Arc::new(LocalSessionManager::default()),
                    StreamableHttpServerConfig::default(),
                );
                let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
                let local = listener.local_addr().unwrap();
                let router = axum::Router::new().route_service("/mcp", service);
                let listener = listener.tap_io(|tcp| {
                    let _ = tcp.set_nodelay(true);
                });
                tokio::spawn(async move { axum::serve(listener, router).await });
                local
            } else {
                let handle = charly().serve_http(HttpOptions::default().listen(addr)).await.unwrap();
                let local = handle.local_addr();
                std::mem::forget(handle); // serves until the process exits
                local
            };
            println!("{local}");
            stdin_closed().await;
        }
        _ => panic!("{usage}"),
    }
}
