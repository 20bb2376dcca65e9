//! `charly tmux ...` and `charly record ...`: each leaf against the tmux server its target
//! names ([`crate::tmux`]). `tmux shell` and `tmux attach` hand a terminal to tmux when there
//! is one (a person at a terminal, stdin and stdout terminals); as tools, and without a
//! terminal, they return the pane instead, never waiting on a TTY.

use std::time::Duration;

use super::reply;
use crate::cli::{RecordCmd, TmuxCmd, TmuxTarget};
use crate::context::Ctx;
use crate::error::CommandError;
use crate::report::Reply;
use crate::tmux::report::Place;
use crate::tmux::{self, Reach, RecordStarted, RecordStopped, Recordings, Tmux, TmuxError};
use crate::tmux::{TmuxKilled, TmuxPane, TmuxSent, TmuxSessions, TmuxStarted, record};

/// Runs a `tmux` leaf.
///
/// # Errors
///
/// [`CommandError::Tmux`]: a bad session or socket name, the target not running, tmux missing
/// there, a session that is not there (or, for `run`, already is).
pub(super) fn run_tmux(cmd: &TmuxCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let on = match cmd {
        TmuxCmd::Shell { on, .. }
        | TmuxCmd::Attach { on, .. }
        | TmuxCmd::Run { on, .. }
        | TmuxCmd::Cmd { on, .. }
        | TmuxCmd::Send { on, .. }
        | TmuxCmd::Capture { on, .. }
        | TmuxCmd::Kill { on, .. } => on,
        TmuxCmd::List(on) => on,
    };
    if let TmuxCmd::Shell { session, .. }
    | TmuxCmd::Attach { session, .. }
    | TmuxCmd::Run { session, .. }
    | TmuxCmd::Cmd { session, .. }
    | TmuxCmd::Send { session, .. }
    | TmuxCmd::Capture { session, .. }
    | TmuxCmd::Kill { session, .. } = cmd
    {
        tmux::session::check_session("session", session)?;
    }
    let tmux = server(on, ctx)?;
    let place = place_of(on, &tmux);
    match cmd {
        TmuxCmd::Shell { session, .. } => attach(ctx, &tmux, place, session, true),
        TmuxCmd::Attach { session, .. } => attach(ctx, &tmux, place, session, false),
        TmuxCmd::Run { session, command, .. } => {
            ctx.check_cancelled()?;
            let exited = ctx.block(tmux.start(session, command))?;
            let (exit_status, output) = match exited {
                Some(e) => (Some(e.status.unwrap_or(-1)), Some(e.output)),
                None => (None, None),
            };
            reply(TmuxStarted {
                place,
                session: session.clone(),
                command: command.clone(),
                exit_status,
                output,
            })
        }
        TmuxCmd::Cmd { session, command, .. } => {
            ctx.block(tmux.send(session, std::slice::from_ref(command), true, true))?;
            reply(TmuxSent {
                place,
                session: session.clone(),
                keys: vec![command.clone()],
                literal: true,
                enter: true,
            })
        }
        TmuxCmd::Send { session, literal, enter, keys, .. } => {
            ctx.block(tmux.send(session, keys, *literal, *enter))?;
            reply(TmuxSent {
                place,
                session: session.clone(),
                keys: keys.clone(),
                literal: *literal,
                enter: *enter,
            })
        }
        TmuxCmd::Capture { session, lines, .. } => {
            let lines = ctx.block_until_interrupted(tmux.capture(session, *lines))?;
            reply(TmuxPane { place, session: session.clone(), created: false, attached: false, lines })
        }
        TmuxCmd::List(_) => {
            let sessions = ctx.block_until_interrupted(tmux.sessions())?;
            reply(TmuxSessions { place, sessions })
        }
        TmuxCmd::Kill { session, .. } => {
            ctx.block(tmux.kill(session))?;
            reply(TmuxKilled { place, session: session.clone() })
        }
    }
}

/// Runs a `record` leaf.
///
/// # Errors
///
/// [`CommandError::Tmux`]: a bad name, the target not running, tmux or the recorder missing
/// there, a recording that is not there (or already is), an output path outside the project
/// over MCP.
pub(super) fn run_record(cmd: &RecordCmd, ctx: &Ctx) -> Result<Reply, CommandError> {
    let on = match cmd {
        RecordCmd::Start { on, .. } | RecordCmd::Stop { on, .. } | RecordCmd::Cmd { on, .. } => on,
        RecordCmd::List(on) => on,
    };
    if let RecordCmd::Start { name, .. } | RecordCmd::Stop { name, .. } | RecordCmd::Cmd { name, .. } = cmd {
        record::check_name(name)?;
    }
    // The output is checked before anything stops: a refused path changes nothing.
    let output = match cmd {
        RecordCmd::Stop { output: Some(path), .. } => Some(checked_output(ctx, path)?),
        _ => None,
    };
    let tmux = server(on, ctx)?;
    let place = place_of(on, &tmux);
    match cmd {
        RecordCmd::Start { name, mode, .. } => {
            ctx.check_cancelled()?;
            let (session, file) = ctx.block(record::start(&tmux, name, *mode))?;
            reply(RecordStarted {
                place,
                name: name.clone(),
                session,
                mode: *mode,
                tool: mode.tool().into(),
                file,
            })
        }
        RecordCmd::Stop { name, output: given, .. } => {
            let started = std::time::Instant::now();
            let stopped = ctx.block(record::stop(&tmux, name))?;
            let mut report = RecordStopped {
                place,
                name: name.clone(),
                mode: stopped.mode,
                file: stopped.file.clone(),
                output: None,
                bytes: None,
                clean: stopped.warnings.is_empty(),
                exit_status: stopped.exit_status,
                took_ms: 0,
                warnings: stopped.warnings,
            };
            if let (Some(dest), Some(shown)) = (&output, given) {
                let bytes = ctx.block(tmux.reach().copy_out(&stopped.file, dest))?;
                report.output = Some(shown.display().to_string());
                report.bytes = Some(bytes);
            }
            report.took_ms = started.elapsed().as_millis() as u64;
            reply(report)
        }
        RecordCmd::List(_) => {
            let recordings = ctx.block_until_interrupted(record::list(&tmux))?;
            reply(Recordings { place, recordings })
        }
        RecordCmd::Cmd { name, command, .. } => {
            let session = ctx.block(record::cmd(&tmux, name, command))?;
            reply(record::sent(place, session, command))
        }
    }
}

/// The tmux server `on` names, its target resolved (a box's container must run).
fn server(on: &TmuxTarget, ctx: &Ctx) -> Result<Tmux, CommandError> {
    if let Some(socket) = &on.socket {
        tmux::session::check_socket(socket)?;
    }
    let boxes = crate::resolve::project_boxes(ctx.root());
    let reach = ctx.block_until_interrupted(Reach::resolve(
        ctx.cancel_token(),
        &on.target,
        on.instance.as_deref(),
        boxes,
    ))?;
    Ok(Tmux::new(reach, on.socket.as_deref())?)
}

fn place_of(on: &TmuxTarget, tmux: &Tmux) -> Place {
    Place { target: on.target.clone(), container: tmux.reach().container(), socket: on.socket.clone() }
}

/// `--output` as this call may write it (over MCP beneath the project root), its directory
/// there and not itself a directory.
fn checked_output(ctx: &Ctx, path: &std::path::Path) -> Result<std::path::PathBuf, CommandError> {
    let dest = super::arg_path(ctx, "output", path)?;
    if dest.is_dir() {
        return Err(CommandError::Usage(format!(
            "argument `output`: {} is a directory; name the file to write (e.g. {})",
            path.display(),
            path.join("recording.cast").display()
        )));
    }
    let dir = dest.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    if !dir.is_dir() {
        return Err(CommandError::Usage(format!(
            "argument `output`: the directory of {} does not exist; create it first",
            path.display()
        )));
    }
    Ok(dest)
}

/// `shell` (`create`) and `attach`: a terminal attached to the session, or its pane.
fn attach(ctx: &Ctx, tmux: &Tmux, place: Place, session: &str, create: bool) -> Result<Reply, CommandError> {
    if ctx.attaches() {
        let had = ctx.block_until_interrupted(tmux.has(session))?;
        if !had && !create {
            return Err(ctx
                .block_until_interrupted(async { Ok::<_, TmuxError>(tmux.no_session(session).await) })?
                .into());
        }
        ctx.check_cancelled()?;
        let status = tmux.reach().terminal_command(&tmux.attach_argv(session, create)).status()?;
        if !status.success() {
            return Err(TmuxError::Failed {
                command: format!("tmux {}", if create { "new-session -A" } else { "attach-session" }),
                place: tmux.place(),
                status: status.code().unwrap_or(-1),
                message: "see its message above".into(),
            }
            .into());
        }
        return reply(TmuxPane {
            place,
            session: session.to_owned(),
            created: !had,
            attached: true,
            lines: Vec::new(),
        });
    }
    let (created, lines) = ctx.block(async {
        let created = match create {
            false => false,
            true => match tmux.start(session, &[]).await {
                Ok(_) => true,
                Err(TmuxError::Exists { .. }) => false,
                Err(e) => return Err(e),
            },
        };
        let mut lines = tmux.capture(session, 0).await?;
        // A new shell draws its prompt a moment after the session starts.
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while created && lines.iter().all(|l| l.trim().is_empty()) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
            lines = tmux.capture(session, 0).await?;
        }
        Ok::<_, TmuxError>((created, lines))
    })?;
    reply(TmuxPane { place, session: session.to_owned(), created, attached: false, lines })
}
