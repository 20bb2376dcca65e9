//! The bookkeeping the session workarounds share: rmcp's [`LocalSessionManager`] (inside
//! [`ReplicaSessions`], which may prefix the ids it mints), a way to
//! reach a session's worker, and each session's deletion token.
//!
//! It corrects nothing itself; `keep_alive`, `session_end`, `delete`, `ended_session`,
//! `priming` and `open_sessions` use it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use axum::response::{IntoResponse as _, Response};
use http::{HeaderMap, StatusCode};
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

use crate::server::replica::ReplicaSessions;

/// The sessions of one HTTP endpoint.
pub(crate) struct Sessions {
    manager: Arc<ReplicaSessions>,
    /// Most sessions open at once (`HttpOptions::max_sessions`); `None`: no cap.
    pub(super) max: Option<usize>,
    /// How often a session in use is touched: half the idle timeout; `None` without one.
    pub(super) every: Option<Duration>,
    /// The deletion token of each session that has run a tool call, by session id (see
    /// `session_end`).
    pub(super) deletions: Mutex<HashMap<String, CancellationToken>>,
    /// Whether each session gets SSE priming events (see `priming`).
    pub(super) primes: super::priming::Primes,
}

impl Sessions {
    /// Sessions closed after `idle_timeout` without an event (`None`: never), their ids
    /// prefixed with `id_prefix` and a dot when there is one, at most `max` open at once
    /// (`None`: no cap; see `open_sessions`).
    pub(crate) fn new(
        idle_timeout: Option<Duration>,
        id_prefix: Option<&str>,
        max: Option<usize>,
    ) -> Arc<Sessions> {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = idle_timeout;
        Arc::new(Sessions {
            manager: Arc::new(ReplicaSessions::new(manager, id_prefix, max)),
            max,
            every: idle_timeout.map(|t| t / 2),
            deletions: Mutex::default(),
            primes: Mutex::default(),
        })
    }

    /// rmcp's session manager, for the rmcp service.
    pub(crate) fn manager(&self) -> Arc<ReplicaSessions> {
        self.manager.clone()
    }

    /// Whether the session named in `headers` (`Mcp-Session-Id`) is in rmcp's session map.
    pub(super) async fn has(&self, headers: &HeaderMap) -> bool {
        let Some(id) = session_id(headers) else { return false };
        self.manager.has_session(&id.to_owned().into()).await.unwrap_or(false)
    }

    /// Whether session `id`'s worker is running, restarting its idle timer if so.
    ///
    /// rmcp's session worker restarts its idle timer on every event it receives; the cheapest
    /// public one is closing a request-wise channel. Channel ids count up from 0 per session,
    /// so `u64::MAX` names none and the close changes nothing. The worker's answer also shows
    /// it is still running, which a lookup in the session map does not.
    pub(super) async fn touch(&self, id: &str) -> bool {
        let handle = self.manager.local.sessions.read().await.get(id).cloned();
        match handle {
            Some(handle) => handle.close_request_wise_channel(u64::MAX).await.is_ok(),
            None => false,
        }
    }
}

/// What a session's tool calls need from the endpoint: keeping the session alive while they
/// run (`keep_alive`) and learning that it was deleted (`session_end`). The endpoint gives a
/// new one to every session handler it makes.
#[derive(Clone)]
pub(crate) struct SessionKeeper {
    pub(super) sessions: Arc<Sessions>,
    pub(super) deletion: Arc<Deletion>,
}

impl SessionKeeper {
    /// The keeper of one new session of `sessions`.
    pub(crate) fn new(sessions: &Arc<Sessions>) -> SessionKeeper {
        SessionKeeper { sessions: sessions.clone(), deletion: Arc::new(Deletion::new(sessions)) }
    }
}

/// One session's deletion token; [`Sessions::end`] cancels it.
pub(super) struct Deletion {
    sessions: Arc<Sessions>,
    pub(super) token: CancellationToken,
    /// The session id, known from the session's first tool call on.
    pub(super) id: OnceLock<String>,
}

impl Deletion {
    fn new(sessions: &Arc<Sessions>) -> Deletion {
        Deletion { sessions: sessions.clone(), token: CancellationToken::new(), id: OnceLock::new() }
    }
}

impl Drop for Deletion {
    fn drop(&mut self) {
        if let Some(id) = self.id.get() {
            self.sessions.deletions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        }
    }
}

/// The `Mcp-Session-Id` header's value.
pub(super) fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get("mcp-session-id").and_then(|v| v.to_str().ok())
}

/// rmcp's own answer for a session it does not know.
pub(super) fn session_not_found() -> Response {
    (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()
}
