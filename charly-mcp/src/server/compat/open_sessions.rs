//! A cap on open sessions: past it, `initialize` gets 503 with `Retry-After`, not a session.
//!
//! - rmcp 3.11: every `initialize` POST opens a session (a worker task, its channels, an entry
//!   in `LocalSessionManager::sessions`), with no limit. A client that opens sessions and
//!   never deletes them grows the server until the idle timeout closes them (5 minutes by
//!   default, never without one).
//! - Spec: 2025-11-25, "Session Management" sets no limit; RFC 9110, section 15.6.4: 503 says
//!   the server is overloaded for now, and `Retry-After` (section 10.2.3) when to try again.
//! - Test: `tests/test_compat/limits.rs`, `sessions_past_the_cap`; RSS figures from
//!   `examples/session_flood.rs`.
//!
//! [`Sessions::refuse_initialize`] answers an `initialize` POST with 503 while `max` sessions
//! are in rmcp's session map, before rmcp (and its error log) sees it. The cap is exact all
//! the same: `ReplicaSessions::create_session` checks it again under the map's
//! write lock, so concurrent `initialize`s cannot overshoot; rmcp answers that refusal with
//! 500 (`Encounter an error when create session: ...`), which [`correct`] turns into the same
//! 503. A slot is free as soon as rmcp removes the session from its map: on DELETE, when it
//! idles out (`HttpOptions::session_idle_timeout`, which also closes sessions whose client
//! never sent `notifications/initialized`: rmcp's idle timer runs from the `initialize`
//! answer on), or at shutdown.

use std::borrow::Cow;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse as _, Response};
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManagerError, SessionError};
use serde::Deserialize;

use super::sessions::{Sessions, session_id};

/// `Retry-After` of a refused `initialize`, in seconds: slots free up as clients delete their
/// sessions or these idle out, neither of which the server can foresee.
const SESSION_RETRY_AFTER_SECS: u32 = 5;

/// What `ReplicaSessions::create_session` returns at the cap; rmcp puts it in its 500.
const MARK: &str = "charly: the session cap is reached";

/// The error `ReplicaSessions::create_session` returns when the cap is reached.
pub(crate) fn at_session_cap() -> LocalSessionManagerError {
    LocalSessionManagerError::SessionError(SessionError::Io(std::io::Error::other(MARK)))
}

/// What [`Sessions::refuse_initialize`] reads of a body.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
}

impl Sessions {
    /// `request`, or the 503 answering it when it is an `initialize` (a POST without
    /// `Mcp-Session-Id` whose method is `initialize`: in stateful mode the only request that
    /// opens a session) and the cap is reached. The body is read (up to `max_body` bytes) only
    /// then; sessionless requests of 2026-07-28, which open nothing, pass.
    pub(super) async fn refuse_initialize(
        &self,
        request: Request,
        max_body: usize,
    ) -> Result<Request, Response> {
        let Some(max) = self.max else { return Ok(request) };
        if request.method() != Method::POST || session_id(request.headers()).is_some() {
            return Ok(request);
        }
        if self.manager().local.sessions.read().await.len() < max {
            return Ok(request);
        }
        let length = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if length.is_some_and(|n| n > max_body) {
            return Ok(request); // rmcp answers 413
        }
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, max_body).await else {
            // Past the limit without Content-Length, or a broken connection.
            let text = format!("Payload Too Large: request body exceeds {max_body} bytes");
            return Err((StatusCode::PAYLOAD_TOO_LARGE, text).into_response());
        };
        let initialize = serde_json::from_slice::<Head<'_>>(&bytes)
            .is_ok_and(|head| head.method.as_deref() == Some("initialize"));
        if initialize {
            return Err(full(max));
        }
        Ok(Request::from_parts(parts, Body::from(bytes)))
    }
}

/// rmcp's answer to a POST without a session id, corrected: its 500 for a session
/// `ReplicaSessions` refused at the cap becomes the 503 of [`Sessions::refuse_initialize`].
pub(super) async fn correct(response: Response, sessions: &Sessions) -> Response {
    let Some(max) = sessions.max else { return response };
    if response.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return response;
    }
    let (parts, body) = response.into_parts();
    // rmcp's 500s are short texts.
    let bytes = axum::body::to_bytes(body, 64 * 1024).await.unwrap_or_default();
    if memchr::memmem::find(&bytes, MARK.as_bytes()).is_some() {
        return full(max);
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// 503 with `Retry-After` and a text naming the cap.
fn full(max: usize) -> Response {
    tracing::debug!(max, "refusing a new session: the session cap is reached");
    let text = format!(
        "Service Unavailable: {max} sessions are open, the most this server keeps (HttpOptions::max_sessions, \
         `charly mcp serve --max-sessions`); retry later, and delete sessions you no longer use\n"
    );
    let mut response = (StatusCode::SERVICE_UNAVAILABLE, text).into_response();
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(SESSION_RETRY_AFTER_SECS));
    response
}
