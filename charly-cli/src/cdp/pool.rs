//! DevTools sockets kept open between calls.
//!
//! A tool call runs on a Tokio runtime of its own ([`crate::context::Ctx::block`] builds one
//! per call), so a WebSocket opened there would die with the call, and every `check.cdp.*`
//! call would pay for a TCP connect and a WebSocket handshake. Instead the sockets live on one
//! runtime thread of the process, each owned by a connection task; a [`Conn`] is a handle to
//! one. A session borrows an idle socket to its URL (or opens one) and gives it back when it
//! ends cleanly; a socket is closed when it has been idle for [`IDLE`], when the browser closes
//! it (its tab closed), or when a call on it failed or timed out. Requests use tokio channels,
//! which work across runtimes.
//!
//! Chromium serves several DevTools clients per tab, so a kept socket takes nothing from
//! another client. Each socket enables the Page domain when it opens (its answer is not
//! waited for), so that a JavaScript dialog (`alert`, `confirm`, `prompt`, which block the page
//! until answered) is seen: the call it blocks dismisses it and fails saying so. Other events
//! are read and dropped.
//!
//! A call that times out interrupts the page's script on the same socket
//! (`Runtime.terminateExecution`, which a new socket cannot deliver while the page's thread
//! is busy: it needs that thread to attach), so a `while(true){}` does not leave the tab stuck.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::{self, Message};

use super::CdpError;

/// How long an unused socket stays open: 30 s.
pub(super) const IDLE: Duration = Duration::from_secs(30);

/// At most this many idle sockets are kept per URL (parallel calls to one tab open more).
const IDLE_PER_URL: usize = 2;

/// What a connection task is told.
enum Job {
    /// One request: the method, its params, and where the browser's answer goes (the whole
    /// JSON-RPC answer object, or why the socket failed).
    Exchange { method: String, params: Value, reply: oneshot::Sender<Result<Value, Failure>> },
    /// The socket went back to the idle ones: [`IDLE`] from now it closes unless borrowed.
    Idle,
}

/// A borrowed socket. Dropping it (instead of [`checkin`]) closes the socket.
pub(super) struct Conn {
    tx: mpsc::Sender<Job>,
    /// Interrupts the exchange in flight (`Runtime.terminateExecution`).
    urgent: mpsc::UnboundedSender<()>,
    /// Taken from the idle sockets (it may have been closed by the browser since).
    pub(super) reused: bool,
}

/// Why an exchange failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// The socket failed or closed (why).
    Socket(String),
    /// The browser's answer is larger than [`MAX_MESSAGE`] bytes (the socket is closed).
    TooLong {
        /// Its size in bytes.
        size: usize,
    },
}

/// The most bytes charly reads of one CDP message (tungstenite's default frame limit; Chromium
/// sends each answer as one frame): 16 MiB.
pub(super) const MAX_MESSAGE: usize = 16 << 20;

/// A socket error mid-exchange: a connection that was reset or ended (the browser crashed,
/// was killed or closed) is said as such, with what to check; other errors as tungstenite
/// words them.
fn lost(e: tungstenite::Error) -> Failure {
    use std::io::ErrorKind::{BrokenPipe, ConnectionAborted, ConnectionReset, UnexpectedEof};
    let gone = match &e {
        tungstenite::Error::Io(io) => {
            matches!(io.kind(), BrokenPipe | ConnectionAborted | ConnectionReset | UnexpectedEof)
        }
        tungstenite::Error::Protocol(tungstenite::error::ProtocolError::ResetWithoutClosingHandshake)
        | tungstenite::Error::ConnectionClosed
        | tungstenite::Error::AlreadyClosed => true,
        _ => false,
    };
    Failure::Socket(if gone {
        format!(
            "the browser went away during the call ({e}): did it crash, or was it closed? \
             `charly check cdp status` says whether it answers again"
        )
    } else {
        e.to_string()
    })
}

/// The key a dismissed dialog adds to the answer of the call it blocked (`{"type",
/// "message"}` of `Page.javascriptDialogOpening`).
pub(super) const DIALOG: &str = "charlyDismissedDialog";

impl Conn {
    /// Sends `method` and waits for its answer object (`{"id", "result"}` or `{"id", "error"}`);
    /// `Err` says why the socket failed. Unbounded: the caller times it out.
    pub(super) async fn exchange(&self, method: &str, params: Value) -> Result<Value, Failure> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Exchange { method: method.to_owned(), params, reply };
        let closed = || Failure::Socket("the socket is closed".to_owned());
        self.tx.send(job).await.map_err(|_| closed())?;
        answer.await.unwrap_or_else(|_| Err(closed()))
    }

    /// A handle that interrupts the exchange in flight ([`Interrupt::send`]).
    pub(super) fn interrupter(&self) -> Interrupt {
        Interrupt(self.urgent.clone())
    }
}

/// Interrupts a socket's exchange in flight: `Runtime.terminateExecution` on that socket.
#[derive(Clone)]
pub(super) struct Interrupt(mpsc::UnboundedSender<()>);

impl Interrupt {
    /// Asks the socket to stop the page's running script (the answer of the exchange in
    /// flight then comes, as an exception).
    pub(super) fn send(&self) {
        let _ = self.0.send(());
    }
}

/// An idle socket's handles.
#[derive(Clone)]
struct Handles {
    tx: mpsc::Sender<Job>,
    urgent: mpsc::UnboundedSender<()>,
}

struct Pool {
    runtime: tokio::runtime::Handle,
    idle: Mutex<HashMap<String, Vec<Handles>>>,
}

/// The process's pool, its runtime thread started on first use.
fn pool() -> Result<&'static Pool, CdpError> {
    static POOL: OnceLock<Result<Pool, String>> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("no Tokio runtime for DevTools sockets: {e}"))?;
        let handle = runtime.handle().clone();
        std::thread::Builder::new()
            .name("charly-cdp".into())
            .spawn(move || runtime.block_on(std::future::pending::<()>()))
            .map_err(|e| format!("no thread for DevTools sockets: {e}"))?;
        Ok(Pool { runtime: handle, idle: Mutex::default() })
    });
    pool.as_ref().map_err(|why| CdpError::Socket { url: String::new(), why: why.clone() })
}

/// An idle socket to `url`, or a new one opened within `timeout`.
///
/// # Errors
///
/// [`CdpError::Socket`] when the handshake fails, [`CdpError::Timeout`] when it takes longer
/// than `timeout`.
pub(super) async fn checkout(url: &str, timeout: Duration) -> Result<Conn, CdpError> {
    let pool = pool()?;
    let idle = {
        let mut idle = pool.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = idle.entry(url.to_owned()).or_default();
        kept.retain(|h| !h.tx.is_closed());
        kept.pop()
    };
    match idle {
        Some(Handles { tx, urgent }) => Ok(Conn { tx, urgent, reused: true }),
        None => open(url, timeout).await,
    }
}

/// A new socket to `url`, opened within `timeout`.
///
/// # Errors
///
/// As [`checkout`].
pub(super) async fn open(url: &str, timeout: Duration) -> Result<Conn, CdpError> {
    let pool = pool()?;
    let (ready, opened) = oneshot::channel();
    pool.runtime.spawn(connection(url.to_owned(), timeout, ready));
    let timed_out =
        || CdpError::Timeout { method: "WebSocket handshake".into(), after: timeout, stopped: None };
    match tokio::time::timeout(timeout, opened).await {
        Ok(Ok(Ok(Handles { tx, urgent }))) => Ok(Conn { tx, urgent, reused: false }),
        Ok(Ok(Err(why))) => Err(CdpError::Socket { url: url.to_owned(), why }),
        Ok(Err(_)) | Err(_) => Err(timed_out()),
    }
}

/// Gives `conn` back for the next call to `url`.
pub(super) fn checkin(url: &str, conn: Conn) {
    let Ok(pool) = pool() else { return };
    let mut idle = pool.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let kept = idle.entry(url.to_owned()).or_default();
    kept.retain(|h| !h.tx.is_closed());
    if kept.len() < IDLE_PER_URL && conn.tx.try_send(Job::Idle).is_ok() {
        kept.push(Handles { tx: conn.tx, urgent: conn.urgent });
    }
}

type Ready = oneshot::Sender<Result<Handles, String>>;

/// Owns one socket: opens it, answers exchanges one at a time (each with its own JSON-RPC id,
/// unique on the socket), drops events, and closes it when idle, failed or given up.
async fn connection(url: String, timeout: Duration, ready: Ready) {
    let mut ws = match tokio::time::timeout(timeout, tokio_tungstenite::connect_async(&url)).await {
        Ok(Ok((ws, _))) => ws,
        Ok(Err(e)) => return drop(ready.send(Err(e.to_string()))),
        Err(_) => return, // the caller has timed out too
    };
    let (tx, mut rx) = mpsc::channel::<Job>(1);
    let (urgent, mut urgent_rx) = mpsc::unbounded_channel::<()>();
    // Dialogs are seen only with the Page domain on (its answer is skipped as any other id's).
    let enable = json!({"id": 1, "method": "Page.enable", "params": {}}).to_string();
    if ws.send(Message::text(enable)).await.is_err() || ready.send(Ok(Handles { tx, urgent })).is_err() {
        let _ = tokio::time::timeout(Duration::from_millis(500), ws.close(None)).await;
        return;
    }
    let mut next: u64 = 2;
    // Armed while the socket is idle (not borrowed).
    let mut idle_until: Option<Instant> = None;
    loop {
        let idle = async {
            match idle_until {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let job = tokio::select! {
            job = rx.recv() => match job {
                Some(job) => job,
                None => break, // no handle left: nobody will use it again
            },
            message = ws.next() => match message {
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
                Some(Ok(_)) => continue, // an event between calls
            },
            () = idle => break,
        };
        let (method, params, mut reply) = match job {
            Job::Idle => {
                idle_until = Some(Instant::now() + IDLE);
                continue;
            }
            Job::Exchange { method, params, reply } => (method, params, reply),
        };
        idle_until = None;
        next += 1;
        let id = next;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        let answer = async {
            ws.send(Message::text(message)).await.map_err(lost)?;
            let mut dialog: Option<Value> = None;
            loop {
                let text = tokio::select! {
                    message = ws.next() => match message {
                        Some(Ok(Message::Text(text))) => text,
                        Some(Ok(Message::Close(_))) | None => {
                            return Err(Failure::Socket("the browser closed the session (tab closed?)".to_owned()));
                        }
                        Some(Ok(_)) => continue,
                        Some(Err(tungstenite::Error::Capacity(
                            tungstenite::error::CapacityError::MessageTooLong { size, .. },
                        ))) => return Err(Failure::TooLong { size }),
                        Some(Err(e)) => return Err(lost(e)),
                    },
                    Some(()) = urgent_rx.recv() => {
                        next += 1;
                        let stop = json!({"id": next, "method": "Runtime.terminateExecution", "params": {}});
                        ws.send(Message::text(stop.to_string())).await.map_err(lost)?;
                        continue;
                    }
                };
                let mut answer: Value = serde_json::from_str(text.as_str())
                    .map_err(|e| Failure::Socket(format!("not JSON from the browser: {e}")))?;
                if answer.get("method").and_then(Value::as_str) == Some("Page.javascriptDialogOpening") {
                    // It blocks the page (and this call) until answered: dismissed, and said.
                    next += 1;
                    let params = json!({"accept": false});
                    let dismiss =
                        json!({"id": next, "method": "Page.handleJavaScriptDialog", "params": params});
                    ws.send(Message::text(dismiss.to_string())).await.map_err(lost)?;
                    dialog = answer.get_mut("params").map(Value::take);
                    continue;
                }
                if answer.get("id").and_then(Value::as_u64) == Some(id) {
                    if let (Some(d), Some(map)) = (dialog, answer.as_object_mut()) {
                        map.insert(DIALOG.into(), d);
                    }
                    return Ok(answer);
                }
            }
        };
        let answer = tokio::select! {
            answer = answer => answer,
            () = reply.closed() => break, // the caller timed out: the socket is not reused
        };
        let failed = answer.is_err();
        let _ = reply.send(answer);
        if failed {
            break;
        }
    }
    let _ = tokio::time::timeout(Duration::from_millis(500), ws.close(None)).await;
}
