//! HTTP 413 answers: a JSON-RPC error body, not rmcp's plain text.
//!
//! - rmcp 3.11: a POST body over the limit (`HttpOptions::max_body_bytes`) gets 413 with the
//!   `text/plain` body `Payload Too Large: request body exceeds <n> bytes`; charly's own reads
//!   before rmcp (`request_ids_http`, `open_sessions`: a body without `Content-Length`) answer
//!   the same.
//! - Spec: 2025-11-25, "Sending Messages to the Server": input the server cannot accept gets
//!   an HTTP error status and may carry a JSON-RPC error response with no id; JSON-RPC 2.0,
//!   section 5: when the id cannot be detected (the body was never read) it is `null`. Every
//!   other refusal of this server is a JSON-RPC error body; a client reading the 413's body as
//!   JSON now reads what went wrong. Over stdio a line over the limit gets the same error
//!   (-32600), with the id when its first 4 KiB show it, `null` otherwise
//!   (`stdio_transport`).
//! - Test: `tests/test_http.rs`, `bodies_over_the_limit_are_refused` (rmcp's 413, with and
//!   without `Content-Length`, stateful and stateless).

use axum::response::{IntoResponse as _, Response};
use http::{HeaderValue, StatusCode, header};

/// `response`, or, when it is a 413 whose body is not JSON, the same 413 with a JSON-RPC error
/// body (`"id": null`, -32600) that names the limit when rmcp's text gave it.
pub(super) async fn correct(response: Response) -> Response {
    if response.status() != StatusCode::PAYLOAD_TOO_LARGE
        || response
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/json"))
    {
        return response;
    }
    let (_, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let limit = String::from_utf8_lossy(&text)
        .split_whitespace()
        .filter_map(|word| word.parse::<usize>().ok())
        .next();
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body_for(limit),
    )
        .into_response()
}

/// The JSON-RPC error for a request over `limit` bytes (unknown: `None`), with `"id": null`.
pub(crate) fn body_for(limit: Option<usize>) -> String {
    let message = match limit {
        Some(n) if n % (1 << 20) == 0 => {
            format!(
                "invalid request: the body is larger than {} MiB ({n} bytes), the most one message may be",
                n >> 20
            )
        }
        Some(n) => format!("invalid request: the body is larger than {n} bytes, the most one message may be"),
        None => "invalid request: the body is larger than the most one message may be".to_owned(),
    };
    serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message": message}})
        .to_string()
}
