//! The SSE priming event only for sessions that negotiated 2025-11-25 or later.
//!
//! - rmcp 3.11: with an SSE retry interval configured (its default, 3 s), every SSE stream of
//!   a stateful session starts with a priming event (an event with empty `data:` and a
//!   `retry:` field): the `initialize` answer, every POST's stream and the GET stream, whatever
//!   protocol version the session negotiated.
//! - Spec: the priming event is part of 2025-11-25 ("Resumability and Redelivery", SEP-1699);
//!   clients of 2025-06-18 and older do not expect an event without a JSON-RPC message, and
//!   some (and strict gateways) reject the stream (typescript-sdk#1233,
//!   jordiboehme/crystalline#26). Sessions of 2026-07-28 have no sessions at all.
//! - Test: `tests/test_compat/http.rs`, `priming_event_only_from_2025_11_25`.
//!
//! The endpoint reads the negotiated version from rmcp's own `initialize` answer (its second
//! event, after the priming one), keeps or drops the priming event of that answer, and
//! remembers the decision under the new session id; later streams of the session lose their
//! first event when it is a priming event and the session negotiated an older version. rmcp
//! writes each SSE event as one body frame, so the first frame is the whole first event.

use std::collections::HashMap;
use std::sync::PoisonError;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt as _;
use rmcp::model::ProtocolVersion;

use super::sessions::Sessions;

/// Sessions remembered before the map is pruned of sessions rmcp has closed.
const PRUNE_AT: usize = 256;

/// Whether `frame` is rmcp's priming event: empty `data`, a `retry` field.
fn is_priming(frame: &[u8]) -> bool {
    frame.starts_with(b"data: \n") && memchr::memmem::find(frame, b"\nretry: ").is_some()
}

/// The `protocolVersion` of the `initialize` result in an SSE event frame.
fn negotiated_version(frame: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(frame).ok()?;
    let data = text.lines().find_map(|line| line.strip_prefix("data: "))?;
    let message: serde_json::Value = serde_json::from_str(data).ok()?;
    message["result"]["protocolVersion"].as_str().map(str::to_owned)
}

/// Whether a session of `version` gets priming events.
fn primes(version: &str) -> bool {
    version >= ProtocolVersion::V_2025_11_25.as_str()
}

impl Sessions {
    /// Whether session `id` gets priming events; unknown sessions keep rmcp's behaviour.
    fn primes(&self, id: &str) -> bool {
        self.primes.lock().unwrap_or_else(PoisonError::into_inner).get(id).copied().unwrap_or(true)
    }

    async fn remember(&self, id: &str, primes: bool) {
        let prune = {
            let mut map = self.primes.lock().unwrap_or_else(PoisonError::into_inner);
            map.insert(id.to_owned(), primes);
            map.len() >= PRUNE_AT && map.len().is_power_of_two()
        };
        if prune {
            let live: Vec<String> =
                self.manager().local.sessions.read().await.keys().map(|k| k.to_string()).collect();
            let mut map = self.primes.lock().unwrap_or_else(PoisonError::into_inner);
            map.retain(|id, _| live.iter().any(|l| l == id));
        }
    }

    /// Forgets session `id` (deleted).
    pub(super) fn forget_priming(&self, id: &str) {
        self.primes.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    }
}

/// The bookkeeping this correction adds to [`Sessions`].
pub(super) type Primes = std::sync::Mutex<HashMap<String, bool>>;

/// rmcp's `response` to a request of session `id` (`None`: a request without one, such as
/// `initialize`), its priming events kept only for sessions of 2025-11-25 or later.
pub(super) async fn correct(response: Response, id: Option<&str>, sessions: &Sessions) -> Response {
    let is_sse = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
    if !is_sse {
        return response;
    }
    match id {
        Some(id) if !sessions.primes(id) => response.map(|body| {
            let frames = body.into_data_stream().enumerate().filter_map(|(i, frame)| {
                let priming = i == 0 && frame.as_ref().is_ok_and(|f| is_priming(f));
                std::future::ready((!priming).then_some(frame))
            });
            Body::from_stream(frames)
        }),
        Some(_) => response,
        None => {
            let Some(new_id) = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) else {
                return response;
            };
            let new_id = new_id.to_owned();
            let (parts, body) = response.into_parts();
            let mut frames = body.into_data_stream();
            let mut head: Vec<Result<Bytes, axum::Error>> = Vec::with_capacity(2);
            if let Some(first) = frames.next().await {
                let priming = first.as_ref().is_ok_and(|f| is_priming(f));
                head.push(first);
                if priming && let Some(second) = frames.next().await {
                    let version = second.as_ref().ok().and_then(|f| negotiated_version(f));
                    let keep = version.as_deref().is_none_or(primes);
                    sessions.remember(&new_id, keep).await;
                    if !keep {
                        head.clear();
                    }
                    head.push(second);
                }
            }
            Response::from_parts(parts, Body::from_stream(futures::stream::iter(head).chain(frames)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_priming_event_and_the_version_are_recognised() {
        assert!(is_priming(b"data: \nid: 0\nretry: 3000\n\n"));
        assert!(is_priming(b"data: \nretry: 3000\n\n"));
        assert!(!is_priming(b"data: {\"jsonrpc\":\"2.0\"}\nid: 0\n\n"));
        assert!(!is_priming(b":\n\n"));
        let frame = br#"data: {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}
id: 1

"#;
        assert_eq!(negotiated_version(frame).as_deref(), Some("2025-06-18"));
        assert!(!primes("2025-06-18") && !primes("2024-11-05") && primes("2025-11-25"));
    }
}
