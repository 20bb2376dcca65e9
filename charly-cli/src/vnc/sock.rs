//! The TCP socket under one `check.vnc.*` call, bounded by one deadline: `--timeout` is the
//! time the whole call may take (connect, handshake, TLS, every message), not the time of each
//! read, so a server that keeps sending (a huge desktop, an endless update) cannot hold the call.
//!
//! Before each read and write the socket's timeout is set to what is left of the deadline
//! (`SO_RCVTIMEO`/`SO_SNDTIMEO`, shared by the socket's clones and by the TLS session over it).
//! A read the OS times out is the server going quiet (`WouldBlock`, [`super::VncError::Silent`]);
//! a read or write begun with no time left is [`Overran`] ([`super::VncError::Overran`]).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The error payload of an I/O call begun after the deadline (kind `TimedOut`).
#[derive(Debug)]
pub struct Overran;

impl std::fmt::Display for Overran {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the call's deadline passed")
    }
}

impl std::error::Error for Overran {}

/// True when `e` is an [`Overran`].
pub fn overran(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Overran>())
}

/// A TCP socket whose reads and writes end by `deadline`.
#[derive(Debug)]
pub struct Sock {
    tcp: TcpStream,
    deadline: Instant,
}

impl Sock {
    /// `tcp`, bounded by `deadline`.
    pub fn new(tcp: TcpStream, deadline: Instant) -> Self {
        Sock { tcp, deadline }
    }

    /// A second handle on the same socket and deadline (the client's write half).
    ///
    /// # Errors
    ///
    /// The OS refusing to duplicate the descriptor.
    pub fn try_clone(&self) -> std::io::Result<Self> {
        Ok(Sock { tcp: self.tcp.try_clone()?, deadline: self.deadline })
    }

    /// What is left of the deadline, or [`Overran`].
    fn left(&self) -> std::io::Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        // A zero timeout would mean "block forever" to the OS.
        if left < Duration::from_millis(1) {
            return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, Overran));
        }
        Ok(left)
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.left()?;
        self.tcp.set_read_timeout(Some(left))?;
        self.tcp.read(buf)
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let left = self.left()?;
        self.tcp.set_write_timeout(Some(left))?;
        self.tcp.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.tcp.flush()
    }
}
