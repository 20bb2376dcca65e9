//! The typed reports of `check.vnc.*`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use crate::report::Report;
pub use crate::report::Screenshot;

/// `status`: the server, after a full handshake.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VncStatus {
    /// `host:port` dialled.
    pub addr: String,
    /// The server's banner, e.g. `RFB 003.008`.
    pub version: String,
    /// The desktop name from ServerInit.
    pub name: String,
    /// Framebuffer width in pixels.
    pub width: u16,
    /// Framebuffer height in pixels.
    pub height: u16,
    /// The security type used, e.g. `None (1)`.
    pub security: String,
    /// Every type the server offered.
    pub offered: Vec<String>,
}

impl fmt::Display for VncStatus {
    /// `VNC: ok (ADDR)`, then version, name, size and security.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "VNC:        ok ({})", self.addr)?;
        writeln!(f, "Detail:     {}", self.version)?;
        writeln!(f, "Name:       {}", self.name)?;
        writeln!(f, "Size:       {}x{}", self.width, self.height)?;
        writeln!(f, "Security:   {} (offered: {})", self.security, self.offered.join(", "))
    }
}

impl Report for VncStatus {}

/// `click`, `mouse`, `type`, `key`, `rfb`: what was sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VncInput {
    /// One line saying what was sent, e.g. `Clicked left at (10, 20)`.
    pub done: String,
    /// `rfb fbupdate-request`: the framebuffer width.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width: Option<u16>,
    /// `rfb fbupdate-request`: the framebuffer height.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height: Option<u16>,
}

impl fmt::Display for VncInput {
    /// The line; `{"width":W,"height":H}` for fbupdate-request.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.width, self.height) {
            (Some(w), Some(h)) => writeln!(f, "{{\"width\":{w},\"height\":{h}}}"),
            _ => writeln!(f, "{}", self.done),
        }
    }
}

impl Report for VncInput {}

/// `passwd`: where the password went.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct VncPasswd {
    /// The credential: `charly/vnc/<key>`.
    pub stored: String,
    /// The backend that holds it (`keyring`, `kdbx`, `config`).
    pub backend: String,
    /// The generated password (`--generate` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated: Option<String>,
}

impl fmt::Display for VncPasswd {
    /// The generated password on a line of its own, then where it is stored.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.generated {
            writeln!(f, "{p}")?;
        }
        writeln!(f, "Stored VNC password as {} ({})", self.stored, self.backend)
    }
}

impl Report for VncPasswd {}
