//! Sessions in use stay alive: a running tool call and an open GET stream touch their session.
//!
//! - rmcp 3.11: a session's worker closes the session when it has received no event for its
//!   keep-alive (`HttpOptions::session_idle_timeout`). A request is such an event, but a tool
//!   call still running and a GET stream held open are not, so rmcp closes a session in the
//!   middle of a long call (the call's result is lost) or under a client waiting on the GET
//!   stream for resource updates.
//! - Spec: 2025-11-25, "Sending Messages to the Server": a server that opens an SSE stream for
//!   a request should send the request's response on it; "Listening for Messages from the
//!   Server": the GET stream carries server messages while the client holds it open.
//! - Test: `tests/test_compat/http.rs`, `a_running_call_keeps_its_session` and
//!   `an_open_get_stream_keeps_its_session`.
//!
//! Touching is [`Sessions::touch`] every half idle timeout. Other requests (a slow
//! `resources/read`, say) are expected to be short and do not keep their session. Cached
//! `tools/list` answers reach the worker through `list_cache`'s probe instead.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use futures::StreamExt as _;
use http::{Method, StatusCode};
use tokio_util::sync::CancellationToken;

use super::sessions::{SessionKeeper, Sessions};

impl Sessions {
    /// rmcp's answer to a request of session `id`: when it is the session's GET stream, the
    /// stream touches the session while it is open.
    pub(super) fn keep_open(
        self: &Arc<Self>,
        method: &Method,
        id: Option<&str>,
        response: Response,
    ) -> Response {
        match id {
            Some(id) if method == Method::GET && response.status() == StatusCode::OK => {
                response.map(|body| self.touching(id, body))
            }
            _ => response,
        }
    }

    /// `body` (a GET stream of session `id`), touching the session while it is open.
    fn touching(self: &Arc<Self>, id: &str, body: Body) -> Body {
        let Some(every) = self.every else { return body };
        let (sessions, id) = (self.clone(), id.to_owned());
        let open = CancellationToken::new();
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

impl SessionKeeper {
    /// Touches session `id` every half idle timeout for as long as it is awaited: a running
    /// call awaits it (`SessionWatch::ended`). Never returns.
    pub(super) async fn keep_alive(&self, id: &str) -> Infallible {
        let Some(every) = self.sessions.every else { return std::future::pending().await };
        loop {
            tokio::time::sleep(every).await;
            self.sessions.touch(id).await;
        }
    }
}
