//! `charly tmux ...` and `charly record ...`: tmux sessions and recordings in a box's running
//! container or on this machine ([`crate::tmux`]).

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::tmux::{RecordMode, RecordStarted, RecordStopped, Recordings};
use crate::tmux::{TmuxKilled, TmuxPane, TmuxSent, TmuxSessions, TmuxStarted};

/// Which tmux server.
#[derive(Args, McpTool, Debug, Clone)]
pub struct TmuxTarget {
    /// Box whose running container runs tmux (charly-<box>[-<instance>]), or `.` for this
    /// machine
    pub target: String,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(short, long)]
    pub instance: Option<String>,
    /// The tmux server's socket name (tmux -L NAME); default: the server `tmux` itself would
    /// use there ($TMUX, else `default` in $TMUX_TMPDIR/tmux-<uid>)
    #[arg(short = 'L', long)]
    pub socket: Option<String>,
}

/// `charly tmux ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum TmuxCmd {
    /// Attach to a session, made first (tmux's default shell) when it does not exist; as a tool
    /// (or without a terminal), make it detached and return its pane
    #[mcp_tool(output = TmuxPane, destructive = "starts a shell session in the target when none of that name runs")]
    Shell {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The session
        #[arg(short, long, default_value = "shell")]
        session: String,
    },
    /// Attach to an existing session; as a tool (or without a terminal), return its pane
    #[mcp_tool(output = TmuxPane)]
    Attach {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The session
        #[arg(short, long)]
        session: String,
    },
    /// Start a program in a new detached session (refused when the session exists); the
    /// program and its arguments are run as given, without a shell
    #[mcp_tool(output = TmuxStarted, destructive = "starts a program in the target")]
    Run {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The new session
        #[arg(short, long)]
        session: String,
        /// The program and its arguments, after `--` when one starts with `-` (`-- sh -c '...'`
        /// for a shell command line)
        #[arg(required = true)]
        command: Vec<String>,
    },
    /// Type a command line into a session (as text, quotes and all), then press Enter
    #[mcp_tool(output = TmuxSent, destructive = "types a command into a session, whose shell runs it")]
    Cmd {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The session
        #[arg(short, long)]
        session: String,
        /// The text to type
        command: String,
    },
    /// Send keys to a session: tmux key names (C-c, Enter, Up, F1; a word that is no key name
    /// is typed), or with --literal text typed as it is
    #[mcp_tool(output = TmuxSent, destructive = "sends keys to a session, which can run anything")]
    Send {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The session
        #[arg(short, long)]
        session: String,
        /// Type each key argument as text, never as a key name
        #[arg(short, long)]
        literal: bool,
        /// Press Enter after the keys
        #[arg(long)]
        enter: bool,
        /// The keys, in order (after `--` when one starts with `-`)
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Print a session's pane: the visible lines, with --lines lines of history above them
    #[mcp_tool(output = TmuxPane)]
    Capture {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The session
        #[arg(short, long)]
        session: String,
        /// Lines of scrollback history to include above the visible pane
        #[arg(short = 'n', long, default_value_t = 0)]
        lines: u32,
    },
    /// List the sessions (none when no tmux server runs)
    #[mcp_tool(output = TmuxSessions)]
    List(TmuxTarget),
    /// End a session and the programs in it
    #[mcp_tool(output = TmuxKilled, destructive = "ends a session and the programs in it")]
    Kill {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The session
        #[arg(short, long)]
        session: String,
    },
}

/// `charly record ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum RecordCmd {
    /// Start recording in a tmux session record-<name>: a shell with asciinema (terminal) or
    /// the Wayland desktop with wf-recorder (desktop); refused when it runs already
    #[mcp_tool(output = RecordStarted, destructive = "starts a recorder in the target")]
    Start {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The recording
        #[arg(short, long, default_value = "default")]
        name: String,
        /// What to record
        #[arg(short, long, value_enum, default_value = "terminal")]
        mode: RecordMode,
    },
    /// Stop a recording (the recorder ends its file) and copy the file to --output
    #[mcp_tool(output = RecordStopped, destructive = "ends a recorder and writes the file given")]
    Stop {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The recording
        #[arg(short, long, default_value = "default")]
        name: String,
        /// Where to copy the file on this machine (over MCP a path inside the project); without
        /// it the file stays in the target
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// List the recordings, with mode and file
    #[mcp_tool(output = Recordings)]
    List(TmuxTarget),
    /// Type a command line into a terminal recording's shell, then press Enter
    #[mcp_tool(output = TmuxSent, destructive = "types a command into a recorded shell, which runs it")]
    Cmd {
        /// The tmux server.
        #[command(flatten)]
        on: TmuxTarget,
        /// The recording
        #[arg(short, long, default_value = "default")]
        name: String,
        /// The text to type
        command: String,
    },
}
