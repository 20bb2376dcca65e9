//! Session ids that name the replica holding the session, so a load balancer can send a
//! session's requests back to it ([`HttpOptions::session_id_prefix`]).
//!
//! rmcp 3.11's `LocalSessionManager::create_session` mints every session id itself, a bare
//! UUID from a crate-private function, and offers no hook to change it. A balancer sees the
//! id only in the replica's answer to `initialize`, after it has routed that request, so
//! nothing it can compute from the id (`hash $http_mcp_session_id`, say) leads back to the
//! replica that minted it: later requests land on a replica that answers 404. With a prefix,
//! [`ReplicaSessions`] mints `<prefix>.<uuid>` instead, with rmcp's public
//! `create_local_session`, stores the handle in the `LocalSessionManager`'s own (public)
//! session map, and leaves every other operation to the `LocalSessionManager`. The balancer
//! routes on the part before the dot (`deploy/nginx/charly.conf.template`).
//!
//! Test: `tests/test_replica_http.rs`.
//!
//! [`HttpOptions::session_id_prefix`]: super::HttpOptions::session_id_prefix

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker, create_local_session,
};
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};

/// Longest replica name, in bytes: one DNS label, so a pod or host name fits.
pub const MAX_REPLICA_NAME: usize = 63;

/// rmcp's [`LocalSessionManager`], minting `<prefix>.<uuid>` session ids when it has a prefix,
/// and refusing a session past its cap (`compat/open_sessions.rs`).
#[derive(Debug)]
pub(crate) struct ReplicaSessions {
    /// Holds every session; minting aside, it does all the work.
    pub(crate) local: LocalSessionManager,
    prefix: Option<Arc<str>>,
    /// Most sessions in `local`'s map at once; `None`: no cap.
    max: Option<usize>,
    /// Whether each initialized session's client (its `initialize` `clientInfo.name`) rejects
    /// dotted tool names, by session id, for `tools/list` answers from the list cache
    /// (`compat/list_cache.rs`); removed when the session closes.
    dotless: Mutex<HashMap<Arc<str>, bool>>,
}

impl ReplicaSessions {
    /// Sessions of `local`, their ids prefixed with `prefix` and a dot when there is one (a
    /// name [`check_replica_name`] accepts), at most `max` at once.
    pub(crate) fn new(
        local: LocalSessionManager,
        prefix: Option<&str>,
        max: Option<usize>,
    ) -> ReplicaSessions {
        ReplicaSessions { local, prefix: prefix.map(Arc::from), max, dotless: Mutex::default() }
    }

    /// Whether the client of session `id` rejects dotted tool names; `None` for a session
    /// this manager did not see initialized.
    pub(crate) fn rejects_dots(&self, id: &str) -> Option<bool> {
        self.dotless.lock().unwrap_or_else(PoisonError::into_inner).get(id).copied()
    }
}

/// Checks that `name` can prefix session ids: 1 to 63 ASCII letters, digits, `-` or `_` (a
/// pod or host name, a header value a balancer can match without escaping; no dot, which
/// ends the prefix).
///
/// # Errors
///
/// A message naming the value and what is allowed.
pub fn check_replica_name(name: &str) -> Result<(), String> {
    let fits = (1..=MAX_REPLICA_NAME).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if fits {
        Ok(())
    } else {
        Err(format!(
            "the replica name {name:?} must be 1 to {MAX_REPLICA_NAME} ASCII letters, digits, `-` or `_`, \
             e.g. charly-0"
        ))
    }
}

impl SessionManager for ReplicaSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        if self.prefix.is_none() && self.max.is_none() {
            return self.local.create_session().await;
        }
        let id: SessionId = match &self.prefix {
            Some(prefix) => format!("{prefix}.{}", uuid::Uuid::new_v4()),
            None => uuid::Uuid::new_v4().to_string(),
        }
        .into();
        // What `LocalSessionManager::create_session` does, with this id (and without an event
        // store, which charly never configures), the cap checked under the map's write lock.
        let mut sessions = self.local.sessions.write().await;
        if self.max.is_some_and(|max| sessions.len() >= max) {
            return Err(crate::server::compat::at_session_cap());
        }
        let (handle, worker) = create_local_session(id.clone(), self.local.session_config.clone());
        sessions.insert(id.clone(), handle);
        drop(sessions);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let rejects_dots = match &message {
            JsonRpcMessage::Request(request) => match &request.request {
                ClientRequest::InitializeRequest(init) => {
                    Some(super::clients::rejects_dots(&init.params.client_info.name))
                }
                _ => None,
            },
            _ => None,
        };
        let answer = self.local.initialize_session(id, message).await?;
        if let Some(rejects_dots) = rejects_dots {
            self.dotless.lock().unwrap_or_else(PoisonError::into_inner).insert(id.clone(), rejects_dots);
        }
        Ok(answer)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.dotless.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
        self.local.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.local.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local.resume(id, last_event_id).await
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local.restore_session(id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

#[cfg(test)]
mod tests {
    use super::check_replica_name;

    #[test]
    fn replica_names() {
        for good in ["a", "charly-0", "pod_7", &"x".repeat(63)] {
            assert_eq!(check_replica_name(good), Ok(()), "{good}");
        }
        for bad in ["", "a.b", "a b", "é", "a/b", &"x".repeat(64)] {
            let why = check_replica_name(bad).unwrap_err();
            assert!(why.contains("ASCII letters, digits"), "{bad}: {why}");
        }
    }
}
