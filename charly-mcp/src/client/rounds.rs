//! Requests that may come back input-required (SEP-2322): [`Client::call_tool`] and
//! [`Client::read_resource`] answer each round from the client's [`Answers`](super::Answers) in one loop.

#![allow(deprecated)] // Sampling and roots are deprecated by SEP-2577, still part of 2026-07-28.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult, InputRequest, InputRequests,
    InputRequiredResult, InputResponses, JsonObject, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult,
};

use super::answers::Question;
use super::error::ClientError;
use super::session::{Client, MAX_INPUT_ROUNDS};

/// One round's outcome of a request that may come back input-required (SEP-2322).
enum Round<T> {
    /// The request's result.
    Done(T),
    /// The server asks for input: answer it and send the request again with its state.
    Asked(InputRequiredResult),
    /// The server runs the call as a task (tasks extension).
    Task(CreateTaskResult),
}

/// The params of a request that may come back input-required: they carry the answers and
/// the server's `requestState` of the round before.
trait Retried: Clone {
    /// The request's result.
    type Done;
    /// The server's answer to one round.
    type Response;
    /// Sets the answers and the state for the next round.
    fn answered(&mut self, responses: Option<InputResponses>, state: Option<String>);
    /// One round's answer, classified (`None`: a kind of answer charly does not know).
    fn round(response: Self::Response) -> Option<Round<Self::Done>>;
}

impl Retried for CallToolRequestParams {
    type Done = CallToolResult;
    type Response = CallToolResponse;
    fn answered(&mut self, responses: Option<InputResponses>, state: Option<String>) {
        self.input_responses = responses;
        self.request_state = state;
    }
    fn round(response: CallToolResponse) -> Option<Round<CallToolResult>> {
        match response {
            // rmcp reads a reply with no `content` as an empty result.
            CallToolResponse::Complete(result) => Some(Round::Done(result)),
            CallToolResponse::InputRequired(asked) => Some(Round::Asked(asked)),
            CallToolResponse::Task(task) => Some(Round::Task(task)),
            _ => None,
        }
    }
}

impl Retried for ReadResourceRequestParams {
    type Done = ReadResourceResult;
    type Response = ReadResourceResponse;
    fn answered(&mut self, responses: Option<InputResponses>, state: Option<String>) {
        self.input_responses = responses;
        self.request_state = state;
    }
    fn round(response: ReadResourceResponse) -> Option<Round<ReadResourceResult>> {
        match response {
            ReadResourceResponse::Complete(result) => Some(Round::Done(result)),
            ReadResourceResponse::InputRequired(asked) => Some(Round::Asked(asked)),
            _ => None,
        }
    }
}

/// How a request that went through its input-required rounds ended.
enum Answered<T> {
    /// With its result.
    Done(T),
    /// With a task the server runs for it.
    Task(Box<CreateTaskResult>),
}

impl Client {
    /// The responses to `requests` from the client's answers, or every question they leave open.
    pub(crate) fn answer(&self, requests: InputRequests) -> Result<InputResponses, Vec<Question>> {
        let answers = self.answers();
        let mut responses = InputResponses::new();
        let mut open = Vec::new();
        for (key, request) in requests {
            let answer = match &request {
                InputRequest::Elicitation(r) => answers
                    .answer_elicitation(&r.params, Some(&key))
                    .map(|a| serde_json::to_value(a).unwrap_or_default()),
                InputRequest::CreateMessage(r) => answers
                    .answer_sampling(&r.params, Some(&key))
                    .map(|a| serde_json::to_value(a).unwrap_or_default()),
                InputRequest::ListRoots(_) => {
                    answers.answer_roots(Some(&key)).map(|a| serde_json::to_value(a).unwrap_or_default())
                }
                _ => Err(Question {
                    method: serde_json::to_value(&request)
                        .ok()
                        .and_then(|v| v["method"].as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    key: Some(key.clone()),
                    detail: "a kind of request charly does not know".into(),
                }),
            };
            match answer {
                Ok(value) => {
                    responses.insert(key, value);
                }
                Err(question) => open.push(question),
            }
        }
        if open.is_empty() { Ok(responses) } else { Err(open) }
    }

    /// Fails when a server-to-client request of the last operation went unanswered.
    fn unanswered(&self, operation: &'static str) -> Result<(), ClientError> {
        let open = self.service.service().take_unanswered();
        if open.is_empty() { Ok(()) } else { Err(ClientError::InputRequired { operation, questions: open }) }
    }

    /// Sends `params` with `send` until the server stops asking for input: each
    /// input-required round is answered from the client's [`Answers`](super::Answers) and sent again with the
    /// server's `requestState` as sent, up to [`MAX_INPUT_ROUNDS`] rounds, each within the
    /// timeout. A server-to-client request left unanswered on the way (an older revision's
    /// way of asking) fails the request naming the question, even when the server then failed
    /// the request itself.
    async fn in_rounds<P, Fut>(
        &self,
        operation: &'static str,
        mut params: P,
        send: impl Fn(P) -> Fut,
    ) -> Result<Answered<P::Done>, ClientError>
    where
        P: Retried,
        Fut: Future<Output = Result<P::Response, rmcp::ServiceError>>,
    {
        let _ = self.service.service().take_unanswered();
        for _ in 0..MAX_INPUT_ROUNDS {
            if self.is_interrupted() {
                return Err(ClientError::Interrupted {
                    operation,
                    detail: "before the next round was sent".into(),
                });
            }
            let response = match self.within(operation, send(params.clone())).await {
                Ok(response) => response,
                Err(error) => {
                    self.unanswered(operation)?;
                    return Err(error);
                }
            };
            self.unanswered(operation)?;
            match P::round(response) {
                Some(Round::Asked(asked)) => {
                    let responses = match asked.input_requests {
                        Some(requests) => self
                            .answer(requests)
                            .map_err(|questions| ClientError::InputRequired { operation, questions })?,
                        None => InputResponses::new(),
                    };
                    params.answered((!responses.is_empty()).then_some(responses), asked.request_state);
                }
                Some(Round::Done(result)) => return Ok(Answered::Done(result)),
                Some(Round::Task(task)) => return Ok(Answered::Task(Box::new(task))),
                None => {
                    return Err(ClientError::Session {
                        operation,
                        message: "an unknown kind of result".into(),
                    });
                }
            }
        }
        Err(ClientError::Session {
            operation,
            message: format!("the server still asked for input after {MAX_INPUT_ROUNDS} rounds; stopping"),
        })
    }

    /// `tools/call`. A tool that fails is `Ok` with `is_error: Some(true)`. No `arguments`
    /// sends `{}`: the field is optional in the spec, but many servers validate it as an object.
    ///
    /// When the server asks for input (an input-required result on 2026-07-28, a
    /// server-to-client request before), the client answers from its [`Answers`](super::Answers) and retries
    /// with the server's `requestState` as sent, up to [`MAX_INPUT_ROUNDS`] rounds, each within
    /// the timeout. A task the server creates (tasks extension) is followed with `tasks/get`
    /// to its end, and cancelled on the server (`tasks/cancel`) when the run is interrupted.
    ///
    /// # Errors
    ///
    /// As [`Client::ping`] (an unknown tool is usually a server error);
    /// [`ClientError::InputRequired`] naming each question the answers leave open;
    /// [`ClientError::Interrupted`].
    pub async fn call_tool(
        &self,
        tool: &str,
        arguments: Option<JsonObject>,
    ) -> Result<CallToolResult, ClientError> {
        self.ensure_listed().await?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments.unwrap_or_default());
        let peer = self.service.peer();
        let done = self.in_rounds("tools/call", params, |p| peer.call_tool_once(p)).await?;
        match done {
            Answered::Task(task) => self.follow_task(*task).await,
            Answered::Done(result) => Ok(result),
        }
    }

    /// `resources/read`, answering input-required rounds as [`Client::call_tool`] does.
    ///
    /// # Errors
    ///
    /// As [`Client::call_tool`] (an unknown URI is usually a server error).
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let peer = self.service.peer();
        let params = ReadResourceRequestParams::new(uri);
        let done = self.in_rounds("resources/read", params, |p| peer.read_resource_once(p)).await?;
        match done {
            Answered::Done(result) => Ok(result),
            Answered::Task(_) => Err(ClientError::Session {
                operation: "resources/read",
                message: "the server answered with a task, which resources/read does not have".into(),
            }),
        }
    }
}
