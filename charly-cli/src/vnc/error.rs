//! What can go wrong talking RFB to a VNC server.

use thiserror::Error;

/// A `check.vnc.*` failure. Every variant leaves the server as it was.
#[derive(Debug, Error)]
pub enum VncError {
    /// The TCP connection failed or dropped.
    #[error("VNC server at {addr} is not reachable: {source}")]
    Unreachable {
        /// `host:port` dialled.
        addr: String,
        /// The socket error.
        source: std::io::Error,
    },
    /// The server said something that is not RFB 3.x, or a message charly cannot read.
    #[error("VNC protocol error: {0}")]
    Protocol(String),
    /// The server refused the connection before security negotiation (its reason).
    #[error("VNC server refused the connection: {0}")]
    Refused(String),
    /// None of the offered security types is one charly speaks.
    #[error(
        "VNC server offers only security types charly does not support: {offered}; charly speaks None (1), VNC authentication (2) and VeNCrypt (19) with X509 sub-types"
    )]
    UnsupportedSecurity {
        /// The offered types, e.g. `VeNCrypt (19), Tight (16)`.
        offered: String,
    },
    /// The server wants VNC authentication and no password is known.
    #[error(
        "VNC server at {addr} requires a password: set VNC_PASSWORD, or store one with `charly check vnc passwd {target}`"
    )]
    NoPassword {
        /// `host:port`.
        addr: String,
        /// The target as given (box name or `.`).
        target: String,
    },
    /// SecurityResult was failure: the password is wrong (the server's reason, if any).
    #[error("VNC authentication failed (wrong password?): {0}")]
    AuthFailed(String),
    /// VeNCrypt's TLS failed: the handshake, or the server's certificate (saying how to trust
    /// it: `--ca-file`, `--insecure`).
    #[error("VNC over TLS (VeNCrypt): {0}")]
    Tls(String),
    /// A bad argument (key name, coordinates, rfb params).
    #[error("{0}")]
    Usage(String),
    /// The container's port 5900 is not published, or the box is not running.
    #[error("{0}")]
    Target(String),
    /// Writing the PNG failed.
    #[error("writing the screenshot {path}: {message}")]
    Png {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

impl From<std::io::Error> for VncError {
    fn from(e: std::io::Error) -> Self {
        VncError::Protocol(format!("connection: {e}"))
    }
}
