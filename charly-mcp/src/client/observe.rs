//! [`Observed`]: a transport wrapper that watches how a session starts, which rmcp's
//! lifecycle does not tell: whether the client fell back to `initialize` (and the version it
//! offered there), and what the server answered `server/discover` with when it did not
//! discover. [`super::connect`] checks the negotiated revision and explains a fallback with it.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;

/// What the start of a session sent and got back.
#[derive(Clone, Debug, Default)]
pub(crate) struct Startup {
    /// The id of the `server/discover` request, when one was sent.
    discover: Option<RequestId>,
    /// The JSON-RPC error the server answered `server/discover` with.
    pub(crate) discover_error: Option<ErrorData>,
    /// The `protocolVersion` offered in `initialize`, when one was sent.
    pub(crate) initialize_offered: Option<String>,
}

/// The shared record of a session's start.
pub(crate) type Record = Arc<Mutex<Startup>>;

/// A transport that records, on the way through, the session start's requests and the
/// server's answer to `server/discover`.
pub(crate) struct Observed<T> {
    pub(crate) inner: T,
    pub(crate) record: Record,
}

impl<T> Observed<T> {
    fn note(&self, f: impl FnOnce(&mut Startup)) {
        f(&mut self.record.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Observed<T> {
    type Error = T::Error;

    fn name() -> std::borrow::Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            match &request.request {
                ClientRequest::DiscoverRequest(_) => self.note(|s| s.discover = Some(request.id.clone())),
                ClientRequest::InitializeRequest(init) => {
                    let offered = init.params.protocol_version.to_string();
                    self.note(|s| s.initialize_offered = Some(offered));
                }
                _ => {}
            }
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        let message = self.inner.receive().await;
        if let Some(JsonRpcMessage::Error(error)) = &message {
            let record = &mut *self.record.lock().unwrap_or_else(PoisonError::into_inner);
            if record.discover.is_some() && record.discover == error.id && record.initialize_offered.is_none()
            {
                record.discover_error = Some(error.error.clone());
            }
        }
        message
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
