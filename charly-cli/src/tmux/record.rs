//! `record.*`: a recording is a tmux session `record-<name>` in the target whose pane runs the
//! recorder: `asciinema rec` (terminal: it records a shell, which `record cmd` types into) or
//! `wf-recorder` (desktop: the Wayland output). The session carries the recording's mode and
//! file as tmux options (`@charly-record-mode`, `@charly-record-file`), so `list` reads them
//! from tmux and nothing is left behind when the session ends; it keeps a recorder that exits
//! as a dead pane (`remain-on-exit`), so `start` sees a recorder that failed at once, with its
//! words, and `stop` its exit status.
//!
//! `stop` ends the recorder the way it finishes its file: asciinema's shell exits (`C-c`, then
//! `exit` typed); wf-recorder gets SIGINT (`C-c`), and since it only exits once the next frame
//! arrives (RUNTIMES.md §11) and a still desktop sends none, charly makes one
//! ([`super::desktop::damage`]). A recorder that has not exited in time is killed with its
//! session, and the report says the file may be incomplete. The file is then copied to the
//! host path given (atomically).

use std::path::Path;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;

use super::report::{Place, Recording, TmuxSent};
use super::session::{FILE_OPTION, Listed, MODE_OPTION, pane_target, session_target, tmux_cmd};
use super::{Reach, Tmux, TmuxError};

/// What a recording records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, JsonSchema, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordMode {
    /// A shell in a terminal, with asciinema (an asciicast v2 `.cast` file).
    #[default]
    Terminal,
    /// The Wayland desktop, with wf-recorder (an `.mp4` file).
    Desktop,
}

impl RecordMode {
    /// `terminal`, `desktop`.
    pub fn word(self) -> &'static str {
        match self {
            RecordMode::Terminal => "terminal",
            RecordMode::Desktop => "desktop",
        }
    }

    /// The recorder program.
    pub fn tool(self) -> &'static str {
        match self {
            RecordMode::Terminal => "asciinema",
            RecordMode::Desktop => "wf-recorder",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            RecordMode::Terminal => "cast",
            RecordMode::Desktop => "mp4",
        }
    }

    fn of(word: &str) -> Option<RecordMode> {
        match word {
            "terminal" => Some(RecordMode::Terminal),
            "desktop" => Some(RecordMode::Desktop),
            _ => None,
        }
    }
}

/// The tmux session of recording `name`.
pub fn session_of(name: &str) -> String {
    format!("record-{name}")
}

/// Refuses a recording name that is not `[A-Za-z0-9][A-Za-z0-9_-]*` (at most 64): it becomes
/// a session name and a file name.
///
/// # Errors
///
/// [`TmuxError::Usage`] naming the argument.
pub fn check_name(name: &str) -> Result<(), TmuxError> {
    let ok = (1..=64).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
    if ok {
        return Ok(());
    }
    Err(TmuxError::Usage(format!(
        "argument `name`: {name:?} is not a recording name: it names the tmux session record-<name> and the file \
         <name>.cast or .mp4, so use 1 to 64 letters, digits, `_` and `-`, starting with a letter or digit"
    )))
}

/// The recordings of `tmux`'s server.
///
/// # Errors
///
/// As [`Tmux::call`].
pub async fn list(tmux: &Tmux) -> Result<Vec<Recording>, TmuxError> {
    Ok(tmux.listed().await?.into_iter().filter_map(recording).collect())
}

fn recording(l: Listed) -> Option<Recording> {
    let mode = RecordMode::of(&l.mode)?;
    let name = l.info.name.strip_prefix("record-")?.to_owned();
    Some(Recording { name, session: l.info.name, mode, file: l.file, running: !l.dead })
}

/// Starts recording `name` in `mode`: its tmux session and the file it writes,
/// `<dir>/<name>.cast|mp4`, where `dir` is [`recordings_dir`]. A desktop recorder gets the
/// Wayland session's `XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY` ([`super::desktop`]).
///
/// # Errors
///
/// [`TmuxError::Exists`] when the recording runs already (nothing changed), [`TmuxError::Missing`]
/// for a recorder (or tmux) not in the target, [`TmuxError::Wayland`] for a desktop recording
/// where no compositor listens, [`TmuxError::Failed`] when the recorder exited at once (its
/// words; its session is removed).
pub async fn start(tmux: &Tmux, name: &str, mode: RecordMode) -> Result<(String, String), TmuxError> {
    check_name(name)?;
    let reach = tmux.reach();
    let tool = mode.tool();
    let purpose = format!("for {} recordings", mode.word());
    if !reach.has_program(tool).await? {
        return Err(TmuxError::Missing(reach.missing(tool, &purpose)));
    }
    let wayland = match mode {
        RecordMode::Terminal => Vec::new(),
        RecordMode::Desktop => super::desktop::environment(reach).await?,
    };
    let session = session_of(name);
    let dir = recordings_dir(reach)?;
    let file = match tmux.socket() {
        // Another server's recording of the same name gets another file.
        Some(socket) => format!("{dir}/{name}.{socket}.{}", mode.extension()),
        None => format!("{dir}/{name}.{}", mode.extension()),
    };
    let recorder: Vec<String> = match mode {
        RecordMode::Terminal => tmux_cmd!["asciinema", "rec", "--quiet", "--overwrite", file.clone()],
        RecordMode::Desktop => {
            // wf-recorder asks on its terminal before it overwrites a file.
            if tmux.has(&session).await? {
                return Err(exists(tmux, name));
            }
            remove_file(reach, &file).await?;
            tmux_cmd!["wf-recorder", "-f", file.clone()]
        }
    };
    let pane = pane_target(&session);
    let mut respawn = tmux_cmd!["respawn-pane", "-k", "-t", pane.clone()];
    for (key, value) in &wayland {
        respawn.extend(["-e".to_owned(), format!("{key}={value}")]);
    }
    respawn.push("--".into());
    respawn.extend(recorder);
    // One sequence: the session starts with tmux's default shell, takes its options, then the
    // recorder replaces the shell; a second start fails at `new-session` and changes nothing.
    let commands = [
        tmux_cmd!["new-session", "-d", "-s", session.clone()],
        tmux_cmd!["set-option", "-t", pane.clone(), "remain-on-exit", "on"],
        tmux_cmd!["set-option", "-t", pane.clone(), MODE_OPTION, mode.word()],
        tmux_cmd!["set-option", "-t", pane.clone(), FILE_OPTION, file.clone()],
        respawn,
    ];
    match tmux.checked(&commands, &session).await {
        Err(TmuxError::Exists { .. }) => return Err(exists(tmux, name)),
        other => other?,
    };
    // A recorder that cannot start (no display, an unwritable file) exits at once. asciinema
    // is ready (its signal handlers set) once the shell's prompt shows through it: until then
    // a stop's SIGHUP would kill it before it ends its file.
    let since = Instant::now();
    let ready = match mode {
        RecordMode::Terminal => Duration::from_secs(10),
        RecordMode::Desktop => Duration::from_millis(500),
    };
    let mut ended = Ended::default();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let state = looked(tmux, &session).await?;
        let shown: Vec<String> =
            state.lines.iter().filter(|l| !l.is_empty() && !l.starts_with("Pane is dead")).cloned().collect();
        if let Some(status) = ended.of(&state) {
            let status = status.unwrap_or(-1);
            let _ = tmux.kill(&session).await;
            if status == 127 {
                return Err(TmuxError::Missing(reach.missing(tool, &purpose)));
            }
            return Err(TmuxError::Failed {
                command: format!("{tool} (recording {name})"),
                place: tmux.place(),
                status,
                message: shown.join("\n"),
            });
        }
        let prompt = mode == RecordMode::Terminal && !shown.is_empty();
        if prompt || since.elapsed() >= ready {
            break;
        }
    }
    Ok((session, file))
}

fn exists(tmux: &Tmux, name: &str) -> TmuxError {
    let socket = tmux.socket().map(|s| format!(" -L {s}")).unwrap_or_default();
    let stop = format!("charly record stop {}{socket} --name {name}", tmux.reach().fix());
    TmuxError::Exists {
        session: session_of(name),
        place: tmux.place(),
        fix: format!(
            "recording {name:?} was started already: stop it first (`{stop}`) or choose another --name"
        ),
    }
}

/// A recorder's pane as tmux shows it.
struct PaneState {
    /// Whether its terminal has closed: the recorder has exited.
    dead: bool,
    /// Its exit status (128 + N for a signal N, as a shell gives it), once tmux has it.
    status: Option<i32>,
    /// The recorder's pid, in the target.
    pid: u32,
    /// The pane's lines.
    lines: Vec<String>,
}

/// When a recorder counts as ended: its pane dead with a status, or dead for a second without
/// one. tmux sees the terminal close first and collects the status on SIGCHLD, and tmux 3.3a
/// was seen here to leave an exited recorder unreaped (a zombie) for as long as no other child
/// of the server exits; the file is complete by then, since its writer has exited.
#[derive(Default)]
struct Ended {
    dead_since: Option<Instant>,
}

impl Ended {
    /// `Some(status)` once `state` counts as ended.
    fn of(&mut self, state: &PaneState) -> Option<Option<i32>> {
        if !state.dead {
            return None;
        }
        let since = *self.dead_since.get_or_insert_with(Instant::now);
        (state.status.is_some() || since.elapsed() >= Duration::from_secs(1)).then_some(state.status)
    }
}

/// The recorder's pane and lines, in one tmux call.
async fn looked(tmux: &Tmux, session: &str) -> Result<PaneState, TmuxError> {
    let format = "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}|#{pane_pid}";
    let commands = [
        tmux_cmd!["display-message", "-p", "-t", pane_target(session), format],
        tmux_cmd!["capture-pane", "-p", "-t", pane_target(session)],
    ];
    let out = tmux.checked(&commands, session).await?;
    let mut lines = out.lines();
    let mut fields = lines.next().unwrap_or_default().trim().split('|');
    let dead = fields.next() == Some("1");
    let status: Option<i32> = fields.next().and_then(|s| s.parse().ok());
    let signal: Option<i32> = fields.next().and_then(|s| s.parse().ok());
    let pid = fields.next().and_then(|s| s.parse().ok()).unwrap_or(0);
    let status = status.or(signal.map(|n| 128 + n)).filter(|_| dead);
    let lines = lines.map(|l| l.trim_end().to_owned()).collect();
    Ok(PaneState { dead, status, pid, lines })
}

/// Asks the recorder to end its file: asciinema gets SIGHUP (`kill -HUP` run in the target;
/// it passes it on to its shell, which exits whatever runs in it); wf-recorder gets SIGINT
/// (`C-c`, its own way to stop). `typed` (the fallback, or no `kill` there): `C-c`, then `exit`
/// typed into asciinema's shell. Whether a signal was sent.
async fn ask_to_end(
    tmux: &Tmux,
    session: &str,
    mode: RecordMode,
    pid: u32,
    typed: bool,
) -> Result<bool, TmuxError> {
    let pane = pane_target(session);
    if mode == RecordMode::Terminal && pid > 0 && !typed {
        match tmux.reach().run(&["kill".to_owned(), "-HUP".to_owned(), pid.to_string()], "").await {
            Ok(out) if out.status == 0 => return Ok(true),
            Ok(_) | Err(TmuxError::Missing(_)) => {}
            Err(e) => return Err(e),
        }
    }
    tmux.checked(&[tmux_cmd!["send-keys", "-t", pane.clone(), "C-c"]], session).await?;
    if mode == RecordMode::Terminal {
        // The shell redraws its prompt after C-c before it reads what is typed next.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let keys = [
            tmux_cmd!["send-keys", "-t", pane.clone(), "-l", "--", "exit"],
            tmux_cmd!["send-keys", "-t", pane, "Enter"],
        ];
        tmux.checked(&keys, session).await?;
    }
    Ok(mode == RecordMode::Desktop)
}

/// What [`stop`] did.
#[derive(Debug)]
pub struct Stopped {
    /// The mode.
    pub mode: RecordMode,
    /// The file in the target.
    pub file: String,
    /// The recorder's exit status, when it exited.
    pub exit_status: Option<i32>,
    /// Warnings (killed, non-zero status).
    pub warnings: Vec<String>,
}

/// Stops recording `name` (see the module's doc).
///
/// # Errors
///
/// [`TmuxError::NoRecording`] listing the recordings there are; as [`Tmux::checked`].
pub async fn stop(tmux: &Tmux, name: &str) -> Result<Stopped, TmuxError> {
    check_name(name)?;
    let session = session_of(name);
    let all = list(tmux).await?;
    let Some(rec) = all.iter().find(|r| r.session == session).cloned() else {
        return Err(no_recording(tmux, name, &all));
    };
    let mut warnings = Vec::new();
    let mut exit_status = None;
    if rec.running {
        let pid = looked(tmux, &session).await?.pid;
        let damage = match rec.mode {
            RecordMode::Desktop => match super::desktop::damage_argv(tmux.reach()).await {
                Ok(argv) => Some(argv),
                Err(why) => {
                    warnings.push(why);
                    None
                }
            },
            RecordMode::Terminal => None,
        };
        let mut signalled = ask_to_end(tmux, &session, rec.mode, pid, false).await?;
        let started = Instant::now();
        let limit = Duration::from_secs(8);
        let mut nudged: Option<Instant> = None;
        let mut ended = Ended::default();
        loop {
            let state = looked(tmux, &session).await?;
            if let Some(status) = ended.of(&state) {
                exit_status = status;
                // A recorder that ended by itself needed no frame drawn.
                warnings.clear();
                break;
            }
            if started.elapsed() > limit {
                let said = tmux.capture(&session, 0).await.unwrap_or_default();
                let tail: Vec<&str> = said.iter().map(|l| l.trim()).filter(|l| !l.is_empty()).collect();
                warnings.push(format!(
                    "{} did not exit within {}s of being asked to; its session was killed, so {} may be incomplete \
                     (its last words: {:?})",
                    rec.mode.tool(),
                    limit.as_secs(),
                    rec.file,
                    tail[tail.len().saturating_sub(3)..].join(" / ")
                ));
                break;
            }
            if state.dead {
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            if rec.mode == RecordMode::Terminal && signalled && started.elapsed() > Duration::from_secs(3) {
                signalled = ask_to_end(tmux, &session, rec.mode, pid, true).await?;
            }
            // Still running after SIGINT: wf-recorder waits for a frame; draw one (again each
            // second, in case the first came before it asked).
            if let Some(argv) = &damage
                && nudged.is_none_or(|at| at.elapsed() > Duration::from_secs(1))
            {
                match tmux.reach().run(argv, "").await {
                    Ok(out) if out.status != 0 => warnings.push(format!(
                        "swaymsg could not make sway draw a frame (exit status {}): {}",
                        out.status,
                        out.stderr.trim()
                    )),
                    Err(e) => warnings.push(format!("swaymsg could not make sway draw a frame: {e}")),
                    Ok(_) => {}
                }
                nudged = Some(Instant::now());
                continue;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    } else {
        exit_status = looked(tmux, &session).await?.status;
        warnings.push(format!(
            "{} had exited already (status {}) before the stop",
            rec.mode.tool(),
            exit_status.map_or("unknown".into(), |s| s.to_string())
        ));
    }
    warnings.dedup();
    if let Some(status) = exit_status.filter(|s| *s != 0) {
        warnings.push(format!("{} exited with status {status}", rec.mode.tool()));
    }
    tmux.checked(&[tmux_cmd!["kill-session", "-t", session_target(&session)]], &session).await?;
    Ok(Stopped { mode: rec.mode, file: rec.file, exit_status, warnings })
}

/// [`TmuxError::NoRecording`] for `name`, listing `all`.
pub fn no_recording(tmux: &Tmux, name: &str, all: &[Recording]) -> TmuxError {
    let listed = if all.is_empty() {
        "; none runs there".to_owned()
    } else {
        format!("; recordings there: {}", all.iter().map(|r| r.name.as_str()).collect::<Vec<_>>().join(", "))
    };
    TmuxError::NoRecording { name: name.to_owned(), place: tmux.place(), listed }
}

/// Types `text` into recording `name`'s session, then Enter.
///
/// # Errors
///
/// [`TmuxError::NoRecording`]; as [`Tmux::send`].
pub async fn cmd(tmux: &Tmux, name: &str, text: &str) -> Result<String, TmuxError> {
    check_name(name)?;
    let session = session_of(name);
    let all = list(tmux).await?;
    let Some(rec) = all.iter().find(|r| r.session == session) else {
        return Err(no_recording(tmux, name, &all));
    };
    if rec.mode != RecordMode::Terminal {
        // Typed into wf-recorder's pane, the text would reach no shell (and Enter nothing).
        return Err(TmuxError::Usage(format!(
            "recording {name:?} records the desktop ({} mode, wf-recorder): it has no shell to type into; \
             `record cmd` types into a terminal recording (`record start -m terminal`), and on the desktop \
             `charly check wl type` types into the focused window",
            rec.mode.word()
        )));
    }
    tmux.send(&session, &[text.to_owned()], true, true).await?;
    Ok(session)
}

/// The report of [`cmd`].
pub fn sent(place: Place, session: String, text: &str) -> TmuxSent {
    TmuxSent { place, session, keys: vec![text.to_owned()], literal: true, enter: true }
}

/// Where recordings are written in the target: `/tmp` of a container (its own), and on this
/// machine a private directory, `$XDG_RUNTIME_DIR/charly-recordings` or
/// `<tmp>/charly-recordings-<uid>` (0700, checked to be charly's user's own: a shared `/tmp`
/// must not let another user place a link where a recorder writes).
///
/// # Errors
///
/// [`TmuxError::Io`] when the local directory cannot be made or is not private.
pub fn recordings_dir(reach: &Reach) -> Result<String, TmuxError> {
    match reach {
        Reach::Container { .. } => Ok("/tmp".into()),
        Reach::Local { .. } => local_dir().map(|p| p.to_string_lossy().into_owned()),
    }
}

fn local_dir() -> Result<std::path::PathBuf, TmuxError> {
    use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, PermissionsExt as _};
    let io = |what: &str, p: &Path, e: std::io::Error| {
        TmuxError::Io(format!("cannot {what} {}: {e}", p.display()))
    };
    let uid = std::fs::metadata("/proc/self").map_err(|e| io("read", Path::new("/proc/self"), e))?.uid();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").map(std::path::PathBuf::from) {
        Some(run) if run.is_absolute() && run.is_dir() => run.join("charly-recordings"),
        _ => std::env::temp_dir().join(format!("charly-recordings-{uid}")),
    };
    match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(io("create the directory", &dir, e)),
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| io("read", &dir, e))?;
    if !meta.is_dir() || meta.uid() != uid || meta.permissions().mode() & 0o077 != 0 {
        return Err(TmuxError::Io(format!(
            "{} is not a private directory of uid {uid} (a directory, owned by it, mode 0700): recordings are not \
             written there; remove it, or set XDG_RUNTIME_DIR to your own runtime directory",
            dir.display()
        )));
    }
    if dir.to_string_lossy().contains('|') {
        return Err(TmuxError::Io(format!("{}: a recordings directory may not hold `|`", dir.display())));
    }
    Ok(dir)
}

/// Removes `file` in the target when it is there (wf-recorder would ask before overwriting).
async fn remove_file(reach: &Reach, file: &str) -> Result<(), TmuxError> {
    match reach {
        Reach::Local { .. } => match std::fs::remove_file(file) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(TmuxError::Io(format!("cannot remove the old recording {file}: {e}"))),
        },
        Reach::Container { .. } => {
            let out =
                reach.run(&["rm".to_owned(), "-f".to_owned(), "--".to_owned(), file.to_owned()], "").await?;
            if out.status != 0 {
                return Err(TmuxError::Failed {
                    command: format!("rm -f {file}"),
                    place: format!("in {}", reach.describe()),
                    status: out.status,
                    message: out.stderr.trim().to_owned(),
                });
            }
            Ok(())
        }
    }
}
