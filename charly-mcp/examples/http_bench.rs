//! Rough figures for the Streamable HTTP server: echo calls per second and latency in one
//! session and across 16, and tools/list of a 200-tool catalog against a ping, each next to
//! a bare rmcp server doing the same work on the same machine. Prints figures; asserts
//! nothing.
//!
//! ```text
//! cargo run --release -p charly-mcp --example http_bench [-- SECONDS_PER_FIGURE]
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt as _;
use charly_mcp::Annotations;
use charly_mcp::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, ContentBlock, ListToolsResult,
    PaginatedRequestParams, PingRequest, ServerCapabilities, ServerConfig,
};
use charly_mcp::server::rmcp::service::{RequestContext, RunningService};
use charly_mcp::server::rmcp::transport::StreamableHttpClientTransport;
use charly_mcp::server::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use charly_mcp::server::rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService,
};
use charly_mcp::server::rmcp::{ErrorData, RoleClient, RoleServer, ServerHandler, ServiceExt as _};
use charly_mcp::server::{HttpOptions, Server, ServerOptions, Tool, ToolOutput};
use serde_json::{Value, json};

const CATALOG: usize = 200;

fn schema() -> Value {
    json!({"type": "object", "properties": {"text": {"type": "string", "description": "Text to echo"}},
           "required": ["text"], "additionalProperties": false})
}

/// The bare rmcp server: the same 200 tools, echo answered directly.
#[derive(Clone)]
struct Bare {
    tools: Arc<Vec<charly_mcp::server::rmcp::model::Tool>>,
}

impl ServerHandler for Bare {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.iter().take(100).cloned().collect()))
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

async fn start_bare() -> SocketAddr {
    let Value::Object(schema) = schema() else { unreachable!() };
    let schema = Arc::new(schema);
    let tools = (0..CATALOG)
        .map(|i| {
            charly_mcp::server::rmcp::model::Tool::new(format!("echo{i}"), "Echo the text", schema.clone())
        })
        .collect();
    let bare = Bare { tools: Arc::new(tools) };
    let service = StreamableHttpService::new(
        move || Ok(bare.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let router = axum::Router::new().route_service("/mcp", service);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

async fn start_charly() -> SocketAddr {
    let mut options = ServerOptions::new("bench", "0");
    for i in 0..CATALOG {
        options = options.tool(Tool::new(
            format!("echo{i}"),
            "Echo the text",
            schema(),
            Annotations { read_only_hint: true, ..Annotations::default() },
            |args, _| async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) },
        ));
    }
    let handle = Server::new(options)
        .serve_http(HttpOptions::default().listen(SocketAddr::from(([127, 0, 0, 1], 0))))
        .await
        .unwrap();
    let addr = handle.local_addr();
    std::mem::forget(handle); // serves until the process exits
    addr
}

type Client = RunningService<RoleClient, ()>;

async fn client(addr: SocketAddr) -> Client {
    ().serve(StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"))).await.unwrap()
}

#[derive(Clone, Copy)]
enum Op {
    Echo,
    List,
    Ping,
}

async fn once(client: &Client, op: Op) {
    match op {
        Op::Echo => {
            let args = json!({"text": "hello"}).as_object().unwrap().clone();
            client.call_tool(CallToolRequestParams::new("echo7").with_arguments(args)).await.unwrap();
        }
        Op::List => {
            client.peer().list_tools(None).await.unwrap();
        }
        Op::Ping => {
            client.send_request(ClientRequest::PingRequest(PingRequest::default())).await.unwrap();
        }
    }
}

/// Runs `op` for `secs` seconds in each of `sessions` sessions; returns (ops/s, p50, p99).
async fn measure(addr: SocketAddr, op: Op, sessions: usize, secs: f64) -> (f64, Duration, Duration) {
    let mut tasks = Vec::new();
    for _ in 0..sessions {
        tasks.push(tokio::spawn(async move {
            let client = client(addr).await;
            for _ in 0..20 {
                once(&client, op).await; // warm up
            }
            let mut latencies = Vec::new();
            let start = Instant::now();
            while start.elapsed().as_secs_f64() < secs {
                let t = Instant::now();
                once(&client, op).await;
                latencies.push(t.elapsed());
            }
            let _ = client.cancel().await;
            latencies
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all.sort();
    let rate = all.len() as f64 / secs;
    (rate, all[all.len() / 2], all[all.len() * 99 / 100])
}

#[tokio::main]
async fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3.0);
    let bare = start_bare().await;
    let charly = start_charly().await;
    println!("{:<34} {:>22} {:>22}", "figure", "charly", "bare rmcp");
    for (label, op, sessions) in [
        ("echo, 1 session", Op::Echo, 1),
        ("echo, 16 sessions", Op::Echo, 16),
        ("ping, 1 session", Op::Ping, 1),
        ("tools/list (100 of 200), 1 session", Op::List, 1),
    ] {
        let c = measure(charly, op, sessions, secs).await;
        let b = measure(bare, op, sessions, secs).await;
        let show = |(rate, p50, p99): (f64, Duration, Duration)| {
            format!("{rate:>7.0}/s {:>5.0}/{:<5.0}us", p50.as_secs_f64() * 1e6, p99.as_secs_f64() * 1e6)
        };
        println!("{label:<34} {:>22} {:>22}", show(c), show(b));
    }
    println!("(rate, then p50/p99 latency; client and both servers share this machine's cores)");
}
