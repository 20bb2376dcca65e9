//! SIGINT, SIGTERM and SIGHUP on a terminal while charly waits on something it started in a
//! container (`cmd`, `shell --command`, hooks, `logs --follow`): the signal cancels the run
//! instead of killing charly outright, so the dropped `podman exec` stops its command in the
//! container ([`crate::engine::exec`]) and a followed log's `podman logs` is killed; then
//! charly ends with the cancellation's error. Outside such a wait, or at a second signal, the
//! process exits at once with status 128 + the signal's number, as the default action would.
//!
//! One thread listens for the three signals (tokio's handlers stay installed for the life of
//! the process, so they are installed once, by the first [`guard`]). Served runs (MCP) never
//! come here: their calls are cancelled by the client.

use std::sync::{Mutex, OnceLock};

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// The runs waiting now, by guard id.
static WAITING: Mutex<Vec<(u64, CancellationToken)>> = Mutex::new(Vec::new());

/// Whether the listening thread runs (installed once).
static LISTENING: OnceLock<bool> = OnceLock::new();

/// While alive, the three signals cancel its token instead of ending the process.
#[derive(Debug)]
pub struct Guard {
    id: u64,
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(mut waiting) = WAITING.lock() {
            waiting.retain(|(id, _)| *id != self.id);
        }
    }
}

/// Cancels `token` at SIGINT, SIGTERM or SIGHUP until the guard is dropped. When the listener
/// cannot be installed, signals keep their default action (the guard does nothing).
pub fn guard(token: &CancellationToken) -> Guard {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if *LISTENING.get_or_init(listen)
        && let Ok(mut waiting) = WAITING.lock()
    {
        waiting.push((id, token.clone()));
    }
    Guard { id }
}

/// Starts the listening thread; returns once its handlers are installed (so a signal right
/// after [`guard`] is caught), or false when they cannot be.
fn listen() -> bool {
    let (ready, installed) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new().name("charly-signals".into()).spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
            let _ = ready.send(false);
            return;
        };
        runtime.block_on(async move {
            let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            ) else {
                let _ = ready.send(false);
                return;
            };
            let _ = ready.send(true);
            loop {
                let number = tokio::select! {
                    _ = int.recv() => 2,
                    _ = term.recv() => 15,
                    _ = hup.recv() => 1,
                };
                on_signal(number);
            }
        });
    });
    spawned.is_ok() && installed.recv().unwrap_or(false)
}

/// Cancels the waiting runs; with none waiting, or all cancelled already (a second signal),
/// ends the process as the signal would have.
fn on_signal(number: i32) {
    let waiting: Vec<CancellationToken> =
        WAITING.lock().map(|w| w.iter().map(|(_, t)| t.clone()).collect()).unwrap_or_default();
    if waiting.is_empty() || waiting.iter().all(CancellationToken::is_cancelled) {
        std::process::exit(128 + number);
    }
    for token in waiting {
        token.cancel();
    }
}
