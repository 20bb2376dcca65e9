//! Tools that run as tasks: the MCP tasks extension (`io.modelcontextprotocol/tasks`,
//! SEP-2663), on rmcp's [`TaskManager`].
//!
//! A tool declares whether its calls may become tasks ([`TaskSupport`]) and when
//! ([`TaskStart`]). A `tools/call` of such a tool from a 2026-07-28 request that declares the
//! extension (in its `_meta` client capabilities) is answered with a `CreateTaskResult`; the
//! handler then runs on in the background, and the client follows it with `tasks/get`
//! (status, then the inlined result or error), answers its questions with `tasks/update`
//! (the handler's [`super::CallContext::input`] questions become the task's `inputRequests`)
//! and may stop it with `tasks/cancel`. Every other request runs the tool as a plain call,
//! except that a tool whose tasks are [`TaskSupport::Required`] is refused with -32021.
//!
//! How a task ends: a result (an `isError` one included: a tool that failed is a completed
//! task) is `completed`; a [`super::ToolError::Request`] (a JSON-RPC error) is `failed`; a
//! call stopped by `tasks/cancel` is `cancelled`.

use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use rmcp::ErrorData as McpError;
use rmcp::model::{CallToolResult, ClientCapabilities, ContentBlock};
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};
use tokio::sync::Notify;

use super::cli::panic_message;
use super::context::CallContext;
use super::error::ToolError;
use super::tool::ToolOutput;

/// Whether calls of a tool may run as tasks (the tasks extension, SEP-2663).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// Never: every call is a plain call (the default).
    #[default]
    Forbidden,
    /// A task when the request declares the extension; a plain call otherwise.
    Optional,
    /// Only as a task: a request that does not declare the extension is refused with -32021
    /// (Missing Required Client Capability) naming it, before the handler runs.
    Required,
}

/// When a call that may be a task becomes one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskStart {
    /// As the call starts: the `tools/call` is answered with the task at once (the default).
    #[default]
    Immediately,
    /// When the handler calls [`super::CallContext::start_task`]: until then the call runs
    /// as a plain one (input-required rounds included), and a handler that never calls it
    /// returns a plain result.
    OnRequest,
}

/// How one call relates to tasks, decided before its handler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A plain call.
    Plain,
    /// A task from the start.
    Immediately,
    /// A plain call that becomes a task when its handler asks.
    OnRequest,
}

/// The mode of a call of a tool with `support` and `start`, from a request that `declared`
/// the extension (on protocol 2026-07-28).
///
/// # Errors
///
/// -32021 naming the extension, for a [`TaskSupport::Required`] tool and a request that did
/// not declare it.
pub(crate) fn mode(support: TaskSupport, start: TaskStart, declared: bool) -> Result<Mode, McpError> {
    match (support, declared) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(Mode::Plain),
        (TaskSupport::Required, false) => Err(McpError::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        )),
        (_, true) => Ok(match start {
            TaskStart::Immediately => Mode::Immediately,
            TaskStart::OnRequest => Mode::OnRequest,
        }),
    }
}

/// A call's link to the task it runs as (or may become).
#[derive(Default)]
pub(crate) struct TaskSlot {
    /// The task, once the call is one.
    task: OnceLock<TaskContext>,
    /// Whether [`TaskSlot::request`] can make the call a task ([`Mode::OnRequest`]).
    possible: bool,
    /// Notified by the handler asking to become a task.
    requested: Notify,
    /// Notified once the task exists.
    started: Notify,
}

impl TaskSlot {
    /// The slot of a call in `mode`.
    pub(crate) fn new(mode: Mode) -> TaskSlot {
        TaskSlot { possible: mode == Mode::OnRequest, ..TaskSlot::default() }
    }

    /// The task, if the call is one.
    pub(crate) fn task(&self) -> Option<&TaskContext> {
        self.task.get()
    }

    /// Makes the call the task `task` is the context of.
    pub(crate) fn start(&self, task: TaskContext) {
        let _ = self.task.set(task);
        self.started.notify_waiters();
    }

    /// The handler's request to become a task: resolves once it is one (`true`), or at once
    /// with `false` when the call cannot be one.
    pub(crate) async fn request(&self) -> bool {
        if self.task.get().is_some() {
            return true;
        }
        if !self.possible {
            return false;
        }
        let started = self.started.notified();
        tokio::pin!(started);
        started.as_mut().enable();
        self.requested.notify_one();
        if self.task.get().is_none() {
            started.await;
        }
        true
    }

    /// Resolves when the handler has asked to become a task; never for a call that cannot.
    pub(crate) async fn requested(&self) {
        if self.possible { self.requested.notified().await } else { std::future::pending().await }
    }
}

/// A running handler, its panic caught.
pub(crate) type Run =
    Pin<Box<dyn Future<Output = std::thread::Result<Result<ToolOutput, ToolError>>> + Send>>;

/// The task's options: rmcp's defaults (a 5-minute TTL), polled every half second.
pub(crate) fn options() -> TaskOptions {
    TaskOptions::default().with_poll_interval_ms(500)
}

/// The body of a task: `run` until it ends or `tasks/cancel` stops it, its outcome as the
/// task's terminal state.
pub(crate) async fn run(run: Run, task: TaskContext, cx: CallContext) -> Result<CallToolResult, TaskExit> {
    let outcome = tokio::select! {
        biased;
        outcome = run => outcome,
        () = task.cancelled() => {
            // Stops what the handler left running (child processes, blocking runners).
            cx.cancellation_token().cancel();
            return Err(TaskExit::Cancelled);
        }
    };
    match outcome {
        Ok(Ok(output)) => Ok(output.into_result()),
        Ok(Err(ToolError::Request(error))) => Err(TaskExit::Error(error)),
        Ok(Err(ToolError::Cancelled)) if task.is_cancel_requested() => Err(TaskExit::Cancelled),
        Ok(Err(err)) => {
            tracing::debug!(tool = %cx.tool(), task = task.task_id(), error = %err, "task failed");
            Ok(error_result(&err))
        }
        Err(payload) => Ok(error_result(&ToolError::Panicked {
            tool: cx.tool().to_owned(),
            message: panic_message(&*payload),
        })),
    }
}

/// A failed call as an `isError` result.
pub(crate) fn error_result(err: &ToolError) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(err.to_string())])
}

/// What a question asked inside a task gets when the task cannot wait for the answer.
pub(crate) fn exit_error(exit: TaskExit) -> ToolError {
    match exit {
        TaskExit::Cancelled => ToolError::Cancelled,
        TaskExit::Error(error) => ToolError::Request(error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_declaring_request_gets_a_task() {
        use TaskStart::{Immediately, OnRequest};
        assert_eq!(mode(TaskSupport::Forbidden, Immediately, true).unwrap(), Mode::Plain);
        assert_eq!(mode(TaskSupport::Optional, Immediately, false).unwrap(), Mode::Plain);
        assert_eq!(mode(TaskSupport::Optional, Immediately, true).unwrap(), Mode::Immediately);
        assert_eq!(mode(TaskSupport::Required, OnRequest, true).unwrap(), Mode::OnRequest);
        let refused = mode(TaskSupport::Required, Immediately, false).unwrap_err();
        assert_eq!(refused.code.0, -32021);
        let data = refused.data.expect("data");
        assert!(data["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object());
    }
}
