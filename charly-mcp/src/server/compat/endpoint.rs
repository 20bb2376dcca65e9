//! [`Endpoint`]: rmcp's `StreamableHttpService` with every HTTP correction of this module
//! around it, in the order they apply.

use std::sync::Arc;
use std::time::Duration;

use crate::server::replica::ReplicaSessions;
use axum::extract::Request;
use axum::response::{IntoResponse as _, Response};
use http::Method;
use rmcp::ServerHandler;
use rmcp::transport::streamable_http_server::StreamableHttpService;

use super::accept::normalize_accept;
use super::list_cache::ListCache;
use super::long_header::long_header;
use super::request_ids_http::{Admit, InFlight};
use super::sessions::{Sessions, session_id};
use super::unreadable_body::unreadable_body;
use super::{delete, ended_session, open_sessions, priming};
use crate::server::state::ServerState;

/// The Streamable HTTP endpoint: rmcp's service serving handlers `S`, corrected.
pub(crate) struct Endpoint<S> {
    rmcp: StreamableHttpService<S, ReplicaSessions>,
    /// Stateful sessions only: stateless requests carry no session to check, keep or list for.
    stateful: Option<Stateful>,
}

struct Stateful {
    sessions: Arc<Sessions>,
    list: ListCache,
    in_flight: Arc<InFlight>,
    /// The body limit (`HttpOptions::max_body_bytes`).
    max_body: usize,
}

impl<S: ServerHandler + Send + 'static> Endpoint<S> {
    /// The stateless endpoint of `rmcp`.
    pub(crate) fn stateless(rmcp: StreamableHttpService<S, ReplicaSessions>) -> Self {
        Endpoint { rmcp, stateful: None }
    }

    /// The endpoint of `rmcp`, whose sessions are `sessions`, serving `server`, reading
    /// bodies up to `max_body` bytes, running at most `max_requests` requests per session at
    /// once (`None`: no cap), keeping a request whose client went away for `disconnect_grace`.
    pub(crate) fn stateful(
        rmcp: StreamableHttpService<S, ReplicaSessions>,
        sessions: Arc<Sessions>,
        server: Arc<ServerState>,
        max_body: usize,
        max_requests: Option<usize>,
        disconnect_grace: Duration,
    ) -> Self {
        let list = ListCache::new(server, sessions.manager());
        let in_flight = Arc::new(InFlight::new(max_requests, sessions.manager(), disconnect_grace));
        Endpoint { rmcp, stateful: Some(Stateful { sessions, list, in_flight, max_body }) }
    }

    /// Serves one request: rmcp's answer, corrected.
    pub(crate) async fn handle(&self, request: Request) -> Response {
        super::too_large::correct(self.answer(request).await).await
    }

    async fn answer(&self, mut request: Request) -> Response {
        normalize_accept(&mut request);
        let Some(Stateful { sessions, list, in_flight, max_body }) = &self.stateful else {
            let request = match super::list_params::stateless(request).await {
                Ok(request) => request,
                Err(refusal) => return refusal,
            };
            return long_header(unreadable_body(self.rmcp.handle(request).await.into_response(), None).await)
                .await;
        };
        let method = request.method().clone();
        let opens = session_id(request.headers()).is_none();
        let mut request = match sessions.refuse_initialize(request, *max_body).await {
            Ok(request) => request,
            Err(full) => return full,
        };
        let mut admission = None;
        let was_live = match method {
            Method::DELETE => Some(delete::was_live(sessions, request.headers()).await),
            _ => {
                let (admitted, held) = match in_flight.admit(request, *max_body).await {
                    Admit::Go(request, held) => (request, held),
                    Admit::Refused(refusal) => return refusal,
                };
                match list.answer(admitted, &self.rmcp).await {
                    // Answered whole, from memory: the request is no longer in flight.
                    Ok(response) => {
                        held.answered();
                        return response;
                    }
                    Err(back) => {
                        request = back;
                        admission = Some(held);
                        None
                    }
                }
            }
        };
        // A clone of the header value shares its bytes: no copy per request.
        let id = request.headers().get("mcp-session-id").cloned();
        let resumes = match method {
            Method::GET => request.headers().get("last-event-id").cloned(),
            _ => None,
        };
        let body = admission.as_ref().and_then(|a| a.body());
        let response = long_header(
            unreadable_body(self.rmcp.handle(request).await.into_response(), body.as_deref()).await,
        )
        .await;
        let id = id.as_ref().and_then(|v| v.to_str().ok());
        let response = ended_session::correct(response, id, sessions).await;
        let response = if opens && method == Method::POST {
            open_sessions::correct(response, sessions).await
        } else {
            response
        };
        match was_live {
            Some(was_live) => {
                let response = delete::correct(response, was_live);
                if response.status().is_success()
                    && let Some(id) = id
                {
                    sessions.end(id);
                    sessions.forget_priming(id);
                }
                response
            }
            None => {
                let response = priming::correct(response, id, sessions).await;
                let response = sessions.keep_open(&method, id, response);
                let response = match (id, resumes.as_ref().and_then(|v| v.to_str().ok())) {
                    (Some(id), Some(last_event_id)) => in_flight.resumed(id, last_event_id, response),
                    _ => response,
                };
                match admission {
                    Some(admission) => admission.hold(response),
                    None => response,
                }
            }
        }
    }
}
