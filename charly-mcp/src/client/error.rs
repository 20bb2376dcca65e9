//! [`ClientError`]: everything that can stop a client operation.

use std::time::Duration;

/// An error from connecting to, or talking with, an MCP server.
///
/// A tool that *ran and failed* is not an error here: it is a `CallToolResult` with
/// `isError: true`, which the `call` command turns into exit status 1 (see
/// [`crate::client::Status`]). This type is for everything else.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// A transport name charly does not know.
    #[error("unsupported mcp transport \"{0}\" (expected http, sse or stdio)")]
    UnsupportedTransport(String),
    /// A URL or command that cannot be an endpoint.
    #[error("{0}")]
    InvalidEndpoint(String),
    /// Connecting or the `initialize` handshake failed.
    #[error("cannot connect to {endpoint}: {message}")]
    Connect {
        /// The URL or command line.
        endpoint: String,
        /// What went wrong, with its causes.
        message: String,
    },
    /// An operation did not finish within its timeout; `notifications/cancelled` was sent.
    #[error("{}", timeout_text(operation, *timeout, endpoint.as_deref()))]
    Timeout {
        /// The MCP method, e.g. `tools/call` (`connect` for starting the session).
        operation: &'static str,
        /// The timeout that elapsed.
        timeout: Duration,
        /// The URL or command line, for a timeout while connecting.
        endpoint: Option<String>,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{operation}: server error {code}: {message}")]
    Server {
        /// The MCP method.
        operation: &'static str,
        /// The JSON-RPC error code (e.g. -32601 method not found, -32602 invalid params).
        code: i32,
        /// The server's message.
        message: String,
    },
    /// The session failed (transport closed, unexpected reply, ...).
    #[error("{operation}: {message}")]
    Session {
        /// The MCP method.
        operation: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A paginated list misbehaved: a repeated cursor or more pages than the cap.
    #[error("{operation}: {message}")]
    Pagination {
        /// The MCP method.
        operation: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The server asked for input (a form, a model sample, roots) that the client's
    /// [`crate::client::Answers`] do not give; each question says what is missing and how to
    /// answer it (`--elicit FIELD=VALUE`, `--sample TEXT`, `--root URI`).
    #[error("{operation}: the server asked for input that was not given: {}", questions.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    InputRequired {
        /// The MCP method whose answer needed the input.
        operation: &'static str,
        /// The open questions.
        questions: Vec<crate::client::Question>,
    },
    /// A skill file that failed its manifest's checks (size, digest, frontmatter) or could not
    /// be read as one: it is not used, and no file after it is read.
    #[error("skill file {uri}: {message}")]
    Skill {
        /// The file's URI.
        uri: String,
        /// What did not match.
        message: String,
    },
    /// A bad argument given by the user, e.g. `--input` that is not a JSON object.
    #[error("{0}")]
    InvalidInput(String),
    /// Writing the output failed (a closed pipe included; see [`ClientError::is_broken_pipe`]).
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
}

impl ClientError {
    /// True when the error is a closed output pipe, which a CLI reports as success (the
    /// reader, e.g. `head`, has seen what it wanted).
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, ClientError::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    pub(crate) fn from_service(operation: &'static str, err: rmcp::service::ServiceError) -> Self {
        use rmcp::service::ServiceError;
        match err {
            ServiceError::Timeout { timeout } => ClientError::Timeout { operation, timeout, endpoint: None },
            ServiceError::TransportSend(e) => match super::plain::transport_failure(&e) {
                Some(message) => ClientError::Session { operation, message },
                None => ClientError::Session { operation, message: error_chain(&e) },
            },
            ServiceError::TransportClosed => ClientError::Session {
                operation,
                message: "the connection to the server is closed (the server went away?)".into(),
            },
            ServiceError::McpError(e) => {
                ClientError::Server { operation, code: e.code.0, message: e.message.into_owned() }
            }
            other => ClientError::Session { operation, message: error_chain(&other) },
        }
    }
}

/// `tools/call timed out after 30s`; `no answer from URL within 30s (connect timed out)`.
fn timeout_text(operation: &str, timeout: Duration, endpoint: Option<&str>) -> String {
    let after = crate::client::format_duration(timeout);
    match endpoint {
        Some(endpoint) => format!("no answer from {endpoint} within {after} ({operation} timed out)"),
        None => format!("{operation} timed out after {after}"),
    }
}

/// rmcp's transport errors name the transport's Rust type (`Transport [rmcp::transport::...<...>]
/// error`), which tells a person nothing: drop the bracketed type.
fn without_type_names(text: &str) -> String {
    let mut out = text.to_owned();
    while let Some(start) = out.find(" [rmcp::") {
        match out[start..].find(']') {
            Some(len) => out.replace_range(start..start + len + 1, ""),
            None => break,
        }
    }
    out
}

/// `err: cause: cause`, each source once.
pub(crate) fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = without_type_names(&err.to_string());
    let mut source = err.source();
    while let Some(s) = source {
        let text = without_type_names(&s.to_string());
        if !out.contains(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        source = s.source();
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn transport_type_names_are_left_out() {
        let text = "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::X<reqwest::Client>>] \
                    error: Client error: error sending request";
        assert_eq!(
            super::without_type_names(text),
            "Send message error Transport error: Client error: error sending request"
        );
    }
}
