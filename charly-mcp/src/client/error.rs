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
    /// The server answered with a JSON-RPC error. Its text keeps the server's `data` and,
    /// for the codes a user can act on, says why and what to do: -32021 (a client capability
    /// the request lacks: `--sample TEXT` for `sampling`, `--root URI` for `roots`, the tasks
    /// extension), -32022 (a protocol revision the server does not speak, with the ones it
    /// does), -32601 (the method named).
    #[error("{}", server_text(operation, *code, message, data.as_ref()))]
    Server {
        /// The MCP method.
        operation: &'static str,
        /// The JSON-RPC error code (e.g. -32601 method not found, -32602 invalid params).
        code: i32,
        /// The server's message.
        message: String,
        /// The error's `data`, as the server sent it.
        data: Option<serde_json::Value>,
    },
    /// The run was interrupted (Ctrl-C) during the operation; a task the server ran for it
    /// was cancelled (`tasks/cancel`), or the cancellation's outcome is said.
    #[error("{operation}: interrupted{}", if detail.is_empty() { String::new() } else { format!("; {detail}") })]
    Interrupted {
        /// The MCP method.
        operation: &'static str,
        /// What became of the server's side (e.g. `task T cancelled on the server`).
        detail: String,
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

    /// `err` of `operation` on the session with `endpoint` (the URL or command, named in
    /// transport failures).
    pub(crate) fn from_service(
        operation: &'static str,
        endpoint: &str,
        err: rmcp::service::ServiceError,
    ) -> Self {
        use rmcp::service::ServiceError;
        match err {
            ServiceError::Timeout { timeout } => ClientError::Timeout { operation, timeout, endpoint: None },
            ServiceError::TransportSend(e) => match super::plain::transport_failure(endpoint, &e) {
                Some(message) => ClientError::Session { operation, message },
                None => ClientError::Session { operation, message: error_chain(&e) },
            },
            ServiceError::TransportClosed => ClientError::Session {
                operation,
                message: format!(
                    "the connection to the server is closed (the server went away, or sent a message larger \
                     than the {} MiB charly reads)",
                    super::connect::MAX_MESSAGE_BYTES >> 20
                ),
            },
            ServiceError::McpError(e) => ClientError::Server {
                operation,
                code: e.code.0,
                message: e.message.into_owned(),
                data: e.data,
            },
            other => ClientError::Session { operation, message: error_chain(&other) },
        }
    }
}

/// `tools/call timed out after 30s`; `no answer from URL within 30s (connect and initialize timed out)`.
fn timeout_text(operation: &str, timeout: Duration, endpoint: Option<&str>) -> String {
    let after = crate::client::format_duration(timeout);
    match endpoint {
        Some(endpoint) => format!("no answer from {endpoint} within {after} ({operation} timed out)"),
        None => format!("{operation} timed out after {after}"),
    }
}

/// The most characters of a server's error `data` an error message shows.
const DATA_SHOWN: usize = 400;

/// `tools/call: server error -32021: <message> (<why, what to do>) [data: {...}]`.
fn server_text(operation: &str, code: i32, message: &str, data: Option<&serde_json::Value>) -> String {
    let mut text = format!("{operation}: server error {code}: {message}");
    if code == rmcp::model::ErrorCode::METHOD_NOT_FOUND.0 && !message.contains(operation) {
        text.push_str(&format!(" (method {operation})"));
    }
    if let Some(hint) = hint(operation, code, data) {
        text.push_str(&format!(": {hint}"));
    }
    if let Some(data) = data.filter(|d| !d.is_null()) {
        text.push_str(&format!(" [data: {}]", truncate(&data.to_string(), DATA_SHOWN)));
    }
    text
}

/// `text` cut to at most `max` characters, with `…` when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// Why the server refused, and what to do, for the codes with a remedy.
fn hint(operation: &str, code: i32, data: Option<&serde_json::Value>) -> Option<String> {
    use rmcp::model::ErrorCode;
    let data = data?;
    if code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0 {
        let required = data.get("requiredCapabilities").unwrap_or(data);
        let mut needs = Vec::new();
        if required.get("sampling").is_some() {
            needs.push(
                "the server asks the client's model (sampling), and charly declares `sampling` only \
                 with an answer: give --sample TEXT"
                    .to_owned(),
            );
        }
        if required.get("roots").is_some() {
            needs.push(
                "the server asks for the client's roots, and charly declares `roots` only with an \
                 answer: give --root URI (repeatable)"
                    .to_owned(),
            );
        }
        if let Some(elicitation) = required.get("elicitation") {
            if elicitation.get("url").is_some() {
                needs.push(
                    "the server asks a person to open a URL (URL elicitation), which charly cannot \
                     do unattended"
                        .to_owned(),
                );
            } else {
                needs
                    .push("the server asks to fill a form: give its fields with --elicit FIELD=VALUE".into());
            }
        }
        let extensions = required.get("extensions").and_then(serde_json::Value::as_object);
        for name in extensions.into_iter().flat_map(|e| e.keys()) {
            if name == rmcp::model::TASKS_EXTENSION_ID {
                needs.push(format!(
                    "the tool runs only as a task (extension {name}), which this session did not \
                     declare: tasks need MCP 2026-07-28, so leave out --protocol 2025-11-25 (or use \
                     --protocol 2026-07-28)"
                ));
            } else {
                needs.push(format!("the request needs the extension {name}, which charly does not support"));
            }
        }
        if needs.is_empty() {
            return Some(format!("{operation} needs a client capability charly did not declare"));
        }
        return Some(needs.join("; "));
    }
    if code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0 {
        let supported: Vec<&str> = data
            .get("supported")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(serde_json::Value::as_str)
            .collect();
        let requested = data.get("requested").and_then(serde_json::Value::as_str);
        let asked = requested.map(|r| format!(" {r}")).unwrap_or_default();
        return Some(if supported.is_empty() {
            format!(
                "the server does not speak the revision{asked} charly offered: try --protocol latest \
                 (2026-07-28, falling back to 2025-11-25) or --protocol 2025-11-25"
            )
        } else {
            let pick = if supported.contains(&"2026-07-28") { "2026-07-28" } else { "2025-11-25" };
            format!(
                "the server does not speak the revision{asked} charly offered; it speaks {}: use \
                 --protocol {pick} (or latest, which falls back to 2025-11-25)",
                supported.join(", ")
            )
        });
    }
    None
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
    // A library's error names the URL it asked (reqwest: `for url (...)`), password and query
    // included.
    super::endpoint::redact_urls(&out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ClientError;

    fn server(operation: &'static str, code: i32, message: &str, data: Option<serde_json::Value>) -> String {
        ClientError::Server { operation, code, message: message.into(), data }.to_string()
    }

    #[test]
    fn server_errors_name_the_method_and_keep_their_data() {
        assert_eq!(
            server("prompts/list", -32601, "Method not found", None),
            "prompts/list: server error -32601: Method not found (method prompts/list)"
        );
        assert_eq!(
            server("tools/call", -32601, "unknown method `tools/call`", None),
            "tools/call: server error -32601: unknown method `tools/call`"
        );
        let text = server("tools/call", -32602, "bad", Some(json!({"field": "x".repeat(1000)})));
        assert!(text.starts_with(r#"tools/call: server error -32602: bad [data: {"field":"xxx"#), "{text}");
        assert!(text.ends_with("…]") && text.chars().count() < 500, "{text}");
        let text =
            server("server/discover", -32022, "Unsupported", Some(json!({"supported": ["2025-11-25"]})));
        assert!(text.contains("it speaks 2025-11-25: use --protocol 2025-11-25"), "{text}");
    }
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
