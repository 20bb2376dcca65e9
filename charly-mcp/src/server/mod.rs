//! The MCP server: any list of tools (CLI leaves or hand-written) plus resources, prompts,
//! completion and logging, over stdio or Streamable HTTP, on the `rmcp` SDK.
//!
//! | item | what it is |
//! |---|---|
//! | [`Tool`], [`ToolOutput`], [`ToolError`] | one tool and what a call returns |
//! | [`cli_tools`], [`CliRunner`] | a [`crate::Catalog`]'s leaves as tools, run in-process |
//! | [`CallContext`], [`Output`], [`Progress`], [`Logger`], [`Input`] | what a call gets |
//! | [`Resource`], [`ResourceList`], [`ResourceTemplate`], [`Prompt`] | resources and prompts |
//! | [`Skill`] | skills: folders of files with a `SKILL.md` (the skills extension, SEP-2640) |
//! | [`ServerOptions`], [`Server`], [`Session`] | the server, built once |
//! | [`HttpOptions`], [`ServerHandle`], [`HostMeta`], [`BearerToken`] | Streamable HTTP |
//! | [`CancellationToken`] | ends `http_router`'s sessions; a call's cancellation (tokio-util's) |
//! | `OAuthOptions`, [`AUTH_META_KEY`] | HTTP as an OAuth resource server (feature `oauth`) |
//! | [`TaskSupport`], [`TaskStart`] | tools whose calls run as tasks (the tasks extension) |
//!
//! ```no_run
//! use charly_mcp::Annotations;
//! use charly_mcp::server::{HttpOptions, Server, ServerOptions, Tool, ToolOutput};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let echo = Tool::new(
//!     "echo",
//!     "Echo the text back",
//!     serde_json::json!({"type": "object", "properties": {"text": {"type": "string"}},
//!                        "required": ["text"], "additionalProperties": false}),
//!     Annotations { read_only_hint: true, ..Default::default() },
//!     |args, _cx| async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) },
//! );
//! let server = Server::new(ServerOptions::new("demo", "1.0.0").tool(echo));
//! let handle = server.serve_http(HttpOptions::default()).await?; // http://127.0.0.1:18765/mcp
//! tokio::signal::ctrl_c().await?;
//! handle.shutdown().await?;
//! # Ok(()) }
//! ```
//!
//! Calls run concurrently (each request is its own task; blocking CLI runners use the
//! blocking pool). Failures of a tool, its arguments, its clap parse or a panic are
//! `isError: true` results the caller reads; only an unknown tool name (or one left out by
//! read-only mode) is a JSON-RPC error.

// Sampling, roots, logging and resources/subscribe are deprecated by SEP-2577 (protocol
// 2026-07-28); the server still serves them to every revision that has them.
#![allow(deprecated)]

#[cfg(feature = "http")]
mod bearer;
mod changes;
mod cli;
mod clients;
mod compat;
mod context;
mod error;
mod handler;
#[cfg(feature = "http")]
mod http;
mod input;
mod logging;
#[cfg(feature = "oauth")]
mod oauth;
mod options;
mod pages;
mod progress;
mod prompts;
#[cfg(feature = "http")]
mod replica;
mod request_state;
mod resources;
mod schema_errors;
#[allow(clippy::module_inception)]
mod server;
mod skills;
mod state;
mod stdio;
mod tasks;
mod tool;

pub use cli::{CliParser, CliRunner, cli_tools};
pub use clients::{DOTLESS_CLIENTS, DotlessClient, dotless_client, rejects_dots};
pub use context::{CallContext, Output};
pub use error::ToolError;
pub use handler::{AUTH_META_KEY, HostMeta, Session};
#[cfg(feature = "http")]
pub use http::{
    BearerToken, DEFAULT_DISCONNECT_GRACE, DEFAULT_LISTEN, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS,
    DEFAULT_PATH, HttpOptions, ServerHandle, check_path,
};
pub use input::Input;
pub use logging::Logger;
#[cfg(feature = "oauth")]
pub use oauth::{DEFAULT_READ_SCOPE, DEFAULT_WRITE_SCOPE, OAuthOptions};
pub use options::{
    DEFAULT_MAX_REQUESTS_PER_SESSION, DEFAULT_PAGE_SIZE, MAX_REQUEST_BYTES, RequestStateKey, ServerOptions,
    StdioOptions, ToolNameStyle,
};
pub use progress::Progress;
pub use prompts::{Prompt, PromptFuture};
#[cfg(feature = "http")]
pub use replica::{MAX_REPLICA_NAME, check_replica_name};
pub use request_state::STATE_TTL;
pub use resources::{ReadFuture, Resource, ResourceList, ResourceTemplate};
pub use server::Server;
pub use skills::{MAX_SKILL_BYTES, MAX_SKILL_FILES, Skill};
pub use stdio::ServeError;
pub use tasks::{TaskStart, TaskSupport};
pub use tool::{Tool, ToolFuture, ToolOutput};

/// The `rmcp` crate this server is built on, for its model types (content blocks,
/// resource contents, prompt messages, sampling and elicitation parameters).
pub use rmcp;

/// The token that ends what the server started: `Server::http_router`'s `shutdown` (cancel
/// it to end the router's sessions) and [`CallContext::cancellation_token`]. tokio-util's
/// type, re-exported so a host needs no `tokio-util` dependency of its own.
pub use tokio_util::sync::CancellationToken;

/// What the stdio transport makes of one line: a hook for the `jsonrpc` fuzz target (built
/// with `--cfg fuzzing` by cargo-fuzz; not part of the API).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    use rmcp::model::{ClientNotification, JsonRpcMessage};
    use serde_json::Value;

    use super::compat::{self, read_line};

    /// One line, as the transport reads it.
    #[derive(Debug)]
    pub enum Line {
        /// A request: its id (as JSON) and method.
        Request(Value, String),
        /// `notifications/cancelled`, naming this id (as JSON).
        Cancel(Option<Value>),
        /// Another message.
        Other,
        /// Nothing to answer.
        Skip,
        /// Answered by the transport: the error code and the id (as JSON) it carries.
        Answer(i32, Option<Value>),
    }

    /// Reads `line` as the stdio transport does.
    pub fn line(line: &[u8]) -> Line {
        let id = |id: &rmcp::model::RequestId| serde_json::to_value(id).expect("an id serialises");
        match read_line(line) {
            compat::Line::Message(message) => match *message {
                JsonRpcMessage::Request(r) => Line::Request(id(&r.id), r.request.method().to_owned()),
                JsonRpcMessage::Notification(n) => match n.notification {
                    ClientNotification::CancelledNotification(c) => {
                        Line::Cancel(c.params.request_id.as_ref().map(id))
                    }
                    _ => Line::Other,
                },
                _ => Line::Other,
            },
            compat::Line::Skip => Line::Skip,
            compat::Line::Answer(e) => Line::Answer(e.error.code.0, e.id.as_ref().map(id)),
        }
    }
}
