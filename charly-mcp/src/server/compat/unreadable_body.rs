//! POST bodies rmcp cannot read as JSON-RPC: 400 with a JSON-RPC error, not rmcp's 415.
//!
//! - rmcp 3.11: a body that is not JSON, or JSON that is no JSON-RPC message, gets 415 and the
//!   plain-text reason `fail to deserialize request body <serde's reason>`. This correction
//!   recognises rmcp's answer by that text (rmcp offers nothing else to tell it from the 415
//!   for a wrong `Content-Type`).
//! - Spec: 2025-11-25, "Sending Messages to the Server": input the server cannot accept gets
//!   an HTTP error status such as 400, and may carry a JSON-RPC error without an id; JSON-RPC
//!   2.0, section 5.1: -32700 for a body that is not JSON, -32600 for one that is no request.
//!   The error carries the request's id when the body was read before rmcp (a stateful
//!   session's POST, `request_ids_http`) and the id can be read from it (as over stdio,
//!   `unreadable_line`), and `"id": null` otherwise (JSON-RPC 2.0, section 5).
//! - Test: `tests/test_compat/http.rs`, `unreadable_bodies` (it also pins rmcp's text).

use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode, header};

/// The start of rmcp's reason, after which serde's follows.
const REASON: &str = "fail to deserialize request body ";

/// `response`, or, when it is rmcp's 415 for an unreadable body, the 400 with a JSON-RPC
/// error that replaces it, with the id read from `request_body` when there is one. Any other answer,
/// a 415 for a wrong `Content-Type` included, passes unchanged.
pub(super) async fn unreadable_body(response: Response, request_body: Option<&[u8]>) -> Response {
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return response;
    }
    let (parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 64 * 1024).await else {
        return Response::from_parts(parts, axum::body::Body::empty());
    };
    let text = String::from_utf8_lossy(&bytes);
    let Some(reason) = text.strip_prefix(REASON) else {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    };
    let (code, message) = if reason.starts_with("unrecognized JSON-RPC message") {
        (-32600, "invalid request: the body is JSON but not a JSON-RPC request, notification or response")
    } else {
        (-32700, "parse error: the body is not valid JSON")
    };
    // JSON-RPC 2.0, section 5: an id that cannot be read is `null`, not left out.
    let mut error = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": code, "message": format!("{message} ({})", reason.trim())},
    });
    if let Some(id) =
        request_body.and_then(|b| super::unreadable_line::leading_id(&String::from_utf8_lossy(b)))
    {
        error["id"] = serde_json::to_value(id).expect("an id serialises");
    }
    let json = [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
    (StatusCode::BAD_REQUEST, json, error.to_string()).into_response()
}
