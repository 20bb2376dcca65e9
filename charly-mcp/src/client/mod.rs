//! The MCP client: `charly check mcp <method>` against any MCP server.
//!
//! | item | what it does |
//! |---|---|
//! | [`Endpoint`], [`Target`], [`TransportKind`] | where a server is and how to talk to it |
//! | [`connect`] → [`Client`] | dial + `initialize`; [`Client::ping`], [`Client::list_tools`], ... |
//! | [`ping`], [`servers`], [`list_tools`], [`list_resources`], [`list_prompts`], [`call`], [`read`] | the CLI methods: typed options in, text (or `--json`) written to a `&mut dyn Write`, a [`Status`] out |
//! | [`SseClientTransport`] | the legacy HTTP+SSE transport (rmcp has none) |
//! | [`parse_duration`] | `30s`, `500ms`, `1m30s` |
//!
//! Transports: Streamable HTTP and stdio child processes come from rmcp; legacy SSE is
//! [`sse`]. Every request carries a timeout (default [`DEFAULT_TIMEOUT`], 30 s); a request
//! that times out is cancelled on the server with `notifications/cancelled`. Lists follow
//! `nextCursor` to the end, refusing a repeated cursor and stopping after [`MAX_PAGES`].
//!
//! Output formats (the client contract of DESIGN.md): `ping` → `ok`; `servers` →
//! `name\turl\ttransport`; `list-tools` → `name\tfirst line of description`;
//! `list-resources` → `uri\tname\tmime`; `list-prompts` → `name\tdescription`; `call` → text
//! content one per line, `[image content: <mime>, <N> bytes]` placeholders, exit status 1 on
//! `isError`; `read` → text contents, `[binary resource: <uri>, <mime>, <N> bytes]` for blobs.
//!
//! ```no_run
//! # async fn demo() -> Result<(), charly_mcp::client::ClientError> {
//! use charly_mcp::client::{Endpoint, MethodOptions, TransportKind, list_tools};
//!
//! let endpoint = Endpoint::url("http://127.0.0.1:18765/mcp", TransportKind::StreamableHttp)?;
//! let mut out = std::io::stdout().lock();
//! let status = list_tools(&endpoint, &MethodOptions::default(), &mut out).await?;
//! std::process::exit(status.code().into());
//! # }
//! ```

mod connect;
mod duration;
mod endpoint;
mod error;
mod methods;
mod print;
mod progress;
pub mod sse;

pub use connect::{
    CLOSE_GRACE, ChildStderr, Client, ConnectOptions, DEFAULT_TIMEOUT, MAX_PAGES, ProgressFn, ProgressUpdate,
    connect, connect_transport,
};
pub use duration::{format_duration, parse_duration};
pub use endpoint::{Endpoint, StdioCommand, Target, TransportKind, parse_header};
pub use error::ClientError;
pub use methods::{
    Method, MethodOptions, ProgressMode, Request, Status, UnknownMethod, block_on, call, list_prompts,
    list_resources, list_tools, parse_input, ping, read, run, run_on, servers,
};
pub use print::{
    write_call_result, write_prompts, write_read_result, write_resources, write_servers, write_tools,
};
pub use progress::ProgressBar;
pub use sse::{SseClientTransport, SseTransportError};
