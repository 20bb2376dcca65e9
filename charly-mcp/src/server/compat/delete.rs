//! The status of a DELETE: 200 for a live session, 404 for an unknown one, not rmcp's 202.
//!
//! - rmcp 3.11: a DELETE of any session id, live, ended or never issued, gets 202. Clients
//!   such as the Python SDK take only 200 and 204 as success, and a foreign id that gets 202
//!   looks like a session that was there.
//! - Spec: 2025-11-25, "Session Management": a request with a session id the server does not
//!   know (ended or never issued) gets 404; a DELETE ends a live session.
//! - Test: `tests/test_compat/http.rs`, `delete_status`; `tests/test_list_http.rs` checks that
//!   rmcp's Host check still comes first.
//!
//! Whether the session was live is noted before rmcp runs (rmcp removes it), and the answer
//! is corrected after, so rmcp's own Host, Origin and version checks answer first: a foreign
//! site cannot probe session ids.

use axum::response::Response;
use http::{HeaderMap, StatusCode};

use super::sessions::{Sessions, session_not_found};

/// Whether the session a DELETE names is live, asked before rmcp deletes it.
pub(super) async fn was_live(sessions: &Sessions, headers: &HeaderMap) -> bool {
    sessions.has(headers).await
}

/// rmcp's answer to a DELETE, corrected: its 202 becomes 200 when the session `was_live`
/// and 404 when not. Any other answer (rmcp's refusals) passes unchanged.
pub(super) fn correct(mut response: Response, was_live: bool) -> Response {
    match (response.status(), was_live) {
        (StatusCode::ACCEPTED, true) => *response.status_mut() = StatusCode::OK,
        (StatusCode::ACCEPTED, false) => response = session_not_found(),
        _ => {}
    }
    response
}
