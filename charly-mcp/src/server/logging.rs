//! [`Logger`]: `notifications/message` for one call, honouring `logging/setLevel` (before
//! protocol 2026-07-28) or the request's `_meta` log level (2026-07-28).

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::progress::Gate;

/// The least severe level a session sends; set by the client's `logging/setLevel`.
/// Before any `setLevel`, `info` and above are sent.
#[derive(Clone, Debug)]
pub(crate) struct LevelFilter(Arc<AtomicU8>);

impl Default for LevelFilter {
    fn default() -> Self {
        LevelFilter(Arc::new(AtomicU8::new(rank(LoggingLevel::Info))))
    }
}

impl LevelFilter {
    /// The filter of one 2026-07-28 request: its `_meta` log level, or nothing at all when it
    /// names none (the revision sends log messages only to requests that ask for them).
    pub(crate) fn for_request(level: Option<LoggingLevel>) -> LevelFilter {
        LevelFilter(Arc::new(AtomicU8::new(level.map_or(OFF, rank))))
    }

    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level), Ordering::Relaxed);
    }

    fn allows(&self, level: LoggingLevel) -> bool {
        rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

/// Above every level: nothing is sent.
const OFF: u8 = u8::MAX;

/// Severity order of RFC 5424 levels as MCP uses them, `debug` lowest.
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// Sends log messages of one tool call to the client as `notifications/message`
/// (MCP 2025-06-18, "Logging"), with the tool name as `logger`.
///
/// Messages below the session's level (`logging/setLevel`; `info` until the client sets
/// one) are not sent. Every message is also emitted as a `tracing` event (stderr), and none
/// is sent once the call has finished.
#[derive(Clone)]
pub struct Logger {
    name: Arc<str>,
    peer: Option<Peer<RoleServer>>,
    filter: LevelFilter,
    gate: Gate,
}

impl Logger {
    pub(crate) fn new(
        name: Arc<str>,
        peer: Option<Peer<RoleServer>>,
        filter: LevelFilter,
        gate: Gate,
    ) -> Logger {
        Logger { name, peer, filter, gate }
    }

    /// Sends `data` (a string or any JSON value) at `level`. Returns whether it was sent.
    pub async fn log(&self, level: LoggingLevel, data: impl Into<Value>) -> bool {
        let data = data.into();
        tracing::debug!(logger = %self.name, ?level, %data, "tool log");
        let Some(peer) = &self.peer else { return false };
        if !self.filter.allows(level) {
            return false;
        }
        let open = self.gate.read().await;
        if !*open {
            return false;
        }
        let mut param = LoggingMessageNotificationParam::new(level, data);
        param.logger = Some(self.name.to_string());
        #[allow(deprecated)] // Logging is deprecated only from protocol 2026-07-28 on.
        let sent = peer.notify_logging_message(param).await;
        drop(open);
        sent.is_ok()
    }

    /// [`Logger::log`] at `debug`.
    pub async fn debug(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Debug, data).await
    }

    /// [`Logger::log`] at `info`.
    pub async fn info(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Info, data).await
    }

    /// [`Logger::log`] at `warning`.
    pub async fn warning(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Warning, data).await
    }

    /// [`Logger::log`] at `error`.
    pub async fn error(&self, data: impl Into<Value>) -> bool {
        self.log(LoggingLevel::Error, data).await
    }

    /// [`Logger::log`] from synchronous code (a blocking CLI runner).
    ///
    /// # Panics
    ///
    /// When called from async code running on a Tokio worker thread: use `log` there.
    pub fn log_blocking(&self, level: LoggingLevel, data: impl Into<Value>) -> bool {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => handle.block_on(self.log(level, data)),
            Err(_) => false,
        }
    }
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger").field("name", &self.name).finish_non_exhaustive()
    }
}
