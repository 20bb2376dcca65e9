//! `tools/list` over Streamable HTTP, answered from pages serialised once, after rmcp's checks.
//!
//! - rmcp 3.11 bypassed: rmcp serialises every response itself, so each `tools/list`
//!   re-serialises its page (30 KB for 100 tools) and frames it as an SSE event: about twice
//!   the time and 2.3 times the server CPU of an answer from this cache, probe included
//!   (`benches/README.md`).
//! - Spec: 2025-11-25, "Sending Messages to the Server": the server answers a POST with
//!   either `application/json` or `text/event-stream`, and clients take both.
//! - Test: `tests/test_compat/http.rs`, `tools_list_from_pages_serialised_once`; what goes to rmcp
//!   instead in `tests/test_list_http.rs`.
//!
//! [`ListCache`] answers a plain `tools/list` of a live session from bytes serialised on first
//! use, as one `application/json` response. It copies none of rmcp's checks: before a cached
//! answer, rmcp itself judges the request's method, URI and headers (Host, Origin, Accept,
//! Content-Type, protocol version, session) and its body length (the body limit), by
//! handling a probe, a notification that means nothing to any handler, sent with the same
//! parts and padded to the same length. Only rmcp's 202 for the probe lets the cache answer;
//! any other answer (403, 404, 406, 413...) sends the request itself to rmcp, which then
//! refuses it as it would have. The probe reaches the session's worker, so it also restarts
//! the session's idle timer (`HttpOptions::session_idle_timeout`), as a request rmcp serves
//! does; a session whose worker has ended fails the probe.
//!
//! Tool names are spelled per client (`ToolNameStyle`): the cache keeps the pages of each
//! spelling, each serialised once, and answers a session in the spelling its client's
//! `initialize` chose (recorded by `ReplicaSessions`); a session it has no record of goes to
//! rmcp.
//!
//! What the cache decides is only what it can answer: a POST of at most 512 bytes with a
//! session id, on protocol version 2025-03-26 (no header), 2025-06-18 or 2025-11-25 (the
//! versions whose answer the cached bytes are, and on which rmcp serves the request and the
//! probe alike through the session), whose body is one `tools/list` request with nothing but
//! a cursor (no `_meta`, which can carry a per-request protocol version the probe does not
//! have), its version and id read by rmcp's own types, and no cursor or one this server
//! issued. Everything else goes to rmcp untouched.

use std::sync::{Arc, OnceLock};

use crate::server::replica::ReplicaSessions;
use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use rmcp::ServerHandler;
use rmcp::model::{JsonRpcVersion2_0, ListToolsResult, RequestId, ServerResult};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use serde::Deserialize;

use crate::server::options::ToolNameStyle;
use crate::server::state::{ServerState, Spelling};

/// Largest request body looked at. A plain `tools/list` request is about 100 bytes with a
/// cursor; larger bodies (most tool calls) go straight to rmcp, unread.
const MAX_LIST_REQUEST: u64 = 512;

/// Protocol versions (the `MCP-Protocol-Version` header; none means 2025-03-26) whose
/// `tools/list` answer the cached pages are.
const PLAIN_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

/// The probe's body: a notification no handler acts on (rmcp hands it to
/// `ServerHandler::on_custom_notification`, whose default does nothing).
const PROBE: &[u8] = br#"{"jsonrpc":"2.0","method":"notifications/charly/probe"}"#;

/// A `tools/list` request with nothing but a cursor. The version and the id are rmcp's own
/// types, so they read as rmcp reads them; anything else (`_meta`, unknown fields) fails
/// here and goes to rmcp. Reading about 100 bytes this way costs a tenth of reading them as
/// rmcp's `ClientJsonRpcMessage`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListRequest<'a> {
    #[allow(dead_code)] // Checked by deserialising: it must be "2.0".
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: &'a str,
    #[serde(default)]
    params: Option<ListParams>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    cursor: Option<String>,
}

/// The `tools/list` answers of one HTTP endpoint.
pub(super) struct ListCache {
    server: Arc<ServerState>,
    /// The endpoint's sessions: whose client rejects dotted names.
    sessions: Arc<ReplicaSessions>,
    /// Each page's `result` object in each [`Spelling`] (index: `Spelling as usize`),
    /// serialised on the first `tools/list` that spelling answers.
    pages: [OnceLock<Vec<Bytes>>; 2],
}

impl ListCache {
    /// The cache for an endpoint serving `server` to `sessions`.
    pub(super) fn new(server: Arc<ServerState>, sessions: Arc<ReplicaSessions>) -> Self {
        ListCache { server, sessions, pages: [OnceLock::new(), OnceLock::new()] }
    }

    /// The response to `request` when it is a plain `tools/list` that `rmcp` accepts, or the
    /// request back (its body re-attached) for rmcp to serve.
    ///
    /// Every small POST of a session has its body read here, so the checks that every request
    /// pays are the cheapest; the rest run only for a body that mentions `tools/list`.
    pub(super) async fn answer<S>(
        &self,
        request: Request,
        rmcp: &StreamableHttpService<S, ReplicaSessions>,
    ) -> Result<Response, Request>
    where
        S: ServerHandler + Send + 'static,
    {
        let headers = request.headers();
        let small = header_text(headers, header::CONTENT_LENGTH.as_str())
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n <= MAX_LIST_REQUEST);
        let version =
            header_text(headers, "mcp-protocol-version").is_none_or(|v| PLAIN_VERSIONS.contains(&v));
        if request.method() != Method::POST || !small || !version {
            return Err(request);
        }
        // The spelling this session's client gets (`ToolNameStyle`); a session whose
        // `initialize` this endpoint did not see goes to rmcp, whose handler decides.
        let Some(spelling) = header_text(headers, "mcp-session-id").and_then(|id| self.spelling(id)) else {
            return Err(request);
        };
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, MAX_LIST_REQUEST as usize).await else {
            // Shorter than Content-Length said, or a broken connection: rmcp reports it.
            return Err(Request::from_parts(parts, Body::empty()));
        };
        if memchr::memmem::find(&bytes, b"tools/list").is_some()
            && let Some((id, page)) = self.page(&bytes, spelling)
            && rmcp_accepts(rmcp, &parts, bytes.len()).await
        {
            return Ok(json_response(&id, page));
        }
        Err(Request::from_parts(parts, Body::from(bytes)))
    }

    /// The spelling of session `id`'s tool names; `None` when it depends on a client this
    /// endpoint did not see initialize.
    fn spelling(&self, id: &str) -> Option<Spelling> {
        match self.server.tool_names {
            ToolNameStyle::Auto => self.sessions.rejects_dots(id).map(|r| self.server.spelling_for(r)),
            _ => Some(self.server.spelling_for(false)),
        }
    }

    /// The request id and the serialised page in `spelling` when `body` is a plain
    /// `tools/list` request with no cursor or a cursor this server issued.
    fn page(&self, body: &[u8], spelling: Spelling) -> Option<(RequestId, &Bytes)> {
        let request: ListRequest<'_> = serde_json::from_slice(body).ok()?;
        if request.method != "tools/list" {
            return None;
        }
        let cursor = request.params.and_then(|p| p.cursor);
        let pages = self.server.tool_pages(spelling);
        let index = pages.index(cursor.as_deref())?;
        Some((request.id, &self.pages(spelling)[index]))
    }

    fn pages(&self, spelling: Spelling) -> &[Bytes] {
        self.pages[spelling as usize].get_or_init(|| {
            let pages = self.server.tool_pages(spelling);
            (0..pages.len())
                .map(|index| {
                    let (tools, next_cursor) = pages.at(index);
                    let mut page = ListToolsResult::with_all_items(tools.to_vec());
                    page.next_cursor = next_cursor;
                    // The shape rmcp gives peers on the versions served here (before 2026-07-28).
                    let mut result = ServerResult::ListToolsResult(page);
                    result.strip_result_type_for_legacy_peer();
                    result.strip_non_object_output_for_legacy_peer();
                    Bytes::from(serde_json::to_vec(&result).expect("a tools/list result serialises"))
                })
                .collect()
        })
    }
}

/// Whether `rmcp` accepts a POST with these `parts` (method, URI, headers) and a body of
/// `len` bytes: it handles [`PROBE`], padded with spaces to `len`, and only its 202 (the
/// notification accepted into the session) says yes. rmcp's answer is dropped.
async fn rmcp_accepts<S>(
    rmcp: &StreamableHttpService<S, ReplicaSessions>,
    parts: &http::request::Parts,
    len: usize,
) -> bool
where
    S: ServerHandler + Send + 'static,
{
    let mut body = PROBE.to_vec();
    body.resize(len.max(PROBE.len()), b' ');
    let mut headers = parts.headers.clone();
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    let mut probe = Request::new(Body::from(body));
    *probe.method_mut() = parts.method.clone();
    *probe.uri_mut() = parts.uri.clone();
    *probe.version_mut() = parts.version;
    *probe.headers_mut() = headers;
    rmcp.handle(probe).await.status() == StatusCode::ACCEPTED
}

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<page>}` as an `application/json` response.
fn json_response(id: &RequestId, page: &Bytes) -> Response {
    let id = serde_json::to_vec(id).expect("a JSON-RPC id serialises");
    let mut body = Vec::with_capacity(page.len() + id.len() + 32);
    body.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    body.extend_from_slice(&id);
    body.extend_from_slice(br#","result":"#);
    body.extend_from_slice(page);
    body.push(b'}');
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
