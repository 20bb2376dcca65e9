//! `tmux.*` and `record.*` against real tmux 3.3a, asciinema 2.2.0, wf-recorder 0.3 and sway
//! headless: every leaf on this machine (`.`) with tmux on private servers (`TMUX_TMPDIR` in a
//! temporary directory, socket names `test-tm-*`), and each family through a real box
//! container on the Wayland image `scripts/runtimes.sh` builds (sway headless under
//! supervisord as an unprivileged uid, tmux, asciinema, wf-recorder), built and started once
//! for the binary. Over MCP, `tmux.shell` and `tmux.capture` return panes without waiting on a
//! terminal.

#[path = "../deploy/util.rs"]
#[allow(dead_code)]
mod util;

/// The harness for this machine: a private tmux directory, `charly` with a clean environment,
/// tmux servers killed at the end.
mod local;

/// Every `tmux.*` leaf on `.`: sessions, keys and literal text, captures, attach on a terminal,
/// bad input.
mod leaves;

/// `record.*` on `.`: a terminal recording read back as asciicast v2; the errors.
mod record;

/// The Wayland box: tmux inside it, a terminal recording and a desktop recording of sway copied
/// out; a box without tmux.
mod boxed;

/// `tmux.*` and `record.*` as tools of charly's own MCP server.
mod mcp;
