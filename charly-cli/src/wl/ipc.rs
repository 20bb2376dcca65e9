//! sway's IPC (sway-ipc(7), i3's framing): `i3-ipc`, the payload's length and the message type
//! as native-endian u32s, then the payload; the reply has the same header and a JSON payload.
//!
//! Written here rather than taken from the `swayipc` crate: the framing is these few lines,
//! charly wants sway's JSON as it is (reports pass it through, matching reads a few fields)
//! rather than swayipc-types' typed tree, and the calls must be async with a timeout (the
//! crate's connection is a blocking socket). The socket is spoken to from the host where it
//! is reachable (this machine's, or a container's through `/proc/<pid>/root`); otherwise
//! `swaymsg` inside the target carries the same message.

use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::WlError;
use super::session::Session;
use super::tool::Tools;

/// `RUN_COMMAND`: the payload is sway commands.
pub const RUN_COMMAND: u32 = 0;
/// `GET_WORKSPACES`.
pub const GET_WORKSPACES: u32 = 1;
/// `GET_OUTPUTS`.
pub const GET_OUTPUTS: u32 = 3;
/// `GET_TREE`.
pub const GET_TREE: u32 = 4;
/// `GET_VERSION`.
pub const GET_VERSION: u32 = 7;

const MAGIC: &[u8; 6] = b"i3-ipc";

/// A reply larger than this is refused (a tree of thousands of windows is a few MB).
const MAX_REPLY: u32 = 64 << 20;

/// swaymsg's `-t` for a message type.
fn swaymsg_type(kind: u32) -> &'static str {
    match kind {
        GET_WORKSPACES => "get_workspaces",
        GET_OUTPUTS => "get_outputs",
        GET_TREE => "get_tree",
        GET_VERSION => "get_version",
        _ => "command",
    }
}

/// The session's sway.
#[derive(Clone, Debug)]
pub struct Sway<'a> {
    /// Runs `swaymsg` when the socket cannot be reached from here.
    pub tools: Tools<'a>,
}

impl Sway<'_> {
    fn session(&self) -> &Session {
        self.tools.session
    }

    /// The socket inside the target, or [`WlError::Missing`]: the compositor is not sway.
    fn socket(&self, what: &str) -> Result<&str, WlError> {
        self.session().sway_socket.as_deref().ok_or_else(|| {
            WlError::Missing(format!(
                "{what} needs sway's IPC, and the compositor {} is not sway (no sway-ipc socket beside {}; \
                 wlrctl, which other wlroots compositors would need, is not in Debian bookworm)",
                self.session().at(),
                self.session().wayland_socket()
            ))
        })
    }

    /// Sends message `kind` with `payload` and returns sway's JSON reply; `what` names the
    /// leaf in errors.
    ///
    /// # Errors
    ///
    /// [`WlError::Missing`] without sway, [`WlError::Ipc`], [`WlError::Timeout`].
    pub async fn request(&self, kind: u32, payload: &str, what: &str) -> Result<Value, WlError> {
        let inner = self.socket(what)?.to_owned();
        let host = self.session().host_path(&inner);
        let timeout = self.tools.timeout;
        let shown = host.display().to_string();
        let direct = async {
            let mut stream = connect(&host).await?;
            let mut message = Vec::with_capacity(14 + payload.len());
            message.extend_from_slice(MAGIC);
            message.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
            message.extend_from_slice(&kind.to_ne_bytes());
            message.extend_from_slice(payload.as_bytes());
            stream.write_all(&message).await?;
            let mut header = [0u8; 14];
            stream.read_exact(&mut header).await?;
            if &header[..6] != MAGIC {
                return Err(std::io::Error::other("the reply does not start with i3-ipc"));
            }
            let len = u32::from_ne_bytes([header[6], header[7], header[8], header[9]]);
            if len > MAX_REPLY {
                return Err(std::io::Error::other(format!("a reply of {len} bytes is too large")));
            }
            let mut body = vec![0u8; len as usize];
            stream.read_exact(&mut body).await?;
            Ok(body)
        };
        let body = match tokio::time::timeout(timeout, direct).await {
            Ok(Ok(body)) => body,
            Ok(Err(e)) if matches!(e.kind(), std::io::ErrorKind::PermissionDenied) => {
                return self.swaymsg(kind, payload, &inner).await;
            }
            Ok(Err(e)) => return Err(WlError::Ipc { socket: shown, why: e.to_string() }),
            Err(_) => return Err(WlError::Timeout { what: format!("sway IPC at {shown}"), after: timeout }),
        };
        serde_json::from_slice(&body)
            .map_err(|e| WlError::Ipc { socket: shown, why: format!("the reply is not JSON: {e}") })
    }

    /// The message through `swaymsg` in the target (the socket is not reachable from here).
    async fn swaymsg(&self, kind: u32, payload: &str, inner: &str) -> Result<Value, WlError> {
        self.tools.require("swaymsg", "sway", "reaching sway's IPC from inside the target")?;
        let mut argv = vec!["swaymsg", "--raw", "--socket", inner, "--type", swaymsg_type(kind)];
        if !payload.is_empty() {
            argv.extend(["--", payload]);
        }
        let ran = self.tools.run(&argv, None).await?;
        serde_json::from_slice(&ran.stdout).map_err(|_| WlError::Tool {
            tool: "swaymsg".into(),
            place: self.session().at(),
            status: ran.status,
            stderr: ran.stderr,
        })
    }

    /// Runs sway commands (`command`, as sway's command language has it): each command's
    /// result, or [`WlError::Sway`] with sway's own error for the first that failed.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request); [`WlError::Sway`].
    pub async fn command(&self, command: &str, what: &str) -> Result<Vec<Value>, WlError> {
        let reply = self.request(RUN_COMMAND, command, what).await?;
        let results = reply.as_array().cloned().unwrap_or_default();
        if let Some(failed) = results.iter().find(|r| r.get("success").and_then(Value::as_bool) != Some(true))
        {
            let error = failed.get("error").and_then(Value::as_str).unwrap_or("failed").to_owned();
            return Err(WlError::Sway { command: command.to_owned(), error });
        }
        Ok(results)
    }

    /// `GET_TREE`.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn tree(&self, what: &str) -> Result<Value, WlError> {
        self.request(GET_TREE, "", what).await
    }

    /// `GET_OUTPUTS`.
    ///
    /// # Errors
    ///
    /// As [`request`](Self::request).
    pub async fn outputs(&self, what: &str) -> Result<Vec<Value>, WlError> {
        Ok(self.request(GET_OUTPUTS, "", what).await?.as_array().cloned().unwrap_or_default())
    }
}

/// Connects to the socket at `path`; a path longer than a socket address holds (108 bytes)
/// is reached through its directory's descriptor (`/proc/self/fd/<fd>/<name>`).
async fn connect(path: &std::path::Path) -> std::io::Result<tokio::net::UnixStream> {
    if path.as_os_str().len() < 100 {
        return tokio::net::UnixStream::connect(path).await;
    }
    let (dir, name) = (path.parent().unwrap_or(path), path.file_name().unwrap_or_default());
    let fd = rustix::fs::open(
        dir,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY,
        rustix::fs::Mode::empty(),
    )?;
    use std::os::fd::AsRawFd as _;
    let short = std::path::Path::new("/proc/self/fd").join(fd.as_raw_fd().to_string()).join(name);
    tokio::net::UnixStream::connect(short).await
}
