//! `tools/call` of a [`Session`]: the arguments validated, the handler run (in
//! input-required rounds on 2026-07-28), or run as a task (`super::super::tasks`).

use std::panic::AssertUnwindSafe;

use futures::FutureExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CreateTaskResult, InputRequiredResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::super::cli::panic_message;
use super::super::context::{CallContext, ContextParts};
use super::super::error::ToolError;
use super::super::input::{Channel, RoundEnd, Rounds};
use super::super::logging::LevelFilter;
use super::super::progress::{Gate, check_progress_token};
use super::super::request_state::{Binding, Sealed};
use super::super::schema_errors;
use super::super::state::Spelling;
use super::super::tasks::{self, Mode, Run, TaskSlot, error_result};
use super::super::tool::{ToolOutput, Validation};
use super::{Session, host_meta, sessionless};
use crate::catalog::JsonObject;
use crate::quote::Quoted;

impl Session {
    /// `tools/call`. A failed call's texts name tools as the session's `tools/list` does: a
    /// session given the `_`-joined names reads `` tool `box_write`: ... ``, not the dotted
    /// name it never saw (a task's result, fetched later, is left as it is).
    pub(super) async fn call(
        &self,
        params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        #[cfg(feature = "http")]
        let _running = self.calls.as_ref().map(|calls| calls.running.token());
        let spelling = self.spelling_of(&context);
        // A tool that may change things: resources are checked for changes once it ends.
        let changes = self
            .server
            .routes
            .get(&*params.name)
            .is_some_and(|&i| !self.server.tools[i].annotations().read_only_hint);
        let response = self.call_as_named(params, context).await;
        if changes {
            self.server.after_call().await;
        }
        let response = response?;
        Ok(match (spelling, response) {
            (Spelling::Underscored, CallToolResponse::Complete(mut result))
                if result.is_error == Some(true) =>
            {
                self.server.respell_texts(&mut result.content);
                CallToolResponse::Complete(result)
            }
            (_, response) => response,
        })
    }

    /// The spelling of tool names this request's client sees: on protocol 2026-07-28 the one
    /// the request's `_meta` names; on earlier revisions the one the session's `initialize`
    /// named (a `_meta` clientInfo does not override it), and for a request with no session
    /// (stateless HTTP) the `_`-joined names every client accepts.
    pub(super) fn spelling_of(&self, context: &RequestContext<RoleServer>) -> Spelling {
        if Self::is_modern(context) {
            self.server.spelling(context.client_info().as_ref().map(|c| c.name.as_str()).or(Some("")))
        } else if sessionless(context) {
            // rmcp gives such a request a made-up peer (clientInfo `rmcp`): nobody to ask.
            self.server.spelling(None)
        } else {
            let info = context.peer.peer_info();
            self.server.spelling(info.as_ref().map(|info| info.client_info.name.as_str()))
        }
    }

    async fn call_as_named(
        &self,
        mut params: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let server = &self.server;
        let Some(&index) = server.routes.get(&*params.name) else {
            // The same for a tool left out by read-only mode as for one that never existed.
            let message = format!(
                "unknown tool `{}`: tools/list names the tools this server has",
                Quoted::new(&*params.name)
            );
            return Err(McpError::invalid_params(message, None));
        };
        let tool = &server.tools[index];
        check_progress_token(&context)?;
        #[cfg(feature = "oauth")]
        if let Some(write) = missing_write(&context)
            && !tool.annotations().read_only_hint
        {
            // The HTTP layer answers such a call 403 first; this holds whatever it read.
            return Err(McpError::invalid_request(
                format!(
                    "tool `{}` is not read-only: calling it needs scope {write}, which the access token lacks",
                    params.name
                ),
                None,
            ));
        }
        let (support, start) = tool.tasks;
        let mode = tasks::mode(support, start, Self::declares_tasks(&context))?;
        let responses = params.input_responses.take();
        let state = params.request_state.take();
        let args = params.arguments.unwrap_or_default();
        let binding = Self::is_modern(&context)
            .then(|| Binding::new("tools/call", &tool.name, &args, host_meta(&context).map(|h| &h.0)));
        let channel = self.channel(&context, binding.as_ref(), state.as_deref(), responses)?;
        let instance = Value::Object(args);
        if tool.validation == Validation::Schema {
            let validator = match server.validator(index) {
                Ok(validator) => validator,
                Err(why) => return Ok(error_result(&ToolError::msg(why)).into()),
            };
            if !validator.is_valid(&instance) {
                let message = schema_errors::describe(validator, &instance);
                let err = ToolError::InvalidArguments { tool: tool.name.clone(), message };
                return Ok(error_result(&err).into());
            }
        }
        let Value::Object(args) = instance else { unreachable!("built from an object above") };
        if mode == Mode::Immediately {
            return Ok(self.spawn_task(index, args, &context).into());
        }

        let gate = Gate::open();
        let cx = self.context_for(&tool.name, &context, channel, &gate, mode);
        // A call that may become a task outlives its request: its token is its own, cancelled
        // when the call ends here (the guard) unless it went on as a task.
        let guard = (mode == Mode::OnRequest).then(|| cx.cancellation_token().clone().drop_guard());
        tracing::debug!(tool = %tool.name, run_id = cx.run_id(), "call");
        let mut run: Run = Box::pin(AssertUnwindSafe(tool.call(args, cx.clone())).catch_unwind());
        let step = tokio::select! {
            biased;
            outcome = &mut run => Step::Ended(Some(match outcome {
                Ok(result) => result,
                Err(payload) => Err(ToolError::Panicked { tool: tool.name.clone(), message: panic_message(&*payload) }),
            })),
            // A 2026-07-28 call asked its client for input: this round is over.
            () = asked(&cx) => Step::Ended(None),
            // The handler asked to go on as a task (`CallContext::start_task`).
            () = cx.task_slot().requested() => Step::Task,
            () = context.ct.cancelled() => Step::Cancelled,
            // The call's HTTP session was deleted: stop it now, child processes included, not
            // after rmcp's drain (`compat/session_end.rs`). A closed transport (stdin at its
            // end) is rmcp's to handle: it cancels `context.ct` after its drain.
            () = self.watch.ended(&context) => {
                context.ct.cancel();
                Step::Cancelled
            }
            // The server is shutting down (`ServerHandle::shutdown`).
            () = self.stopping() => {
                context.ct.cancel();
                Step::Cancelled
            }
        };
        let outcome = match step {
            Step::Ended(outcome) => outcome,
            Step::Cancelled => {
                // The handler sees the cancellation too (a call that may become a task has a
                // token of its own) and gets a moment to stop: `run_command` kills and reaps
                // its child, so the call ends with its children gone, which
                // `ServerHandle::shutdown` waits for. A handler that ignores it is dropped.
                cx.cancellation_token().cancel();
                let _ = tokio::time::timeout(CANCEL_DRAIN, &mut run).await;
                Some(Err(ToolError::Cancelled))
            }
            Step::Task => {
                let task_cx = cx.clone();
                let task = server.tasks.spawn(tasks::options(), move |task| {
                    task_cx.task_slot().start(task.clone());
                    Box::pin(tasks::run(run, task, task_cx))
                });
                if let Some(guard) = guard {
                    guard.disarm();
                }
                // The task polls the handler from now on, so reports in flight can end.
                gate.close().await;
                tracing::debug!(tool = %tool.name, task = %task.task_id, "call became a task");
                return Ok(CreateTaskResult::new(task).into());
            }
        };
        drop(run);
        gate.close().await;
        let outcome = match (cx.rounds(), binding) {
            (Some(rounds), Some(binding)) => match rounds.end(outcome) {
                RoundEnd::Done(outcome) => outcome,
                RoundEnd::Asked { requests, used } => {
                    cx.cancellation_token().cancel();
                    let state = server.seal.seal(&binding, used, rounds.round());
                    tracing::debug!(tool = %tool.name, asked = requests.len(), "input required");
                    return Ok(InputRequiredResult::new(Some(requests), Some(state)).into());
                }
                RoundEnd::Failed(error) => return Err(error),
            },
            _ => outcome.unwrap_or(Err(ToolError::Cancelled)),
        };
        Ok(match outcome {
            Ok(ToolOutput(result)) => result.into(),
            Err(ToolError::Request(error)) => return Err(error),
            Err(err) => {
                tracing::debug!(tool = %tool.name, error = %err, "call failed");
                error_result(&err).into()
            }
        })
    }

    /// Resolves when the server's HTTP endpoint shuts down; never on other transports.
    async fn stopping(&self) {
        #[cfg(feature = "http")]
        if let Some(calls) = &self.calls {
            return calls.stop.cancelled().await;
        }
        std::future::pending().await
    }

    /// Whether this request declares the tasks extension, on protocol 2026-07-28 (the
    /// revision the extension is defined for; its own `_meta` capabilities, or for a session
    /// those it declared).
    fn declares_tasks(context: &RequestContext<RoleServer>) -> bool {
        Self::is_modern(context) && context.client_capabilities().is_some_and(|c| c.supports_tasks())
    }

    /// Starts tool `index` with `args` as a task at once; its seed state answers the call.
    fn spawn_task(
        &self,
        index: usize,
        args: JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> CreateTaskResult {
        let tool = self.server.tools[index].clone();
        let capabilities = context.client_capabilities().unwrap_or_default();
        let parts = ContextParts {
            tool: tool.name.as_str().into(),
            meta: self.merged_meta(context),
            // Its own: the task outlives the request.
            ct: CancellationToken::new(),
            progress_token: None,
            peer: None,
            // Questions go to the task (`Input`); the rounds carry the request's capabilities.
            channel: Channel::Rounds(Box::new(Rounds::new(capabilities, Sealed::default(), None))),
            levels: LevelFilter::for_request(None),
            gate: Gate::open(),
            task: TaskSlot::default(),
        };
        let task = self.server.tasks.spawn(tasks::options(), move |task| {
            let cx = CallContext::from_parts(parts);
            cx.task_slot().start(task.clone());
            tracing::debug!(tool = %tool.name, run_id = cx.run_id(), task = task.task_id(), "task");
            let run: Run = Box::pin(AssertUnwindSafe(tool.call(args, cx.clone())).catch_unwind());
            Box::pin(tasks::run(run, task, cx))
        });
        CreateTaskResult::new(task)
    }
}

/// Where a call's first stretch ended.
enum Step {
    /// The handler finished (`Some`), or asked its client for input (`None`).
    Ended(Option<Result<ToolOutput, ToolError>>),
    /// The handler asked to go on as a task.
    Task,
    /// The call was cancelled (`notifications/cancelled`, its session or its client gone, the
    /// server shutting down).
    Cancelled,
}

/// How long a cancelled call's handler may take to stop (to kill and reap its children)
/// before it is dropped.
const CANCEL_DRAIN: std::time::Duration = std::time::Duration::from_secs(2);

/// Resolves when a 2026-07-28 call has asked its client for input; never otherwise.
pub(super) async fn asked(cx: &CallContext) {
    match cx.rounds() {
        Some(rounds) => rounds.asked().await,
        None => std::future::pending().await,
    }
}

/// The write scope, when this request came with an access token that lacks it
/// (`HttpOptions::oauth`).
#[cfg(feature = "oauth")]
fn missing_write(context: &RequestContext<RoleServer>) -> Option<&str> {
    let parts = context.extensions.get::<http::request::Parts>()?;
    parts.extensions.get::<crate::server::oauth::ScopeGrant>()?.missing_write.as_deref()
}
