//! Stateful Streamable HTTP sessions: rmcp's [`LocalSessionManager`], kept alive while they
//! are in use.
//!
//! rmcp closes a session whose worker has received no event for its keep-alive
//! (`HttpOptions::session_idle_timeout`). A request rmcp serves is such an event; but a tool
//! call still running, an open GET stream and an answer from the `tools/list` cache are not,
//! so on their own rmcp would close a session in the middle of a long call (its result lost),
//! or under a client waiting on the GET stream for resource updates. [`Sessions::touch`] sends
//! the worker a no-op event; the tool-call handler ([`SessionKeeper`]), the GET stream
//! ([`Sessions::keep_open`]) and the cache use it. Other requests are expected to be short and
//! do not keep their session.
//!
//! rmcp also ends a deleted session without cancelling the tool calls still running in it,
//! and marks its transport closed only after a drain of about 5 s. [`Sessions::end`], called
//! when a DELETE succeeds, cancels the session's [`SessionKeeper::deleted`] token at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use axum::body::Body;
use futures::StreamExt as _;
use http::HeaderMap;
use rmcp::transport::streamable_http_server::session::SessionManager as _;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

/// The sessions of one HTTP endpoint.
pub(crate) struct Sessions {
    manager: Arc<LocalSessionManager>,
    /// How often a session in use is touched: half the idle timeout; `None` without one.
    every: Option<Duration>,
    /// The deletion token of each session that has run a tool call, by session id; an entry
    /// leaves with its session's handler ([`Deletion`]'s drop) or when [`Sessions::end`]
    /// cancels it.
    deletions: Mutex<HashMap<String, CancellationToken>>,
}

impl Sessions {
    /// Sessions closed after `idle_timeout` without an event (`None`: never).
    pub(crate) fn new(idle_timeout: Option<Duration>) -> Arc<Sessions> {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = idle_timeout;
        Arc::new(Sessions {
            manager: Arc::new(manager),
            every: idle_timeout.map(|t| t / 2),
            deletions: Mutex::default(),
        })
    }

    /// Session `id` was deleted: its running tool calls stop now, not when rmcp's drain ends.
    pub(crate) fn end(&self, id: &str) {
        let token = self.deletions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        if let Some(token) = token {
            token.cancel();
        }
    }

    /// rmcp's session manager, for the rmcp service.
    pub(crate) fn manager(&self) -> Arc<LocalSessionManager> {
        self.manager.clone()
    }

    /// Whether the session named in `headers` (`Mcp-Session-Id`) is in rmcp's session map.
    pub(crate) async fn has(&self, headers: &HeaderMap) -> bool {
        let Some(id) = session_id(headers) else { return false };
        self.manager.has_session(&id.to_owned().into()).await.unwrap_or(false)
    }

    /// Whether session `id` is live, restarting its idle timer if so.
    ///
    /// rmcp's session worker restarts its idle timer on every event it receives; the cheapest
    /// public one is closing a request-wise channel. Channel ids count up from 0 per session,
    /// so `u64::MAX` names none and the close changes nothing. The worker's answer also shows
    /// it is still running, which a lookup in the session map does not.
    pub(crate) async fn touch(&self, id: &str) -> bool {
        let handle = self.manager.sessions.read().await.get(id).cloned();
        match handle {
            Some(handle) => handle.close_request_wise_channel(u64::MAX).await.is_ok(),
            None => false,
        }
    }

    /// `body` (a GET stream of session `id`), touching the session while it is open.
    pub(crate) fn keep_open(self: &Arc<Self>, id: &str, body: Body) -> Body {
        let Some(every) = self.every else { return body };
        let (sessions, id) = (self.clone(), id.to_owned());
        let open = tokio_util::sync::CancellationToken::new();
        let closed = open.clone().drop_guard();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = open.cancelled() => break,
                    () = tokio::time::sleep(every) => {
                        if !sessions.touch(&id).await {
                            break;
                        }
                    }
                }
            }
        });
        // The guard lives as long as the stream: dropping the body ends the touching.
        Body::from_stream(body.into_data_stream().map(move |frame| {
            let _open = &closed;
            frame
        }))
    }
}

/// What a session's tool calls need from the endpoint: keeping the session alive while they
/// run, and learning that it was deleted. The endpoint gives a new one to every session
/// handler it makes.
#[derive(Clone)]
pub(crate) struct SessionKeeper {
    sessions: Arc<Sessions>,
    deletion: Arc<Deletion>,
}

/// One session's deletion token, registered under the session id on its first tool call (the
/// handler is made before the id is known) and unregistered when the handler is dropped.
struct Deletion {
    sessions: Arc<Sessions>,
    token: CancellationToken,
    id: OnceLock<String>,
}

impl Drop for Deletion {
    fn drop(&mut self) {
        if let Some(id) = self.id.get() {
            self.sessions.deletions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        }
    }
}

impl SessionKeeper {
    /// The keeper of one new session of `sessions`.
    pub(crate) fn new(sessions: &Arc<Sessions>) -> SessionKeeper {
        let deletion =
            Deletion { sessions: sessions.clone(), token: CancellationToken::new(), id: OnceLock::new() };
        SessionKeeper { sessions: sessions.clone(), deletion: Arc::new(deletion) }
    }

    /// Touches session `id` if half the idle timeout has passed since `last`, and then
    /// restarts `last`.
    pub(crate) async fn touch_if_due(&self, id: &str, last: &mut Instant) {
        if self.sessions.every.is_some_and(|every| last.elapsed() >= every) {
            self.sessions.touch(id).await;
            *last = Instant::now();
        }
    }

    /// Resolves when session `id` (this keeper's) is deleted.
    pub(crate) async fn deleted(&self, id: &str) {
        let deletion = &self.deletion;
        deletion.id.get_or_init(|| {
            let mut deletions = self.sessions.deletions.lock().unwrap_or_else(PoisonError::into_inner);
            deletions.insert(id.to_owned(), deletion.token.clone());
            id.to_owned()
        });
        deletion.token.cancelled().await;
    }
}

/// The `Mcp-Session-Id` header's value.
pub(crate) fn session_id(headers: &HeaderMap) -> Option<&str> {
    headers.get("mcp-session-id").and_then(|v| v.to_str().ok())
}
