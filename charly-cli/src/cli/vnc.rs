//! `charly check vnc ...`: a VNC server over RFB 3.8 ([`crate::vnc`]).

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use super::Timeout;
use crate::vnc::{Button, Screenshot, VncInput, VncPasswd, VncStatus};

/// Where the VNC server is.
#[derive(Args, McpTool, Debug, Clone)]
pub struct VncTarget {
    /// Box whose running container has a VNC server on port 5900 (dialled at its published
    /// host port), or `.` for this machine (at --vnc-addr)
    pub target: String,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(short, long)]
    pub instance: Option<String>,
    /// The VNC server's host:port when the target is `.` (default 127.0.0.1:5900); refused
    /// with a box, whose server is dialled at its published port 5900
    #[arg(long, value_name = "HOST:PORT")]
    pub vnc_addr: Option<String>,
    /// Timeout of each read from the server, e.g. 10s, 500ms
    #[arg(long, default_value = "10s")]
    pub timeout: Timeout,
    /// PEM file of CA certificates trusted besides the system's, for a VeNCrypt server's
    /// certificate; a certificate in it that is the server's own is trusted as it is, for any
    /// name (pinned)
    #[arg(long, value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
    /// Do not verify a VeNCrypt server's TLS certificate (says so on stderr; never for
    /// production)
    #[arg(long)]
    pub insecure: bool,
}

/// A target and a point on its desktop.
#[derive(Args, McpTool, Debug, Clone)]
pub struct VncPoint {
    /// The server.
    #[command(flatten)]
    pub on: VncTarget,
    /// X in desktop pixels
    pub x: u16,
    /// Y in desktop pixels
    pub y: u16,
}

/// `charly check vnc ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum VncCmd {
    /// Connect and run the RFB handshake: server version, desktop name, size, security type
    /// (the password from VNC_PASSWORD or the credential store when the server asks for one)
    #[mcp_tool(output = VncStatus, open_world)]
    Status(VncTarget),
    /// Take a PNG screenshot of the desktop (ZRLE or Raw); written to FILE when given (over
    /// MCP a path inside the project), and returned as `image` content over MCP
    #[mcp_tool(output = Screenshot, destructive = "writes the PNG to the file given", open_world)]
    Screenshot {
        /// The server.
        #[command(flatten)]
        on: VncTarget,
        /// Where to write the PNG
        file: Option<PathBuf>,
    },
    /// Click at a point: the pointer moved there, the button pressed (after 100 ms) and
    /// released (after 50 ms)
    #[mcp_tool(output = VncInput, destructive = "clicks on the desktop, which can do anything a click can", open_world)]
    Click {
        /// The point.
        #[command(flatten)]
        point: VncPoint,
        /// The mouse button
        #[arg(long, value_enum, default_value = "left")]
        button: Button,
    },
    /// Move the pointer to a point (no button)
    #[mcp_tool(output = VncInput, destructive = "moves the desktop's pointer", open_world)]
    Mouse(VncPoint),
    /// Type text: a key press and release per character (U+0020-U+00FF; newline is Return,
    /// tab Tab)
    #[mcp_tool(output = VncInput, destructive = "types on the desktop, into whatever has focus", open_world)]
    Type {
        /// The server.
        #[command(flatten)]
        on: VncTarget,
        /// The text
        text: String,
    },
    /// Press and release one key by X keysym name (Return, Escape, Tab, BackSpace, Delete,
    /// Home, End, Page_Up, Page_Down, arrows, Insert, F1-F12, Shift/Control/Alt/Super/Meta
    /// _L/_R, Caps_Lock, space) or a single Latin-1 character
    #[mcp_tool(output = VncInput, destructive = "presses a key on the desktop", open_world)]
    Key {
        /// The server.
        #[command(flatten)]
        on: VncTarget,
        /// The key name
        key_name: String,
    },
    /// Send one raw RFB client message: key {"key":KEYSYM,"down":BOOL}, pointer
    /// {"x","y","button":MASK}, cut-text {"text"}, fbupdate-request (prints the size)
    #[mcp_tool(output = VncInput, destructive = "sends input to the desktop", open_world)]
    Rfb {
        /// The server.
        #[command(flatten)]
        on: VncTarget,
        /// key, pointer, cut-text or fbupdate-request
        method: String,
        /// The message's fields as JSON
        params: Option<String>,
    },
    /// Store the VNC password of a box (or `.`) in the credential store as
    /// charly/vnc/<box[-instance]>: generated with --generate (and printed), else one line
    /// read from stdin
    #[mcp_tool(output = VncPasswd, destructive = "replaces the stored VNC password")]
    Passwd {
        /// Box name, or `.` for this machine
        target: String,
        /// Box instance
        #[arg(short, long)]
        instance: Option<String>,
        /// Generate a random password (8 random ASCII letters and digits: VNC authentication
        /// uses only a password's first 8 bytes) instead of reading one line of stdin (at most
        /// 8 bytes)
        #[arg(long)]
        generate: bool,
    },
}
