//! [`ToolError`]: why a tool call failed. Below both [`super::tool`] and
//! [`super::context`], which use it, so that neither imports the other for it.

use std::fmt;

/// Why a tool call failed. Every variant but [`ToolError::Request`] becomes a `tools/call`
/// result with `isError: true` and the [`Display`](fmt::Display) text as its content: the
/// caller sees the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// A message written for the caller.
    #[error("{0}")]
    Message(String),
    /// The arguments failed the input schema or could not be turned into an argv.
    #[error("invalid arguments for tool `{tool}`: {message}")]
    InvalidArguments {
        /// The tool name.
        tool: String,
        /// What is wrong, naming the argument.
        message: String,
    },
    /// clap rejected the rebuilt argv; the text is clap's own rendered message.
    #[error("{0}")]
    Clap(String),
    /// A successful result broke the tool's own output schema
    /// ([`super::Tool::with_output_schema`], or a CLI leaf's `#[mcp_tool(output = Report)]`):
    /// no `structuredContent`, or one the schema
    /// refuses. A bug in the tool, not in the call; the invalid result is not sent (clients
    /// check structured content against the listed schema and raise).
    #[error(
        "tool `{tool}` broke its own output schema (a bug in the tool, not in the call's arguments): {message}"
    )]
    InvalidOutput {
        /// The tool name.
        tool: String,
        /// What is wrong, with the JSON pointer of the bad value.
        message: String,
    },
    /// The tool panicked.
    #[error("tool `{tool}` panicked: {message}")]
    Panicked {
        /// The tool name.
        tool: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The call was cancelled (`notifications/cancelled`, or the client went away).
    #[error("the call was cancelled")]
    Cancelled,
    /// An I/O error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// A JSON argument could not be rebuilt into an argv (unknown key, wrong type, ...).
    #[error(transparent)]
    Arg(#[from] crate::argv::ArgError),
    /// A request to the client (sampling, elicitation) failed.
    #[error("request to the client failed: {0}")]
    Client(#[from] rmcp::ServiceError),
    /// The request itself cannot be served, and the call is answered with this JSON-RPC error
    /// instead of a result: on protocol 2026-07-28, a capability the request's `_meta` did
    /// not declare (-32021), or an `inputResponses` entry that does not answer its question
    /// (-32602). [`super::CallContext`]'s input methods return it.
    #[error("{}", .0.message)]
    Request(rmcp::ErrorData),
    /// A report could not be serialised as JSON ([`super::ToolOutput::report`]).
    #[error("the report `{report}` could not be serialised as JSON: {source}")]
    Report {
        /// The report's type.
        report: &'static str,
        /// serde_json's error.
        source: serde_json::Error,
    },
}

impl ToolError {
    /// A failure with this message for the caller.
    pub fn msg(message: impl fmt::Display) -> ToolError {
        ToolError::Message(message.to_string())
    }
}

/// A prompt or resource handler's `?` on a [`ToolError`] (from [`super::CallContext`]'s input
/// methods): [`ToolError::Request`] stays the error it is, anything else becomes an internal
/// error with the message.
impl From<ToolError> for rmcp::ErrorData {
    fn from(err: ToolError) -> Self {
        match err {
            ToolError::Request(error) => error,
            other => rmcp::ErrorData::internal_error(other.to_string(), None),
        }
    }
}

impl From<clap::Error> for ToolError {
    fn from(err: clap::Error) -> Self {
        ToolError::Clap(err.render().to_string().trim_end().to_owned())
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::Message(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::Message(message.to_owned())
    }
}
