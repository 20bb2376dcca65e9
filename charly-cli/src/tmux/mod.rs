//! `tmux.*` and `record.*`: tmux sessions, and terminal or desktop recordings made inside
//! them (REFERENCE.md §9, §10), in a box's running container `charly-<box>[-<instance>]`
//! (through [`crate::engine`]: `podman exec` with an argv, after the claim check) or on this
//! machine for the target `.`.
//!
//! | leaf | what it does | report |
//! |---|---|---|
//! | `tmux shell [-s S]` | attach to session `S` (default `shell`), made first when missing; as a tool, make it detached and return its pane | [`TmuxPane`] |
//! | `tmux attach -s S` | attach to an existing session; as a tool, return its pane | [`TmuxPane`] |
//! | `tmux run -s S -- PROG ARGS...` | a program in a new detached session (refused when `S` exists) | [`TmuxStarted`] |
//! | `tmux cmd -s S TEXT` | `TEXT` typed literally, then Enter | [`TmuxSent`] |
//! | `tmux send -s S KEYS... [--literal] [--enter]` | tmux key names (`C-c`, `Enter`, `Up`), or literal text | [`TmuxSent`] |
//! | `tmux capture -s S [-n N]` | the visible pane, with `N` lines of history above it | [`TmuxPane`] |
//! | `tmux list` | every session (no server: none) | [`TmuxSessions`] |
//! | `tmux kill -s S` | ends the session | [`TmuxKilled`] |
//! | `record start [-n N] [-m terminal\|desktop]` | `asciinema rec` or `wf-recorder` in session `record-N` | [`RecordStarted`] |
//! | `record stop [-n N] [-o FILE]` | ends the recorder cleanly, copies the file out | [`RecordStopped`] |
//! | `record list` | the recordings running, with mode and file | [`Recordings`] |
//! | `record cmd [-n N] TEXT` | `TEXT` typed into the recording's session, then Enter | [`TmuxSent`] |
//!
//! Every value reaches tmux as one argv element: no shell runs between charly and tmux, and
//! the one piece of syntax tmux itself reads in its arguments, a `;` ending an argument (which
//! starts another tmux command), is escaped ([`session::escape`]). Session names tmux would
//! change or misread (`:` and `.` name windows and panes, a leading `$` an id) are refused,
//! naming the argument. Targets are exact (`=NAME`), never tmux's prefix or pattern matches.
//!
//! The tmux server: in a box, the default one of the container's exec user (tmux's own
//! `/tmp/tmux-<uid>/default`); on `.`, the one `tmux` would use in charly's environment
//! (`$TMUX`, else `$TMUX_TMPDIR`/`tmux-<uid>/default`). `--socket NAME` (tmux `-L NAME`)
//! names another server on either target.

pub mod desktop;
mod reach;
pub mod record;
pub mod report;
pub mod session;

use std::fmt;

pub use self::reach::Reach;
pub use self::record::RecordMode;
pub use self::report::{RecordStarted, RecordStopped, Recording, Recordings};
pub use self::report::{SessionInfo, TmuxKilled, TmuxPane, TmuxSent, TmuxSessions, TmuxStarted};
pub use self::session::Tmux;

/// Why a `tmux.*` or `record.*` leaf could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TmuxError {
    /// An argument is not usable; the message names it and what is allowed.
    #[error("{0}")]
    Usage(String),
    /// The box's container could not be used: no such container (how to start it), not
    /// running, another box's, no podman.
    #[error(transparent)]
    Engine(Box<crate::engine::EngineError>),
    /// No Wayland session where a desktop recording needs one (where charly looked).
    #[error(transparent)]
    Wayland(Box<crate::wl::WlError>),
    /// A program charly needs is not in the target.
    #[error("{0}")]
    Missing(Missing),
    /// No session of that name.
    #[error("there is no tmux session {session:?} {place}{listed}")]
    NoSession {
        /// The session.
        session: String,
        /// Where: `in container charly-web`, `on this machine`, with the server.
        place: String,
        /// The sessions there are, as a sentence (`; sessions there: a, b`).
        listed: String,
    },
    /// A session of that name runs already.
    #[error("tmux session {session:?} exists already {place}; {fix}")]
    Exists {
        /// The session.
        session: String,
        /// Where.
        place: String,
        /// What to do instead.
        fix: String,
    },
    /// No recording of that name runs.
    #[error("no recording {name:?} runs {place}{listed}")]
    NoRecording {
        /// The recording.
        name: String,
        /// Where.
        place: String,
        /// The recordings there are, as a sentence.
        listed: String,
    },
    /// tmux, or a recorder, failed; its own words.
    #[error("{command} failed {place} (exit status {status}): {message}")]
    Failed {
        /// The command, as a person would type it.
        command: String,
        /// Where.
        place: String,
        /// Its exit status.
        status: i32,
        /// What it printed.
        message: String,
    },
    /// A local file could not be read or written.
    #[error("{0}")]
    Io(String),
}

impl From<crate::engine::EngineError> for TmuxError {
    fn from(e: crate::engine::EngineError) -> Self {
        TmuxError::Engine(Box::new(e))
    }
}

impl From<crate::wl::WlError> for TmuxError {
    fn from(e: crate::wl::WlError) -> Self {
        TmuxError::Wayland(Box::new(e))
    }
}

/// A program missing from a target: the error names it and what adds it.
#[derive(Debug)]
pub struct Missing {
    /// The program (`tmux`, `asciinema`, `wf-recorder`).
    pub program: String,
    /// Why it is needed (`for terminal recordings`), or empty.
    pub purpose: String,
    /// Where it was looked for: the container, or `None` for this machine.
    pub container: Option<String>,
    /// The box and `-i` as charly's commands take them.
    pub fix: String,
}

impl fmt::Display for Missing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let package = package_of(&self.program);
        let purpose = if self.purpose.is_empty() { String::new() } else { format!(" ({})", self.purpose) };
        match &self.container {
            Some(container) => {
                let box_name = self.fix.split(' ').next().unwrap_or(&self.fix);
                write!(
                    f,
                    "{} is not installed in container {container}{purpose}: add a candy with the package \
                     {package} to box {box_name} (`charly box new candy {package}`, `charly candy add-deb \
                     {package} {package}` or add-rpm/add-pac, `charly box add-candy {box_name} {package}`) \
                     and recreate the container with `charly update {}`",
                    self.program, self.fix
                )
            }
            None => write!(
                f,
                "{} is not installed on this machine{purpose}: install the package {package} (Debian: \
                 `apt-get install {package}`)",
                self.program
            ),
        }
    }
}

/// The package that installs `program` (Debian, Fedora and Arch spell these alike).
fn package_of(program: &str) -> &str {
    match program {
        "swaymsg" => "sway",
        other => other,
    }
}
