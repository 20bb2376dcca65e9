//! The MCP client: a typed API over any MCP server's transports.
//!
//! | item | what it does |
//! |---|---|
//! | [`Endpoint`], [`Target`], [`TransportKind`] | where a server is and how to talk to it |
//! | [`connect`] → [`Client`] | dial + `initialize`; [`Client::ping`], [`Client::list_tools`], [`Client::call_tool`], ... |
//! | [`SseClientTransport`] | the legacy HTTP+SSE transport (MCP 2024-11-05; rmcp has no client for it) |
//! | [`parse_duration`], [`format_duration`] | `30s`, `500ms`, `1m30s` |
//!
//! Transports: Streamable HTTP and stdio child processes come from rmcp; legacy SSE is
//! [`sse`]. Every request carries a timeout (default [`DEFAULT_TIMEOUT`], 30 s); a request
//! that times out is cancelled on the server with `notifications/cancelled`. Lists follow
//! `nextCursor` to the end, refusing a repeated cursor and stopping after [`MAX_PAGES`].
//!
//! Printing results is the caller's business: the `charly` CLI's `check mcp` commands turn
//! these results into reports.
//!
//! ```no_run
//! # async fn demo() -> Result<(), charly_mcp::client::ClientError> {
//! use charly_mcp::client::{ConnectOptions, Endpoint, TransportKind, connect};
//!
//! let endpoint = Endpoint::url("http://127.0.0.1:18765/mcp", TransportKind::StreamableHttp)?;
//! let client = connect(&endpoint, &ConnectOptions::default()).await?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! client.close().await;
//! # Ok(()) }
//! ```

mod connect;
mod duration;
mod endpoint;
mod error;
pub mod sse;
mod sse_events;

pub use connect::{
    CLOSE_GRACE, ChildStderr, Client, ConnectOptions, DEFAULT_TIMEOUT, MAX_PAGES, ProgressFn, ProgressUpdate,
    connect, connect_transport,
};
pub use duration::{format_duration, parse_duration};
pub use endpoint::{Endpoint, StdioCommand, Target, TransportKind, parse_header};
pub use error::ClientError;
pub use sse::{SseClientTransport, SseTransportError};
