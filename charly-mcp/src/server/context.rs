//! [`CallContext`]: what one tool call knows about itself, and [`Output`], its output sink.

use std::fmt;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    LoggingLevel, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use super::error::ToolError;
use super::logging::{LevelFilter, Logger};
use super::progress::{Gate, Progress};
use crate::model::JsonObject;

/// The context of one tool call; cheap to clone, `Send + 'static`, so it can move into
/// `spawn_blocking` or child tasks.
///
/// It holds a fresh run id, the merged meta (the client's `_meta`, then the server's
/// constructor meta, then the host's meta: later keys win), a cancellation token, a
/// [`Progress`] reporter, a [`Logger`], the call's own [`Output`] sink, and the connection
/// to the client for sampling and elicitation requests.
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
    /// Served without a session (stateless Streamable HTTP): the client cannot answer a
    /// request from the server.
    stateless: bool,
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
    pub(crate) stateless: bool,
    pub(crate) levels: LevelFilter,
    pub(crate) gate: Gate,
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
                stateless: p.stateless,
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
            stateless: false,
            levels: LevelFilter::default(),
            gate: Gate::open(),
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

    /// The connection to the client, for requests the framework does not wrap.
    /// `None` for a [`CallContext::detached`] context.
    pub fn peer(&self) -> Option<&Peer<RoleServer>> {
        self.inner.peer.as_ref()
    }

    fn require_peer(&self) -> Result<&Peer<RoleServer>, ToolError> {
        self.peer().ok_or_else(|| ToolError::msg("this call has no client connection to send requests to"))
    }

    /// The client connection for a `method` request, once the client can answer it: a
    /// session exists, and `missing` (given the capabilities the client declared in
    /// `initialize`) names no capability the request needs. Sending it anyway would leave the
    /// call waiting for an answer that never comes.
    fn peer_for(
        &self,
        method: &str,
        missing: impl FnOnce(&ClientCapabilities) -> Option<&'static str>,
    ) -> Result<&Peer<RoleServer>, ToolError> {
        let peer = self.require_peer()?;
        if self.inner.stateless {
            return Err(ToolError::msg(format!(
                "cannot send `{method}` to the client: this server is stateless (Streamable HTTP \
                 without sessions), and a client answers server requests only within a session"
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

    /// Asks the client to sample an LLM (`sampling/createMessage`). The request rides this
    /// call's stream over Streamable HTTP.
    ///
    /// # Errors
    ///
    /// [`ToolError::Message`] without sending anything when the client did not declare the
    /// `sampling` capability, or the server is stateless (MCP 2025-11-25, "Sampling":
    /// clients that support sampling declare it); [`ToolError::Client`] when the client
    /// refuses or goes away.
    pub async fn create_message(
        &self,
        params: CreateMessageRequestParams,
    ) -> Result<CreateMessageResult, ToolError> {
        let peer = self.peer_for("sampling/createMessage", |c| c.sampling.is_none().then_some("sampling"))?;
        #[allow(deprecated)] // Sampling is deprecated only from protocol 2026-07-28 on.
        let result = peer.create_message(params).await?;
        Ok(result)
    }

    /// Asks the client for user input (`elicitation/create`).
    ///
    /// # Errors
    ///
    /// [`ToolError::Message`] without sending anything when the client did not declare the
    /// `elicitation` capability for the request's mode (form, or url; an empty
    /// `elicitation` object means form, MCP 2025-11-25 "Elicitation"), or the server is
    /// stateless; [`ToolError::Client`] when the client refuses or goes away.
    pub async fn elicit(&self, params: ElicitRequestParams) -> Result<ElicitResult, ToolError> {
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        let peer = self.peer_for("elicitation/create", |c| match (&c.elicitation, url) {
            (None, _) => Some("elicitation"),
            (Some(e), true) if e.url.is_none() => Some("elicitation.url"),
            // `elicitation: {}` means form only; naming `url` alone leaves form out.
            (Some(e), false) if e.form.is_none() && e.url.is_some() => Some("elicitation.form"),
            _ => None,
        })?;
        Ok(peer.create_elicitation(params).await?)
    }

    /// Runs a child process to completion, killing it if the call is cancelled.
    ///
    /// The command is spawned with `kill_on_drop(true)`; on cancellation the child is killed
    /// and [`ToolError::Cancelled`] returned. Its stdin is `/dev/null` and its stdout and
    /// stderr are captured into the returned [`std::process::Output`], so a child can never
    /// write into the stdio transport's JSON-RPC stream. Use this (or `kill_on_drop` plus
    /// [`CallContext::cancelled`], with stdout redirected) for every child a tool starts, so
    /// that cancelling a call stops its children too.
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
        let child = command.spawn()?;
        tokio::select! {
            output = child.wait_with_output() => Ok(output?),
            () = self.cancelled() => Err(ToolError::Cancelled),
        }
    }

    /// Logs from synchronous code at `level`; see [`Logger::log_blocking`].
    pub fn log_blocking(&self, level: LoggingLevel, message: impl Into<serde_json::Value>) -> bool {
        self.inner.logger.log_blocking(level, message)
    }
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
