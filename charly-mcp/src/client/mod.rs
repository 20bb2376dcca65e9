//! The MCP client: a typed API over any MCP server's transports.
//!
//! | item | what it does |
//! |---|---|
//! | [`Endpoint`], [`Target`], [`TransportKind`] | where a server is and how to talk to it |
//! | [`connect`] → [`Client`] | dial, then `server/discover` (2026-07-28) or `initialize`; [`Client::ping`], [`Client::list_tools`], [`Client::call_tool`], ... |
//! | [`Client::list_skills`], [`Client::load_skill`] → [`LoadedSkill`] | skills (SEP-2640): listed without reading, loaded with every file checked |
//! | [`Answers`], [`Question`] | what the client answers when a server asks for input, and what it could not |
//! | [`SseClientTransport`] | the legacy HTTP+SSE transport (MCP 2024-11-05; rmcp has no client for it) |
//! | [`parse_duration`], [`format_duration`] | `30s`, `500ms`, `1m30s` |
//! | [`TlsOptions`], [`http_client`], [`install_tls_provider`] | https: the system's roots (rustls, platform verifier, ring), a private CA, `--insecure` |
//! | [`OAuthOptions`], [`Interaction`], [`TokenCache`] | OAuth 2.1 login to a protected Streamable HTTP server (`auth` module: rmcp's auth plus the 401/403 reaction, bounded step-up, the authorization step, the token cache) |
//!
//! Transports: Streamable HTTP and stdio child processes come from rmcp; legacy SSE is
//! [`sse`]. The client offers protocol 2026-07-28 first and falls back to an `initialize` of
//! 2025-11-25 ([`Protocol`]); on 2026-07-28 every request carries the client's `_meta`
//! (version, capabilities, identity) and, over HTTP, the `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*`
//! headers (rmcp's transport). A server that asks for input gets the [`Answers`] the options
//! give, by server-to-client request or input-required round alike. Every request carries a timeout (default [`DEFAULT_TIMEOUT`], 30 s); a request
//! that times out is cancelled on the server with `notifications/cancelled`; an interrupt
//! ([`ConnectOptions::interrupt`], Ctrl-C in the CLI) cancels a task the client follows with
//! `tasks/cancel` ([`CANCEL_GRACE`]). An `initialize` answered with a revision the client did
//! not offer is refused; after a fallback, [`Client::fallback`] says why discovery failed. Lists follow
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

mod answers;
mod auth;
mod connect;
mod duration;
mod endpoint;
mod error;
mod handler;
mod observe;
mod plain;
mod rounds;
mod session;
mod skills;
pub mod sse;
mod sse_events;
mod tasks;
mod tls;

pub use answers::{Answers, Question};
pub use auth::{BrowserFn, Interaction, NoticeFn, OAuthOptions, TokenCache};
pub use connect::{
    CANCEL_GRACE, CLOSE_GRACE, ChildStderr, ConnectOptions, DEFAULT_TIMEOUT, MAX_MESSAGE_BYTES, MAX_PAGES,
    ProgressFn, ProgressUpdate, Protocol, connect, connect_transport,
};
pub use duration::{format_duration, parse_duration};
pub use endpoint::{
    Endpoint, RESERVED_HEADERS, StdioCommand, Target, TransportKind, parse_header, redact_urls, redacted,
    reserved_header,
};
pub use error::ClientError;
pub use session::{Client, MAX_INPUT_ROUNDS};
pub use skills::{LoadedSkill, SkillFile};
pub use sse::{SseClientTransport, SseTransportError};
pub use tls::{TlsOptions, http_client, install_tls_provider};
