//! [`Tmux`]: one tmux server in a target, driven by argv. Each call is one `tmux` process
//! (one `podman exec` in a box: about 250 ms here), so what belongs together is sent as one
//! tmux command sequence (`cmd1 ; cmd2`).
//!
//! tmux reads one piece of syntax in its arguments: an argument that ends in `;` ends the
//! command, and the next argument starts another one (`send-keys -l -- 'x;' kill-server` kills
//! the server). [`escape`] writes such a `;` as `\;`, which tmux turns back into `;`, so every
//! value charly passes is taken as it is.

use std::time::{Duration, Instant};

use super::report::SessionInfo;
use super::{Reach, TmuxError};
use crate::engine::Output;

/// A tmux command: its words, as tmux's argv gets them (unescaped).
pub type Command = Vec<String>;

/// Builds a [`Command`] from words (`&str` or `String`).
macro_rules! tmux_cmd {
    ($($word:expr),* $(,)?) => { vec![$(String::from($word)),*] };
}
pub(crate) use tmux_cmd;

/// `arg` as tmux must be given it to read it back as `arg`: a final `;` (which would end the
/// command) written `\;`.
pub fn escape(arg: &str) -> String {
    match arg.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => arg.to_owned(),
    }
}

/// Refuses a session name tmux would change or misread: empty, with `:` or `.` (tmux turns
/// them into `_` on creation, and reads them as window and pane separators in targets), a
/// leading `$` (a session id), or a control character. `arg` is the argument's name.
///
/// # Errors
///
/// [`TmuxError::Usage`] naming the argument, the name and what is allowed.
pub fn check_session(arg: &str, name: &str) -> Result<(), TmuxError> {
    let why = if name.is_empty() {
        Some("it is empty".to_owned())
    } else if let Some(c) = name.chars().find(|c| matches!(c, ':' | '.')) {
        Some(format!(
            "{c:?} is not allowed: tmux uses `:` and `.` to name windows and panes in a target (and turns them \
             into `_` in a new session's name)"
        ))
    } else if name.starts_with('$') {
        Some("a leading `$` makes tmux read it as a session id ($0, $1, ...)".to_owned())
    } else {
        name.chars()
            .find(|c| c.is_control())
            .map(|c| format!("{c:?} is a control character, which tmux escapes in session names"))
    };
    match why {
        None => Ok(()),
        Some(why) => Err(TmuxError::Usage(format!(
            "argument `{arg}`: {name:?} is not a session name tmux keeps as given: {why}; use letters, digits, \
             `-` and `_`"
        ))),
    }
}

/// Refuses a socket name that is not a plain file name (tmux `-L` makes it a file in
/// `$TMUX_TMPDIR/tmux-<uid>/`).
///
/// # Errors
///
/// [`TmuxError::Usage`] naming the argument.
pub fn check_socket(name: &str) -> Result<(), TmuxError> {
    let ok = !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if ok {
        return Ok(());
    }
    Err(TmuxError::Usage(format!(
        "argument `socket`: {name:?} is not a tmux socket name: it names a file in tmux's socket directory \
         ($TMUX_TMPDIR/tmux-<uid>/), so use letters, digits, `_`, `-` and `.` (not first)"
    )))
}

/// The exact-match target of session `name` (`=NAME`): never a prefix or pattern match.
pub fn session_target(name: &str) -> String {
    format!("={name}")
}

/// The exact-match target of the active pane of session `name` (`=NAME:`): a pane target
/// without the `:` could name a window of another session.
pub fn pane_target(name: &str) -> String {
    format!("={name}:")
}

/// One tmux server in a target.
#[derive(Clone, Debug)]
pub struct Tmux {
    reach: Reach,
    socket: Option<String>,
}

/// A session as `list-sessions` gives it, with charly's recording options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Listed {
    pub(crate) info: SessionInfo,
    /// `@charly-record-mode` (empty when unset).
    pub(crate) mode: String,
    /// `@charly-record-file` (empty when unset).
    pub(crate) file: String,
    /// Whether the active pane's program has exited (kept by `remain-on-exit`).
    pub(crate) dead: bool,
}

/// How long `run` watches a new program for an exit at once (a missing program, bad
/// arguments): env reports a missing one within a few milliseconds.
pub const WATCH: Duration = Duration::from_millis(500);

/// A program `run` started that exited within [`WATCH`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exited {
    /// Its exit status (128 + N for signal N); `None` when tmux did not collect it.
    pub status: Option<i32>,
    /// What its pane showed (trailing blank lines dropped).
    pub output: Vec<String>,
}

/// The session option holding a recording's mode.
pub(crate) const MODE_OPTION: &str = "@charly-record-mode";
/// The session option holding a recording's file, as the target sees it.
pub(crate) const FILE_OPTION: &str = "@charly-record-file";

impl Tmux {
    /// The server at `socket` (tmux `-L`; `None`: tmux's default choice) reached through `reach`.
    ///
    /// # Errors
    ///
    /// [`TmuxError::Usage`] for a socket name that is not a plain file name.
    pub fn new(reach: Reach, socket: Option<&str>) -> Result<Tmux, TmuxError> {
        if let Some(s) = socket {
            check_socket(s)?;
        }
        Ok(Tmux { reach, socket: socket.map(str::to_owned) })
    }

    /// Where its programs run.
    pub fn reach(&self) -> &Reach {
        &self.reach
    }

    /// The socket name given, if any.
    pub fn socket(&self) -> Option<&str> {
        self.socket.as_deref()
    }

    /// `in container charly-web`, `on this machine (tmux -L work)`, for messages.
    pub fn place(&self) -> String {
        let at = match &self.reach {
            Reach::Local { .. } => "on this machine".to_owned(),
            other => format!("in {}", other.describe()),
        };
        match &self.socket {
            Some(s) => format!("{at} (tmux server -L {s})"),
            None => at,
        }
    }

    /// `tmux [-L S] cmd1 ; cmd2 ...`, every word escaped.
    pub fn argv(&self, commands: &[Command]) -> Vec<String> {
        let mut argv = vec!["tmux".to_owned()];
        if let Some(s) = &self.socket {
            argv.extend(["-L".to_owned(), s.clone()]);
        }
        for (i, command) in commands.iter().enumerate() {
            if i > 0 {
                argv.push(";".into());
            }
            argv.extend(command.iter().map(|w| escape(w)));
        }
        argv
    }

    /// Runs `commands` as one tmux command sequence, whatever its exit status.
    ///
    /// # Errors
    ///
    /// As [`Reach::run`] (tmux missing names the package and candy that add it).
    pub async fn call(&self, commands: &[Command]) -> Result<Output, TmuxError> {
        self.reach.run(&self.argv(commands), "").await
    }

    /// Runs `commands`; a failure is a [`TmuxError`] in tmux's words, a session that is not
    /// there ([`TmuxError::NoSession`], listing the ones there are) or already is
    /// ([`TmuxError::Exists`]) named as `session`.
    ///
    /// # Errors
    ///
    /// As described.
    pub async fn checked(&self, commands: &[Command], session: &str) -> Result<String, TmuxError> {
        let out = self.call(commands).await?;
        if out.status == 0 {
            return Ok(out.stdout);
        }
        let said = format!("{}{}", out.stderr, out.stdout);
        if said.contains("duplicate session") {
            return Err(TmuxError::Exists {
                session: session.to_owned(),
                place: self.place(),
                fix: format!(
                    "choose another session name, or end that one first (`charly tmux kill {}{} -s {session}`)",
                    self.reach.fix(),
                    self.socket.as_deref().map(|s| format!(" -L {s}")).unwrap_or_default()
                ),
            });
        }
        if said.contains("can't find session") || said.contains("can't find pane") || no_server(&said) {
            return Err(self.no_session(session).await);
        }
        let name = commands.first().and_then(|c| c.first()).cloned().unwrap_or_default();
        Err(TmuxError::Failed {
            command: format!("tmux {name}"),
            place: self.place(),
            status: out.status,
            message: said.trim().to_owned(),
        })
    }

    /// [`TmuxError::NoSession`] for `session`, listing the sessions there are.
    pub async fn no_session(&self, session: &str) -> TmuxError {
        let listed = match self.sessions().await {
            Ok(list) if list.is_empty() => "; there are none (no tmux server runs there)".to_owned(),
            Ok(list) => format!(
                "; sessions there: {}",
                list.iter().map(|s| s.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
            Err(_) => String::new(),
        };
        TmuxError::NoSession { session: session.to_owned(), place: self.place(), listed }
    }

    /// Every session of the server with charly's recording options; none when no server runs.
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call); [`TmuxError::Failed`] for another tmux failure.
    pub(crate) async fn listed(&self) -> Result<Vec<Listed>, TmuxError> {
        // `|`-separated, the name last (it may hold `|`); tmux replaces tabs in its output.
        let format = format!(
            "#{{session_windows}}|#{{session_attached}}|#{{session_created}}|#{{pane_dead}}|#{{{MODE_OPTION}}}|#{{{FILE_OPTION}}}|#{{session_name}}"
        );
        let out = self.call(&[tmux_cmd!["list-sessions", "-F", format]]).await?;
        if out.status != 0 {
            let said = format!("{}{}", out.stderr, out.stdout);
            if no_server(&said) {
                return Ok(Vec::new());
            }
            return Err(TmuxError::Failed {
                command: "tmux list-sessions".into(),
                place: self.place(),
                status: out.status,
                message: said.trim().to_owned(),
            });
        }
        Ok(out.stdout.lines().filter_map(parse_listed).collect())
    }

    /// Every session of the server; none when no server runs.
    ///
    /// # Errors
    ///
    /// As [`listed`](Self::listed).
    pub async fn sessions(&self) -> Result<Vec<SessionInfo>, TmuxError> {
        Ok(self.listed().await?.into_iter().map(|l| l.info).collect())
    }

    /// Whether session `session` exists.
    ///
    /// # Errors
    ///
    /// As [`call`](Self::call).
    pub async fn has(&self, session: &str) -> Result<bool, TmuxError> {
        let out = self.call(&[tmux_cmd!["has-session", "-t", session_target(session)]]).await?;
        Ok(out.status == 0)
    }

    /// Starts `command` (program and arguments; empty: tmux's default shell) in a new detached
    /// session `session`. A program runs through `env --`, never `sh -c` (tmux gives a lone
    /// word to `sh -c`), so it runs as given and a missing one exits 127 with env's words.
    ///
    /// The pane keeps a program that exits (`remain-on-exit`), so `capture` shows its last
    /// output and `Pane is dead (status N)`. A program that exits within [`WATCH`] (missing,
    /// refused its arguments, done at once) is returned as [`Exited`] with its status and
    /// output, and its session is ended: no dead session is left for a start that did not run.
    ///
    /// # Errors
    ///
    /// [`TmuxError::Exists`] (nothing changed), [`TmuxError::Usage`] for a first word with
    /// `=` (env would read it as a variable), as [`checked`](Self::checked).
    pub async fn start(&self, session: &str, command: &[String]) -> Result<Option<Exited>, TmuxError> {
        let words = direct(command)?;
        let pane = pane_target(session);
        let mut commands = vec![tmux_cmd!["new-session", "-d", "-s", session]];
        if !words.is_empty() {
            // One sequence, as `record` starts its recorder: the option is set before the
            // program runs (tmux runs the whole sequence before it handles a child's exit).
            commands.push(tmux_cmd!["set-option", "-t", pane.clone(), "remain-on-exit", "on"]);
            let mut respawn = tmux_cmd!["respawn-pane", "-k", "-t", pane];
            respawn.extend(words);
            commands.push(respawn);
        }
        self.checked(&commands, session).await?;
        if command.is_empty() {
            return Ok(None);
        }
        let since = Instant::now();
        let mut dead_since = None;
        loop {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let (dead, status, _) = self.pane_state(session).await?;
            if dead {
                // tmux sees the terminal close before it collects the status (see record's
                // `Ended`): wait up to a second for the status.
                let first = *dead_since.get_or_insert_with(Instant::now);
                if status.is_some() || first.elapsed() >= Duration::from_secs(1) {
                    // tmux may note the exit before it has read the program's last output
                    // from the terminal: a moment more, and the pane once more.
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    let (_, again, lines) = self.pane_state(session).await?;
                    let status = status.or(again);
                    let _ = self.kill(session).await;
                    let mut output: Vec<String> =
                        lines.into_iter().filter(|l| !l.starts_with("Pane is dead")).collect();
                    while output.last().is_some_and(String::is_empty) {
                        output.pop();
                    }
                    let blank = output.iter().take_while(|l| l.is_empty()).count();
                    output.drain(..blank);
                    return Ok(Some(Exited { status, output }));
                }
            } else if since.elapsed() >= WATCH {
                return Ok(None);
            }
        }
    }

    /// The active pane's state: whether its program has exited, its exit status (128 + N for
    /// signal N, as a shell gives it) once tmux has it, and its lines (trailing blanks dropped).
    async fn pane_state(&self, session: &str) -> Result<(bool, Option<i32>, Vec<String>), TmuxError> {
        let commands = [
            reap(),
            tmux_cmd![
                "display-message",
                "-p",
                "-t",
                pane_target(session),
                "#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}"
            ],
            // With history: tmux scrolls the screen up when it writes "Pane is dead".
            tmux_cmd!["capture-pane", "-p", "-S", "-100", "-t", pane_target(session)],
        ];
        let out = self.checked(&commands, session).await?;
        let mut lines = out.lines();
        let mut fields = lines.next().unwrap_or_default().trim().split('|');
        let dead = fields.next() == Some("1");
        let status: Option<i32> = fields.next().and_then(|s| s.parse().ok());
        let signal: Option<i32> = fields.next().and_then(|s| s.parse().ok());
        let status = status.or(signal.map(|n| 128 + n)).filter(|_| dead);
        Ok((dead, status, lines.map(|l| l.trim_end().to_owned()).collect()))
    }

    /// Sends `keys` to the session's active pane: tmux key names (`C-c`, `Enter`; a word
    /// that is not one is typed as text), or with `literal` each typed as it is; with `enter`,
    /// Enter after them.
    ///
    /// # Errors
    ///
    /// As [`checked`](Self::checked).
    pub async fn send(
        &self,
        session: &str,
        keys: &[String],
        literal: bool,
        enter: bool,
    ) -> Result<(), TmuxError> {
        let target = pane_target(session);
        let mut commands = Vec::new();
        if !keys.is_empty() {
            let mut send = tmux_cmd!["send-keys", "-t", target.clone()];
            if literal {
                send.push("-l".into());
            }
            send.push("--".into());
            send.extend(keys.iter().cloned());
            commands.push(send);
        }
        if enter {
            commands.push(tmux_cmd!["send-keys", "-t", target, "Enter"]);
        }
        if commands.is_empty() {
            return Ok(());
        }
        self.checked(&commands, session).await.map(drop)
    }

    /// The session's active pane as text: the visible lines, with `history` lines of the
    /// scrollback above them; trailing blank lines dropped.
    ///
    /// # Errors
    ///
    /// As [`checked`](Self::checked).
    pub async fn capture(&self, session: &str, history: u32) -> Result<Vec<String>, TmuxError> {
        let mut words = tmux_cmd!["capture-pane", "-p", "-t", pane_target(session)];
        if history > 0 {
            words.extend(["-S".to_owned(), format!("-{history}")]);
        }
        let dead = tmux_cmd!["display-message", "-p", "-t", pane_target(session), "#{pane_dead}"];
        let mut text = self.checked(&[dead, words.clone()], session).await?;
        if text.starts_with("1\n") {
            // tmux scrolls a dead pane's screen up into the history as it writes "Pane is
            // dead": the lines the program left are a screen above.
            let height = tmux_cmd!["display-message", "-p", "-t", pane_target(session), "#{pane_height}"];
            let shown: u32 = self.checked(&[height], session).await?.trim().parse().unwrap_or(0);
            words.truncate(4);
            words.extend(["-S".to_owned(), format!("-{}", history + shown)]);
            text = format!("x\n{}", self.checked(&[words], session).await?);
        }
        let mut lines: Vec<String> = text.lines().skip(1).map(|l| l.trim_end().to_owned()).collect();
        let blank = lines.iter().take_while(|l| l.is_empty()).count();
        if text.starts_with("x\n") {
            lines.drain(..blank);
        }
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        Ok(lines)
    }

    /// Ends session `session` and the programs in it.
    ///
    /// # Errors
    ///
    /// As [`checked`](Self::checked): [`TmuxError::NoSession`] when there is none.
    pub async fn kill(&self, session: &str) -> Result<(), TmuxError> {
        self.checked(&[tmux_cmd!["kill-session", "-t", session_target(session)]], session).await.map(drop)
    }

    /// The argv that attaches a terminal to `session`: `new-session -A` (attach, or make it
    /// first) with `create`, else `attach-session`.
    pub fn attach_argv(&self, session: &str, create: bool) -> Vec<String> {
        let command = match create {
            true => tmux_cmd!["new-session", "-A", "-s", session],
            false => tmux_cmd!["attach-session", "-t", session_target(session)],
        };
        self.argv(&[command])
    }
}

/// `run-shell true` (a fixed command): tmux 3.3a was seen to leave a pane's program that
/// exited unreaped, its pane not yet dead, until another child of the server exits (two
/// exits' SIGCHLDs merged: the shell `respawn-pane -k` killed and the program). A child that
/// exits at once makes tmux reap again, so the pane shows as dead with its status. Used only
/// while `run` watches its new program: sent beside `capture` it was seen to make an
/// asciinema recorder's status go missing at `record stop`.
fn reap() -> Command {
    tmux_cmd!["run-shell", "true"]
}

/// The fixed script `run` starts a program with: it runs the words given after it as they
/// are (`env --`: never as shell syntax; 127 for a missing program, 126 for one that cannot
/// run), then waits a moment before it exits with the program's status, so tmux reads the
/// program's last output from the terminal before the pane dies (tmux 3.3a was seen to lose
/// the output of a program that exits at once).
const RUN_SCRIPT: &str = "env -- \"$@\"; s=$?; sleep 0.3; exit $s";

/// `command` as tmux runs it without a shell: `-- sh -c RUN_SCRIPT charly-run WORDS...`
/// (the words are the script's arguments, never its text; tmux would give a lone word to
/// `sh -c` itself), nothing for none.
fn direct(command: &[String]) -> Result<Vec<String>, TmuxError> {
    let Some(program) = command.first() else {
        return Ok(Vec::new());
    };
    if program.contains('=') {
        return Err(TmuxError::Usage(format!(
            "argument `command`: the program {program:?} holds `=`, which env (that starts the command \
             without a shell) reads as a variable; give the program's path, or run it as `sh -c {program:?}` \
             if a shell is meant"
        )));
    }
    let head = ["--", "sh", "-c", RUN_SCRIPT, "charly-run"];
    Ok(head.iter().map(|w| (*w).to_owned()).chain(command.iter().cloned()).collect())
}

/// Whether tmux said no server runs at its socket: none listens, or the one that did was
/// exiting as the client connected (its last session just ended: "server exited unexpectedly").
fn no_server(said: &str) -> bool {
    said.contains("no server running")
        || said.contains("error connecting to")
        || said.contains("server exited unexpectedly")
}

fn parse_listed(line: &str) -> Option<Listed> {
    let mut fields = line.splitn(7, '|');
    let windows = fields.next()?.parse().ok()?;
    let attached = fields.next()?.parse().ok()?;
    let created = fields.next()?.parse().ok()?;
    let dead = fields.next()? == "1";
    let mode = fields.next()?.to_owned();
    let file = fields.next()?.to_owned();
    let name = fields.next()?.to_owned();
    Some(Listed { info: SessionInfo { name, windows, attached, created }, mode, file, dead })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_semicolon_is_escaped_so_tmux_reads_the_value_back() {
        // tmux (cmd-parse.y, cmd_parse_from_arguments): a final `;` ends the command; a
        // final `\;` becomes `;`.
        fn tmux_reads(arg: &str) -> String {
            match arg.strip_suffix(';') {
                Some(head) => match head.strip_suffix('\\') {
                    Some(h) => format!("{h};"),
                    None => format!("{head}<END>"),
                },
                None => arg.to_owned(),
            }
        }
        for value in ["x;", "a\\;", "a\\\\;", ";", "plain", "mid;dle", "", "\\"] {
            assert_eq!(tmux_reads(&escape(value)), value, "{value:?}");
        }
        assert_eq!(tmux_reads("x;"), "x<END>");
    }

    #[test]
    fn session_names_tmux_would_change_are_refused_naming_the_argument() {
        for bad in ["a.b", "a:b", "", "$1", "a\nb", "tab\there"] {
            let err = check_session("session", bad).unwrap_err().to_string();
            assert!(err.starts_with("argument `session`: "), "{err}");
        }
        let err = check_session("session", "w.1").unwrap_err().to_string();
        assert!(err.contains("'.' is not allowed"), "{err}");
        for good in ["shell", "build-2", "a b", "=x", "émoji", "x;"] {
            check_session("session", good).unwrap();
        }
        assert!(check_socket("test-tm-1").is_ok());
        for bad in ["", "../x", "a/b", ".hidden", "-L"] {
            assert!(check_socket(bad).unwrap_err().to_string().starts_with("argument `socket`"), "{bad}");
        }
    }

    #[test]
    fn a_lone_program_runs_through_env_never_sh() {
        assert_eq!(direct(&[]).unwrap(), Vec::<String>::new());
        assert_eq!(direct(&["top".into()]).unwrap(), ["--", "sh", "-c", RUN_SCRIPT, "charly-run", "top"]);
        assert_eq!(direct(&["sleep".into(), "1".into()]).unwrap()[5..], ["sleep", "1"]);
        assert!(direct(&["A=b".into(), "x".into()]).is_err());
        assert!(direct(&["A=b".into()]).unwrap_err().to_string().contains("argument `command`"));
    }

    #[test]
    fn list_lines_keep_a_name_with_bars() {
        let l = parse_listed("2|1|1796618846|0|terminal|/tmp/x.cast|a|b").unwrap();
        assert_eq!((l.info.name.as_str(), l.info.windows, l.info.attached), ("a|b", 2, 1));
        assert_eq!((l.mode.as_str(), l.file.as_str()), ("terminal", "/tmp/x.cast"));
        assert!(parse_listed("garbage").is_none());
    }
}
