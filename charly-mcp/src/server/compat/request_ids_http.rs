//! Request ids reused while in flight, over stateful Streamable HTTP: the POST of a request
//! whose id a request of the same session still runs under gets -32600 naming the id, before
//! rmcp sees it. What rmcp does and why is in `request_ids`.
//!
//! - Test: `tests/test_compat/http.rs`, `a_reused_request_id_gets_its_own_error_over_http`; the
//!   real binary in `charly-cli/tests/hardening/protocol.rs`.
//!
//! A request is in flight from its POST until the POST's answer (its SSE stream or JSON body)
//! has been sent or dropped. The body is read once here (it is small for all but tool calls
//! that carry files) and handed on unchanged; a POST whose `Content-Length` is over the body
//! limit goes to rmcp unread (rmcp refuses it with 413), one without `Content-Length` is read
//! up to the limit (413 past it, as rmcp's). The same bookkeeping caps a session's requests in
//! flight (`calls_in_flight`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse as _, Response};
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::model::RequestId;
use serde::Deserialize;

use super::client_gone::{self, Gone, Watched};
use super::request_ids::RequestIds;
use super::sessions::session_id;
use crate::server::replica::ReplicaSessions;

/// The requests in flight of every stateful session, by session id; a session with none
/// has no entry.
pub(super) struct InFlight {
    sessions: Mutex<HashMap<String, RequestIds>>,
    /// Most requests in flight per session (`HttpOptions::max_requests_per_session`).
    max: Option<usize>,
    /// The requests whose client went away (`client_gone`).
    pub(super) gone: Gone,
}

/// What is read of a POST body: a request has both.
#[derive(Deserialize)]
struct Head<'a> {
    id: Option<RequestId>,
    #[serde(borrow)]
    method: Option<std::borrow::Cow<'a, str>>,
}

/// Keeps a request in flight until dropped (with its answer's body).
pub(super) struct Admitted {
    pub(super) in_flight: Arc<InFlight>,
    pub(super) session: String,
    pub(super) id: RequestId,
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut sessions = self.in_flight.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(ids) = sessions.get_mut(&self.session) {
            ids.done(&self.id);
            if ids.is_empty() {
                sessions.remove(&self.session);
            }
        }
    }
}

/// A request admitted into its session: its answer must hold it ([`Admission::hold`]), or
/// it must be marked answered ([`Admission::answered`]); dropped otherwise, its request is
/// cancelled (`client_gone`: the client went away before its answer). It also keeps the body
/// read, for the answer to a body rmcp cannot read.
pub(super) struct Admission(Option<Admitted>, Option<Bytes>);

impl Admission {
    /// The request's body, when it was read here.
    pub(super) fn body(&self) -> Option<Bytes> {
        self.1.clone()
    }

    /// `response`, holding the request in flight until its body ends; a body dropped before
    /// its end cancels the request (`client_gone`).
    pub(super) fn hold(mut self, response: Response) -> Response {
        match self.0.take() {
            Some(admitted) => watch(response, admitted, None),
            None => response,
        }
    }

    /// The request was answered without rmcp: no longer in flight.
    pub(super) fn answered(mut self) {
        drop(self.0.take());
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        if let Some(admitted) = self.0.take() {
            client_gone::gone(admitted, None);
        }
    }
}

/// `response`, its body holding `admitted` (whose stream is `stream`, when known) in flight.
fn watch(response: Response, admitted: Admitted, stream: Option<u64>) -> Response {
    let (parts, body) = response.into_parts();
    let body = Watched::new(body.into_data_stream(), admitted, stream);
    Response::from_parts(parts, Body::from_stream(body))
}

/// What [`InFlight::admit`] decided.
pub(super) enum Admit {
    /// Go on with the request (its body re-attached), held in flight by the admission.
    Go(Request, Admission),
    /// The answer refusing it.
    Refused(Response),
}

impl InFlight {
    /// No request in flight yet; at most `max` per session (`None`: no cap); requests of
    /// `manager`'s sessions whose client went away wait `grace` to be resumed.
    pub(super) fn new(max: Option<usize>, manager: Arc<ReplicaSessions>, grace: Duration) -> InFlight {
        InFlight { sessions: Mutex::default(), max, gone: Gone::new(manager, grace) }
    }

    /// rmcp's `response` to a `GET` of `session` with `last_event_id`: when it resumes the
    /// stream of a request whose client went away, the response holds that request in flight.
    pub(super) fn resumed(&self, session: &str, last_event_id: &str, response: Response) -> Response {
        if !response.status().is_success() {
            return response;
        }
        match self.gone.resume(session, last_event_id) {
            Some(admitted) => {
                let stream = client_gone::stream_of_id(last_event_id.as_bytes());
                watch(response, admitted, stream)
            }
            None => response,
        }
    }

    /// Reads `request` (a POST to a session) and admits it, or answers it with the -32600 for
    /// a reused id, or the 503 of a session at its cap (`calls_in_flight`). Requests it cannot
    /// read, notifications and responses pass unadmitted.
    pub(super) async fn admit(self: &Arc<Self>, request: Request, max_body: usize) -> Admit {
        let pass = |request| Admit::Go(request, Admission(None, None));
        let Some(session) = session_id(request.headers()).map(str::to_owned) else { return pass(request) };
        let length = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if request.method() != Method::POST || length.is_some_and(|n| n > max_body) {
            return pass(request);
        }
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, max_body).await else {
            if length.is_none() {
                // Past the limit (or a broken connection, where nobody reads the answer).
                let text = format!("Payload Too Large: request body exceeds {max_body} bytes");
                return Admit::Refused((StatusCode::PAYLOAD_TOO_LARGE, text).into_response());
            }
            // Shorter than Content-Length said, or a broken connection: rmcp reports it.
            return pass(Request::from_parts(parts, Body::empty()));
        };
        let head = serde_json::from_slice::<Head<'_>>(&bytes).ok();
        let Some(Head { id: Some(id), method: Some(method) }) = head else {
            let admission = Admission(None, Some(bytes.clone()));
            return Admit::Go(Request::from_parts(parts, Body::from(bytes)), admission);
        };
        if let Some(error) = super::list_params::refusal(&method, &id, &bytes) {
            return Admit::Refused(super::list_params::answer(&error));
        }
        let admitted = {
            let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
            let ids = sessions.entry(session.clone()).or_default();
            match self.max {
                // A reused id is refused as such, whatever the count.
                Some(max) if ids.len() >= max && !ids.has(&id) => {
                    return Admit::Refused(super::calls_in_flight::refusal(&id, max));
                }
                _ => ids.arrive_as_is(&id, &method),
            }
        };
        if let Err(error) = admitted {
            tracing::debug!(%id, "refusing a request whose id is in flight");
            let json = [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
            let body = serde_json::to_string(&error).expect("a JSON-RPC error serialises");
            return Admit::Refused((StatusCode::OK, json, body).into_response());
        }
        let admission = Admission(Some(Admitted { in_flight: self.clone(), session, id }), None);
        Admit::Go(Request::from_parts(parts, Body::from(bytes)), admission)
    }
}
