//! Wildcard or missing `Accept` headers, spelled out before rmcp reads them.
//!
//! - rmcp 3.11: a POST must list both `application/json` and `text/event-stream` in `Accept`
//!   (a GET `text/event-stream`), or it gets 406; `*/*` and a missing header count as neither.
//! - Spec: 2025-11-25, "Sending Messages to the Server" asks clients to list both types; RFC
//!   9110, section 12.5.1, says `*/*` and a missing `Accept` accept any type. Clients built on
//!   generic HTTP libraries send one of those.
//! - Test: `tests/test_compat/http.rs`, `wildcard_or_missing_accept`.

use axum::extract::Request;
use http::{HeaderValue, header};

/// Rewrites a wildcard (`*/*`) or missing `Accept` to the explicit types the transport asks
/// for. An explicit, narrower header is left alone, for rmcp to judge.
pub(super) fn normalize_accept(request: &mut Request) {
    let mut accept = request.headers().get_all(header::ACCEPT).iter().peekable();
    let wildcard = accept.peek().is_none()
        || accept.filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(|item| {
            let essence = item.split(';').next().unwrap_or_default().trim();
            essence == "*/*"
        });
    if wildcard {
        let explicit = match *request.method() {
            http::Method::GET => "text/event-stream",
            _ => "application/json, text/event-stream",
        };
        request.headers_mut().insert(header::ACCEPT, HeaderValue::from_static(explicit));
    }
}
