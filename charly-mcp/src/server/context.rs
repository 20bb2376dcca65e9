//! [`CallContext`]: what one tool call knows about itself, and [`Output`], its output sink.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ListRootsResult, LoggingLevel, ProgressToken,
};
use rmcp::task_manager::TaskContext;
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use super::error::ToolError;
use super::input::{Channel, Input};
use super::logging::{LevelFilter, Logger};
use super::progress::{Gate, Progress};
use super::tasks::TaskSlot;
use crate::model::JsonObject;

/// The context of one tool call; cheap to clone, `Send + 'static`, so it can move into
/// `spawn_blocking` or child tasks.
///
/// It holds a fresh run id, the merged meta (the client's `_meta`, then the server's
/// constructor meta, then the host's meta: later keys win), a cancellation token, a
/// [`Progress`] reporter, a [`Logger`], the call's own [`Output`] sink, and the way to ask the
/// client for input ([`CallContext::elicit`], [`CallContext::create_message`],
/// [`CallContext::list_roots`], [`CallContext::input`]): server-to-client requests for peers
/// before protocol 2026-07-28, input-required results for 2026-07-28 peers.
#[derive(Clone)]
pub struct CallContext {
    inner: Arc<Inner>,
}

struct Inner {
    tool: Arc<str>,
    run_id: String,
    meta: JsonObject,
    ct: CancellationToken,
    progress: Progress,
    logger: Logger,
    out: Output,
    peer: Option<Peer<RoleServer>>,
    /// How questions reach the client.
    channel: Channel,
    /// The task the call runs as, or may become.
    task: TaskSlot,
}

/// A fresh UUID v4 for a call's run id. uuid's `fast-rng` feature draws it from `rand`'s
/// thread-local generator instead of a `getrandom` system call per call (which measured a
/// third of the server's own CPU time per `tools/call`).
fn fresh_run_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(crate) struct ContextParts {
    pub(crate) tool: Arc<str>,
    pub(crate) meta: JsonObject,
    pub(crate) ct: CancellationToken,
    pub(crate) progress_token: Option<ProgressToken>,
    pub(crate) peer: Option<Peer<RoleServer>>,
    pub(crate) channel: Channel,
    pub(crate) levels: LevelFilter,
    pub(crate) gate: Gate,
    pub(crate) task: TaskSlot,
}

impl CallContext {
    pub(crate) fn from_parts(p: ContextParts) -> CallContext {
        CallContext {
            inner: Arc::new(Inner {
                run_id: fresh_run_id(),
                progress: Progress::new(p.progress_token, p.peer.clone(), p.gate.clone()),
                logger: Logger::new(p.tool.clone(), p.peer.clone(), p.levels, p.gate),
                tool: p.tool,
                meta: p.meta,
                ct: p.ct,
                out: Output::default(),
                peer: p.peer,
                channel: p.channel,
                task: p.task,
            }),
        }
    }

    /// A context with no client behind it, for calling a [`super::Tool`] directly (tests,
    /// other front ends): progress and log messages are dropped, sampling and elicitation
    /// fail, and the meta is `meta`.
    pub fn detached(tool: &str, meta: JsonObject) -> CallContext {
        CallContext::from_parts(ContextParts {
            tool: tool.into(),
            meta,
            ct: CancellationToken::new(),
            progress_token: None,
            peer: None,
            channel: Channel::Requests { peer: None, stateless: false },
            levels: LevelFilter::default(),
            gate: Gate::open(),
            task: TaskSlot::default(),
        })
    }

    /// The name of the tool being called.
    pub fn tool(&self) -> &str {
        &self.inner.tool
    }

    /// A fresh id for this call (a UUID v4), for logs and correlation.
    pub fn run_id(&self) -> &str {
        &self.inner.run_id
    }

    /// The merged meta: the client's `_meta` (including `progressToken`), overridden by the
    /// server's constructor meta, overridden by the host's meta (for instance the identity the
    /// HTTP layer authenticated). Identity must be read from keys the host sets, never trusted
    /// from the client alone.
    pub fn meta(&self) -> &JsonObject {
        &self.inner.meta
    }

    /// Cancelled when the client sends `notifications/cancelled` for this call, the client
    /// goes away, or the server shuts down.
    pub fn cancellation_token(&self) -> &CancellationToken {
        &self.inner.ct
    }

    /// Whether the call has been cancelled (for blocking code to poll between steps).
    pub fn is_cancelled(&self) -> bool {
        self.inner.ct.is_cancelled()
    }

    /// Resolves when the call is cancelled.
    pub async fn cancelled(&self) {
        self.inner.ct.cancelled().await
    }

    /// The progress reporter.
    pub fn progress(&self) -> &Progress {
        &self.inner.progress
    }

    /// The logger (`notifications/message`).
    pub fn log(&self) -> &Logger {
        &self.inner.logger
    }

    /// This call's output sink. Whatever is written to it becomes the result's text
    /// content. Each call has its own; nothing goes to the process's stdout.
    pub fn out(&self) -> Output {
        self.inner.out.clone()
    }

    /// The connection to the client, for notifications and requests the framework does not
    /// wrap (rmcp refuses server-to-client requests to 2026-07-28 peers). `None` for a
    /// [`CallContext::detached`] context.
    pub fn peer(&self) -> Option<&Peer<RoleServer>> {
        self.inner.peer.as_ref()
    }

    /// The client capabilities this call may rely on: the request's own (`_meta`) on protocol
    /// 2026-07-28, those declared in `initialize` before; empty without a client.
    pub fn client_capabilities(&self) -> ClientCapabilities {
        match &self.inner.channel {
            Channel::Rounds(rounds) => rounds.capabilities().clone(),
            Channel::Requests { peer, .. } => {
                peer.as_ref().and_then(|p| p.peer_info()).map(|i| i.capabilities.clone()).unwrap_or_default()
            }
        }
    }

    /// One question to the client under `key`, a name of the handler's choosing that is
    /// unique within the call (`user_name`, `confirm`): on protocol 2026-07-28 it is the key of
    /// the question in the input-required result and of the client's answer in
    /// `inputResponses`. [`CallContext::elicit`] and the others number their keys instead.
    ///
    /// On 2026-07-28 the handler runs once per round, so it must ask the same questions in
    /// the same order every time; questions asked together (`tokio::join!`) go out in one
    /// round.
    pub fn input(&self, key: impl Into<String>) -> Input<'_> {
        Input { channel: &self.inner.channel, task: self.inner.task.task(), key: Some(key.into()) }
    }

    /// The id of the task this call runs as (the tasks extension, SEP-2663), if it is one.
    /// A task's questions ([`CallContext::input`] and the others) become its `inputRequests`,
    /// answered by `tasks/update` while the handler waits; `tasks/cancel` cancels the call.
    /// A task has no progress token or connection: its progress and log messages are dropped.
    pub fn task_id(&self) -> Option<&str> {
        self.inner.task.task().map(TaskContext::task_id)
    }

    /// Makes the call a task now, for a tool started [`super::TaskStart::OnRequest`] whose
    /// request declared the tasks extension: the `tools/call` is answered with the task and
    /// the handler runs on as it, so what it does next (a long job, more questions) is
    /// followed with `tasks/get`. Resolves to whether the call is a task: `true` once it is
    /// (at once for a call that already is one), `false` at once for a call that cannot be
    /// one (it goes on as a plain call).
    pub async fn start_task(&self) -> bool {
        self.inner.task.request().await
    }

    /// The call's task slot, for the session handler.
    pub(crate) fn task_slot(&self) -> &TaskSlot {
        &self.inner.task
    }

    /// Which run of the call this is: 1 for the first; on protocol 2026-07-28 each
    /// input-required round adds one (the count travels in the sealed request state). Always
    /// 1 before 2026-07-28, where a call waits for its answers instead.
    pub fn round(&self) -> u32 {
        self.rounds().map_or(1, super::input::Rounds::round)
    }

    /// The rounds of a 2026-07-28 call, if it is one.
    pub(crate) fn rounds(&self) -> Option<&super::input::Rounds> {
        match &self.inner.channel {
            Channel::Rounds(rounds) => Some(rounds),
            Channel::Requests { .. } => None,
        }
    }

    fn numbered(&self) -> Input<'_> {
        Input { channel: &self.inner.channel, task: self.inner.task.task(), key: None }
    }

    /// Asks the client's model for a message (`sampling/createMessage`): a request over the
    /// session before protocol 2026-07-28 (over Streamable HTTP it rides this call's
    /// stream), an input-required result on 2026-07-28. See [`Input::create_message`].
    ///
    /// # Errors
    ///
    /// [`ToolError::Message`] without sending anything when the client did not declare the
    /// `sampling` capability, or the server is stateless and the client older than
    /// 2026-07-28; [`ToolError::Client`] when the client refuses or goes away;
    /// [`ToolError::Request`] (a JSON-RPC error for the call) on 2026-07-28 when the request
    /// declared no `sampling` capability or the client's answer is not a sampling result.
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ToolError> {
        self.numbered().create_message(params).await
    }

    /// Asks the user for input (`elicitation/create`); see [`CallContext::create_message`]
    /// and [`Input::elicit`].
    ///
    /// # Errors
    ///
    /// As [`CallContext::create_message`], for the `elicitation` capability of the request's
    /// mode (form, or url; an empty `elicitation` object means form, MCP 2025-11-25
    /// "Elicitation").
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, ToolError> {
        self.numbered().elicit(params).await
    }

    /// Asks for the client's roots (`roots/list`); see [`CallContext::create_message`].
    ///
    /// # Errors
    ///
    /// As [`CallContext::create_message`], for the `roots` capability.
    pub async fn list_roots(&self) -> Result<ListRootsResult, ToolError> {
        self.numbered().list_roots().await
    }

    /// Runs a child process to completion, killing it if the call is cancelled.
    ///
    /// The command is spawned with `kill_on_drop(true)`; on cancellation the child is killed
    /// (`SIGKILL`) and waited for, so it is gone (reaped, not a zombie) when this returns
    /// [`ToolError::Cancelled`]. Its stdin is `/dev/null` and its stdout and stderr are captured
    /// into the returned [`std::process::Output`], so a child can never write into the stdio
    /// transport's JSON-RPC stream. Use this (or `kill_on_drop` plus
    /// [`CallContext::cancelled`], with stdout redirected) for every child a tool starts, so
    /// that cancelling a call stops its children too. Only the child itself is killed: a
    /// child that starts processes of its own should `exec` the long-running one, as a shell
    /// wrapper does with `exec sleep 30`.
    ///
    /// # Errors
    ///
    /// [`ToolError::Io`] when the process cannot be spawned or waited for,
    /// [`ToolError::Cancelled`] when the call was cancelled first.
    pub async fn run_command(
        &self,
        command: &mut tokio::process::Command,
    ) -> Result<std::process::Output, ToolError> {
        use std::process::Stdio;
        command.kill_on_drop(true).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn()?;
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let finished = {
            // What `Child::wait_with_output` does, borrowing the child, so that a cancelled
            // call can still kill it and wait for it.
            let run = async {
                let (status, stdout, stderr) =
                    tokio::try_join!(child.wait(), read_all(stdout), read_all(stderr))?;
                Ok::<_, io::Error>(std::process::Output { status, stdout, stderr })
            };
            tokio::select! {
                output = run => Some(output),
                () = self.cancelled() => None,
            }
        };
        match finished {
            Some(output) => Ok(output?),
            None => {
                // SIGKILL, then reap: the child is gone before the call reports its end.
                if let Err(e) = child.kill().await {
                    tracing::warn!("cannot kill the child process of a cancelled call: {e}");
                }
                Err(ToolError::Cancelled)
            }
        }
    }

    /// Logs from synchronous code at `level`; see [`Logger::log_blocking`].
    pub fn log_blocking(&self, level: LoggingLevel, message: impl Into<serde_json::Value>) -> bool {
        self.inner.logger.log_blocking(level, message)
    }
}

/// Everything `pipe` yields until its end (nothing for no pipe).
async fn read_all(pipe: Option<impl tokio::io::AsyncRead + Unpin>) -> io::Result<Vec<u8>> {
    use tokio::io::AsyncReadExt as _;
    let mut bytes = Vec::new();
    if let Some(mut pipe) = pipe {
        pipe.read_to_end(&mut bytes).await?;
    }
    Ok(bytes)
}

impl fmt::Debug for CallContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallContext")
            .field("tool", &self.inner.tool)
            .field("run_id", &self.inner.run_id)
            .field("meta", &self.inner.meta)
            .finish_non_exhaustive()
    }
}

/// The output sink of one call: an in-memory buffer implementing [`io::Write`].
///
/// Clones write to the same buffer. What a call wrote becomes its result's text content
/// (invalid UTF-8 is replaced with U+FFFD). The lock is per call, so calls never wait for
/// each other.
#[derive(Clone, Debug, Default)]
pub struct Output(Arc<Mutex<Vec<u8>>>);

impl Output {
    /// Takes the text written so far, leaving the buffer empty.
    pub fn take_text(&self) -> String {
        let bytes = std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner));
        match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
        }
    }
}

impl io::Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
