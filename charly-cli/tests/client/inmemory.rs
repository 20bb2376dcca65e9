//! Client against an rmcp server in the same process over `tokio::io::duplex`: the cases a
//! reference server cannot show (what reached the server, misbehaving cursors).

use std::time::Duration;

use charly::client::{self, Client, ClientError, ConnectOptions};
use charly::server::rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListPromptsResult,
    ListToolsResult, PaginatedRequestParams, Prompt, ServerCapabilities, ServerConfig,
};
use charly::server::rmcp::service::RequestContext;
use charly::server::rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use charly_cli::CommandError;
use charly_cli::probe::{self, Request};
use charly_cli::report::Reply;
use tokio::sync::mpsc;

#[derive(Clone)]
struct TestServer {
    /// Reports `cancelled` when the `wait` tool's request is cancelled.
    events: mpsc::UnboundedSender<&'static str>,
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_prompts().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        match request.name.as_ref() {
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("disk full")]).into()),
            "wait" => {
                self.events.send("started").unwrap();
                tokio::select! {
                    _ = context.ct.cancelled() => { self.events.send("cancelled").unwrap(); }
                    _ = tokio::time::sleep(Duration::from_secs(30)) => {}
                }
                Ok(CallToolResult::success(vec![ContentBlock::text("late")]).into())
            }
            other => Err(McpError::invalid_params(format!("no tool {other}"), None)),
        }
    }

    /// A new cursor on every page, forever.
    #[allow(clippy::field_reassign_with_default, reason = "ListToolsResult is non_exhaustive")]
    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let page: u64 = request.and_then(|r| r.cursor).and_then(|c| c.parse().ok()).unwrap_or(0);
        let mut result = ListToolsResult::default();
        result.next_cursor = Some((page + 1).to_string());
        Ok(result)
    }

    /// Pages `a`, `b`, then a cursor that repeats forever.
    #[allow(clippy::field_reassign_with_default, reason = "ListPromptsResult is non_exhaustive")]
    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let cursor = request.and_then(|r| r.cursor);
        let (name, next) = match cursor.as_deref() {
            None => ("a", "c1"),
            Some("c1") => ("b", "c2"),
            _ => ("again", "c2"),
        };
        let mut result = ListPromptsResult::default();
        result.prompts = vec![Prompt::new(name, Some("p"), None)];
        result.next_cursor = Some(next.to_owned());
        Ok(result)
    }
}

async fn start(timeout: Duration) -> (Client, mpsc::UnboundedReceiver<&'static str>) {
    let (events, rx) = mpsc::unbounded_channel();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        let server = TestServer { events }.serve(server_io).await.expect("server starts");
        let _ = server.waiting().await;
    });
    let options = ConnectOptions { timeout, ..Default::default() };
    let client = client::connect_transport(client_io, &options, "in-memory").await.unwrap();
    (client, rx)
}

#[tokio::test]
async fn is_error_prints_the_text_and_fails() {
    let (client, _events) = start(Duration::from_secs(10)).await;
    let request = Request::Call { tool: "fail".into(), input: None };
    let outcome = probe::run_on(&client, &request).await.unwrap();
    // A failure is exit status 1 on a terminal, `isError` over MCP.
    assert_eq!(outcome.failure().as_deref(), Some("the tool's result is an error (isError: true)"));
    assert_eq!(outcome.to_string(), "disk full\n");
}

#[tokio::test]
async fn a_timeout_sends_notifications_cancelled() {
    let (client, mut events) = start(Duration::from_millis(300)).await;
    let err = client.call_tool("wait", None).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout { operation: "tools/call", .. }), "{err}");
    assert_eq!(events.recv().await, Some("started"));
    // The server saw the cancellation (its request token fired), well before its own 30 s.
    let seen = tokio::time::timeout(Duration::from_secs(5), events.recv()).await;
    assert_eq!(seen.expect("server was told within 5s"), Some("cancelled"));
}

#[tokio::test]
async fn a_repeated_cursor_stops_the_listing() {
    let (client, _events) = start(Duration::from_secs(10)).await;
    let err = client.list_prompts().await.unwrap_err();
    assert!(matches!(err, ClientError::Pagination { operation: "prompts/list", .. }), "{err}");
    assert_eq!(err.to_string(), r#"prompts/list: the server repeated cursor "c2"; stopping"#);
}

#[tokio::test]
async fn endless_pages_stop_at_the_cap() {
    let (client, _events) = start(Duration::from_secs(10)).await;
    let err = client.list_tools().await.unwrap_err();
    assert!(matches!(err, ClientError::Pagination { operation: "tools/list", .. }), "{err}");
    assert_eq!(err.to_string(), format!("tools/list: more than {} pages; stopping", client::MAX_PAGES));
}

/// A writer whose reader has gone away, like `charly check mcp list-tools | head -0`.
struct ClosedPipe;

impl std::io::Write for ClosedPipe {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn a_closed_pipe_is_an_error_not_a_panic() {
    let (client, _events) = start(Duration::from_secs(10)).await;
    // Commands never print: `main` writes the report's text (or JSON) and turns the write
    // error into a `CommandError`, which it must recognise as a closed pipe (exit status 0).
    let print = |bytes: &[u8]| -> CommandError {
        std::io::Write::write_all(&mut ClosedPipe, bytes).map_err(CommandError::from).unwrap_err()
    };
    let outcome = probe::run_on(&client, &Request::Call { tool: "fail".into(), input: None }).await.unwrap();
    let err = print(outcome.to_string().as_bytes());
    assert!(err.is_broken_pipe(), "{err}");
    let err = print(Reply::new(&probe::servers(&[])).json_text().as_bytes());
    assert!(err.is_broken_pipe(), "{err}");
    // The session is unharmed.
    client.ping().await.unwrap();
}
