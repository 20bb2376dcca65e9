//! What a call asks its client for (user input, a model sample, the client's roots) through
//! one API, [`Input`], on either side of protocol 2026-07-28.
//!
//! - Peers before 2026-07-28 get server-to-client requests (`elicitation/create`,
//!   `sampling/createMessage`, `roots/list`) over their session, answered while the call waits.
//! - 2026-07-28 peers get none (the revision removed them): a call that asks for something
//!   ends its round with an input-required result (SEP-2322) naming every request made in that
//!   round under its key, plus a `requestState` sealed with the server's key ([`StateSeal`]).
//!   The client answers each request and retries the original request with `inputResponses`
//!   and the state; the call then runs again from the start, and each question it asks again
//!   is answered from the responses (or from the state, for earlier rounds) without waiting.
//!
//! Handlers therefore ask the same questions, under the same keys, in the same order, on
//! every run: the keys are the handler's own ([`super::CallContext::input`]) or numbered in
//! the order the questions are asked. Questions asked within one poll of the handler (with
//! `tokio::join!`, say) form one round.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult, ElicitRequest,
    ElicitRequestParams, ElicitResult, InputRequest, InputRequests, ListRootsRequest, ListRootsResult,
};
use rmcp::task_manager::TaskContext;
use rmcp::{Peer, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::Notify;

use super::error::ToolError;
use super::request_state::Sealed;
use super::tasks::exit_error;

/// How a call reaches its client for input.
pub(crate) enum Channel {
    /// Server-to-client requests over a session (peers before 2026-07-28). `None` without a
    /// client (a detached context); `stateless`: stateless HTTP before 2026-07-28, where no
    /// client can answer a server request.
    Requests { peer: Option<Peer<RoleServer>>, stateless: bool },
    /// Input-required results (2026-07-28 peers).
    Rounds(Box<Rounds>),
}

/// One run of a 2026-07-28 call: the answers it may use and the questions it asked.
pub(crate) struct Rounds {
    /// The client capabilities this request declared (`_meta`).
    capabilities: ClientCapabilities,
    /// Answers of earlier rounds (from the sealed state) and of this request
    /// (`inputResponses`), by key; a sealed answer wins over a resent one.
    answers: BTreeMap<String, Value>,
    inner: Mutex<RoundState>,
    asked: Notify,
    next_key: AtomicUsize,
    /// This run's round: 1 for a request without a state.
    round: u32,
}

#[derive(Default)]
struct RoundState {
    /// The answers this run used: what the next round's state carries.
    used: BTreeMap<String, Value>,
    /// The questions asked in this run and not answered yet.
    asked: InputRequests,
    /// A request the call cannot go on with: a response that is not the answer its question
    /// needs, or a capability the client did not declare. Answered as a JSON-RPC error.
    failure: Option<McpError>,
}

/// How one run of a call ended, for the handler that ran it.
pub(crate) enum RoundEnd<T> {
    /// The call finished (successfully or not) without needing more input.
    Done(T),
    /// The call asked for input: answer with an input-required result for these questions;
    /// `used` goes into the next round's request state.
    Asked { requests: InputRequests, used: BTreeMap<String, Value> },
    /// The request cannot be served (bad `inputResponses`, an undeclared capability).
    Failed(McpError),
}

impl Rounds {
    /// A run with the request's declared `capabilities`, what its sealed state held (the
    /// answers of earlier rounds) and this request's `responses`.
    pub(crate) fn new(
        capabilities: ClientCapabilities,
        sealed: Sealed,
        responses: Option<BTreeMap<String, Value>>,
    ) -> Rounds {
        let mut answers = responses.unwrap_or_default();
        answers.extend(sealed.answers);
        Rounds {
            capabilities,
            answers,
            inner: Mutex::default(),
            asked: Notify::new(),
            next_key: AtomicUsize::new(1),
            round: sealed.rounds + 1,
        }
    }

    /// This run's round: 1 for the first.
    pub(crate) fn round(&self) -> u32 {
        self.round
    }

    /// The capabilities this request declared.
    pub(crate) fn capabilities(&self) -> &ClientCapabilities {
        &self.capabilities
    }

    fn state(&self) -> std::sync::MutexGuard<'_, RoundState> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The next automatic key for a question about `what`: `elicitation_1`, `sampling_2`, ...
    pub(crate) fn auto_key(&self, what: &str) -> String {
        format!("{what}_{}", self.next_key.fetch_add(1, Ordering::Relaxed))
    }

    /// The answer to question `key` as a `T`, if the client sent one. A response that is not
    /// a `T` fails the request (`-32602` naming the key and the method).
    fn answer<T: DeserializeOwned>(&self, key: &str, method: &str) -> Result<Option<T>, ToolError> {
        let Some(value) = self.answers.get(key) else { return Ok(None) };
        match serde_json::from_value::<T>(value.clone()) {
            Ok(answer) => {
                self.state().used.insert(key.to_owned(), value.clone());
                Ok(Some(answer))
            }
            Err(e) => Err(self.fail(McpError::invalid_params(
                format!("inputResponses[{key:?}] is not a result of `{method}`: {e}"),
                Some(serde_json::json!({"inputKey": key, "method": method})),
            ))),
        }
    }

    /// Records why the request cannot be served and returns the error for the handler.
    fn fail(&self, error: McpError) -> ToolError {
        let mut state = self.state();
        state.failure.get_or_insert_with(|| error.clone());
        ToolError::Request(error)
    }

    /// Asks question `key`; the run ends with an input-required result. Never resolves:
    /// the handler is dropped (or, in a task of its own, cancelled) when the round ends.
    async fn ask(&self, key: String, request: InputRequest) -> ! {
        self.state().asked.insert(key, request);
        self.asked.notify_one();
        std::future::pending().await
    }

    /// Resolves once the run has asked a question (or failed).
    pub(crate) async fn asked(&self) {
        self.asked.notified().await
    }

    /// How the run ended, given the handler's outcome when it finished.
    pub(crate) fn end<T>(&self, finished: Option<T>) -> RoundEnd<T> {
        let mut state = self.state();
        if let Some(error) = state.failure.take() {
            return RoundEnd::Failed(error);
        }
        match finished {
            Some(outcome) if state.asked.is_empty() => RoundEnd::Done(outcome),
            // Asked and finished anyway (the handler stopped waiting): the questions win, so
            // the answer can reach the handler on the next round.
            _ => RoundEnd::Asked {
                requests: std::mem::take(&mut state.asked),
                used: std::mem::take(&mut state.used),
            },
        }
    }
}

/// The name of a capability a request needs and the client did not declare, given what it
/// declared (`elicitation` with a mode, `sampling`, `roots`).
fn missing_elicitation(declared: &ClientCapabilities, url: bool) -> Option<&'static str> {
    match (&declared.elicitation, url) {
        (None, _) => Some("elicitation"),
        (Some(e), true) if e.url.is_none() => Some("elicitation.url"),
        // `elicitation: {}` means form only; naming `url` alone leaves form out.
        (Some(e), false) if e.form.is_none() && e.url.is_some() => Some("elicitation.form"),
        _ => None,
    }
}

/// The capabilities a request needs, as a `ClientCapabilities` object naming only them
/// (the `requiredCapabilities` of a -32021 error).
fn required(capability: &str) -> ClientCapabilities {
    let value = match capability {
        "elicitation.url" => serde_json::json!({"elicitation": {"url": {}}}),
        "elicitation.form" => serde_json::json!({"elicitation": {"form": {}}}),
        "sampling" => serde_json::json!({"sampling": {}}),
        "roots" => serde_json::json!({"roots": {}}),
        _ => serde_json::json!({}),
    };
    serde_json::from_value(value).unwrap_or_default()
}

/// One question of a call, under its key: see [`super::CallContext::input`]. Asking consumes
/// it, so `cx.input("k").elicit(..)` can go straight into `tokio::join!`.
pub struct Input<'a> {
    pub(crate) channel: &'a Channel,
    /// The task the call runs as: its questions wait for `tasks/update`.
    pub(crate) task: Option<&'a TaskContext>,
    pub(crate) key: Option<String>,
}

impl Input<'_> {
    fn key(&self, rounds: &Rounds, what: &str) -> String {
        self.key.clone().unwrap_or_else(|| rounds.auto_key(what))
    }

    /// The session's peer for a `method` request, once the client can answer it.
    fn peer<'p>(
        peer: &'p Option<Peer<RoleServer>>,
        stateless: bool,
        method: &str,
        missing: impl FnOnce(&ClientCapabilities) -> Option<&'static str>,
    ) -> Result<&'p Peer<RoleServer>, ToolError> {
        let peer = peer
            .as_ref()
            .ok_or_else(|| ToolError::msg("this call has no client connection to send requests to"))?;
        if stateless {
            return Err(ToolError::msg(format!(
                "cannot send `{method}` to the client: this server is stateless (Streamable HTTP \
                 without sessions), and a client before protocol 2026-07-28 answers server \
                 requests only within a session"
            )));
        }
        let declared = peer.peer_info().map(|info| info.capabilities.clone()).unwrap_or_default();
        if let Some(capability) = missing(&declared) {
            return Err(ToolError::msg(format!(
                "cannot send `{method}` to the client: it did not declare the `{capability}` \
                 capability in `initialize`"
            )));
        }
        Ok(peer)
    }

    /// A 2026-07-28 question: the answer if the client sent it, a -32021 failure if the
    /// client lacks the capability, otherwise the end of this round.
    async fn round<T: DeserializeOwned>(
        &self,
        rounds: &Rounds,
        what: &str,
        method: &str,
        missing: Option<&'static str>,
        request: impl FnOnce() -> InputRequest,
    ) -> Result<T, ToolError> {
        let key = self.key(rounds, what);
        if let Some(answer) = rounds.answer::<T>(&key, method)? {
            return Ok(answer);
        }
        if let Some(capability) = missing {
            return Err(rounds.fail(McpError::missing_required_client_capability(required(capability))));
        }
        if let Some(task) = self.task {
            // A task: the question waits in `inputRequests` for the client's `tasks/update`.
            let value = task.request_input(key.clone(), request()).await.map_err(exit_error)?;
            return serde_json::from_value::<T>(value).map_err(|e| {
                ToolError::Request(McpError::invalid_params(
                    format!("inputResponses[{key:?}] is not a result of `{method}`: {e}"),
                    Some(serde_json::json!({"inputKey": key, "method": method})),
                ))
            });
        }
        rounds.ask(key, request()).await
    }

    /// Asks the user (`elicitation/create`).
    ///
    /// # Errors
    ///
    /// Before 2026-07-28: [`ToolError::Message`] without sending anything when the client did
    /// not declare `elicitation` for the request's mode (form, or url) in `initialize`, or the
    /// server is stateless; [`ToolError::Client`] when the client refuses or goes away.
    /// On 2026-07-28: [`ToolError::Request`] (a -32021 error for the call) when this request's
    /// `_meta` declares no such capability, or a -32602 error when the client's response under
    /// this key is not an elicitation result.
    pub async fn elicit(self, params: ElicitRequestParams) -> Result<ElicitResult, ToolError> {
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        match self.channel {
            Channel::Requests { peer, stateless } => {
                let peer =
                    Self::peer(peer, *stateless, "elicitation/create", |c| missing_elicitation(c, url))?;
                Ok(peer.create_elicitation(params).await?)
            }
            Channel::Rounds(rounds) => {
                let missing = missing_elicitation(rounds.capabilities(), url);
                self.round(rounds, "elicitation", "elicitation/create", missing, || {
                    InputRequest::Elicitation(ElicitRequest::new(params))
                })
                .await
            }
        }
    }

    /// Asks the client's model for a message (`sampling/createMessage`).
    ///
    /// # Errors
    ///
    /// As [`Input::elicit`], for the `sampling` capability.
    #[allow(deprecated)] // Sampling is deprecated by SEP-2577, and still part of 2026-07-28.
    pub async fn create_message(
        self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ToolError> {
        let missing = |c: &ClientCapabilities| c.sampling.is_none().then_some("sampling");
        match self.channel {
            Channel::Requests { peer, stateless } => {
                let peer = Self::peer(peer, *stateless, "sampling/createMessage", missing)?;
                Ok(peer.create_message(params).await?)
            }
            Channel::Rounds(rounds) => {
                let missing = missing(rounds.capabilities());
                self.round(rounds, "sampling", "sampling/createMessage", missing, || {
                    InputRequest::CreateMessage(CreateMessageRequest::new(params))
                })
                .await
            }
        }
    }

    /// Asks for the client's roots (`roots/list`).
    ///
    /// # Errors
    ///
    /// As [`Input::elicit`], for the `roots` capability.
    #[allow(deprecated)] // Roots are deprecated by SEP-2577, and still part of 2026-07-28.
    pub async fn list_roots(self) -> Result<ListRootsResult, ToolError> {
        let missing = |c: &ClientCapabilities| c.roots.is_none().then_some("roots");
        match self.channel {
            Channel::Requests { peer, stateless } => {
                let peer = Self::peer(peer, *stateless, "roots/list", missing)?;
                Ok(peer.list_roots().await?)
            }
            Channel::Rounds(rounds) => {
                let missing = missing(rounds.capabilities());
                self.round(rounds, "roots", "roots/list", missing, || {
                    InputRequest::ListRoots(ListRootsRequest::default())
                })
                .await
            }
        }
    }
}

impl std::fmt::Debug for Input<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("channel", self.channel)
            .field("task", &self.task.map(TaskContext::task_id))
            .field("key", &self.key)
            .finish()
    }
}

impl std::fmt::Debug for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Channel::Requests { stateless, .. } => {
                f.debug_struct("Requests").field("stateless", stateless).finish_non_exhaustive()
            }
            Channel::Rounds(_) => f.write_str("Rounds"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_capabilities_name_only_the_missing_one() {
        let sampling = serde_json::to_value(required("sampling")).unwrap();
        assert_eq!(sampling, serde_json::json!({"sampling": {}}));
        let url = serde_json::to_value(required("elicitation.url")).unwrap();
        assert_eq!(url, serde_json::json!({"elicitation": {"url": {}}}));
    }

    #[test]
    fn a_sealed_answer_wins_over_a_resent_one() {
        let sealed = Sealed { answers: BTreeMap::from([("a".to_owned(), serde_json::json!(1))]), rounds: 1 };
        let sent =
            BTreeMap::from([("a".to_owned(), serde_json::json!(2)), ("b".to_owned(), serde_json::json!(3))]);
        let rounds = Rounds::new(ClientCapabilities::default(), sealed, Some(sent));
        assert_eq!(rounds.round(), 2);
        assert_eq!(rounds.answers["a"], 1);
        assert_eq!(rounds.answers["b"], 3);
    }
}
