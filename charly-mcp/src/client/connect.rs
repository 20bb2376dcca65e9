//! [`connect`] an [`Endpoint`] and talk to it through a [`Client`].

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, FormElicitationCapability,
    Implementation, JsonObject, ListPromptsRequest, ListResourcesRequest, ListToolsRequest,
    PaginatedRequestParams, PingRequest, ProgressNotificationParam, Prompt, ProtocolVersion,
    ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult, Resource, ServerResult, Tool,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RequestContext, RunningService, ServiceExt as _,
};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};

use super::endpoint::{Endpoint, StdioCommand, Target, TransportKind};
use super::error::{ClientError, error_chain};
use super::sse::SseClientTransport;

/// The default timeout of one operation (connecting, or one request): 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most pages a list operation follows before it gives up (a server whose cursors never
/// end would otherwise loop forever): 1,000 pages.
pub const MAX_PAGES: usize = 1000;

/// How long [`Client::close`] waits for a polite shutdown before the session is dropped
/// (and a stdio child killed): 500 ms.
pub const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// One `notifications/progress` from the server, as the progress callback sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressUpdate {
    /// Progress so far; increases with every notification (units are the server's).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable message, when the server sends one.
    pub message: Option<String>,
}

/// A callback that receives progress notifications; it runs on the client's task, so it must
/// be quick. [`crate::client::ProgressBar::callback`] makes one that draws a terminal bar.
pub type ProgressFn = Arc<dyn Fn(&ProgressUpdate) + Send + Sync>;

/// What to do with a stdio server's stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChildStderr {
    /// Pass it through to charly's stderr (the default: a failing server says why).
    #[default]
    Inherit,
    /// Discard it.
    Discard,
}

/// Options for [`connect`].
#[derive(Clone)]
pub struct ConnectOptions {
    /// Timeout for connecting and for each request (default [`DEFAULT_TIMEOUT`]). A request
    /// that times out is cancelled with `notifications/cancelled`.
    pub timeout: Duration,
    /// Called for every progress notification.
    pub progress: Option<ProgressFn>,
    /// What happens to a stdio server's stderr.
    pub child_stderr: ChildStderr,
    /// The `clientInfo.name` sent in `initialize` (default `charly`): a server that publishes
    /// different tool names per client (`claude-code` gets `_`-joined ones) answers as it would
    /// answer that client.
    pub client_name: Option<String>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            timeout: DEFAULT_TIMEOUT,
            progress: None,
            child_stderr: ChildStderr::Inherit,
            client_name: None,
        }
    }
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("child_stderr", &self.child_stderr)
            .field("client_name", &self.client_name)
            .finish()
    }
}

/// charly's side of the session: identifies as `charly` (or [`ConnectOptions::client_name`])
/// and forwards progress.
#[derive(Clone)]
pub(crate) struct Handler {
    progress: Option<ProgressFn>,
    name: String,
}

impl rmcp::ClientHandler for Handler {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + rmcp::service::MaybeSendFuture + '_ {
        if let Some(callback) = &self.progress {
            callback(&ProgressUpdate {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
        std::future::ready(())
    }

    /// charly runs unattended, so it answers a form elicitation by itself: `accept` with the
    /// schema's `default`s when every required field has one, `decline` otherwise (and for
    /// URL elicitations, which need a person).
    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, rmcp::ErrorData>> + rmcp::service::MaybeSendFuture + '_
    {
        let answer = match &request {
            ElicitRequestParams::FormElicitationParams { requested_schema, .. } => {
                serde_json::to_value(requested_schema).ok().and_then(|schema| defaults_answer(&schema))
            }
            _ => None,
        };
        std::future::ready(Ok(match answer {
            Some(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(serde_json::Value::Object(content))
            }
            None => ElicitResult::new(ElicitationAction::Decline),
        }))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        ClientConfig::new(capabilities, Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// The unattended answer to a form elicitation: every property's `default`, or `None` (decline)
/// when a required property has none.
pub(crate) fn defaults_answer(schema: &serde_json::Value) -> Option<JsonObject> {
    let properties = schema.get("properties").and_then(serde_json::Value::as_object);
    let mut content = JsonObject::new();
    for (name, property) in properties.into_iter().flatten() {
        if let Some(default) = property.get("default") {
            content.insert(name.clone(), default.clone());
        }
    }
    let required = schema.get("required").and_then(serde_json::Value::as_array);
    let covered = required.into_iter().flatten().all(|r| r.as_str().is_some_and(|r| content.contains_key(r)));
    covered.then_some(content)
}

/// A connected, initialised MCP session. Dropping it ends the session (a stdio child is
/// killed); [`Client::close`] ends it politely.
pub struct Client {
    service: RunningService<RoleClient, Handler>,
    timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("timeout", &self.timeout).finish_non_exhaustive()
    }
}

/// Connects to `endpoint` and runs the `initialize` handshake, within `options.timeout`.
///
/// # Errors
///
/// [`ClientError::Connect`] (refused, HTTP error, handshake failure, a stdio command that
/// cannot start), [`ClientError::Timeout`] (`initialize` took longer than the timeout).
pub async fn connect(endpoint: &Endpoint, options: &ConnectOptions) -> Result<Client, ClientError> {
    let location = endpoint.location();
    let fail = |message: String| ClientError::Connect { endpoint: location.clone(), message };
    let attempt = async {
        match &endpoint.target {
            Target::Http { url, transport: TransportKind::Sse, headers } => {
                let transport =
                    SseClientTransport::connect(url, headers).await.map_err(|e| fail(error_chain(&e)))?;
                connect_transport(transport, options, &location).await
            }
            Target::Http { url, headers, .. } => {
                let transport = streamable_http(url, headers).map_err(fail)?;
                connect_transport(transport, options, &location).await
            }
            Target::Stdio(command) => {
                let transport = spawn_stdio(command, options.child_stderr)
                    .map_err(|e| fail(format!("cannot start {:?}: {}", command.command, error_chain(&e))))?;
                connect_transport(transport, options, &location).await
            }
        }
    };
    match tokio::time::timeout(options.timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(ClientError::Timeout { operation: "initialize", timeout: options.timeout }),
    }
}

/// Runs the handshake over any rmcp transport (an in-memory `tokio::io::duplex` pair, a
/// custom transport...). `label` names the endpoint in errors. Not bounded by the timeout:
/// [`connect`] does that.
///
/// # Errors
///
/// [`ClientError::Connect`] when the handshake fails.
pub async fn connect_transport<T, E, A>(
    transport: T,
    options: &ConnectOptions,
    label: &str,
) -> Result<Client, ClientError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let handler = Handler {
        progress: options.progress.clone(),
        name: options.client_name.clone().unwrap_or_else(|| "charly".to_owned()),
    };
    let service = handler
        .serve(transport)
        .await
        .map_err(|e| ClientError::Connect { endpoint: label.to_owned(), message: error_chain(&e) })?;
    Ok(Client { service, timeout: options.timeout })
}

fn streamable_http(
    url: &str,
    headers: &[(String, String)],
) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    // Every header, `Authorization` included, goes through verbatim (rmcp's `auth_header`
    // would turn any value into `Bearer <value>`).
    let mut custom = std::collections::HashMap::new();
    for (name, value) in headers {
        let n = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header {name:?}"))?;
        let v = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("invalid value for header {name:?}"))?;
        custom.insert(n, v);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    Ok(StreamableHttpClientTransport::from_config(config))
}

fn spawn_stdio(command: &StdioCommand, stderr: ChildStderr) -> std::io::Result<TokioChildProcess> {
    let mut cmd = tokio::process::Command::new(&command.command);
    // A session dropped (or a close that overran its grace) kills the server outright.
    cmd.kill_on_drop(true);
    cmd.args(&command.args);
    cmd.envs(command.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &command.cwd {
        cmd.current_dir(dir);
    }
    let stderr = match stderr {
        ChildStderr::Inherit => std::process::Stdio::inherit(),
        ChildStderr::Discard => std::process::Stdio::null(),
    };
    let (process, _) = TokioChildProcess::builder(cmd).stderr(stderr).spawn()?;
    Ok(process)
}

impl Client {
    /// The timeout each request gets.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Changes the timeout of the requests that follow (connecting had its own).
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    /// The server's name and version from `initialize`, when it sent them.
    pub fn server_info(&self) -> Option<Implementation> {
        self.service.peer().peer_info().and_then(|info| info.server_info.clone())
    }

    /// Sends one request; on timeout rmcp sends `notifications/cancelled` for it.
    async fn request(
        &self,
        operation: &'static str,
        request: ClientRequest,
    ) -> Result<ServerResult, ClientError> {
        let handle = self
            .service
            .peer()
            .send_request_with_option(request, PeerRequestOptions::with_timeout(self.timeout))
            .await
            .map_err(|e| ClientError::from_service(operation, e))?;
        handle.await_response().await.map_err(|e| ClientError::from_service(operation, e))
    }

    /// Follows `nextCursor` to the end: stops at an absent (or empty) cursor, fails on a
    /// cursor seen before or after [`MAX_PAGES`] pages.
    async fn paginate<T>(
        &self,
        operation: &'static str,
        make: impl Fn(Option<PaginatedRequestParams>) -> ClientRequest,
        take: impl Fn(ServerResult) -> Option<(Vec<T>, Option<String>)>,
    ) -> Result<Vec<T>, ClientError> {
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = cursor.clone().map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
            let result = self.request(operation, make(params)).await?;
            let (page, next) = take(result).ok_or_else(|| ClientError::Session {
                operation,
                message: "the server answered with another result type".into(),
            })?;
            items.extend(page);
            match next.filter(|c| !c.is_empty()) {
                None => return Ok(items),
                Some(next) => {
                    if !seen.insert(next.clone()) {
                        return Err(ClientError::Pagination {
                            operation,
                            message: format!("the server repeated cursor {next:?}; stopping"),
                        });
                    }
                    cursor = Some(next);
                }
            }
        }
        Err(ClientError::Pagination { operation, message: format!("more than {MAX_PAGES} pages; stopping") })
    }

    /// `ping`.
    ///
    /// # Errors
    ///
    /// Timeout, server error or a closed session.
    pub async fn ping(&self) -> Result<(), ClientError> {
        self.request("ping", ClientRequest::PingRequest(PingRequest::default())).await.map(|_| ())
    }

    /// `tools/list`, every page.
    ///
    /// # Errors
    ///
    /// As [`Client::ping`], plus [`ClientError::Pagination`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        self.paginate(
            "tools/list",
            |p| ClientRequest::ListToolsRequest(ListToolsRequest { params: p, ..Default::default() }),
            |r| match r {
                ServerResult::ListToolsResult(r) => Some((r.tools, r.next_cursor)),
                _ => None,
            },
        )
        .await
    }

    /// `resources/list`, every page.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.paginate(
            "resources/list",
            |p| ClientRequest::ListResourcesRequest(ListResourcesRequest { params: p, ..Default::default() }),
            |r| match r {
                ServerResult::ListResourcesResult(r) => Some((r.resources, r.next_cursor)),
                _ => None,
            },
        )
        .await
    }

    /// `prompts/list`, every page.
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.paginate(
            "prompts/list",
            |p| ClientRequest::ListPromptsRequest(ListPromptsRequest { params: p, ..Default::default() }),
            |r| match r {
                ServerResult::ListPromptsResult(r) => Some((r.prompts, r.next_cursor)),
                _ => None,
            },
        )
        .await
    }

    /// `tools/call`. A tool that fails is `Ok` with `is_error: Some(true)`. No `arguments`
    /// sends `{}`: the field is optional in the spec, but many servers validate it as an object.
    ///
    /// # Errors
    ///
    /// As [`Client::ping`] (an unknown tool is usually a server error).
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ClientError> {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments.unwrap_or_default());
        match self.request("tools/call", ClientRequest::CallToolRequest(CallToolRequest::new(params))).await?
        {
            ServerResult::CallToolResult(result) => Ok(result),
            // A reply with no `content` may parse as another result type.
            ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
            _ => Err(ClientError::Session {
                operation: "tools/call",
                message: "the server answered with another result type".into(),
            }),
        }
    }

    /// `resources/read`.
    ///
    /// # Errors
    ///
    /// As [`Client::ping`] (an unknown URI is usually a server error).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let params = ReadResourceRequestParams::new(uri);
        match self
            .request("resources/read", ClientRequest::ReadResourceRequest(ReadResourceRequest::new(params)))
            .await?
        {
            ServerResult::ReadResourceResult(result) => Ok(result),
            _ => Err(ClientError::Session {
                operation: "resources/read",
                message: "the server answered with another result type".into(),
            }),
        }
    }

    /// Ends the session politely, within [`CLOSE_GRACE`]: Streamable HTTP deletes its
    /// session; a stdio child gets its stdin closed and, when it has not exited by then, is
    /// killed (many servers ignore end-of-input, and a CLI should not wait seconds for them).
    pub async fn close(mut self) {
        let _ = self.service.close_with_timeout(CLOSE_GRACE).await;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn elicitation_is_answered_with_defaults_or_declined() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "note": {"type": "string"}
        }, "required": ["name"]});
        let answer = defaults_answer(&schema).unwrap();
        assert_eq!(serde_json::Value::Object(answer), json!({"name": "John Doe", "age": 30}));
        let uncovered =
            json!({"type": "object", "properties": {"note": {"type": "string"}}, "required": ["note"]});
        assert_eq!(defaults_answer(&uncovered), None);
        assert_eq!(defaults_answer(&json!({"type": "object"})), Some(JsonObject::new()));
    }
}
