//! A request whose client went away is cancelled, as a `notifications/cancelled` would.
//!
//! - rmcp 3.11: in a stateful session, a POST whose connection closes (or whose SSE stream the
//!   client drops) leaves its request running: rmcp keeps the request's channel in the session
//!   so that the client can resume the stream, and nothing ever stops the request unless the
//!   client sends `notifications/cancelled` (a client that went away sends nothing), the
//!   session is deleted or idles out, or the server stops. A tool call runs on, child
//!   processes included, with nobody to answer. (rmcp cancels on disconnect in stateless mode
//!   only, where nothing can be resumed.)
//! - Spec: 2025-11-25, "Sending Messages to the Server" says a disconnection should not be
//!   read as a cancellation, because the client may resume the stream ("Resumability and
//!   Redelivery": `GET` with `Last-Event-ID`); 2026-07-28, "Cancellation", makes closing the
//!   response stream the cancellation signal. charly does both: a request keeps running for
//!   [`HttpOptions::disconnect_grace`](crate::server::HttpOptions::disconnect_grace) after its
//!   stream dropped, and is cancelled when the client has not resumed it by then. A stream
//!   that never sent an event id cannot be resumed, so its request is cancelled at once.
//! - Test: `tests/test_cancellation.rs`, `a_dropped_post_cancels_its_call_and_reaps_its_child`
//!   and `a_resumed_stream_keeps_its_call_until_it_drops_too`.
//!
//! `request_ids_http` admits each request of a session from its POST to the end of its
//! answer. When the answer's body is dropped before its end (or the POST's handling is
//! dropped before there is an answer), the request is *gone*: its admission moves here. The
//! event id of the stream (`<index>/<stream>`, rmcp's) is read from the first frame that has
//! one; a `GET` with `Last-Event-ID` naming that stream takes the admission back and holds it
//! with its own answer. When the grace is over without that, the endpoint pushes
//! `notifications/cancelled` for the request's id into the session (rmcp then cancels the
//! request's token and drops its late answer), and only then releases the id, so a new
//! request reusing it cannot be cancelled in its place.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::Stream;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientJsonRpcMessage, ClientNotification,
};
use rmcp::transport::streamable_http_server::session::SessionManager as _;

use super::request_ids_http::Admitted;
use crate::server::replica::ReplicaSessions;

/// The requests whose client went away, waiting to be resumed or cancelled.
pub(super) struct Gone {
    manager: Arc<ReplicaSessions>,
    /// How long a resumable request waits for its client (`HttpOptions::disconnect_grace`).
    grace: Duration,
    /// By session id and stream (rmcp's http request id): the admission, and which wait it is.
    orphans: Mutex<HashMap<(String, u64), (u64, Admitted)>>,
    waits: AtomicU64,
}

impl Gone {
    /// Requests of `manager`'s sessions, resumable for `grace`.
    pub(super) fn new(manager: Arc<ReplicaSessions>, grace: Duration) -> Gone {
        Gone { manager, grace, orphans: Mutex::default(), waits: AtomicU64::new(0) }
    }

    /// The admission of the request whose stream `last_event_id` names in `session`, when the
    /// request is waiting for its client: a `GET` resuming it holds it from now on.
    pub(super) fn resume(&self, session: &str, last_event_id: &str) -> Option<Admitted> {
        let stream = stream_of_id(last_event_id.as_bytes())?;
        let mut orphans = self.orphans.lock().unwrap_or_else(PoisonError::into_inner);
        let (_, admitted) = orphans.remove(&(session.to_owned(), stream))?;
        tracing::debug!(session, stream, "a client resumed the stream of a request");
        Some(admitted)
    }
}

/// The request of `admitted` lost its client; `stream` is the stream the client could resume,
/// when it was sent an event id.
pub(super) fn gone(admitted: Admitted, stream: Option<u64>) {
    // Outside a runtime (the server is being torn down) the session goes with it.
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    let in_flight = admitted.in_flight.clone();
    let Some(stream) = stream.filter(|_| !in_flight.gone.grace.is_zero()) else {
        runtime.spawn(cancel(admitted));
        return;
    };
    let wait = in_flight.gone.waits.fetch_add(1, Ordering::Relaxed);
    let key = (admitted.session.clone(), stream);
    tracing::debug!(session = key.0, stream, "a request's client went away; waiting for it to resume");
    in_flight
        .gone
        .orphans
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(key.clone(), (wait, admitted));
    runtime.spawn(async move {
        tokio::time::sleep(in_flight.gone.grace).await;
        let admitted = {
            let mut orphans = in_flight.gone.orphans.lock().unwrap_or_else(PoisonError::into_inner);
            match orphans.get(&key) {
                Some((w, _)) if *w == wait => orphans.remove(&key).map(|(_, admitted)| admitted),
                _ => None,
            }
        };
        if let Some(admitted) = admitted {
            cancel(admitted).await;
        }
    });
}

/// Pushes `notifications/cancelled` for the request of `admitted` into its session, then
/// releases its id (when `admitted` drops).
async fn cancel(admitted: Admitted) {
    let params = CancelledNotificationParam::new(
        Some(admitted.id.clone()),
        Some("the client went away: its HTTP response stream was dropped".to_owned()),
    );
    let message = ClientJsonRpcMessage::notification(ClientNotification::CancelledNotification(
        CancelledNotification::new(params),
    ));
    let manager = &admitted.in_flight.gone.manager;
    match manager.accept_message(&admitted.session.as_str().into(), message).await {
        Ok(()) => tracing::debug!(id = %admitted.id, "cancelled a request whose client went away"),
        // The session is gone, and its requests with it.
        Err(e) => tracing::debug!(id = %admitted.id, "no session to cancel a request in: {e}"),
    }
}

/// The stream (rmcp's http request id) an SSE event id `<index>/<stream>` names.
pub(super) fn stream_of_id(id: &[u8]) -> Option<u64> {
    let slash = memchr::memchr(b'/', id)?;
    std::str::from_utf8(&id[slash + 1..]).ok()?.trim().parse().ok()
}

/// The stream named by the `id:` field of the SSE event `frame`, if it has one.
fn stream_of_frame(frame: &[u8]) -> Option<u64> {
    let start = if frame.starts_with(b"id: ") { 4 } else { memchr::memmem::find(frame, b"\nid: ")? + 5 };
    let rest = &frame[start..];
    let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
    stream_of_id(&rest[..end])
}

/// An answer's body, holding its request in flight until it ends; dropped before its end, the
/// request is [`gone`].
pub(super) struct Watched<S> {
    frames: S,
    admitted: Option<Admitted>,
    /// The stream its event ids name, once a frame had one.
    stream: Option<u64>,
}

impl<S> Watched<S> {
    /// `frames`, holding `admitted`; `stream` when known already (a resumed stream).
    pub(super) fn new(frames: S, admitted: Admitted, stream: Option<u64>) -> Watched<S> {
        Watched { frames, admitted: Some(admitted), stream }
    }
}

impl<S, E> Stream for Watched<S>
where
    S: Stream<Item = Result<Bytes, E>> + Unpin,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.frames).poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) if self.stream.is_none() => self.stream = stream_of_frame(frame),
            // Answered: the request is no longer in flight.
            Poll::Ready(None) => drop(self.admitted.take()),
            _ => {}
        }
        polled
    }
}

impl<S> Drop for Watched<S> {
    fn drop(&mut self) {
        if let Some(admitted) = self.admitted.take() {
            gone(admitted, self.stream);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stream_of_an_event_id() {
        assert_eq!(stream_of_frame(b"data: \nid: 0/7\nretry: 3000\n\n"), Some(7));
        assert_eq!(stream_of_frame(b"id: 3/12\ndata: {}\n\n"), Some(12));
        assert_eq!(stream_of_frame(b"data: {}\nid: 4\n\n"), None, "the GET stream's ids name no stream");
        assert_eq!(stream_of_frame(b":\n\n"), None);
        assert_eq!(stream_of_id(b"0/18446744073709551615"), Some(u64::MAX));
        assert_eq!(stream_of_id(b"0/x"), None);
    }
}
