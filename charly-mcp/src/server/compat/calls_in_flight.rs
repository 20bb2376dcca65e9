//! A cap on a session's requests in flight: past it, a request's POST gets 503 with
//! `Retry-After` and a JSON-RPC error carrying its id, not a task of its own.
//!
//! - rmcp 3.11: a session's worker hands every request to the service loop, which spawns a
//!   task for each at once, with no limit: one session with thousands of slow `tools/call`s
//!   POSTed in parallel holds thousands of tasks (and their child processes).
//! - Spec: 2025-11-25, "Sending Messages to the Server" lets the server answer a POST with an
//!   HTTP error; RFC 9110, section 15.6.4: 503 with `Retry-After` (section 10.2.3). The
//!   JSON-RPC error in the body (JSON-RPC 2.0, section 5.1: -32000 to -32099 are the
//!   server's own) tells a client that reads it which request was refused.
//! - Test: `tests/test_compat/limits.rs`, `requests_past_the_per_session_cap`.
//!
//! `request_ids_http` already keeps each session's requests in flight, from the POST to the
//! end of its answer; [`InFlight::admit`](super::request_ids_http) refuses a request when the
//! session has `max` of them. Every request counts (`ping` and `tools/list` as much as
//! `tools/call`); notifications and responses never do, so a client at the cap can still
//! cancel (`notifications/cancelled`) what runs. Bodies without `Content-Length` are read
//! too (up to the body limit), so chunked POSTs cannot go around the cap.

use axum::response::{IntoResponse as _, Response};
use http::{HeaderValue, StatusCode, header};
use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcVersion2_0, RequestId};

/// `Retry-After` of a refused request, in seconds: requests are expected to be short.
const CALL_RETRY_AFTER_SECS: u32 = 1;

/// The JSON-RPC error code of a refused request (implementation-defined server error).
const BUSY: ErrorCode = ErrorCode(-32000);

/// The 503 answering request `id` of a session that already has `max` requests in flight.
pub(super) fn refusal(id: &RequestId, max: usize) -> Response {
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
