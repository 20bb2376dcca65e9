//! A call stops when its session ends, not when rmcp's drain is over.
//!
//! - rmcp 3.11: ending a session (an HTTP DELETE; stdin at its end) does not cancel the
//!   requests still running in it: rmcp's serve loop first drains them for up to 5 s, and
//!   marks the transport closed only after. A deleted session's tool calls, child processes
//!   included, run on for those seconds with nobody to answer.
//! - Spec: 2025-11-25, "Session Management": a DELETE ends the session; its requests can no
//!   longer be answered.
//! - Test: `tests/test_compat.rs`, `deleting_a_session_cancels_its_running_call`.
//!
//! The endpoint calls [`Sessions::end`] when a DELETE succeeds; a running call waits on
//! [`SessionWatch::ended`], which resolves at once. Each session's deletion token is
//! registered under the session id on its first tool call (the handler is made before the id
//! is known) and unregistered when the handler is dropped.

#[cfg(feature = "http")]
use std::sync::{Arc, OnceLock, PoisonError};

use rmcp::RoleServer;
use rmcp::service::RequestContext;
#[cfg(feature = "http")]
use tokio_util::sync::CancellationToken;

#[cfg(feature = "http")]
use super::sessions::{SessionKeeper, Sessions, session_id};

/// What a session handler watches while a call runs: over stateful HTTP, its session's
/// deletion (and it keeps the session alive meanwhile); on every transport, the transport
/// closing.
#[derive(Clone, Default)]
pub(crate) struct SessionWatch {
    #[cfg(feature = "http")]
    keeper: Option<SessionKeeper>,
}

impl SessionWatch {
    /// The watch of a stateful HTTP session, kept by `keeper`.
    #[cfg(feature = "http")]
    pub(crate) fn http(keeper: SessionKeeper) -> SessionWatch {
        SessionWatch { keeper: Some(keeper) }
    }

    /// Resolves once the call's session has ended: its HTTP session deleted (at once), or its
    /// transport closed (rmcp closes a deleted session's transport only after a drain).
    pub(crate) async fn ended(&self, context: &RequestContext<RoleServer>) {
        tokio::select! {
            () = self.deleted(context) => {}
            () = self.transport_closed(context) => {}
        }
    }

    /// Resolves once the session's transport is closed. rmcp ends a session (a DELETE, stdin at
    /// its end) without cancelling the requests still running, and offers only a flag to poll.
    async fn transport_closed(&self, context: &RequestContext<RoleServer>) {
        let mut touched = std::time::Instant::now();
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            if context.peer.is_transport_closed() {
                return;
            }
            self.keep_alive(context, &mut touched).await;
        }
    }

    /// An HTTP session with a call in flight is not idle: touches it every half idle timeout
    /// (see `keep_alive`).
    #[cfg(feature = "http")]
    async fn keep_alive(&self, context: &RequestContext<RoleServer>, touched: &mut std::time::Instant) {
        let Some(keeper) = &self.keeper else { return };
        if let Some(id) = http_session_id(context) {
            keeper.touch_if_due(id, touched).await;
        }
    }

    #[cfg(not(feature = "http"))]
    async fn keep_alive(&self, _: &RequestContext<RoleServer>, _: &mut std::time::Instant) {}

    /// Resolves when the call's HTTP session is deleted; never for other transports.
    #[cfg(feature = "http")]
    async fn deleted(&self, context: &RequestContext<RoleServer>) {
        match (&self.keeper, http_session_id(context)) {
            (Some(keeper), Some(id)) => keeper.deleted(id).await,
            _ => std::future::pending().await,
        }
    }

    #[cfg(not(feature = "http"))]
    async fn deleted(&self, _: &RequestContext<RoleServer>) {
        std::future::pending().await
    }
}

/// The `Mcp-Session-Id` of the HTTP request a call came with.
#[cfg(feature = "http")]
fn http_session_id(context: &RequestContext<RoleServer>) -> Option<&str> {
    context.extensions.get::<http::request::Parts>().and_then(|parts| session_id(&parts.headers))
}

/// One session's deletion token; [`Sessions::end`] cancels it.
#[cfg(feature = "http")]
pub(super) struct Deletion {
    sessions: Arc<Sessions>,
    token: CancellationToken,
    id: OnceLock<String>,
}

#[cfg(feature = "http")]
impl Deletion {
    pub(super) fn new(sessions: &Arc<Sessions>) -> Deletion {
        Deletion { sessions: sessions.clone(), token: CancellationToken::new(), id: OnceLock::new() }
    }
}

#[cfg(feature = "http")]
impl Drop for Deletion {
    fn drop(&mut self) {
        if let Some(id) = self.id.get() {
            self.sessions.deletions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        }
    }
}

#[cfg(feature = "http")]
impl Sessions {
    /// Session `id` was deleted: its running tool calls stop now, not when rmcp's drain ends.
    pub(super) fn end(&self, id: &str) {
        let token = self.deletions.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        if let Some(token) = token {
            token.cancel();
        }
    }
}

#[cfg(feature = "http")]
impl SessionKeeper {
    /// Resolves when session `id` (this keeper's) is deleted.
    async fn deleted(&self, id: &str) {
        let deletion = &self.deletion;
        deletion.id.get_or_init(|| {
            let mut deletions = self.sessions.deletions.lock().unwrap_or_else(PoisonError::into_inner);
            deletions.insert(id.to_owned(), deletion.token.clone());
            id.to_owned()
        });
        deletion.token.cancelled().await;
    }
}
