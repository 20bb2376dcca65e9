//! Plans against an rmcp Streamable HTTP server in this process: the numeric matchers and a
//! tool's `isError` as exit status 1, which server-everything@2025.12.18 cannot show (its
//! tools print no bare numbers and report failures as JSON-RPC errors).

use std::sync::Arc;

use charly::client::{Endpoint, TransportKind};
use charly::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ServerCapabilities, ServerConfig,
};
use charly::server::rmcp::service::RequestContext;
use charly::server::rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use charly::server::rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use charly::server::rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use charly_cli::check::{self, Endpoints, Plan, RunOptions};
use charly_cli::report::Report as _;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
struct Counter;

impl ServerHandler for Counter {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match request.name.as_ref() {
            "count" => Ok(CallToolResult::success(vec![ContentBlock::text("7")]).into()),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("disk full")]).into()),
            other => Err(McpError::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// Serves `Counter` at `http://127.0.0.1:<port>/mcp` until the token is cancelled.
async fn serve(stop: CancellationToken) -> Endpoint {
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = stop.child_token();
    let service =
        StreamableHttpService::new(|| Ok(Counter), Arc::new(LocalSessionManager::default()), config);
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).with_graceful_shutdown(stop.cancelled_owned()).await;
    });
    Endpoint::url(&format!("http://127.0.0.1:{port}/mcp"), TransportKind::StreamableHttp).unwrap()
}

const PLAN: &str = r#"
count-bounds:
  check: the count is between 6 and 8
  mcp: call
  tool: count
  context: [deploy]
  stdout: {lt: 8, le: 7, gt: 6, ge: 7}
count-too-low:
  check: the count is above 7
  mcp: call
  tool: count
  context: [deploy]
  stdout: [{gt: 7}, {lt: 7}]
is-error:
  check: a failing tool is exit status 1 with its text
  mcp: call
  tool: fail
  context: [deploy]
  exit_status: 1
  stdout: disk full
is-error-unexpected:
  check: a failing tool fails a check that expects success
  mcp: call
  tool: fail
  context: [deploy]
"#;

#[tokio::test]
async fn numeric_matchers_and_is_error_in_a_plan() {
    let stop = CancellationToken::new();
    let _stop_on_drop = stop.clone().drop_guard();
    let endpoint = serve(stop).await;
    let plan = Plan::parse(PLAN, "counter.yml");
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let report =
        check::run(&plan, &Endpoints::Resolved(vec![endpoint]), &RunOptions::default(), None).await.unwrap();
    let text = report.to_string();
    assert!(report.failure().is_some(), "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("PASS count-bounds: "), "{text}");
    assert!(lines[1].starts_with("FAIL count-too-low: "), "{text}");
    assert_eq!(lines[2], r#"    stdout "7" is not > 7"#);
    assert_eq!(lines[3], r#"    stdout "7" is not < 7"#);
    assert!(lines[4].starts_with("PASS is-error: "), "{text}");
    assert!(lines[5].starts_with("FAIL is-error-unexpected: "), "{text}");
    assert_eq!(lines[6], "    exit status 1, expected 0");
    assert_eq!(lines[7], "checks: 2 passed, 2 failed, 0 skipped");
}
