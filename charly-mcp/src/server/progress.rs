//! [`Progress`]: `notifications/progress` for one call.

use std::fmt;
use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use tokio::sync::RwLock;

/// Refuses a request whose `_meta.progressToken` is neither a string nor an integer (MCP's
/// `ProgressToken`, 2025-11-25 "Progress"): -32602 naming the field. rmcp reads such a
/// token as none, so the client would wait for progress that never comes. `null` is taken
/// as no token.
pub(crate) fn check_progress_token(context: &RequestContext<RoleServer>) -> Result<(), McpError> {
    match context.meta.0.0.get("progressToken") {
        Some(token) if !token.is_null() && context.meta.get_progress_token().is_none() => {
            let kind = match token {
                serde_json::Value::Bool(_) => "a boolean",
                serde_json::Value::Number(_) => "a number that is not an integer",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::Object(_) => "an object",
                serde_json::Value::Null => "null",
            };
            Err(McpError::invalid_params(
                format!("`_meta.progressToken` must be a string or an integer; this one is {kind}"),
                None,
            ))
        }
        _ => Ok(()),
    }
}

/// Reports progress of one tool call (MCP 2025-06-18, "Progress").
///
/// Notifications go out only when the client sent `_meta.progressToken` with the request,
/// and carry that token exactly as sent (a number, `0` included, or a string). Once the call
/// has finished, reports are dropped, so no progress arrives after the result. Over
/// Streamable HTTP they ride the request's SSE stream, before the result.
#[derive(Clone)]
pub struct Progress {
    token: Option<ProgressToken>,
    peer: Option<Peer<RoleServer>>,
    gate: Gate,
}

/// Open while the call runs; closed (under the write lock) just before the result is sent.
#[derive(Clone, Debug, Default)]
pub(crate) struct Gate(Arc<RwLock<bool>>);

impl Gate {
    pub(crate) fn open() -> Gate {
        Gate(Arc::new(RwLock::new(true)))
    }

    /// Waits for reports in flight, then refuses new ones.
    pub(crate) async fn close(&self) {
        *self.0.write().await = false;
    }

    pub(crate) async fn read(&self) -> tokio::sync::RwLockReadGuard<'_, bool> {
        self.0.read().await
    }
}

impl Progress {
    pub(crate) fn new(token: Option<ProgressToken>, peer: Option<Peer<RoleServer>>, gate: Gate) -> Progress {
        Progress { token, peer, gate }
    }

    /// Whether the client asked for progress (sent a `progressToken`).
    pub fn is_requested(&self) -> bool {
        self.token.is_some() && self.peer.is_some()
    }

    /// The client's progress token, as sent.
    pub fn token(&self) -> Option<&ProgressToken> {
        self.token.as_ref()
    }

    /// Sends `notifications/progress` with `progress` (should increase with every report),
    /// the optional `total` and a message. Returns whether a notification was sent: `false`
    /// when the client sent no token, the call has finished, or the connection is gone.
    pub async fn report(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        let (Some(token), Some(peer)) = (&self.token, &self.peer) else {
            return false;
        };
        let open = self.gate.read().await;
        if !*open {
            return false;
        }
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message;
        let sent = peer.notify_progress(param).await;
        drop(open);
        sent.is_ok()
    }

    /// [`Progress::report`] from synchronous code (a blocking CLI runner).
    ///
    /// # Panics
    ///
    /// When called from async code running on a Tokio worker thread: use `report` there.
    pub fn report_blocking(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle.block_on(self.report(progress, total, message)),
            Err(_) => false,
        }
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Progress").field("token", &self.token).finish_non_exhaustive()
    }
}
