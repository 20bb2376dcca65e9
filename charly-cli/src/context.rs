//! [`Ctx`]: what a command gets beside its arguments — the project root, who is calling
//! ([`Scope`]), a cancellation token and a progress reporter.

use std::future::Future;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use charly::client::{ProgressFn, ProgressUpdate};
use tokio_util::sync::CancellationToken;

use crate::error::CommandError;
use crate::project::Cancel;

/// How long a cancelled operation may take to end by itself (cancel its task on the server)
/// before [`Ctx::block`] drops it: 4 s (the client waits at most 1 s for a request in flight
/// to be answered, then 2 s for `tasks/cancel`).
pub const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(4);

/// Who runs a command, and so which paths it may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A person at a terminal: paths mean what they mean in their shell.
    Terminal,
    /// An MCP call: every path an argument names (`box.new.project`'s directory, a plan file,
    /// a JUnit file) must stay inside the project root, as `box.write` and `box.cat` always do.
    Served,
}

/// The context of one command run.
///
/// Long work reports progress through [`Ctx::progress`] (an indicatif bar on a terminal's
/// stderr; `notifications/progress` over MCP) and stops when [`Ctx::is_cancelled`]: commands
/// that change state call [`Ctx::check_cancelled`] at their point of no return.
#[derive(Clone)]
pub struct Ctx {
    root: PathBuf,
    scope: Scope,
    cancel: CancellationToken,
    progress: Option<ProgressFn>,
    bar: Option<indicatif::ProgressBar>,
    /// The caller asked for the JSON report (`--json`): attach-style leaves return it instead
    /// of attaching.
    json: bool,
}

impl Ctx {
    /// A terminal run against the project at `root`: progress draws a bar on stderr when it is
    /// a terminal, and nothing cancels the run but the user's Ctrl-C.
    pub fn terminal(root: PathBuf) -> Ctx {
        let bar = std::io::stderr()
            .is_terminal()
            .then(|| indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr()));
        let progress = bar.clone().map(|bar| Arc::new(move |u: &ProgressUpdate| draw(&bar, u)) as ProgressFn);
        Ctx { root, scope: Scope::Terminal, cancel: CancellationToken::new(), progress, bar, json: false }
    }

    /// This context, its caller having asked for the JSON report (`--json`) or not.
    #[must_use]
    pub fn with_json(mut self, json: bool) -> Ctx {
        self.json = json;
        self
    }

    /// Whether an attach-style leaf (`tmux shell`, `tmux attach`, `vm console`) attaches the
    /// terminal: a terminal run, stdin and stdout terminals, and no `--json` (a JSON report is
    /// the snapshot a tool call returns).
    pub fn attaches(&self) -> bool {
        self.scope == Scope::Terminal
            && !self.json
            && std::io::stdin().is_terminal()
            && std::io::stdout().is_terminal()
    }

    /// A served run (one MCP call): `cancel` is the call's token, `progress` sends
    /// `notifications/progress` (or nothing, when the client asked for none).
    pub fn served(root: PathBuf, cancel: CancellationToken, progress: Option<ProgressFn>) -> Ctx {
        Ctx { root, scope: Scope::Served, cancel, progress, bar: None, json: false }
    }

    /// The project directory the command works on.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Who runs the command.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// Reports progress: `progress` so far of `total` (when known), with a message.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: impl Into<String>) {
        if let Some(report) = &self.progress {
            report(&ProgressUpdate { progress, total, message: Some(message.into()) });
        }
    }

    /// The progress reporter as a client callback: a probed server's `notifications/progress`
    /// pass straight through to this command's caller.
    pub fn progress_fn(&self) -> Option<ProgressFn> {
        self.progress.clone()
    }

    /// The run's cancellation as the project layer's [`Cancel`]: project changes ask it
    /// before their point of no return (the rename that makes a written file visible).
    /// A terminal run has none (Ctrl-C ends the process), so its edits wait for locks without
    /// polling.
    pub fn cancel(&self) -> Cancel {
        match self.scope {
            Scope::Terminal => Cancel::default(),
            Scope::Served => {
                let token = self.cancel.clone();
                Cancel::when(move || token.is_cancelled())
            }
        }
    }

    /// The run's cancellation token (a child engine call stops with it).
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Whether the run has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// [`CommandError::Cancelled`] once the run has been cancelled: called before a command's
    /// point of no return (an atomic rename, a `podman` call that changes state).
    ///
    /// # Errors
    ///
    /// [`CommandError::Cancelled`].
    pub fn check_cancelled(&self) -> Result<(), CommandError> {
        if self.is_cancelled() { Err(CommandError::Cancelled) } else { Ok(()) }
    }

    /// Drives an async operation (an MCP client call) to completion on a private
    /// current-thread runtime, stopping it when the run is cancelled. Commands are
    /// synchronous: on a terminal they run on the main thread, over MCP on the server's
    /// blocking pool, where no runtime is entered.
    ///
    /// # Errors
    ///
    /// The operation's own error, [`CommandError::Cancelled`], or an I/O error when the
    /// runtime cannot start.
    pub fn block<T, E>(&self, future: impl Future<Output = Result<T, E>>) -> Result<T, CommandError>
    where
        CommandError: From<E>,
    {
        self.drive(future, None)
    }

    /// [`Ctx::block`] for operations that hold nothing open on a server (a ping, a listing):
    /// on a terminal, Ctrl-C (SIGINT) ends the operation at once with
    /// [`CommandError::Interrupted`] (status 130, as a shell reports SIGINT).
    ///
    /// # Errors
    ///
    /// As [`Ctx::block`], or [`CommandError::Interrupted`].
    pub fn block_until_interrupted<T, E>(
        &self,
        future: impl Future<Output = Result<T, E>>,
    ) -> Result<T, CommandError>
    where
        CommandError: From<E>,
    {
        self.drive(future, Some(std::time::Duration::ZERO))
    }

    /// [`Ctx::block`] for operations that hold work open on a server (an MCP call that may run
    /// as a task): a cancelled operation gets [`INTERRUPT_GRACE`] to end by itself (the MCP
    /// client, given [`Ctx::cancel_token`], cancels the task it follows on the server) before
    /// it is dropped. On a terminal, Ctrl-C (SIGINT) cancels the run, and a second one exits at
    /// once (status 130); once used, Ctrl-C no longer kills the process outright.
    ///
    /// # Errors
    ///
    /// As [`Ctx::block`].
    pub fn block_interruptible<T, E>(
        &self,
        future: impl Future<Output = Result<T, E>>,
    ) -> Result<T, CommandError>
    where
        CommandError: From<E>,
    {
        self.drive(future, Some(INTERRUPT_GRACE))
    }

    /// Runs `future`; with a `grace`, SIGINT on a terminal cancels the run and the future gets
    /// that long to end by itself (a task cancelled on the server) before it is dropped.
    fn drive<T, E>(
        &self,
        future: impl Future<Output = Result<T, E>>,
        grace: Option<std::time::Duration>,
    ) -> Result<T, CommandError>
    where
        CommandError: From<E>,
    {
        let interruptible = grace.is_some();
        let sigint = interruptible && self.scope == Scope::Terminal;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(async {
            let mut future = std::pin::pin!(future);
            let mut interrupt = match sigint {
                true => Some(tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?),
                false => None,
            };
            let interrupted = async {
                match interrupt.as_mut() {
                    Some(signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            let by_sigint = tokio::select! {
                result = &mut future => return Ok(result?),
                () = self.cancel.cancelled() => false,
                () = interrupted => {
                    self.cancel.cancel();
                    true
                }
            };
            let stopped = if by_sigint { CommandError::Interrupted } else { CommandError::Cancelled };
            let grace = match grace {
                Some(grace) if !grace.is_zero() => grace,
                _ => return Err(stopped),
            };
            let second = async {
                match interrupt.as_mut() {
                    Some(signal) => {
                        signal.recv().await;
                        std::process::exit(130);
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                result = tokio::time::timeout(grace, &mut future) => match result {
                    Ok(result) => Ok(result?),
                    Err(_) => Err(stopped),
                },
                () = second => Err(stopped),
            }
        })
    }

    /// Clears the terminal's progress bar, if one was drawn.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl std::fmt::Debug for Ctx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctx").field("root", &self.root).field("scope", &self.scope).finish_non_exhaustive()
    }
}

/// Fixed-point scale: MCP progress values are floats, indicatif counts in integers.
const SCALE: f64 = 1000.0;

fn draw(bar: &indicatif::ProgressBar, update: &ProgressUpdate) {
    let style = match update.total {
        Some(total) if total > 0.0 => {
            bar.set_length((total * SCALE) as u64);
            indicatif::ProgressStyle::with_template("{bar:40} {percent:>3}% {msg}")
        }
        _ => indicatif::ProgressStyle::with_template("{spinner} {msg}"),
    };
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar.set_position((update.progress.max(0.0) * SCALE) as u64);
    match &update.message {
        Some(message) => bar.set_message(message.clone()),
        None if update.total.is_none() => bar.set_message(format!("progress {}", update.progress)),
        None => {}
    }
}
