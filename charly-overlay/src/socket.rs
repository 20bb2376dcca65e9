//! The control socket: one JSON line in ([`Request`]), one JSON line out ([`Reply`]), then
//! the connection closes. Its default path is `$XDG_RUNTIME_DIR/charly-overlay-<WAYLAND_DISPLAY>.sock`
//! (one daemon per Wayland session), mode 0600.

use std::io::{BufRead as _, BufReader, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use smithay_client_toolkit::reexports::calloop::channel;

use crate::daemon::Job;
use crate::spec::{Reply, Request};

/// How long a client or the daemon waits on the other.
const WAIT: Duration = Duration::from_secs(10);

/// The session's default socket path.
pub(crate) fn default_path() -> PathBuf {
    let dir = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()).unwrap_or_else(|| "/tmp".into());
    let display = std::env::var("WAYLAND_DISPLAY").unwrap_or_else(|_| "wayland-0".into());
    let display: String =
        display.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    PathBuf::from(dir).join(format!("charly-overlay-{display}.sock"))
}

/// Binds `path` (mode 0600); a socket left by a daemon that is gone is replaced.
///
/// # Errors
///
/// A daemon already answers there, or the path cannot be bound.
pub(crate) fn listen(path: &Path) -> Result<UnixListener, String> {
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(format!("a charly-overlay daemon already listens on {}", path.display()));
        }
        std::fs::remove_file(path)
            .map_err(|e| format!("removing the stale socket {}: {e}", path.display()))?;
    }
    let listener = UnixListener::bind(path).map_err(|e| format!("listening on {}: {e}", path.display()))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("chmod {}: {e}", path.display()))?;
    Ok(listener)
}

/// Accepts connections for ever, each request handed to the daemon's loop through `jobs`.
pub(crate) fn serve(listener: UnixListener, jobs: channel::Sender<Job>) {
    for stream in listener.incoming().flatten() {
        let jobs = jobs.clone();
        std::thread::spawn(move || answer(stream, &jobs));
    }
}

fn answer(stream: UnixStream, jobs: &channel::Sender<Job>) {
    let _ = stream.set_read_timeout(Some(WAIT));
    let mut line = String::new();
    let reply = match BufReader::new(&stream).read_line(&mut line) {
        Err(e) => Reply { error: Some(format!("reading the request: {e}")), ..Reply::default() },
        Ok(_) => match serde_json::from_str::<Request>(&line) {
            Err(e) => Reply {
                error: Some(format!("the request is not one charly-overlay reads: {e}")),
                ..Reply::default()
            },
            Ok(request) => {
                let (tx, rx) = mpsc::channel();
                if jobs.send((request, tx)).is_err() {
                    return;
                }
                rx.recv_timeout(WAIT).unwrap_or_else(|_| Reply {
                    error: Some("the daemon did not answer in time (is the compositor stuck?)".into()),
                    ..Reply::default()
                })
            }
        },
    };
    let mut text = serde_json::to_string(&reply).unwrap_or_else(|_| "{\"ok\":false}".into());
    text.push('\n');
    let mut stream = stream;
    let _ = stream.write_all(text.as_bytes());
}

/// Why a request could not be made.
#[derive(Debug)]
pub(crate) enum CallError {
    /// Nothing listens on the socket.
    NoDaemon(String),
    /// The exchange failed.
    Failed(String),
}

/// Sends `request` to the daemon at `path` and reads its reply.
///
/// # Errors
///
/// [`CallError`].
pub(crate) fn call(path: &Path, request: &Request) -> Result<Reply, CallError> {
    let mut stream = UnixStream::connect(path).map_err(|e| {
        CallError::NoDaemon(format!(
            "no charly-overlay daemon listens on {} ({e}); start one with `charly-overlay daemon`",
            path.display()
        ))
    })?;
    let failed =
        |e: std::io::Error| CallError::Failed(format!("talking to the daemon on {}: {e}", path.display()));
    stream.set_read_timeout(Some(WAIT + Duration::from_secs(2))).map_err(failed)?;
    let mut text = serde_json::to_string(request).map_err(|e| CallError::Failed(e.to_string()))?;
    text.push('\n');
    stream.write_all(text.as_bytes()).map_err(failed)?;
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line).map_err(failed)?;
    serde_json::from_str(&line).map_err(|e| CallError::Failed(format!("the daemon's reply {line:?}: {e}")))
}
