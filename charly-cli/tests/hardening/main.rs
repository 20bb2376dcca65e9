//! Issue 18: sessions that cannot be confused by a tree that changes under them, a process
//! killed mid-edit, a call cancelled mid-edit, unreadable lines or reused request ids.
//!
//! Every test works on real files in its own temporary directory; the MCP tests run the real
//! `charly mcp serve` (stdio or Streamable HTTP on a free 127.0.0.1 port), stopped by pid.

mod util;

/// Paths stay beneath the project root while a directory flips to a symlink leading out.
mod confinement;

/// `kill -9` mid-edit leaves the old or the new file and no visible temporary files.
mod crashes;

/// A cancelled edit does not land, and its result says so.
mod cancel;

/// The server's protocol edges: a read-only server hides its destructive tools, every line
/// gets an answer, a reused request id gets an error of its own.
mod protocol;

/// Trial 28 at the protocol's edges: bounded answers, JSON-RPC and MCP details, a quiet log
/// for cancelled calls.
mod edges;
