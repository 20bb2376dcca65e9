//! A call stops when its HTTP session is deleted, not when rmcp's drain is over.
//!
//! - rmcp 3.11: ending a session does not cancel the requests still running in it: rmcp's
//!   serve loop first drains them for up to 5 s, and cancels them only then. After a DELETE a
//!   session's tool calls, child processes included, run on for those seconds with nobody to
//!   answer.
//! - Spec: 2025-11-25, "Session Management": a DELETE ends the session; its requests can no
//!   longer be answered.
//! - Test: `tests/test_compat/http.rs`, `deleting_a_session_cancels_its_running_call`.
//!
//! The endpoint calls [`Sessions::end`] when a DELETE succeeds; a running call waits on
//! [`SessionWatch::ended`], which then resolves at once. Each session's deletion token is
//! registered under the session id on its first tool call (the handler is made before the id
//! is known) and unregistered when the handler is dropped.
//!
//! A closed transport (stdin at its end) keeps rmcp's drain: a client that closed its end
//! early still gets its answers, and rmcp cancels what still runs after it (test
//! `a_closed_transport_stops_the_running_call_after_rmcps_drain`).

#[cfg(feature = "http")]
use std::sync::PoisonError;

use rmcp::RoleServer;
use rmcp::service::RequestContext;

#[cfg(feature = "http")]
use super::sessions::{SessionKeeper, Sessions, session_id};

/// What a session handler watches while a call runs: over stateful HTTP, its session's
/// deletion, keeping the session alive meanwhile (`keep_alive`). Over other transports it
/// watches nothing: rmcp itself cancels the call when the transport has closed.
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

    /// Resolves once the call's HTTP session is deleted; until then keeps it alive. Never
    /// resolves for other transports.
    pub(crate) async fn ended(&self, context: &RequestContext<RoleServer>) {
        #[cfg(feature = "http")]
        if let (Some(keeper), Some(id)) = (&self.keeper, http_session_id(context)) {
            tokio::select! {
                () = keeper.deleted(id) => return,
                never = keeper.keep_alive(id) => match never {},
            }
        }
        let _ = context;
        std::future::pending().await
    }
}

/// The `Mcp-Session-Id` of the HTTP request a call came with.
#[cfg(feature = "http")]
fn http_session_id(context: &RequestContext<RoleServer>) -> Option<&str> {
    context.extensions.get::<http::request::Parts>().and_then(|parts| session_id(&parts.headers))
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
