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
//! another client; none of charly's requests enable an event domain, and the few events a tab
//! sends anyway are read and dropped while the socket is idle.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;

use super::CdpError;

/// How long an unused socket stays open: 30 s.
pub(super) const IDLE: Duration = Duration::from_secs(30);

/// At most this many idle sockets are kept per URL (parallel calls to one tab open more).
const IDLE_PER_URL: usize = 2;

/// What a connection task is told.
enum Job {
    /// One request: the method, its params, and where the browser's answer goes (the whole
    /// JSON-RPC answer object, or why the socket failed).
    Exchange { method: String, params: Value, reply: oneshot::Sender<Result<Value, String>> },
    /// The socket went back to the idle ones: [`IDLE`] from now it closes unless borrowed.
    Idle,
}

/// A borrowed socket. Dropping it (instead of [`checkin`]) closes the socket.
pub(super) struct Conn {
    tx: mpsc::Sender<Job>,
    /// Taken from the idle sockets (it may have been closed by the browser since).
    pub(super) reused: bool,
}

impl Conn {
    /// Sends `method` and waits for its answer object (`{"id", "result"}` or `{"id", "error"}`);
    /// `Err` says why the socket failed. Unbounded: the caller times it out.
    pub(super) async fn exchange(&self, method: &str, params: Value) -> Result<Value, String> {
        let (reply, answer) = oneshot::channel();
        let job = Job::Exchange { method: method.to_owned(), params, reply };
        self.tx.send(job).await.map_err(|_| "the socket is closed".to_owned())?;
        answer.await.unwrap_or_else(|_| Err("the socket is closed".to_owned()))
    }
}

struct Pool {
    runtime: tokio::runtime::Handle,
    idle: Mutex<HashMap<String, Vec<mpsc::Sender<Job>>>>,
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
        kept.retain(|tx| !tx.is_closed());
        kept.pop()
    };
    match idle {
        Some(tx) => Ok(Conn { tx, reused: true }),
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
    let timed_out = || CdpError::Timeout { method: "WebSocket handshake".into(), after: timeout };
    match tokio::time::timeout(timeout, opened).await {
        Ok(Ok(Ok(tx))) => Ok(Conn { tx, reused: false }),
        Ok(Ok(Err(why))) => Err(CdpError::Socket { url: url.to_owned(), why }),
        Ok(Err(_)) | Err(_) => Err(timed_out()),
    }
}

/// Gives `conn` back for the next call to `url`.
pub(super) fn checkin(url: &str, conn: Conn) {
    let Ok(pool) = pool() else { return };
    let mut idle = pool.idle.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let kept = idle.entry(url.to_owned()).or_default();
    kept.retain(|tx| !tx.is_closed());
    if kept.len() < IDLE_PER_URL && conn.tx.try_send(Job::Idle).is_ok() {
        kept.push(conn.tx);
    }
}

type Ready = oneshot::Sender<Result<mpsc::Sender<Job>, String>>;

/// Owns one socket: opens it, answers exchanges one at a time (each with its own JSON-RPC id,
/// unique on the socket), drops events, and closes it when idle, failed or given up.
async fn connection(url: String, timeout: Duration, ready: Ready) {
    let mut ws = match tokio::time::timeout(timeout, tokio_tungstenite::connect_async(&url)).await {
        Ok(Ok((ws, _))) => ws,
        Ok(Err(e)) => return drop(ready.send(Err(e.to_string()))),
        Err(_) => return, // the caller has timed out too
    };
    let (tx, mut rx) = mpsc::channel::<Job>(1);
    if ready.send(Ok(tx)).is_err() {
        let _ = tokio::time::timeout(Duration::from_millis(500), ws.close(None)).await;
        return;
    }
    let mut next: u64 = 1;
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
        let id = next;
        next += 1;
        let message = json!({"id": id, "method": method, "params": params}).to_string();
        let answer = async {
            ws.send(Message::text(message)).await.map_err(|e| e.to_string())?;
            loop {
                let text = match ws.next().await {
                    Some(Ok(Message::Text(text))) => text,
                    Some(Ok(Message::Close(_))) | None => {
                        return Err("the browser closed the session (tab closed?)".to_owned());
                    }
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => return Err(e.to_string()),
                };
                let answer: Value = serde_json::from_str(text.as_str())
                    .map_err(|e| format!("not JSON from the browser: {e}"))?;
                if answer.get("id").and_then(Value::as_u64) == Some(id) {
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
