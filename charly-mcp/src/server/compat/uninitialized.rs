//! Requests before `initialize` over stdio: "the session is not initialized", not a 2026-07-28
//! `_meta` error.
//!
//! - rmcp 3.11 (`serve_server`): until a session begins, a request other than `initialize`,
//!   `ping` or `server/discover` is taken for a protocol 2026-07-28 request (a revision without
//!   a handshake) and, lacking that revision's `_meta`, refused with -32602 `request _meta is
//!   missing or has malformed required fields: io.modelcontextprotocol/protocolVersion, ...`.
//!   A 2025 client that forgot `initialize` reads nothing about `initialize`.
//! - Spec: 2025-11-25, "Lifecycle": initialization is the first interaction; 2026-07-28
//!   (SEP-2575): every request names its protocol version and client capabilities in `_meta`.
//! - charly: such a request whose `_meta` names no protocol version gets -32602 (rmcp's code)
//!   saying that the session is not initialized and what to send, for either revision. A
//!   request that names a version goes to rmcp, which judges the rest of its `_meta`.
//! - Test: `tests/test_compat/stdio.rs`, `a_request_before_initialize`; the real binary in
//!   `charly-cli/tests/hardening/edges.rs`.

use rmcp::model::{
    ClientRequest, ErrorData, GetMeta as _, JsonRpcError, JsonRpcVersion2_0, ProtocolVersion, RequestId,
};

/// Whether a session has begun on this stream: an `initialize` went to rmcp, or a 2026-07-28
/// request with the whole of its `_meta`.
#[derive(Debug, Default)]
pub(super) struct Lifecycle {
    begun: bool,
}

impl Lifecycle {
    /// Lets `request` (id `id`) go to rmcp, or gives the error that answers it.
    pub(super) fn admit(&mut self, request: &ClientRequest, id: &RequestId) -> Result<(), Box<JsonRpcError>> {
        if self.begun {
            return Ok(());
        }
        let meta = match request {
            ClientRequest::InitializeRequest(_) => {
                self.begun = true;
                return Ok(());
            }
            // Served before a session, as rmcp does (lifecycle: ping; SEP-2575: discover).
            ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => return Ok(()),
            request => request.get_meta(),
        };
        let Some(version) = meta.protocol_version() else {
            let missing = meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).join(", ");
            let message = format!(
                "the session is not initialized: send `initialize` first (then \
                 `notifications/initialized`); on protocol 2026-07-28, which has no `initialize`, \
                 give this request's `_meta` {missing}"
            );
            return Err(Box::new(JsonRpcError {
                jsonrpc: JsonRpcVersion2_0,
                id: Some(id.clone()),
                error: ErrorData::invalid_params(message, None),
            }));
        };
        // rmcp begins the session with this request when its `_meta` is whole and its version
        // one it serves; otherwise it refuses the request and waits for another.
        self.begun = meta.missing_required_keys(&ProtocolVersion::V_2026_07_28).is_empty()
            && ProtocolVersion::KNOWN_VERSIONS.contains(&version);
        Ok(())
    }
}
