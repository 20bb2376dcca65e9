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
    /// The server sent nothing for the read timeout while charly waited for `what` (the
    /// socket's `WouldBlock`/`TimedOut`, which the OS words as "Resource temporarily
    /// unavailable").
    #[error(
        "no {what} from {addr} within {} (--timeout): {}",
        charly::client::format_duration(*.after),
        if what == BANNER { "is a VNC server listening there? (an RFB server speaks first)" } else { "the server stopped answering" }
    )]
    Silent {
        /// What was awaited: `RFB banner`, `security types`, `framebuffer update`, ...
        what: String,
        /// `VNC server at host:port` (or `the VNC server` before [`VncError::at`] says where).
        addr: String,
        /// The read timeout.
        after: std::time::Duration,
    },
    /// Writing the PNG failed.
    #[error("writing the screenshot {path}: {message}")]
    Png {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
}

/// What [`VncError::Silent`] waits for first: the server's `RFB 003.00x` greeting.
pub(super) const BANNER: &str = "RFB banner";

impl From<std::io::Error> for VncError {
    fn from(e: std::io::Error) -> Self {
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => VncError::Silent {
                what: "answer".into(),
                addr: "the VNC server".into(),
                after: std::time::Duration::ZERO,
            },
            _ => VncError::Protocol(format!("connection: {e}")),
        }
    }
}

impl VncError {
    /// A [`VncError::Silent`] says it waited for `what`; other errors are returned as they are.
    pub fn waiting_for(self, what: &str) -> Self {
        match self {
            VncError::Silent { addr, after, .. } => VncError::Silent { what: what.into(), addr, after },
            other => other,
        }
    }

    /// A [`VncError::Silent`] says where (`addr`, `host:port`) and how long (`after`).
    pub fn at(self, addr: &str, after: std::time::Duration) -> Self {
        match self {
            VncError::Silent { what, .. } => {
                VncError::Silent { what, addr: format!("VNC server at {addr}"), after }
            }
            other => other,
        }
    }
}
