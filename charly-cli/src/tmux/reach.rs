//! [`Reach`]: where the programs of a `tmux.*` or `record.*` leaf run. A box's running
//! container through the engine (`podman exec NAME PROG ARG...`, after the claim check that the
//! container is that box's own), or this machine (`.`), as a child process. Either way the
//! program gets an argv; no shell is involved.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::{Missing, TmuxError};
use crate::engine::{Engine, Output, Target};

/// Where a leaf's programs run.
#[derive(Clone, Debug)]
pub enum Reach {
    /// This machine (target `.`).
    Local {
        /// The command's cancellation: checked before each program starts; a running one is
        /// killed when its call is dropped.
        cancel: CancellationToken,
    },
    /// A box's running container.
    Container {
        /// The engine.
        engine: Engine,
        /// The box, instance and container name.
        target: Target,
    },
}

impl Reach {
    /// The reach of `target` (`.` or a box, instance `instance`), stopped by `cancel`; a box's
    /// container must run and be that box's own (`boxes`: the project's, to name a box that
    /// is none of them).
    ///
    /// # Errors
    ///
    /// [`TmuxError::Engine`]: a bad name, no container (how to start it), not running, another
    /// box's container, no podman.
    pub async fn resolve(
        cancel: CancellationToken,
        target: &str,
        instance: Option<&str>,
        boxes: Option<crate::engine::KnownBoxes>,
    ) -> Result<Reach, TmuxError> {
        if target == "." {
            if instance.is_some_and(|i| !i.is_empty()) {
                return Err(TmuxError::Usage(
                    "argument `instance`: the target `.` is this machine, which has no instances; name a box \
                     to use one of its instances"
                        .into(),
                ));
            }
            return Ok(Reach::Local { cancel });
        }
        let engine = Engine::podman(cancel).knowing(boxes);
        let t = Target::new(target, instance)?;
        engine.running(&t).await?;
        Ok(Reach::Container { engine, target: t })
    }

    /// `this machine`, `container charly-web`.
    pub fn describe(&self) -> String {
        match self {
            Reach::Local { .. } => "this machine".into(),
            Reach::Container { target, .. } => format!("container {}", target.container),
        }
    }

    /// The container's name, `None` on this machine.
    pub fn container(&self) -> Option<String> {
        match self {
            Reach::Local { .. } => None,
            Reach::Container { target, .. } => Some(target.container.clone()),
        }
    }

    /// The box and `-i` as charly's commands take them (`web -i 2`), `.` on this machine.
    pub fn fix(&self) -> String {
        match self {
            Reach::Local { .. } => ".".into(),
            Reach::Container { target, .. } => format!("{}{}", target.box_name, target.instance_flag()),
        }
    }

    /// Runs `argv` (program first) to completion, whatever its exit status; `purpose` says
    /// what the program is for in the error when it is missing.
    ///
    /// # Errors
    ///
    /// [`TmuxError::Missing`] when the program is not in the target; [`TmuxError::Engine`]
    /// when the container stopped or went away, or the command was cancelled.
    pub async fn run(&self, argv: &[String], purpose: &str) -> Result<Output, TmuxError> {
        let program = argv.first().cloned().unwrap_or_default();
        let missing = || TmuxError::Missing(self.missing(&program, purpose));
        match self {
            Reach::Local { cancel } => {
                if cancel.is_cancelled() {
                    return Err(crate::engine::EngineError::Cancelled.into());
                }
                let out = tokio::process::Command::new(&program)
                    .args(&argv[1..])
                    .stdin(std::process::Stdio::null())
                    .kill_on_drop(true)
                    .output()
                    .await
                    .map_err(|e| match e.kind() {
                        std::io::ErrorKind::NotFound => missing(),
                        _ => TmuxError::Io(format!("cannot run {program}: {e}")),
                    })?;
                Ok(Output {
                    status: out.status.code().unwrap_or(-1),
                    stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                    stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                })
            }
            Reach::Container { engine, target } => {
                let out = engine.exec(target, &[], argv).await?;
                // 127: the OCI runtime found no such program ("executable file not found").
                if out.status == 127 && out.stderr.contains("not found") {
                    return Err(missing());
                }
                Ok(out)
            }
        }
    }

    /// Whether `program` is on the target's PATH (`which`, in a container; PATH searched
    /// here on this machine).
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run).
    pub async fn has_program(&self, program: &str) -> Result<bool, TmuxError> {
        match self {
            Reach::Local { .. } => Ok(on_path(program)),
            Reach::Container { .. } => {
                let out = self.run(&["which".to_owned(), program.to_owned()], "").await;
                match out {
                    Ok(out) => Ok(out.status == 0),
                    // No `which` in the image: say the program is there, and let its own start
                    // fail with the runtime's words.
                    Err(TmuxError::Missing(_)) => Ok(true),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// [`Missing`] for `program` in this target.
    pub fn missing(&self, program: &str, purpose: &str) -> Missing {
        Missing {
            program: program.to_owned(),
            purpose: purpose.to_owned(),
            container: self.container(),
            fix: self.fix(),
        }
    }

    /// A `std::process::Command` that runs `argv` on the terminal: `podman exec -it` (with the
    /// terminal's `TERM`) in a container, the program itself here.
    pub fn terminal_command(&self, argv: &[String]) -> std::process::Command {
        match self {
            Reach::Local { .. } => {
                let mut command = std::process::Command::new(&argv[0]);
                command.args(&argv[1..]);
                command
            }
            Reach::Container { engine, target } => {
                let mut args: Vec<String> = vec!["exec".into(), "--interactive".into(), "--tty".into()];
                if let Ok(term) = std::env::var("TERM") {
                    args.extend(["--env".into(), format!("TERM={term}")]);
                }
                args.push(target.container.clone());
                args.extend(argv.iter().cloned());
                engine.command(&args)
            }
        }
    }

    /// Copies file `inner` of the target to `dest` on this machine, atomically (a temporary
    /// file beside `dest`, renamed over it): its size in bytes. A failed copy leaves nothing.
    ///
    /// # Errors
    ///
    /// [`TmuxError::Io`] naming the file; [`TmuxError::Engine`] when `podman cp` failed.
    pub async fn copy_out(&self, inner: &str, dest: &Path) -> Result<u64, TmuxError> {
        let io = |what: &str, path: &Path, e: std::io::Error| {
            TmuxError::Io(format!("cannot {what} {}: {e}", path.display()))
        };
        let dir = match dest.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if dest.is_dir() {
            return Err(TmuxError::Usage(format!(
                "argument `output`: {} is a directory; name the file to write (e.g. {}/recording.cast)",
                dest.display(),
                dest.display()
            )));
        }
        let tmp = tempfile::Builder::new()
            .prefix(".charly-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(|e| io("create a temporary file in", dir, e))?;
        match self {
            Reach::Local { .. } => {
                std::fs::copy(inner, tmp.path()).map_err(|e| io("copy", Path::new(inner), e))?;
            }
            Reach::Container { engine, target } => {
                let from = format!("{}:{inner}", target.container);
                let to = tmp.path().to_string_lossy().into_owned();
                engine.change(&["cp".to_owned(), from, to]).await?;
            }
        }
        // `podman cp` may replace the temporary file rather than write into it: what is at its
        // path now is the copy.
        let copy = std::fs::OpenOptions::new()
            .write(true)
            .open(tmp.path())
            .map_err(|e| io("open", tmp.path(), e))?;
        copy.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))
            .map_err(|e| io("set the mode of", tmp.path(), e))?;
        copy.sync_all().map_err(|e| io("sync", tmp.path(), e))?;
        let bytes = copy.metadata().map_err(|e| io("read", tmp.path(), e))?.len();
        tmp.persist(dest).map_err(|e| io("write", dest, e.error))?;
        Ok(bytes)
    }
}

/// Whether `program` names an executable file on this machine's PATH (or is a path to one).
fn on_path(program: &str) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    let executable =
        |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    if program.contains('/') {
        return executable(Path::new(program));
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| executable(&dir.join(program))))
        .unwrap_or(false)
}
