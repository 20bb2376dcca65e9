//! An ended session gets 404, not rmcp's 500, while its last request finishes.
//!
//! - rmcp 3.11: a session whose worker has ended (idle timeout) stays in rmcp's session map
//!   until every request of it has finished; meanwhile its requests get 500 (`Encounter an
//!   error when get session` / `accept message`).
//! - Spec: 2025-11-25, "Session Management": a request with an ended session id gets 404, on
//!   which the client starts a new session; a 500 leaves it retrying a dead one.
//! - Test: `tests/test_compat/http.rs`, `an_ended_session_whose_last_request_is_finishing`.

use axum::response::Response;
use http::StatusCode;

use super::sessions::{Sessions, session_not_found};

/// rmcp's answer to a request of session `id`, corrected: a 500 becomes 404 when the
/// session's worker is no longer running. Any other answer passes unchanged.
pub(super) async fn correct(response: Response, id: Option<&str>, sessions: &Sessions) -> Response {
    match id {
        Some(id) if response.status() == StatusCode::INTERNAL_SERVER_ERROR && !sessions.touch(id).await => {
            session_not_found()
        }
        _ => response,
    }
}
