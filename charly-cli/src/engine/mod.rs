//! The container engine: every podman call charly makes goes through [`Engine`].
//!
//! It drives the podman CLI (`--format json` wherever podman has it) and returns typed
//! results ([`ContainerSummary`], [`ImageSummary`], [`Output`]); podman's failures become
//! [`EngineError`]s written for people (the box was never built, a name podman would reject,
//! a container that is gone). Calls are async (`tokio::process`, children killed when the
//! call is dropped, so a cancelled command stops its podman too) and every call that changes
//! state checks the cancellation token first ([`Engine::change`]).
//!
//! | module | what it holds |
//! |---|---|
//! | [`names`] | `charly-<box>[-<instance>]` and podman's name rule |
//! | [`ps`] | `podman ps` / `image inspect` JSON, typed; the `ai.opencharly.*` labels charly sets |
//! | [`spec`] | [`RunSpec`]: what `podman run` is given, kept as a label for `update` |
//!
//! Later families (`config` with quadlet units and secrets, `check live`, encrypted volumes)
//! use the same [`Engine`]: quadlet units are written from a [`RunSpec`], secrets go through
//! [`Engine::change_with_stdin`], in-container checks through [`Engine::exec`].

pub mod names;
pub mod ps;
pub mod spec;

use std::ffi::OsString;
use std::process::Stdio;

use tokio::io::AsyncWriteExt as _;
use tokio_util::sync::CancellationToken;

pub use self::names::{PODMAN_NAME_RULE, Target};
pub use self::ps::{BOX_LABEL, ContainerSummary, INSTANCE_LABEL, ImageSummary, OWNER_LABEL, RUN_LABEL};
pub use self::spec::{Bind, PortMap, RunSpec, Volume};

/// What `apt-get` installs for the engine (named in [`EngineError::Missing`]).
pub const INSTALL_HINT: &str = "install podman (Debian: `apt-get install podman runc`, or run the project's scripts/runtimes.sh as root)";

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
         charly-<box>[-<instance>]): choose a {what} name of letters, digits, `_`, `.` and `-`"
    )]
    BadName {
        /// `box` or `instance`.
        what: &'static str,
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: String,
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
    /// A host port is taken.
    #[error(
        "{argument}: port {port} on {address} is in use by {owner}; {fix}, or remap with `--port {next}:{container_port}`"
    )]
    PortInUse {
        /// The argument or source of the port (`--port 8080:80`, `port 18765 of box hello`).
        argument: String,
        /// The address.
        address: String,
        /// The host port.
        port: u16,
        /// The container port.
        container_port: u16,
        /// A free-looking next port.
        next: u16,
        /// Who has it: `container charly-x` or `another process`.
        owner: String,
        /// How to free it.
        fix: String,
    },
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
    /// The call was cancelled before it changed anything.
    #[error("cancelled; nothing was changed")]
    Cancelled,
}

/// What a finished podman call printed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Output {
    /// Its exit status (-1 when killed by a signal).
    pub status: i32,
    /// Its stdout.
    pub stdout: String,
    /// Its stderr.
    pub stderr: String,
}

impl Output {
    fn success(&self) -> bool {
        self.status == 0
    }
}

/// The podman CLI, with the cancellation token of the command that uses it.
#[derive(Clone, Debug)]
pub struct Engine {
    program: OsString,
    cancel: CancellationToken,
}

impl Engine {
    /// `podman` from PATH, stopped by `cancel`.
    pub fn podman(cancel: CancellationToken) -> Engine {
        Engine { program: "podman".into(), cancel }
    }

    /// Another podman-compatible program (a path, or a name looked up on PATH).
    pub fn with_program(program: impl Into<OsString>, cancel: CancellationToken) -> Engine {
        Engine { program: program.into(), cancel }
    }

    /// The program's name, for messages.
    pub fn program(&self) -> String {
        self.program.to_string_lossy().into_owned()
    }

    /// A `std::process::Command` for `args`, for calls that hand the terminal to podman
    /// (`logs --follow`, an interactive `shell`).
    pub fn command<S: AsRef<std::ffi::OsStr>>(&self, args: &[S]) -> std::process::Command {
        let mut command = std::process::Command::new(&self.program);
        command.args(args);
        command
    }

    fn command_line<S: AsRef<str>>(&self, args: &[S]) -> String {
        std::iter::once(self.program())
            .chain(args.iter().map(|a| {
                let a = a.as_ref();
                if a.is_empty() || a.contains([' ', '\'', '"']) { format!("{a:?}") } else { a.to_owned() }
            }))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Runs `podman args...` to completion whatever its exit status; `merge` sends its stderr
    /// into the same pipe as its stdout (so lines keep their order: `logs`).
    ///
    /// # Errors
    ///
    /// [`EngineError::Missing`] when podman cannot be started.
    pub async fn output<S: AsRef<str>>(
        &self,
        args: &[S],
        stdin: Option<&[u8]>,
        merge: bool,
    ) -> Result<Output, EngineError> {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(args.iter().map(AsRef::as_ref)).kill_on_drop(true);
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        let missing =
            |e: std::io::Error| EngineError::Missing { program: self.program(), message: e.to_string() };
        if merge {
            let (reader, writer) = std::io::pipe().map_err(missing)?;
            command.stdout(writer.try_clone().map_err(missing)?).stderr(writer);
            let mut child = command.spawn().map_err(missing)?;
            // The command holds the write ends until it is dropped: drop them so the read
            // ends at the child's exit.
            drop(command);
            let read = tokio::task::spawn_blocking(move || {
                let mut text = Vec::new();
                std::io::Read::read_to_end(&mut { reader }, &mut text).map(|_| text)
            });
            let status = child.wait().await.map_err(missing)?;
            let text = read.await.map_err(|e| missing(std::io::Error::other(e)))?.map_err(missing)?;
            return Ok(Output {
                status: status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&text).into_owned(),
                stderr: String::new(),
            });
        }
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().map_err(missing)?;
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // A child that exits without reading its stdin is not our error: its status says.
            let _ = pipe.write_all(input).await;
            drop(pipe);
        }
        let out = child.wait_with_output().await.map_err(missing)?;
        Ok(Output {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    /// A read-only call that must succeed: its stdout.
    ///
    /// # Errors
    ///
    /// [`EngineError::Missing`], [`EngineError::Failed`].
    pub async fn query<S: AsRef<str>>(&self, args: &[S]) -> Result<String, EngineError> {
        let out = self.output(args, None, false).await?;
        self.checked(args, out).map(|o| o.stdout)
    }

    /// A call that changes state: refused once the command is cancelled, then as [`query`](Self::query).
    ///
    /// # Errors
    ///
    /// [`EngineError::Cancelled`], [`EngineError::Missing`], [`EngineError::Failed`].
    pub async fn change<S: AsRef<str>>(&self, args: &[S]) -> Result<String, EngineError> {
        self.change_with_stdin(args, None).await
    }

    /// [`change`](Self::change) with bytes on podman's stdin (a secret's value never goes
    /// on a command line).
    ///
    /// # Errors
    ///
    /// As [`change`](Self::change).
    pub async fn change_with_stdin<S: AsRef<str>>(
        &self,
        args: &[S],
        stdin: Option<&[u8]>,
    ) -> Result<String, EngineError> {
        self.check_cancelled()?;
        let out = self.output(args, stdin, false).await?;
        self.checked(args, out).map(|o| o.stdout)
    }

    /// [`EngineError::Cancelled`] once the command has been cancelled.
    ///
    /// # Errors
    ///
    /// [`EngineError::Cancelled`].
    pub fn check_cancelled(&self) -> Result<(), EngineError> {
        if self.cancel.is_cancelled() { Err(EngineError::Cancelled) } else { Ok(()) }
    }

    fn checked<S: AsRef<str>>(&self, args: &[S], out: Output) -> Result<Output, EngineError> {
        if out.success() {
            return Ok(out);
        }
        Err(self.failed(args, &out))
    }

    fn failed<S: AsRef<str>>(&self, args: &[S], out: &Output) -> EngineError {
        let tail: Vec<&str> = out.stderr.lines().filter(|l| !l.trim().is_empty()).rev().take(5).collect();
        let stderr = tail.into_iter().rev().collect::<Vec<_>>().join("\n");
        EngineError::Failed {
            command: self.command_line(args),
            status: out.status,
            stderr: stderr.trim_start_matches("Error: ").to_owned(),
        }
    }

    /// Every container charly started (`ai.opencharly.box` label), running or not.
    ///
    /// # Errors
    ///
    /// As [`query`](Self::query); [`EngineError::Output`] for unreadable JSON.
    pub async fn charly_containers(&self) -> Result<Vec<ContainerSummary>, EngineError> {
        let filter = format!("label={BOX_LABEL}");
        ps::parse_ps(&self.query(&["ps", "--all", "--format", "json", "--filter", &filter]).await?)
    }

    /// The container named exactly `name`, whoever made it, or `None`.
    ///
    /// # Errors
    ///
    /// As [`charly_containers`](Self::charly_containers).
    pub async fn container(&self, name: &str) -> Result<Option<ContainerSummary>, EngineError> {
        let filter = format!("name=^{}$", regex::escape(name));
        let all =
            ps::parse_ps(&self.query(&["ps", "--all", "--format", "json", "--filter", &filter]).await?)?;
        Ok(all.into_iter().find(|c| c.name() == name))
    }

    /// The container of `target`, which must be running.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`], [`EngineError::NotRunning`], and as [`container`](Self::container).
    pub async fn running(&self, target: &Target) -> Result<ContainerSummary, EngineError> {
        match self.container(&target.container).await? {
            None => Err(no_container(target)),
            Some(c) if c.is_running() => Ok(c),
            Some(c) => Err(not_running(target, &c)),
        }
    }

    /// `podman image inspect <reference>`, or `None` when it is not in local storage.
    ///
    /// # Errors
    ///
    /// As [`query`](Self::query) for other failures.
    pub async fn image(&self, reference: &str) -> Result<Option<ImageSummary>, EngineError> {
        let args = ["image", "inspect", reference];
        let out = self.output(&args, None, false).await?;
        if out.success() {
            return ps::parse_image(&out.stdout).map(Some);
        }
        if out.stderr.contains("image not known") || out.stderr.contains("no such image") {
            return Ok(None);
        }
        Err(self.failed(&args, &out))
    }

    /// `podman run -d` of `spec` as `target`'s container: its id. Named volumes are created
    /// first, labelled as the container's own.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoImage`] (the image is not local: nothing is pulled),
    /// [`EngineError::AlreadyRunning`], [`EngineError::Cancelled`], [`EngineError::Failed`].
    pub async fn run(&self, target: &Target, spec: &RunSpec) -> Result<String, EngineError> {
        for volume in &spec.volumes {
            self.ensure_volume(&volume.name, &target.container).await?;
        }
        let args = spec.run_args(target);
        self.check_cancelled()?;
        let out = self.output(&args, None, false).await?;
        if out.success() {
            return Ok(out.stdout.trim().to_owned());
        }
        if out.stderr.contains("image not known") {
            return Err(EngineError::NoImage {
                box_name: target.box_name.clone(),
                image: spec.image.clone(),
            });
        }
        if out.stderr.contains("is already in use") {
            return Err(EngineError::AlreadyRunning {
                container: target.container.clone(),
                stop: start_args(target),
            });
        }
        Err(self.failed(&args, &out))
    }

    async fn ensure_volume(&self, name: &str, owner: &str) -> Result<(), EngineError> {
        let out = self.output(&["volume", "exists", name], None, false).await?;
        if out.success() {
            return Ok(());
        }
        let label = format!("{OWNER_LABEL}={owner}");
        self.change(&["volume", "create", "--label", &label, name]).await.map(drop)
    }

    /// `podman stop -t <timeout> <name>`.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`] when it is gone; as [`change`](Self::change).
    pub async fn stop(&self, target: &Target, timeout_secs: u32) -> Result<(), EngineError> {
        let timeout = timeout_secs.to_string();
        self.change_on(target, &["stop", "--time", &timeout, &target.container]).await.map(drop)
    }

    /// `podman rm --force <name>` (stops it first when it runs).
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`] when it is gone; as [`change`](Self::change).
    pub async fn remove(&self, target: &Target, timeout_secs: u32) -> Result<(), EngineError> {
        let timeout = timeout_secs.to_string();
        let removed =
            self.change_on(target, &["rm", "--force", "--time", &timeout, &target.container]).await?;
        // `rm --force` succeeds silently for a container that does not exist.
        if removed.trim().is_empty() { Err(no_container(target)) } else { Ok(()) }
    }

    async fn change_on(&self, target: &Target, args: &[&str]) -> Result<String, EngineError> {
        self.check_cancelled()?;
        let out = self.output(args, None, false).await?;
        if out.success() {
            return Ok(out.stdout);
        }
        if is_no_container(&out.stderr) {
            return Err(no_container(target));
        }
        Err(self.failed(args, &out))
    }

    /// Runs `command` in `target`'s running container (`podman exec`, no TTY, stdin closed),
    /// whatever its exit status. Checks the cancellation first: a command may change the
    /// container.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`] / [`EngineError::NotRunning`] when podman cannot exec
    /// (the container is gone or stopped, also while the command ran); as [`output`](Self::output).
    pub async fn exec(
        &self,
        target: &Target,
        env: &[String],
        command: &[String],
    ) -> Result<Output, EngineError> {
        self.check_cancelled()?;
        let mut args: Vec<String> = vec!["exec".into()];
        for e in env {
            args.extend(["--env".into(), e.clone()]);
        }
        args.push(target.container.clone());
        args.extend(command.iter().cloned());
        let out = self.output(&args, None, false).await?;
        // podman's own failures are 125 (and 126/127 for a command that cannot run); the
        // command's status otherwise. A container that went away answers 125 or 137.
        if out.status == 125 && is_no_container(&out.stderr) {
            return Err(no_container(target));
        }
        if matches!(out.status, 125 | 137 | 255 | -1) {
            match self.container(&target.container).await? {
                Some(c) if c.is_running() => {}
                Some(c) if out.status == 125 && out.stderr.contains("not running") => {
                    return Err(not_running(target, &c));
                }
                Some(c) => {
                    return Err(EngineError::Interrupted {
                        container: target.container.clone(),
                        state: state_word(&c),
                    });
                }
                None => {
                    return Err(EngineError::Interrupted {
                        container: target.container.clone(),
                        state: "gone".into(),
                    });
                }
            }
        }
        Ok(out)
    }

    /// The last `lines` lines of the container's log, stdout and stderr in their order.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`]; as [`query`](Self::query).
    pub async fn logs(&self, target: &Target, lines: u32) -> Result<String, EngineError> {
        let tail = lines.to_string();
        let args = ["logs", "--tail", &tail, &target.container];
        let out = self.output(&args, None, true).await?;
        if out.success() {
            return Ok(out.stdout);
        }
        if is_no_container(&out.stdout) {
            return Err(no_container(target));
        }
        Err(self.failed(&args, &Output { stderr: out.stdout.clone(), ..out }))
    }

    /// The named volumes that belong to `container` (labelled so by [`run`](Self::run)).
    ///
    /// # Errors
    ///
    /// As [`query`](Self::query).
    pub async fn volumes_of(&self, container: &str) -> Result<Vec<String>, EngineError> {
        let filter = format!("label={OWNER_LABEL}={container}");
        let text = self.query(&["volume", "ls", "--format", "{{.Name}}", "--filter", &filter]).await?;
        Ok(text.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect())
    }

    /// Removes the dangling images (earlier builds, their build cache) labelled as `box_name`'s:
    /// their ids.
    ///
    /// # Errors
    ///
    /// As [`change`](Self::change).
    pub async fn prune_box_images(&self, box_name: &str) -> Result<Vec<String>, EngineError> {
        let filter = format!("label={BOX_LABEL}={box_name}");
        let text = self.change(&["image", "prune", "--force", "--filter", &filter]).await?;
        Ok(text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| l.chars().take(12).collect())
            .collect())
    }

    /// `podman volume rm <name>`.
    ///
    /// # Errors
    ///
    /// As [`change`](Self::change).
    pub async fn remove_volume(&self, name: &str) -> Result<(), EngineError> {
        self.change(&["volume", "rm", name]).await.map(drop)
    }
}

fn is_no_container(stderr: &str) -> bool {
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
