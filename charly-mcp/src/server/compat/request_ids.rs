//! Request ids reused while in flight: an error of its own for the second request, and the
//! first one's result for the first one only.
//!
//! - rmcp 3.11 keys a session's running requests by their id (`local_ct_pool` in the service
//!   loop; the Streamable HTTP session's `resource_router`). A second request with the id of
//!   one still running replaces the first one's entry: the first result to finish is sent
//!   once, on the later request's stream, and the other is dropped ("dropping response for
//!   cancelled request"), so one of the two waits for its timeout. Likewise a request
//!   cancelled by `notifications/cancelled` whose handler still runs: a new request reusing
//!   its id can receive the cancelled one's late result.
//! - Spec: JSON-RPC 2.0, section 4: the id correlates a response with its request, so ids are
//!   unique among a session's requests in flight (MCP 2025-11-25, "Requests", asks for ids
//!   never reused in a session). An invalid request gets -32600 (section 5.1).
//! - Test: `tests/test_compat/stdio.rs`, `a_reused_request_id_gets_its_own_error_over_stdio`
//!   and `an_id_reused_after_a_cancel_gets_its_own_result`; `tests/test_compat/http.rs`,
//!   `a_reused_request_id_gets_its_own_error_over_http`; the real binary in
//!   `charly-cli/tests/hardening/protocol.rs`.
//!
//! [`RequestIds`] is one session's bookkeeping. The stdio transport asks it about every request
//! and notification read and every answer written; it also renames, for rmcp, a request that
//! reuses the id of a cancelled request whose handler may still run (`charly-reused-<n>-<id>`),
//! and gives its answer the client's id back, so the late result of the cancelled one (which
//! rmcp drops) can never be taken for the new one's. The HTTP endpoint uses the refusal only
//! (`request_ids_http`): a request is in flight there until its POST's answer is done.

use std::collections::{HashMap, HashSet, VecDeque};

use rmcp::model::{ErrorCode, ErrorData, JsonRpcError, JsonRpcVersion2_0, NumberOrString, RequestId};

/// Most cancelled ids remembered per session (their handlers may still be running); the oldest
/// is forgotten first. A client cancelling more requests than this, all of them still running,
/// and then reusing the oldest id is the one case left to rmcp.
const MAX_CANCELLED: usize = 4096;

/// One session's client requests in flight, by the id the client gave them.
#[derive(Debug, Default)]
pub(crate) struct RequestIds {
    /// Client id → the request's method and the id rmcp knows it by.
    live: HashMap<RequestId, Live>,
    /// The ids rmcp knows requests by that are not the client's: rmcp's → the client's.
    renamed: HashMap<RequestId, RequestId>,
    /// Ids (as rmcp knows them) of cancelled requests, oldest first.
    cancelled: VecDeque<RequestId>,
    cancelled_set: HashSet<RequestId>,
    next: u64,
}

#[derive(Debug)]
struct Live {
    method: String,
    /// The id rmcp knows the request by.
    inner: RequestId,
}

impl RequestIds {
    /// A request `id` (`method`) arrived. `Ok` with the id to hand to rmcp (the same one,
    /// unless rmcp may still run a cancelled request under it), or the -32600 answering it
    /// when a request with that id is in flight.
    pub(crate) fn arrive(&mut self, id: &RequestId, method: &str) -> Result<RequestId, Box<JsonRpcError>> {
        if let Some(live) = self.live.get(id) {
            return Err(Box::new(reused(id, &live.method)));
        }
        let inner = if self.busy_in_rmcp(id) {
            loop {
                self.next += 1;
                let inner = NumberOrString::String(format!("charly-reused-{}-{id}", self.next).into());
                if !self.busy_in_rmcp(&inner) {
                    self.renamed.insert(inner.clone(), id.clone());
                    break inner;
                }
            }
        } else {
            id.clone()
        };
        self.live.insert(id.clone(), Live { method: method.to_owned(), inner: inner.clone() });
        Ok(inner)
    }

    /// A request `id` (`method`) arrived where ids cannot be renamed (Streamable HTTP, whose
    /// answers rmcp writes into the POST's stream): `Err` with the -32600 answering it when a
    /// request with that id is in flight, else it is in flight until [`RequestIds::done`].
    #[cfg(feature = "http")]
    pub(crate) fn arrive_as_is(&mut self, id: &RequestId, method: &str) -> Result<(), Box<JsonRpcError>> {
        if let Some(live) = self.live.get(id) {
            return Err(Box::new(reused(id, &live.method)));
        }
        self.live.insert(id.clone(), Live { method: method.to_owned(), inner: id.clone() });
        Ok(())
    }

    /// Request `id` (admitted by [`RequestIds::arrive_as_is`]) is no longer in flight.
    #[cfg(feature = "http")]
    pub(crate) fn done(&mut self, id: &RequestId) {
        self.live.remove(id);
    }

    /// Whether no request is in flight.
    #[cfg(feature = "http")]
    pub(crate) fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// How many requests are in flight.
    pub(crate) fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether a request with client id `id` is in flight.
    pub(crate) fn has(&self, id: &RequestId) -> bool {
        self.live.contains_key(id)
    }

    /// The client cancelled request `id`: it is no longer in flight for the client (the id
    /// may be reused), but rmcp may still run it. Returns the id rmcp knows it by, for the
    /// notification handed on.
    pub(crate) fn cancel(&mut self, id: &RequestId) -> Option<RequestId> {
        let live = self.live.remove(id)?;
        self.renamed.remove(&live.inner);
        if self.cancelled_set.insert(live.inner.clone()) {
            self.cancelled.push_back(live.inner.clone());
        }
        while self.cancelled.len() > MAX_CANCELLED {
            if let Some(old) = self.cancelled.pop_front() {
                self.cancelled_set.remove(&old);
            }
        }
        Some(live.inner)
    }

    /// rmcp answers its request `inner`: it is no longer in flight. Returns the client's id
    /// when it differs from rmcp's.
    pub(crate) fn answered(&mut self, inner: &RequestId) -> Option<RequestId> {
        let client = self.renamed.remove(inner);
        let id = client.as_ref().unwrap_or(inner);
        if self.live.get(id).is_some_and(|live| &live.inner == inner) {
            self.live.remove(id);
        }
        if self.cancelled_set.remove(inner) {
            self.cancelled.retain(|c| c != inner);
        }
        client
    }

    /// Whether rmcp may hold a request under `id`: one in flight, or a cancelled one.
    fn busy_in_rmcp(&self, id: &RequestId) -> bool {
        self.cancelled_set.contains(id) || self.renamed.contains_key(id) || self.live.contains_key(id)
    }

    /// Requests in flight (for tests).
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.live.len()
    }
}

/// The -32600 for a request reusing the id of `method`, still in flight.
pub(crate) fn reused(id: &RequestId, method: &str) -> JsonRpcError {
    let shown = match id {
        NumberOrString::Number(n) => n.to_string(),
        NumberOrString::String(s) => format!("{:?}", &**s),
    };
    let message = format!(
        "invalid request: id {shown} is already the id of a request in flight (`{method}`); give each request an id of its own (the request in flight goes on)"
    );
    JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id: Some(id.clone()),
        error: ErrorData::new(ErrorCode::INVALID_REQUEST, message, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: i64) -> RequestId {
        NumberOrString::Number(id)
    }

    #[test]
    fn a_second_request_with_an_id_in_flight_is_refused_until_the_first_is_answered() {
        let mut ids = RequestIds::default();
        assert_eq!(ids.arrive(&n(5), "tools/call").unwrap(), n(5));
        let refused = ids.arrive(&n(5), "ping").unwrap_err();
        assert_eq!(refused.id, Some(n(5)));
        assert_eq!(refused.error.code, ErrorCode::INVALID_REQUEST);
        assert!(
            refused.error.message.contains("id 5 is already") && refused.error.message.contains("tools/call")
        );
        assert_eq!(ids.answered(&n(5)), None);
        assert_eq!(ids.arrive(&n(5), "ping").unwrap(), n(5), "reusable once answered");
        assert!(reused(&NumberOrString::String("a".into()), "ping").error.message.contains("id \"a\""));
    }

    #[test]
    fn an_id_reused_after_a_cancel_is_renamed_for_rmcp_and_given_back() {
        let mut ids = RequestIds::default();
        ids.arrive(&n(5), "tools/call").unwrap();
        assert_eq!(ids.cancel(&n(5)), Some(n(5)));
        let inner = ids.arrive(&n(5), "tools/call").unwrap();
        assert_ne!(inner, n(5));
        assert!(ids.arrive(&n(5), "ping").is_err(), "the new one is in flight");
        assert_eq!(ids.answered(&inner), Some(n(5)));
        assert_eq!(ids.in_flight(), 0);
        // The cancelled one's late answer (rmcp drops it) would not touch anything either.
        assert_eq!(ids.answered(&n(5)), None);
        assert_eq!(ids.arrive(&n(5), "ping").unwrap(), n(5));
        // A client id that looks like a renamed one is renamed too.
        ids.arrive(&n(6), "tools/call").unwrap();
        ids.cancel(&n(6));
        let inner = ids.arrive(&n(6), "tools/call").unwrap();
        let NumberOrString::String(text) = &inner else { panic!() };
        let lookalike = NumberOrString::String(text.clone());
        assert_ne!(ids.arrive(&lookalike, "ping").unwrap(), lookalike);
    }

    #[test]
    fn cancelled_ids_are_bounded() {
        let mut ids = RequestIds::default();
        for id in 0..(MAX_CANCELLED as i64 + 10) {
            ids.arrive(&n(id), "tools/call").unwrap();
            ids.cancel(&n(id));
        }
        assert_eq!(ids.cancelled.len(), MAX_CANCELLED);
        assert_eq!(ids.cancelled_set.len(), MAX_CANCELLED);
        assert_eq!(ids.arrive(&n(0), "ping").unwrap(), n(0), "the oldest is forgotten");
    }
}
