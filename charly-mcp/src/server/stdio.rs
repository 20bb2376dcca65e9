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
    /// **Output printed directly (`println!`, `print!`, `std::io::stdout()`, a child process
    /// that inherits stdout) goes to stderr, not to the caller**, for as long as this serves:
    /// on Unix the protocol is written to a duplicate of fd 1, and fd 1 is pointed at stderr,
    /// so a command that prints as a CLI does cannot corrupt the JSON-RPC stream (its lines
    /// are lost to the caller; write to [`super::CallContext::out`] to answer). fd 1 is
    /// restored when serving ends. Anything a program printed before calling this is flushed
    /// to the real stdout first. Restoring means that what the program prints *after* this
    /// returns (also a thread or child of a call still running then) goes to stdout again,
    /// which is the client's if it still reads it: print nothing there until the process
    /// exits, or log to stderr.
    ///
    /// **Likewise, a command that reads stdin (`std::io::stdin()`, a `[y/N]` prompt, `-` for
    /// stdin, a child process that inherits stdin) reads end of file**, not the client's
    /// requests: on Unix the protocol is read from a duplicate of fd 0, and fd 0 is pointed
    /// at `/dev/null` while this serves (restored when serving ends), so nothing a command
    /// reads is taken from the JSON-RPC stream. A prompt then gets no answer, which CLIs
    /// treat as "no": take confirmations as arguments instead.
    ///
    /// A client that closes stdin before any lifecycle began is a normal end, not an error:
    /// a 2026-07-28 client may send nothing but `server/discover` probes (`charly check mcp
    /// ping` does), which rmcp answers before a session exists.
    ///
    /// # Errors
    ///
    /// [`ServeError::Initialize`] when the handshake fails otherwise, [`ServeError::Join`]
    /// when the service task panics, [`ServeError::Io`] when fd 0 or fd 1 cannot be
    /// duplicated.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_stdio_with(StdioOptions::default()).await
    }

    /// [`Server::serve_stdio`] with `options` (the cap on requests in flight).
    ///
    /// # Errors
    ///
    /// As [`Server::serve_stdio`], and [`ServeError::Limit`] when the cap is 0.
    pub async fn serve_stdio_with(self, options: StdioOptions) -> Result<(), ServeError> {
        // Each restores its descriptor when dropped: when serving ends, however it ends
        // (stdin first: dropped in reverse order of declaration).
        let (protocol_out, _restore_out) = protocol_stdout()?;
        let (protocol_in, _restore_in) = protocol_stdin()?;
        let running = match self.serve_io_with(protocol_in, protocol_out, options).await {
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

/// The protocol's stdout: a duplicate of fd 1, with fd 1 itself pointed at stderr until the
/// returned guard is dropped, so that what the process prints directly (`println!`, children
/// inheriting fd 1) lands on stderr instead of in the JSON-RPC stream. A redirect of the
/// descriptor, not of Rust's `stdout()` handle: it holds no lock, so calls still run in
/// parallel (DESIGN.md's defect list: a process-wide stdout lock serialised every call), and
/// it catches child processes too.
#[cfg(unix)]
fn protocol_stdout() -> std::io::Result<(tokio::fs::File, StdoutRestore)> {
    use std::io::Write as _;
    use std::os::fd::AsFd as _;

    // Held across the switch: no `println!` of another thread lands half before, half after.
    let mut stdout = std::io::stdout().lock();
    stdout.flush()?;
    let saved = stdout.as_fd().try_clone_to_owned()?;
    let protocol = saved.try_clone()?;
    if let Err(e) = rustix::stdio::dup2_stdout(std::io::stderr().as_fd()) {
        // stderr closed, say: serve as before rather than not at all (restoring is then a
        // no-op: fd 1 is still what `saved` duplicates).
        tracing::warn!(
            "serving on stdout as it is: pointing it at stderr failed ({e}); \
             output printed directly will corrupt the protocol stream"
        );
    }
    drop(stdout);
    Ok((tokio::fs::File::from_std(std::fs::File::from(protocol)), StdoutRestore(saved)))
}

/// Elsewhere stdout is served as it is.
#[cfg(not(unix))]
fn protocol_stdout() -> std::io::Result<(tokio::io::Stdout, ())> {
    Ok((tokio::io::stdout(), ()))
}

/// Points fd 1 back at what it was before [`protocol_stdout`] when dropped.
#[cfg(unix)]
struct StdoutRestore(std::os::fd::OwnedFd);

#[cfg(unix)]
impl Drop for StdoutRestore {
    fn drop(&mut self) {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        // What was printed while serving goes where it was printed: to stderr.
        let _ = stdout.flush();
        if let Err(e) = rustix::stdio::dup2_stdout(&self.0) {
            tracing::warn!("could not point stdout back at the protocol's descriptor: {e}");
        }
    }
}

/// The protocol's stdin: a duplicate of fd 0, with fd 0 itself pointed at `/dev/null` until
/// the returned guard is dropped, so that a command reading stdin (a confirmation prompt, `-`
/// for stdin, a child inheriting fd 0) reads end of file instead of taking the client's
/// requests. As for stdout, a redirect of the descriptor, which also covers children.
/// Rust's `stdin()` handle is not locked around the switch (unlike stdout's): a thread
/// already blocked reading it would hold the lock forever.
#[cfg(unix)]
fn protocol_stdin() -> std::io::Result<(tokio::fs::File, StdinRestore)> {
    use std::os::fd::AsFd as _;

    let saved = std::io::stdin().as_fd().try_clone_to_owned()?;
    let protocol = saved.try_clone()?;
    let redirected = std::fs::File::open("/dev/null")
        .and_then(|null| rustix::stdio::dup2_stdin(&null).map_err(std::io::Error::from));
    if let Err(e) = redirected {
        // No /dev/null (a bare chroot, say): serve as before rather than not at all.
        tracing::warn!(
            "serving on stdin as it is: pointing it at /dev/null failed ({e}); \
             a command that reads stdin will take the client's requests"
        );
    }
    Ok((tokio::fs::File::from_std(std::fs::File::from(protocol)), StdinRestore(saved)))
}

/// Elsewhere stdin is served as it is.
#[cfg(not(unix))]
fn protocol_stdin() -> std::io::Result<(tokio::io::Stdin, ())> {
    Ok((tokio::io::stdin(), ()))
}

/// Points fd 0 back at what it was before [`protocol_stdin`] when dropped.
#[cfg(unix)]
struct StdinRestore(std::os::fd::OwnedFd);

#[cfg(unix)]
impl Drop for StdinRestore {
    fn drop(&mut self) {
        if let Err(e) = rustix::stdio::dup2_stdin(&self.0) {
            tracing::warn!("could not point stdin back at the protocol's descriptor: {e}");
        }
    }
}
