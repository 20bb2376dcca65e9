//! What can go wrong driving a Wayland desktop.

use thiserror::Error;

/// A `check.wl.*` failure. The desktop keeps running whatever went wrong: no variant leaves a
/// half-done input (a pressed button is released before the error returns).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum WlError {
    /// An argument is not usable; the message names it and what is allowed.
    #[error("{0}")]
    Usage(String),
    /// The box's container could not be used: no such container (how to start it), not
    /// running, someone else's, no podman.
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// No Wayland compositor was found where the target says (where charly looked, and how to
    /// name the session).
    #[error("{0}")]
    NoSession(String),
    /// The compositor is not sway (no sway IPC socket) and the leaf needs sway, or a tool the
    /// leaf runs is not installed in the target.
    #[error("{0}")]
    Missing(String),
    /// The sway IPC socket could not be used (connect, read, a reply that is not JSON).
    #[error("sway IPC at {socket}: {why}")]
    Ipc {
        /// The socket as charly reached it.
        socket: String,
        /// What went wrong.
        why: String,
    },
    /// sway refused a command; its own error.
    #[error("sway refused `{command}`: {error}")]
    Sway {
        /// The command as sent.
        command: String,
        /// sway's error text.
        error: String,
    },
    /// A tool inside the target failed: its exit status and the tail of its stderr.
    #[error("{tool} failed {place} (exit status {status}){}", stderr_tail(.stderr))]
    Tool {
        /// The program (`wtype`, `grim`, ...).
        tool: String,
        /// `in container charly-web`, `on this machine`.
        place: String,
        /// Its exit status.
        status: i32,
        /// Its stderr.
        stderr: String,
    },
    /// No window matches the target; the windows that exist.
    #[error("{0}")]
    NoWindow(String),
    /// The tool or request did not finish in time.
    #[error("{what} did not finish within {}", charly::client::format_duration(*.after))]
    Timeout {
        /// What ran.
        what: String,
        /// The timeout.
        after: std::time::Duration,
    },
    /// Writing the screenshot failed (no partial file is left).
    #[error("writing {path}: {message}")]
    Write {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

fn stderr_tail(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    let tail = lines[lines.len().saturating_sub(3)..].join("; ");
    if tail.is_empty() { String::new() } else { format!(": {tail}") }
}
