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
//! | [`claim`] | whose a container, volume or secret of a target's name is (labels), checked before acting |
//! | [`names`] | `charly-<box>[-<instance>]` and podman's name rule |
//! | [`ps`] | `podman ps` / `image inspect` JSON, typed; the `ai.opencharly.*` labels charly sets |
//! | [`spec`] | [`RunSpec`]: what `podman run` is given, kept as a label for `update` |
//! | `error` | [`EngineError`] and the helpers that word it |
//! | `containers` | [`Engine`]'s container operations: list, run, stop, remove, logs, volumes |
//! | [`exec`] | [`Engine::exec`]: a command in a running container, stopped there when the call is dropped |
//! | [`ports`] | the port pre-flight of `start` and `config setup` |
//! | [`owner`] | who holds a host port (`/proc/net/*`, `/proc/<pid>/fd`) |
//! | `export` | an image's file system as a tar stream (`vm build`): [`ExportContainer`] |
//!
//! Later families (`config` with quadlet units and secrets, `check live`, encrypted volumes)
//! use the same [`Engine`]: quadlet units are written from a [`RunSpec`], secrets go through
//! [`Engine::change_with_stdin`], in-container checks through [`Engine::exec`].

pub mod claim;
mod containers;
pub use self::containers::Seed;
mod error;
pub mod exec;
mod export;
pub mod names;
pub mod owner;
pub mod ports;
pub mod ps;
mod raw;
pub mod spec;

use std::ffi::OsString;
use std::process::Stdio;

use tokio::io::AsyncWriteExt as _;
use tokio_util::sync::CancellationToken;

pub use self::claim::{DEPLOY_LABEL, Owner};
pub use self::error::{
    EngineError, HookTimeout, PortConflict, exited_log, no_container, not_running, start_args, state_word,
};
pub use self::export::ExportContainer;
pub use self::names::{PODMAN_NAME_RULE, Target};
pub use self::ps::{BOX_LABEL, ContainerSummary, INSTANCE_LABEL, ImageSummary, OWNER_LABEL, RUN_LABEL};
pub use self::raw::RawOutput;
pub use self::spec::{Bind, Given, PortMap, RunSpec, SecretEnv, Volume};

/// What `apt-get` installs for the engine (named in [`EngineError::Missing`]).
pub const INSTALL_HINT: &str = "install podman (Debian: `apt-get install podman runc`, or run the project's scripts/runtimes.sh as root)";

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
    boxes: Option<KnownBoxes>,
}

/// The boxes of the project a command runs in, so that a box with no container that is not
/// one of them is named as unknown ([`EngineError::UnknownBox`]) rather than told to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownBoxes {
    /// The project directory.
    pub root: std::path::PathBuf,
    /// Its boxes; `None` when it has no `charly.yml`.
    pub names: Option<Vec<String>>,
}

impl Engine {
    /// `podman` from PATH, stopped by `cancel`.
    pub fn podman(cancel: CancellationToken) -> Engine {
        Engine { program: "podman".into(), cancel, boxes: None }
    }

    /// Another podman-compatible program (a path, or a name looked up on PATH).
    pub fn with_program(program: impl Into<OsString>, cancel: CancellationToken) -> Engine {
        Engine { program: program.into(), cancel, boxes: None }
    }

    /// This engine, knowing the project's boxes (`None`: unknown, as before).
    pub fn knowing(mut self, boxes: Option<KnownBoxes>) -> Engine {
        self.boxes = boxes;
        self
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

    /// A read-only call that must succeed: its stdout. A failure that is the image store
    /// changing under the call ([`store_changed`]) is tried again, up to three times.
    ///
    /// # Errors
    ///
    /// [`EngineError::Missing`], [`EngineError::Failed`].
    pub async fn query<S: AsRef<str>>(&self, args: &[S]) -> Result<String, EngineError> {
        let out = self.read(args, args).await?;
        self.checked(args, out).map(|o| o.stdout)
    }

    /// `podman <args>` (read-only, or failing before it acts), run again up to three times
    /// while podman itself fails (status 125) because the store changed under it: a "not
    /// known" that names none of `names` ([`store_changed`]). A command's own failure in a
    /// container (any other status) is never run again.
    ///
    /// # Errors
    ///
    /// [`EngineError::Missing`].
    pub(crate) async fn read<S: AsRef<str>, N: AsRef<str>>(
        &self,
        args: &[S],
        names: &[N],
    ) -> Result<Output, EngineError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let out = self.output(args, None, false).await?;
            if out.status != 125 || attempt == 3 || !store_changed(&out.stderr, names) {
                return Ok(out);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
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
}

/// Whether podman's `stderr` says something "is not known" of none of `names` (as podman
/// names a thing it lacks: "`<name>`: image not known"). That is the store changing under a
/// call that walks it while another podman removes an image ("reading image \"<id>\": …
/// image not known", "reading data blob size … size is not known"), which a second try does
/// not meet.
pub(crate) fn store_changed<N: AsRef<str>>(stderr: &str, names: &[N]) -> bool {
    stderr.contains("not known") && !names.iter().any(|n| stderr.contains(&format!("{}: ", n.as_ref())))
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_another_images_unknown_is_the_store_changing() {
        let r = ["localhost/web:latest"];
        assert!(!super::store_changed("Error: inspecting object: localhost/web:latest: image not known", &r));
        assert!(super::store_changed(
            "Error: reading image \"70c5c1\": locating image with ID \"70c5c1\": image not known",
            &r
        ));
        assert!(super::store_changed(
            "Error: reading data blob size \"signature-8b38\": size is not known",
            &r
        ));
        assert!(!super::store_changed("Error: no space left on device", &r));
    }
}
