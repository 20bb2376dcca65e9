//! Header-mismatch errors (-32020) that quote a huge header back: cut to a readable length.
//!
//! - rmcp 3.11: a 2026-07-28 request whose `Mcp-Name` (or `Mcp-Method`, `Mcp-Param-*`) header
//!   does not match its body gets 400 with -32020 and a message quoting the header value
//!   whole, however long (a 5,000-byte `Mcp-Name` comes back as a 5,000-byte message).
//! - Spec: JSON-RPC 2.0, section 5.1: the message "SHOULD be limited to a concise single
//!   sentence"; 2026-07-28, SEP-2243 (standard headers): a mismatch is -32020.
//! - charly: the message is cut to [`MAX_MESSAGE`] characters, with `…`; code, id and data
//!   stay as rmcp sent them.
//! - Test: `tests/test_compat/http.rs`, `a_huge_mismatched_header_is_not_echoed_whole`.

use axum::response::Response;
use http::{HeaderValue, StatusCode, header};

/// The most characters of a -32020 message sent back: 300.
pub(super) const MAX_MESSAGE: usize = 300;

/// `response`, with the message of a -32020 error cut to [`MAX_MESSAGE`] characters. Any
/// other answer passes unchanged (only a 400 with a JSON body is read).
pub(super) async fn long_header(response: Response) -> Response {
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if response.status() != StatusCode::BAD_REQUEST || !is_json {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 1024 * 1024).await else {
        return Response::from_parts(parts, axum::body::Body::empty());
    };
    let Ok(mut error) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    };
    let text = error["error"]["message"].as_str().unwrap_or_default().to_owned();
    if error["error"]["code"] != -32020 || text.chars().count() <= MAX_MESSAGE {
        return Response::from_parts(parts, axum::body::Body::from(bytes));
    }
    let cut: String = text.chars().take(MAX_MESSAGE).collect();
    error["error"]["message"] =
        serde_json::Value::String(format!("{cut}… ({} characters in all)", text.chars().count()));
    let body = error.to_string();
    parts.headers.insert(header::CONTENT_LENGTH, HeaderValue::from(body.len()));
    Response::from_parts(parts, axum::body::Body::from(body))
}
