//! What can go wrong talking RFB to a VNC server.

use thiserror::Error;

/// A `check.vnc.*` failure. Every variant leaves the server as it was.
#[derive(Debug, Error)]
pub enum VncError {
    /// The TCP connection failed or dropped.
    #[error("VNC server at {addr} is not reachable: {source}; {hint}")]
    Unreachable {
        /// `host:port` dialled.
        addr: String,
        /// The socket error.
        source: std::io::Error,
        /// What to check ([`super::Server::unreachable_hint`]).
        hint: String,
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
    /// The call ran past its deadline while the server kept sending (`--timeout` bounds the
    /// whole call, [`super::sock`]).
    #[error(
        "{what} from {addr} not done within {} (--timeout bounds the whole call): the server kept sending; \
         a large desktop over a slow link needs a longer --timeout",
        charly::client::format_duration(*.after)
    )]
    Overran {
        /// What was being read: `framebuffer update`, ...
        what: String,
        /// `VNC server at host:port` (or `the VNC server` before [`VncError::at`] says where).
        addr: String,
        /// The call's timeout.
        after: std::time::Duration,
    },
    /// The server closed the connection (or reset it) in the middle of a message.
    #[error(
        "{addr} closed the connection while charly waited for {what}: did the server stop or restart? \
         (`charly check vnc status` shows whether it answers)"
    )]
    Closed {
        /// What was awaited: `framebuffer update`, `security result`, ...
        what: String,
        /// `the VNC server at host:port` (or `the VNC server` before [`VncError::at`] says where).
        addr: String,
    },
    /// The desktop is larger than charly decodes ([`super::rfb::MAX_PIXELS`]).
    #[error(
        "the VNC server's desktop is {width}x{height} ({} pixels): charly decodes desktops of at most {} \
         pixels (8192x8192, a 192 MiB framebuffer)",
        u64::from(*.width) * u64::from(*.height),
        super::rfb::MAX_PIXELS
    )]
    TooLarge {
        /// Announced width.
        width: u16,
        /// Announced height.
        height: u16,
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
        use std::io::ErrorKind as K;
        match e.kind() {
            _ if super::sock::overran(&e) => VncError::Overran {
                what: "answer".into(),
                addr: "the VNC server".into(),
                after: std::time::Duration::ZERO,
            },
            K::WouldBlock | K::TimedOut => VncError::Silent {
                what: "answer".into(),
                addr: "the VNC server".into(),
                after: std::time::Duration::ZERO,
            },
            K::UnexpectedEof | K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe => {
                VncError::Closed { what: "an answer".into(), addr: "the VNC server".into() }
            }
            _ => VncError::Protocol(format!("connection: {e}")),
        }
    }
}

impl VncError {
    /// A [`VncError::Silent`], [`VncError::Overran`] or [`VncError::Closed`] says it waited for
    /// `what`; other errors are returned as they are.
    pub fn waiting_for(self, what: &str) -> Self {
        match self {
            VncError::Silent { addr, after, .. } => VncError::Silent { what: what.into(), addr, after },
            VncError::Overran { addr, after, .. } => VncError::Overran { what: what.into(), addr, after },
            VncError::Closed { addr, .. } => VncError::Closed { what: format!("the {what}"), addr },
            other => other,
        }
    }

    /// A [`VncError::Silent`] met in the middle of a message the server had begun is a
    /// [`VncError::Overran`]: the deadline cut a message still coming, so "the server stopped
    /// answering" would be wrong. Other errors are returned as they are.
    pub fn mid_message(self) -> Self {
        match self {
            VncError::Silent { what, addr, after } => VncError::Overran { what, addr, after },
            other => other,
        }
    }

    /// A [`VncError::AuthFailed`] says where the refused password came from and how to
    /// change it (`from`: [`super::Password::from`]); other errors are as they were.
    pub fn with_password_from(self, from: Option<&str>) -> Self {
        match (self, from) {
            (VncError::AuthFailed(reason), Some(from)) => VncError::AuthFailed(format!("{reason}; {from}")),
            (other, _) => other,
        }
    }

    /// A [`VncError::Silent`], [`VncError::Overran`] or [`VncError::Closed`] says where (`addr`,
    /// `host:port`) and how long (`after`).
    pub fn at(self, addr: &str, after: std::time::Duration) -> Self {
        match self {
            VncError::Silent { what, .. } => {
                VncError::Silent { what, addr: format!("VNC server at {addr}"), after }
            }
            VncError::Overran { what, .. } => {
                VncError::Overran { what, addr: format!("VNC server at {addr}"), after }
            }
            VncError::Closed { what, .. } => {
                VncError::Closed { what, addr: format!("the VNC server at {addr}") }
            }
            other => other,
        }
    }
}
