//! [`Client`]: a connected session and the requests charly sends on it.

#![allow(deprecated)] // Sampling and roots are deprecated by SEP-2577, still part of 2026-07-28.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    ClientRequest, Implementation, ListPromptsRequest, ListResourcesRequest, ListToolsRequest,
    PaginatedRequestParams, PingRequest, Prompt, ProtocolVersion, RequestMetaObject, Resource, ServerResult,
    Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService};

use super::answers::Answers;
use super::connect::{CLOSE_GRACE, MAX_PAGES};
use super::error::ClientError;
use super::handler::Handler;

/// How long a request in flight when the run is interrupted may still be answered: 1 s.
pub(crate) const ANSWER_GRACE: Duration = Duration::from_secs(1);

/// Most input-required rounds one request goes through before the client gives up (rmcp's
/// cap, which other SDKs share): 10.
pub const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// A connected MCP session: initialised (protocol 2025-11-25 and before) or discovered
/// (2026-07-28, whose requests each carry the client's `_meta`). Dropping it ends the session
/// (a stdio child is killed); [`Client::close`] ends it politely.
pub struct Client {
    pub(crate) service: RunningService<RoleClient, Handler>,
    pub(crate) timeout: Duration,
    /// Whether the transport is HTTP, where 2026-07-28 requests carry headers from tool
    /// schemas (SEP-2243).
    pub(crate) http: bool,
    /// Whether the session started with `server/discover` (2026-07-28), not `initialize`:
    /// the client's behaviour follows the revision the session negotiated.
    pub(crate) discovered: bool,
    /// Why `server/discover` did not start the session, when the client fell back to
    /// `initialize`.
    pub(crate) fallback: Option<String>,
    /// Cancelled when the run is interrupted ([`super::ConnectOptions::interrupt`]).
    pub(crate) interrupt: Option<tokio_util::sync::CancellationToken>,
    /// The URL or command line, named in errors.
    pub(crate) location: String,
    /// The tools `tools/list` gave in this session, once listed.
    pub(crate) listed: Mutex<Option<HashSet<String>>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("timeout", &self.timeout)
            .field("protocol", &self.protocol_version())
            .finish_non_exhaustive()
    }
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

    /// The server's name and version, when it sent them.
    pub fn server_info(&self) -> Option<Implementation> {
        self.service.peer().peer_info().and_then(|info| info.server_info.clone())
    }

    /// The protocol version of the session: `2026-07-28` after discovery, the version
    /// `initialize` agreed on otherwise.
    pub fn protocol_version(&self) -> Option<ProtocolVersion> {
        self.service.peer().peer_info().map(|info| info.protocol_version.clone())
    }

    /// Whether the session speaks 2026-07-28 or later: it started with `server/discover`
    /// (a session that agreed on an older revision in `initialize` never is).
    pub fn is_stateless(&self) -> bool {
        self.discovered
            && self.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
    }

    /// Why `server/discover` did not start this session, when the client fell back to an
    /// `initialize` (e.g. `server/discover failed with error -32601: Method not found`).
    pub fn fallback(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    pub(crate) fn answers(&self) -> &Answers {
        &self.service.service().answers
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
            .map_err(|e| ClientError::from_service(operation, &self.location, e))?;
        handle.await_response().await.map_err(|e| ClientError::from_service(operation, &self.location, e))
    }

    /// `fut` within the timeout; a future dropped on timeout cancels its request. After an
    /// interrupt the request gets [`ANSWER_GRACE`] to be answered (a `tools/call` whose task
    /// the server has just created must be known to be cancelled), then is dropped and so
    /// cancelled with `notifications/cancelled`.
    pub(crate) async fn within<T>(
        &self,
        operation: &'static str,
        fut: impl Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> Result<T, ClientError> {
        let fut = tokio::time::timeout(self.timeout, fut);
        tokio::pin!(fut);
        let outcome = tokio::select! {
            outcome = &mut fut => outcome,
            () = self.interrupted() => match tokio::time::timeout(ANSWER_GRACE, &mut fut).await {
                Ok(outcome) => outcome,
                Err(_) => {
                    return Err(ClientError::Interrupted {
                        operation,
                        detail: "the request was cancelled on the server (notifications/cancelled)".into(),
                    });
                }
            },
        };
        match outcome {
            Ok(result) => result.map_err(|e| ClientError::from_service(operation, &self.location, e)),
            Err(_) => Err(ClientError::Timeout { operation, timeout: self.timeout, endpoint: None }),
        }
    }

    /// Whether the run has been interrupted.
    pub(crate) fn is_interrupted(&self) -> bool {
        self.interrupt.as_ref().is_some_and(tokio_util::sync::CancellationToken::is_cancelled)
    }

    /// Resolves when the run is interrupted ([`super::ConnectOptions::interrupt`]); never
    /// without an interrupt token.
    pub(crate) async fn interrupted(&self) {
        match &self.interrupt {
            Some(token) => token.cancelled().await,
            None => std::future::pending().await,
        }
    }

    /// Follows `nextCursor` to the end: stops at an absent (or empty) cursor, fails on a
    /// cursor seen before or after [`MAX_PAGES`] pages.
    pub(crate) async fn paginate<T>(
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

    /// `ping`. Protocol 2026-07-28 has none: there a `server/discover` answers instead.
    ///
    /// # Errors
    ///
    /// Timeout, server error or a closed session.
    pub async fn ping(&self) -> Result<(), ClientError> {
        if let (true, Some(version)) = (self.is_stateless(), self.protocol_version()) {
            let info = rmcp::ClientHandler::get_info(self.service.service());
            let meta = RequestMetaObject::with_client_context(version, info.client_info, info.capabilities);
            return self.within("server/discover", self.service.peer().discover(meta)).await.map(|_| ());
        }
        self.request("ping", ClientRequest::PingRequest(PingRequest::default())).await.map(|_| ())
    }

    /// `tools/list`, every page, the tool schemas as the server sent them (`$ref`s are not
    /// followed). On 2026-07-28 over HTTP, rmcp leaves out tools whose `x-mcp-header`
    /// annotations are invalid (SEP-2243: clients must not call them).
    ///
    /// # Errors
    ///
    /// As [`Client::ping`], plus [`ClientError::Pagination`].
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let tools = self
            .paginate(
                "tools/list",
                |p| ClientRequest::ListToolsRequest(ListToolsRequest { params: p, ..Default::default() }),
                |r| match r {
                    ServerResult::ListToolsResult(r) => Some((r.tools, r.next_cursor)),
                    _ => None,
                },
            )
            .await?;
        let names = tools.iter().map(|t| t.name.to_string()).collect();
        *self.listed.lock().unwrap_or_else(PoisonError::into_inner) = Some(names);
        Ok(tools)
    }

    /// `tools/list`, every page, each tool as the JSON the server sent, parsed or not: for
    /// callers that judge the list (`check mcp lint`) and must see a tool that is not a valid
    /// MCP `Tool` (no `inputSchema`, a schema that is not an object) instead of failing the
    /// whole listing, as [`Client::list_tools`] does. Valid tools come back as rmcp serializes
    /// them (the same keys the server sent, as far as the model knows them).
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`]; a page whose `tools` is not an array is
    /// [`ClientError::Session`].
    pub async fn list_tools_raw(&self) -> Result<Vec<serde_json::Value>, ClientError> {
        self.paginate(
            "tools/list",
            |p| ClientRequest::ListToolsRequest(ListToolsRequest { params: p, ..Default::default() }),
            |r| match r {
                ServerResult::ListToolsResult(r) => Some((
                    r.tools.iter().map(|t| serde_json::to_value(t).unwrap_or_default()).collect(),
                    r.next_cursor,
                )),
                // A page rmcp's model refused (one malformed tool spoils the whole page) comes
                // as the JSON it was.
                ServerResult::CustomResult(rmcp::model::CustomResult(mut page)) => {
                    let tools = page.get_mut("tools").map(serde_json::Value::take);
                    let next = page.get("nextCursor").and_then(|c| c.as_str()).map(str::to_owned);
                    match tools {
                        Some(serde_json::Value::Array(tools)) => Some((tools, next)),
                        _ => None,
                    }
                }
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

    /// `prompts/list`, every page; none, without asking, when the server declares no
    /// `prompts` capability (MCP "Prompts", Capabilities: such a server need not serve the
    /// method, and charly's answers it with -32601).
    ///
    /// # Errors
    ///
    /// As [`Client::list_tools`].
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        let declared = self.service.peer().peer_info().map(|info| info.capabilities.prompts.is_some());
        if declared == Some(false) {
            return Ok(Vec::new());
        }
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

    /// On 2026-07-28 over HTTP, a call's arguments may have to travel in `Mcp-Param-*`
    /// headers too (SEP-2243), which rmcp's transport takes from the schemas of the tools it
    /// has seen listed: list them once per session before the first call. A tool that is not
    /// listed is still called (servers may serve tools they do not list; an unknown one is
    /// theirs to refuse), without `Mcp-Param-*` headers.
    pub(crate) async fn ensure_listed(&self) -> Result<(), ClientError> {
        if !(self.http && self.is_stateless()) {
            return Ok(());
        }
        let listed = self.listed.lock().unwrap_or_else(PoisonError::into_inner).is_some();
        if !listed {
            self.list_tools().await?;
        }
        Ok(())
    }

    /// Ends the session politely, within [`CLOSE_GRACE`]: Streamable HTTP deletes its
    /// session (2025-11-25 and before); a stdio child gets its stdin closed and, when it has
    /// not exited by then, is killed (many servers ignore end-of-input, and a CLI should not
    /// wait seconds for them).
    pub async fn close(mut self) {
        let _ = self.service.close_with_timeout(CLOSE_GRACE).await;
    }
}
