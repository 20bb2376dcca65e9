//! `tools/list` over Streamable HTTP, answered from pages serialised once.
//!
//! - rmcp 3.11 bypassed: rmcp serialises every response itself, so each `tools/list`
//!   re-serialised its page (30 KB for 100 tools) and framed it as an SSE event.
//! - Test: `tests/test_compat.rs`, `tools_list_from_pages_serialised_once`; the rest in
//!   `tests/test_list_http.rs`.
//!
//! [`ListCache`] answers a plain `tools/list`
//! of a live session from bytes serialised on first use, as one `application/json` response
//! (Streamable HTTP lets the server answer a POST with either content type; clients must take
//! both, spec 2025-11-25, "Sending Messages to the Server").
//!
//! It answers only what it can tell rmcp would accept, and hands everything else to rmcp
//! untouched, so rmcp stays the one judge of odd requests: another method, a batch, a request
//! with `_meta` or unknown params, an `Origin` header, a `Host` not literally allowed, an
//! unknown or missing session, a protocol version other than 2025-03-26 to 2025-11-25 (later
//! ones bring per-request headers rmcp validates), a cursor this server did not issue.
//!
//! A cached answer still reaches the session's worker, as a no-op event ([`Sessions::touch`]),
//! so it restarts the session's idle timer (`HttpOptions::session_idle_timeout`) just as a
//! request rmcp serves does, and a session whose worker has ended is left to rmcp (404).

use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::extract::Request;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, header};
use rmcp::model::{ListToolsResult, ServerResult};
use serde::Deserialize;
use serde_json::Value;

use super::sessions::{Sessions, session_id};
use crate::server::state::ServerState;

/// Largest request body looked at. A plain `tools/list` request is about 100 bytes with a
/// cursor; larger bodies (most tool calls) go straight to rmcp, unread.
const MAX_LIST_REQUEST: u64 = 512;

/// Protocol versions (the `MCP-Protocol-Version` header; none means 2025-03-26) whose
/// `tools/list` needs no header checks beyond the session's.
const PLAIN_VERSIONS: [&str; 3] = ["2025-03-26", "2025-06-18", "2025-11-25"];

/// The `tools/list` answers of one HTTP endpoint.
pub(super) struct ListCache {
    server: Arc<ServerState>,
    sessions: Arc<Sessions>,
    allowed_hosts: Vec<http::uri::Authority>,
    any_host: bool,
    /// Each page's `result` object, serialised on the first `tools/list`.
    pages: OnceLock<Vec<Bytes>>,
}

/// A `tools/list` request with nothing but a cursor.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListRequest<'a> {
    jsonrpc: &'a str,
    id: Value,
    method: &'a str,
    #[serde(default)]
    params: Option<ListParams>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    cursor: Option<String>,
}

impl ListCache {
    /// The cache for an endpoint serving `server` with `sessions`, accepting `allowed_hosts`
    /// (`HttpOptions::allowed_hosts`; empty accepts any host, as rmcp does).
    pub(super) fn new(server: Arc<ServerState>, sessions: Arc<Sessions>, allowed_hosts: &[String]) -> Self {
        ListCache {
            server,
            sessions,
            allowed_hosts: allowed_hosts.iter().filter_map(|h| h.parse().ok()).collect(),
            any_host: allowed_hosts.is_empty(),
            pages: OnceLock::new(),
        }
    }

    /// The response to `request` when it is a plain `tools/list` of a live session, or the
    /// request back (its body re-attached) for rmcp to serve.
    ///
    /// Every small POST of a session has its body read here, so the checks that every request
    /// pays are the cheapest; the rest run only for a body that mentions `tools/list`.
    pub(super) async fn answer(&self, request: Request) -> Result<Response, Request> {
        let headers = request.headers();
        let small = header_text(headers, header::CONTENT_LENGTH.as_str())
            .and_then(|n| n.parse::<u64>().ok())
            .is_some_and(|n| n <= MAX_LIST_REQUEST);
        if request.method() != Method::POST
            || !small
            || !headers.contains_key("mcp-session-id")
            || headers.contains_key(header::ORIGIN)
        {
            return Err(request);
        }
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, MAX_LIST_REQUEST as usize).await else {
            // Shorter than Content-Length said, or a broken connection: rmcp reports it.
            return Err(Request::from_parts(parts, Body::empty()));
        };
        if memchr::memmem::find(&bytes, b"tools/list").is_some()
            && self.may_answer(&parts.headers)
            && let Some((id, page)) = self.page(&bytes)
            && let Some(session) = session_id(&parts.headers)
            && self.sessions.touch(session).await
        {
            return Ok(json_response(&id, page));
        }
        Err(Request::from_parts(parts, Body::from(bytes)))
    }

    /// What the rest of the headers decide: a JSON body, from a client that accepts JSON, to
    /// an allowed host, on a protocol version without per-request headers.
    fn may_answer(&self, headers: &HeaderMap) -> bool {
        let json = header_text(headers, header::CONTENT_TYPE.as_str()).is_some_and(|t| {
            t.split(';').next().unwrap_or_default().trim().eq_ignore_ascii_case("application/json")
        });
        // Only a media type listed without parameters counts (`;q=0` refuses it; rmcp reads
        // q-values, and anything with parameters goes to rmcp to judge).
        let accepts = |essence: &str| {
            headers
                .get_all(header::ACCEPT)
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .any(|item| item.trim().eq_ignore_ascii_case(essence))
        };
        let version =
            header_text(headers, "mcp-protocol-version").is_none_or(|v| PLAIN_VERSIONS.contains(&v));
        json && accepts("application/json")
            && accepts("text/event-stream")
            && version
            && self.host_allowed(headers)
    }

    /// The `Host` header names an allowed host (any port when the entry has none), compared
    /// the way rmcp compares them; anything this cannot read goes to rmcp.
    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        if self.any_host {
            return true;
        }
        let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else { return false };
        let Ok(host) = host.parse::<http::uri::Authority>() else { return false };
        self.allowed_hosts.iter().any(|allowed| {
            allowed.host().eq_ignore_ascii_case(host.host())
                && allowed.port_u16().is_none_or(|port| host.port_u16() == Some(port))
        })
    }

    /// The request id and the serialised page when `body` is a plain `tools/list` request
    /// with no cursor or a cursor this server issued.
    fn page(&self, body: &[u8]) -> Option<(Value, &Bytes)> {
        let request: ListRequest<'_> = serde_json::from_slice(body).ok()?;
        // rmcp takes a string or an i64 as a request id; anything else goes to rmcp to refuse.
        let id_ok = request.id.is_string() || request.id.is_i64();
        if request.jsonrpc != "2.0" || request.method != "tools/list" || !id_ok {
            return None;
        }
        let cursor = request.params.and_then(|p| p.cursor);
        let index = self.server.tool_pages.index(cursor.as_deref())?;
        Some((request.id, &self.pages()[index]))
    }

    fn pages(&self) -> &[Bytes] {
        self.pages.get_or_init(|| {
            (0..self.server.tool_pages.len())
                .map(|index| {
                    let (tools, next_cursor) = self.server.tool_pages.at(index);
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

fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<page>}` as an `application/json` response.
fn json_response(id: &Value, page: &Bytes) -> Response {
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
