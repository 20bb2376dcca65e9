//! The reports of the `tmux.*` and `record.*` leaves.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use super::record::RecordMode;
use crate::report::Report;

/// Where a leaf acted: the target as given, the container, the tmux socket.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Place {
    /// The target as given: a box name, or `.` for this machine.
    pub target: String,
    /// The box's container (`charly-<box>[-<instance>]`); absent on this machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// The tmux socket name (`-L`), when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
}

impl Place {
    /// `in container charly-web`, `on this machine`.
    fn at(&self) -> String {
        match &self.container {
            Some(c) => format!("in container {c}"),
            None => "on this machine".into(),
        }
    }
}

/// One tmux session (`list-sessions`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SessionInfo {
    /// Its name.
    pub name: String,
    /// How many windows it has.
    pub windows: u32,
    /// How many clients are attached to it.
    pub attached: u32,
    /// When it was made, in seconds since the Unix epoch.
    pub created: u64,
}

/// `tmux.list`: the sessions of a target's tmux server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TmuxSessions {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The sessions, in tmux's order; none when no tmux server runs there.
    pub sessions: Vec<SessionInfo>,
}

impl fmt::Display for TmuxSessions {
    /// `NAME<TAB>WINDOWS windows<TAB>attached|detached`, one line a session; a line saying
    /// so when there is none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.sessions.is_empty() {
            return writeln!(f, "no tmux sessions {}", self.place.at());
        }
        for s in &self.sessions {
            let attached = if s.attached > 0 { "attached" } else { "detached" };
            writeln!(f, "{}\t{} windows\t{attached}", s.name, s.windows)?;
        }
        Ok(())
    }
}

impl Report for TmuxSessions {}

/// `tmux.shell`, `tmux.attach`, `tmux.capture`: a session's pane, or (on a terminal) the
/// attachment that ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TmuxPane {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The session.
    pub session: String,
    /// Whether this call made the session (`shell`).
    pub created: bool,
    /// Whether a terminal was attached (and has detached again); the pane is then not
    /// captured.
    pub attached: bool,
    /// The pane's lines (history first when asked for), trailing blank lines dropped.
    pub lines: Vec<String>,
}

impl fmt::Display for TmuxPane {
    /// The pane's lines; after an attachment, the session it detached from.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.attached {
            return writeln!(f, "detached from tmux session {} {}", self.session, self.place.at());
        }
        self.lines.iter().try_for_each(|l| writeln!(f, "{l}"))
    }
}

impl Report for TmuxPane {}

/// `tmux.run`: a program started in a new session, or the one that exited at once (its
/// session is ended then; a nonzero status is a failure).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TmuxStarted {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The session.
    pub session: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The program's exit status when it exited within half a second of its start (127: not
    /// found, 126: not executable, 128 + N: killed by signal N, -1: unknown); absent while it
    /// runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// What it printed before it exited (its pane's lines), when it exited at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Vec<String>>,
}

impl fmt::Display for TmuxStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let command = crate::report::shown_argv(&self.command);
        match self.exit_status {
            None => writeln!(f, "started tmux session {} {}: {command}", self.session, self.place.at()),
            Some(status) => {
                writeln!(
                    f,
                    "{command} exited at once {} (exit status {status}); its session {} is gone",
                    self.place.at(),
                    self.session
                )?;
                for line in self.output.iter().flatten() {
                    writeln!(f, "  {line}")?;
                }
                Ok(())
            }
        }
    }
}

impl Report for TmuxStarted {
    fn failure(&self) -> Option<String> {
        let program = self.command.first().map_or("the program", String::as_str);
        match self.exit_status? {
            0 => None,
            127 => Some(format!(
                "{program} is not installed {} or not on its PATH (env exited 127)",
                self.place.at()
            )),
            126 => {
                Some(format!("{program} cannot be run {} (not executable; env exited 126)", self.place.at()))
            }
            status => Some(format!("{program} exited at once with status {status} {}", self.place.at())),
        }
    }
}

/// `tmux.send`, `tmux.cmd`, `record.cmd`: keys sent to a session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TmuxSent {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The session.
    pub session: String,
    /// The keys, or the text, as given.
    pub keys: Vec<String>,
    /// Whether they were typed as text (not read as key names).
    pub literal: bool,
    /// Whether Enter followed.
    pub enter: bool,
}

impl fmt::Display for TmuxSent {
    /// `sent to tmux session S in container C: KEYS [+ Enter]`, the keys as Rust debug
    /// strings (so a newline or quote shows as such).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<String> = self.keys.iter().map(|k| format!("{k:?}")).collect();
        let enter = if self.enter { " + Enter" } else { "" };
        writeln!(f, "sent to tmux session {} {}: {}{enter}", self.session, self.place.at(), keys.join(" "))
    }
}

impl Report for TmuxSent {}

/// `tmux.kill`: a session ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TmuxKilled {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The session.
    pub session: String,
}

impl fmt::Display for TmuxKilled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "killed tmux session {} {}", self.session, self.place.at())
    }
}

impl Report for TmuxKilled {}

/// `record.start`: a recording started.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RecordStarted {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The recording.
    pub name: String,
    /// Its tmux session.
    pub session: String,
    /// What it records.
    pub mode: RecordMode,
    /// The recorder.
    pub tool: String,
    /// The file it writes, as the target sees it.
    pub file: String,
}

impl fmt::Display for RecordStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "recording {} started ({} mode, {} in tmux session {}), writing {}",
            self.name,
            self.mode.word(),
            self.tool,
            self.session,
            self.file
        )
    }
}

impl Report for RecordStarted {}

/// `record.stop`: a recording ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RecordStopped {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The recording.
    pub name: String,
    /// What it recorded.
    pub mode: RecordMode,
    /// Its file, as the target sees it (left there).
    pub file: String,
    /// The host path it was copied to, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The copy's size in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Whether the recorder exited by itself when asked to, with status 0 (or one tmux had not
    /// collected); otherwise the file may be incomplete, `warnings` says why, and the report is
    /// a failure (exit status 1, the file still copied).
    pub clean: bool,
    /// The recorder's exit status (128 + N for a signal N), when tmux had collected it (tmux may
    /// see the recorder's terminal close long before it collects the status).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// How long stopping took, in milliseconds.
    pub took_ms: u64,
    /// What went wrong on the way, if anything.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for RecordStopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.output, self.bytes) {
            (Some(out), Some(bytes)) => writeln!(f, "recording {} saved to {out} ({bytes} bytes)", self.name),
            _ => writeln!(f, "recording {} stopped; its file is {} in the target", self.name, self.file),
        }
    }
}

impl Report for RecordStopped {
    /// A recording that did not end cleanly (the recorder had died before the stop, exited
    /// with a nonzero status, or had to be killed) is a failure: its file may be broken.
    fn failure(&self) -> Option<String> {
        (!self.clean).then(|| {
            format!(
                "recording {} did not end cleanly ({}): its file may be incomplete",
                self.name,
                self.warnings.join("; ")
            )
        })
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// One recording (`record.list`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Recording {
    /// Its name.
    pub name: String,
    /// Its tmux session.
    pub session: String,
    /// What it records.
    pub mode: RecordMode,
    /// Its file, as the target sees it.
    pub file: String,
    /// Whether the recorder still runs (`false`: it exited; `record stop` collects the file).
    pub running: bool,
}

/// `record.list`: the recordings of a target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Recordings {
    /// Where.
    #[serde(flatten)]
    pub place: Place,
    /// The recordings, by session order.
    pub recordings: Vec<Recording>,
}

impl fmt::Display for Recordings {
    /// `NAME<TAB>MODE<TAB>FILE`, one line each (` (exited)` after a recorder that has); a line
    /// saying so when there is none.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.recordings.is_empty() {
            let at = match &self.place.container {
                Some(c) => format!("in container {c}"),
                None => "on this machine".into(),
            };
            return writeln!(f, "no recordings {at}");
        }
        for r in &self.recordings {
            let exited = if r.running { "" } else { " (exited)" };
            writeln!(f, "{}\t{}\t{}{exited}", r.name, r.mode.word(), r.file)?;
        }
        Ok(())
    }
}

impl Report for Recordings {}
