//! A cap on a session's requests in flight: past it, a request gets a JSON-RPC error carrying
//! its id (over HTTP, in a 503 with `Retry-After`), not a task of its own.
//!
//! - rmcp 3.11: the service loop spawns a task for every request at once, with no limit, on
//!   every transport: one session with thousands of slow `tools/call`s sent in parallel (POSTs
//!   over Streamable HTTP, lines over stdio) holds thousands of tasks (and their child
//!   processes).
//! - Spec: 2025-11-25, "Sending Messages to the Server" lets the server answer a POST with an
//!   HTTP error; RFC 9110, section 15.6.4: 503 with `Retry-After` (section 10.2.3). The
//!   JSON-RPC error (JSON-RPC 2.0, section 5.1: -32000 to -32099 are the server's own; the
//!   request is valid, so not -32600, and nothing failed inside, so not -32603) tells a client
//!   which request was refused. stdio has no status or header: the error alone answers there,
//!   with the same code and data, so a client handles both transports alike.
//! - Test: `tests/test_compat/limits.rs`, `requests_past_the_per_session_cap` (HTTP);
//!   `tests/test_compat/stdio.rs`, `requests_past_the_cap_over_stdio`.
//!
//! `request_ids_http` already keeps each session's requests in flight, from the POST to the
//! end of its answer; [`InFlight::admit`](super::request_ids_http) refuses a request when the
//! session has `max` of them. Over stdio `stdio_transport` does the same with its
//! [`RequestIds`](super::request_ids::RequestIds), from the line read to its answer written.
//! Every request counts (`ping` and `tools/list` as much as `tools/call`); notifications and
//! responses never do, so a client at the cap can still cancel (`notifications/cancelled`)
//! what runs. Bodies without `Content-Length` are read too (up to the body limit), so chunked
//! POSTs cannot go around the cap. Over stdio a cancelled request leaves the count at once
//! (its id may be reused); its handler sees the cancellation, and rmcp drops its late answer.

use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcVersion2_0, RequestId};

/// `Retry-After` of a refused request, in seconds: requests are expected to be short.
#[cfg(feature = "http")]
const CALL_RETRY_AFTER_SECS: u32 = 1;

/// The JSON-RPC error code of a refused request (implementation-defined server error).
const BUSY: ErrorCode = ErrorCode(-32000);

/// The -32000 answering request `id` of a stdio session that already has `max` requests in
/// flight: `server busy: N requests in flight`, with `{"maxInFlight": N}` as its data.
pub(super) fn busy(id: &RequestId, max: usize) -> JsonRpcError {
    tracing::debug!(%id, max, "refusing a request: its session has the most requests in flight");
    let message = format!(
        "server busy: {max} requests in flight in this session, the most the server runs at once \
         (StdioOptions::max_requests_per_session, `charly mcp serve --max-requests-per-session`); \
         send it again when one is answered"
    );
    let data = serde_json::json!({ "maxInFlight": max });
    JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id: Some(id.clone()),
        error: ErrorData::new(BUSY, message, Some(data)),
    }
}

/// The 503 answering request `id` of a session that already has `max` requests in flight.
#[cfg(feature = "http")]
pub(super) fn refusal(id: &RequestId, max: usize) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    use http::{HeaderValue, StatusCode, header};

    tracing::debug!(%id, max, "refusing a request: its session has the most requests in flight");
    let message = format!(
        "server busy: this session already has {max} requests in flight, the most the server runs at once \
         (HttpOptions::max_requests_per_session, `charly mcp serve --max-requests-per-session`); \
         retry after {CALL_RETRY_AFTER_SECS} s or when one finishes"
    );
    let data = serde_json::json!({ "retryAfterSeconds": CALL_RETRY_AFTER_SECS, "maxInFlight": max });
    let error = JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id: Some(id.clone()),
        error: ErrorData::new(BUSY, message, Some(data)),
    };
    let body = serde_json::to_string(&error).expect("a JSON-RPC error serialises");
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(header::RETRY_AFTER, HeaderValue::from(CALL_RETRY_AFTER_SECS));
    response
}
