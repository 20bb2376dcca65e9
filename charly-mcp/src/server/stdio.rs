//! Serving over stdio, or over any pair of async byte streams.

use rmcp::service::{RunningService, ServerInitializeError};
use rmcp::{RoleServer, ServiceExt as _};
use tokio::io::{AsyncRead, AsyncWrite};

use super::compat::StdioTransport;
use super::handler::Session;
use super::options::StdioOptions;
use super::server::Server;

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client's `initialize` handshake failed (closed early, malformed, or an
    /// unsupported protocol version).
    #[error("MCP initialize handshake failed: {0}")]
    Initialize(Box<ServerInitializeError>),
    /// The service task died.
    #[error("MCP service task failed: {0}")]
    Join(#[from] tokio::task::JoinError),
    /// Binding or serving the socket failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The bearer token could not be read.
    #[error("{0}")]
    Token(String),
    /// The endpoint path is not a literal path (`HttpOptions::path`).
    #[error("{0}")]
    Path(String),
    /// The session id prefix is not a replica name (`HttpOptions::session_id_prefix`).
    #[error("{0}")]
    SessionIdPrefix(String),
    /// A cap is 0, which would refuse everything (`HttpOptions::max_sessions`,
    /// `HttpOptions::max_requests_per_session`, [`StdioOptions::max_requests_per_session`]).
    #[error("{0}")]
    Limit(String),
}

impl From<ServerInitializeError> for ServeError {
    fn from(err: ServerInitializeError) -> Self {
        ServeError::Initialize(Box::new(err))
    }
}

impl Server {
    /// Serves one client over this process's stdin/stdout until the client closes stdin.
    ///
    /// stdout carries JSON-RPC only: tools write to their [`super::CallContext::out`]
    /// sink, and logs go through `tracing` (install a subscriber writing to stderr).
    ///
    /// A client that closes stdin before any lifecycle began is a normal end, not an error:
    /// a 2026-07-28 client may send nothing but `server/discover` probes (`charly check mcp
    /// ping` does), which rmcp answers before a session exists.
    ///
    /// # Errors
    ///
    /// [`ServeError::Initialize`] when the handshake fails otherwise, [`ServeError::Join`]
    /// when the service task panics.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_stdio_with(StdioOptions::default()).await
    }

    /// [`Server::serve_stdio`] with `options` (the cap on requests in flight).
    ///
    /// # Errors
    ///
    /// As [`Server::serve_stdio`], and [`ServeError::Limit`] when the cap is 0.
    pub async fn serve_stdio_with(self, options: StdioOptions) -> Result<(), ServeError> {
        let running = match self.serve_io_with(tokio::io::stdin(), tokio::io::stdout(), options).await {
            Ok(running) => running,
            Err(ServeError::Initialize(e)) if matches!(*e, ServerInitializeError::ConnectionClosed(_)) => {
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        running.waiting().await?;
        Ok(())
    }

    /// Serves one client over a reader/writer pair (a socket, a pipe, `tokio::io::duplex`
    /// in tests) and returns once the handshake is done; the returned service runs until
    /// the stream closes or it is cancelled.
    ///
    /// Messages are JSON-RPC, one per line. Every line gets an answer: one that is not JSON
    /// gets -32700, JSON that is no message -32600 (with the request's id when it can be
    /// read), and a request reusing the id of one still in flight -32600 naming the id,
    /// while the one in flight goes on. A request past [`StdioOptions::max_requests_per_session`]
    /// (default [`super::DEFAULT_MAX_REQUESTS_PER_SESSION`]) gets -32000 `server busy`.
    ///
    /// # Errors
    ///
    /// [`ServeError::Initialize`] when the handshake fails.
    pub async fn serve_io<R, W>(
        &self,
        read: R,
        write: W,
    ) -> Result<RunningService<RoleServer, Session>, ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        self.serve_io_with(read, write, StdioOptions::default()).await
    }

    /// [`Server::serve_io`] with `options` (the cap on requests in flight).
    ///
    /// # Errors
    ///
    /// [`ServeError::Limit`] when the cap is 0, [`ServeError::Initialize`] when the handshake
    /// fails.
    pub async fn serve_io_with<R, W>(
        &self,
        read: R,
        write: W,
        options: StdioOptions,
    ) -> Result<RunningService<RoleServer, Session>, ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        if options.max_requests_per_session == Some(0) {
            return Err(ServeError::Limit(
                "max_requests_per_session (--max-requests-per-session) is 0, which would refuse every request; \
                 give at least 1, or no cap"
                    .to_owned(),
            ));
        }
        let transport = StdioTransport::new(read, write, options.max_requests_per_session);
        Ok(self.session().serve(transport).await?)
    }
}
