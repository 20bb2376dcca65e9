//! [`EngineError`]: podman's failures, written for people, and the helpers that build them.

use super::INSTALL_HINT;
use super::names::{PODMAN_NAME_RULE, Target};
use super::ps::ContainerSummary;

/// Why an engine call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The podman program could not be started.
    #[error("cannot run {program}: {message}; {INSTALL_HINT}")]
    Missing {
        /// The program.
        program: String,
        /// The OS error.
        message: String,
    },
    /// A box or instance name that podman would reject in a container name.
    #[error(
        "{what} {name:?}: {reason}; container names must match {PODMAN_NAME_RULE} (charly names them \
         charly-<box>[-<instance>]): choose {} {what} name of letters, digits, `_`, `.` and `-`",
        article(what)
    )]
    BadName {
        /// `box` or `instance`.
        what: &'static str,
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A box or instance name whose characters are fine but whose container name would be
    /// longer than charly keeps them ([`MAX_CONTAINER_NAME`](super::names::MAX_CONTAINER_NAME)).
    #[error(
        "{what} {name:?} makes the container name {len} characters long, and charly keeps them to {} \
         (volume, unit and directory names grow from it): choose a shorter {what} name",
        super::names::MAX_CONTAINER_NAME
    )]
    TooLong {
        /// `box` or `instance`.
        what: &'static str,
        /// The name given.
        name: String,
        /// The length of the container name it makes, in bytes.
        len: usize,
    },
    /// The box's image is not in local storage.
    #[error(
        "box {box_name}: image {image} is not in local storage (never built?); build it with `charly box build {box_name}`"
    )]
    NoImage {
        /// The box.
        box_name: String,
        /// The image reference.
        image: String,
    },
    /// No container of that name exists.
    #[error(
        "container {container} does not exist (box {key} is not started); start it with `charly start {start}`"
    )]
    NoContainer {
        /// The container name.
        container: String,
        /// The box (and instance) as `box[/instance]`.
        key: String,
        /// The `charly start` arguments.
        start: String,
    },
    /// No container of that name exists, and the box is not one of the project's.
    #[error("box {box_name} is not a box of this project and has no container ({known}); {fix}")]
    UnknownBox {
        /// The box.
        box_name: String,
        /// The project's boxes, or why there are none.
        known: String,
        /// What to do: name one of its boxes (when it has some), or give the project's
        /// directory with `-C DIR`.
        fix: &'static str,
    },
    /// The container exists but does not run.
    #[error("container {container} is {state}, not running; start it with `charly start {start}`")]
    NotRunning {
        /// The container name.
        container: String,
        /// Its state (`exited (143)`, `created`).
        state: String,
        /// The `charly start` arguments.
        start: String,
    },
    /// The container runs already.
    #[error(
        "container {container} is already running; stop it first (`charly stop {stop}`) or use `charly update {stop}`"
    )]
    AlreadyRunning {
        /// The container name.
        container: String,
        /// The `charly stop` arguments.
        stop: String,
    },
    /// A host port is taken (boxed: the largest variant, and errors travel in `Result`s).
    #[error("{0}")]
    PortInUse(Box<PortConflict>),
    /// podman ran and failed.
    #[error("`{command}` failed (exit status {status}): {stderr}")]
    Failed {
        /// The command line.
        command: String,
        /// Its exit status.
        status: i32,
        /// The last lines of its stderr.
        stderr: String,
    },
    /// podman printed something charly cannot read.
    #[error("cannot read the output of `{command}`: {message}")]
    Output {
        /// The command.
        command: String,
        /// What is wrong.
        message: String,
    },
    /// The container stopped or went away while a command ran in it.
    #[error(
        "the command in container {container} was cut off: the container is {state} now (stopped or removed while the command ran)"
    )]
    Interrupted {
        /// The container name.
        container: String,
        /// What it is now: `gone`, `exited (137)`.
        state: String,
    },
    /// A container, volume or secret of the target's name that is not the target's: another
    /// box's or instance's (the names collide), or not created by charly.
    #[error("{what} {name}: {problem}; charly leaves it as it is: {fix}")]
    Claimed {
        /// `container`, `volume` or `secret`.
        what: &'static str,
        /// Its name.
        name: String,
        /// Whose it is: `box a-b instance c`, `not created by charly`.
        owner: String,
        /// Why it is not the target's.
        problem: String,
        /// What to do instead.
        fix: String,
    },
    /// The container `podman run` started was not running right after (its command failed
    /// or ended at once); it was removed again.
    #[error(
        "box {key}: container {container} exited at once with status {status} (command: {command}); \
         it was removed and nothing was started: {fix_and_log}"
    )]
    ExitedAtOnce {
        /// The deployment (`web/2`).
        key: String,
        /// The container name.
        container: String,
        /// Its exit status.
        status: i32,
        /// What it ran, as words.
        command: String,
        /// What to do, then the last lines of its log ([`exited_log`]).
        fix_and_log: String,
    },
    /// A hook (`pre_remove`, `post_enable`) did not end within its time limit; its processes
    /// were stopped in the container (boxed, as [`EngineError::PortInUse`]).
    #[error("{0}")]
    HookTimedOut(Box<HookTimeout>),
    /// The call was cancelled before it changed anything.
    #[error("cancelled; nothing was changed")]
    Cancelled,
}

/// The end of [`EngineError::ExitedAtOnce`]'s message: `fix`, then the last `log` lines,
/// indented.
pub fn exited_log(fix: &str, log: &str) -> String {
    let lines: Vec<&str> = log.lines().collect();
    if lines.is_empty() {
        format!("{fix} (it logged nothing)")
    } else {
        format!("{fix}; its last log lines:\n  {}", lines.join("\n  "))
    }
}

/// `a` or `an` before `word` (`an instance`, `a box`).
fn article(word: &str) -> &'static str {
    if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" }
}

pub(super) fn is_no_container(stderr: &str) -> bool {
    stderr.contains("no such container") || stderr.contains("no container with name or ID")
}

/// The `charly start` arguments that start `target` again: `web`, `web -i 2`.
pub fn start_args(target: &Target) -> String {
    format!("{}{}", target.box_name, target.instance_flag())
}

/// [`EngineError::NoContainer`] for `target`.
pub fn no_container(target: &Target) -> EngineError {
    EngineError::NoContainer {
        container: target.container.clone(),
        key: target.key(),
        start: start_args(target),
    }
}

/// [`EngineError::NotRunning`] for `target`, whose container is `c`.
pub fn not_running(target: &Target, c: &ContainerSummary) -> EngineError {
    EngineError::NotRunning {
        container: target.container.clone(),
        state: state_word(c),
        start: start_args(target),
    }
}

/// `running`, `exited (143)`, `created`.
pub fn state_word(c: &ContainerSummary) -> String {
    match c.state.as_str() {
        "exited" | "stopped" => format!("exited ({})", c.exit_code),
        "" => "unknown".into(),
        other => other.to_owned(),
    }
}

/// A host port that is taken, as [`EngineError::PortInUse`] says it.
#[derive(Debug, thiserror::Error)]
#[error("{argument}: port {port} on {address} is in use by {owner}; {fix}, or remap with `--port {remap}`")]
pub struct PortConflict {
    /// The argument or source of the port (`--port 8080:80`, `port 18765 of box hello`).
    pub argument: String,
    /// The address.
    pub address: String,
    /// The host port.
    pub port: u16,
    /// The container port.
    pub container_port: u16,
    /// The `--port` value that remaps it to a port free now (`8081:80`, `5354:53/udp`).
    pub remap: String,
    /// Who has it: `container charly-x` or `another process`.
    pub owner: String,
    /// How to free it.
    pub fix: String,
}

/// A hook that did not end within its time limit, as [`EngineError::HookTimedOut`] says it.
#[derive(Debug, thiserror::Error)]
#[error(
    "box {key}: the {hook} hook `{command}` did not finish within {secs} s in container {container}; \
     it was stopped there, and {then}"
)]
pub struct HookTimeout {
    /// The deployment.
    pub key: String,
    /// `pre_remove` or `post_enable`.
    pub hook: &'static str,
    /// The hook's command.
    pub command: String,
    /// The container.
    pub container: String,
    /// The limit, in seconds.
    pub secs: u64,
    /// What was left, and the fix: `nothing was removed; ...`.
    pub then: String,
}
