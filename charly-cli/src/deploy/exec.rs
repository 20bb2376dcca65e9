//! `logs`, `shell`, `cmd`: reading a container's log and running commands in it.
//!
//! As tools these never wait on a terminal (DESIGN.md "The command shape"): `logs` returns
//! the last lines, `shell` needs `command` and returns its output and exit status, `cmd`
//! always does. On a terminal, `logs --follow` and a `shell` without `--command` hand the
//! terminal to podman.

use std::io::IsTerminal as _;

use super::report::{Executed, Logs};
use super::{Deploy, DeployError};
use crate::context::Scope;
use crate::engine::{EngineError, Target};
use crate::project::runtime::Runtime;

impl Deploy<'_> {
    /// `logs`: the last `lines` lines of the container's log; with `follow` (terminal only)
    /// podman streams it to the terminal until interrupted.
    ///
    /// # Errors
    ///
    /// `follow` as a tool, a container that does not exist, podman failures.
    pub fn logs(
        &self,
        box_name: &str,
        instance: Option<&str>,
        lines: u32,
        follow: bool,
    ) -> Result<Logs, DeployError> {
        let target = Target::new(box_name, instance)?;
        if follow && self.scope == Scope::Served {
            return Err(DeployError::NeedsArgument(
                "logs: `follow` streams to a terminal and a tool never waits on one; call logs without `follow` \
                 for the last `lines` lines"
                    .into(),
            ));
        }
        if follow {
            self.block(async {
                match self.engine.claimed(&target).await? {
                    Some(_) => Ok(()),
                    None => Err(self.engine.missing(&target)),
                }
            })?;
            let tail = lines.to_string();
            // A tokio child, killed when the wait is dropped: a SIGTERM to charly (or Ctrl-C)
            // cancels the wait ([`super::signals`]), and no `podman logs --follow` is left.
            let mut follow = tokio::process::Command::from(self.engine.command(&[
                "logs",
                "--follow",
                "--tail",
                &tail,
                &target.container,
            ]));
            follow.kill_on_drop(true);
            let followed = self.block_exec(async {
                let io = |e: std::io::Error| EngineError::Missing {
                    program: self.engine.program(),
                    message: e.to_string(),
                };
                let mut child = follow.spawn().map_err(io)?;
                child.wait().await.map_err(io)
            });
            match followed {
                Ok(_) | Err(DeployError::Engine(EngineError::Cancelled)) => {}
                Err(e) => return Err(e),
            }
            return Ok(Logs { container: target.container, lines: Vec::new(), followed: true });
        }
        let text = self.block(async {
            self.engine.claimed(&target).await?;
            self.engine.logs(&target, lines).await
        })?;
        Ok(Logs {
            container: target.container,
            lines: text.lines().map(str::to_owned).collect(),
            followed: false,
        })
    }

    /// `cmd`: runs `command` with `sh -c` in the running container and returns its output
    /// and exit status.
    ///
    /// # Errors
    ///
    /// A container that is gone or stopped (before or while the command runs), podman failures.
    pub fn cmd(
        &self,
        box_name: &str,
        instance: Option<&str>,
        env: &[String],
        command: &str,
    ) -> Result<Executed, DeployError> {
        let target = Target::new(box_name, instance)?;
        let argv = sh(command);
        let out = self.block_exec(async {
            self.engine.running(&target).await?;
            self.engine.exec(&target, env, &argv).await
        })?;
        Ok(Executed {
            container: target.container,
            command: command.to_owned(),
            exit_status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
            disposable: false,
            interactive: false,
        })
    }

    /// `shell`: with `command`, runs it with `sh -c` in the running container, or in a
    /// disposable container of the box's image when it is not running; without, on a
    /// terminal, an interactive `sh` attached to it.
    ///
    /// # Errors
    ///
    /// No `command` as a tool (or without a terminal), an image never built, podman failures.
    pub fn shell(
        &self,
        box_name: &str,
        instance: Option<&str>,
        env: &[String],
        command: Option<&str>,
    ) -> Result<Executed, DeployError> {
        let target = Target::new(box_name, instance)?;
        let interactive = command.is_none();
        if interactive && (self.scope == Scope::Served || !std::io::stdin().is_terminal()) {
            return Err(DeployError::NeedsArgument(format!(
                "shell: give `command` (`--command 'ls /'`): {}",
                if self.scope == Scope::Served {
                    "as a tool, shell runs one command and returns its output; it never waits on a terminal"
                } else {
                    "stdin is not a terminal, so there is nothing to attach an interactive shell to"
                }
            )));
        }
        let running = self.block(async {
            Ok::<_, EngineError>(self.engine.claimed(&target).await?.is_some_and(|c| c.is_running()))
        })?;
        if let (true, Some(command)) = (running, command) {
            return self.cmd(box_name, instance, env, command);
        }
        let mut args: Vec<String> = Vec::new();
        // The box's env (its image's, then its deploy entry's) for a disposable container, as
        // its own container has it; `--env` after, so the given values win.
        let mut box_env: Vec<String> = Vec::new();
        // Where podman writes a disposable container's id, to remove it when the wait is
        // dropped (a cancelled call: killing `podman run` leaves the container running).
        let cid_dir = tempfile::tempdir()?;
        let cidfile = cid_dir.path().join("cid");
        let image = if running {
            args.push("exec".into());
            if interactive {
                args.push("--interactive".into());
                args.push("--tty".into());
            }
            None
        } else {
            let image = self.project.resolve_box(box_name)?.image;
            let Some(summary) = self.block(self.engine.image(&image))? else {
                return Err(EngineError::NoImage { box_name: box_name.to_owned(), image }.into());
            };
            box_env = Runtime::from_labels(&summary.labels.unwrap_or_default()).env;
            // An unreadable deploy file does not keep a shell from running.
            let entry = super::plan::entry(&crate::deployfile::deploy_path(), &target).ok().flatten();
            box_env.extend(super::plan::EntryValues::of(entry.as_ref()).env);
            args.extend(["run", "--rm", "--pull=never"].map(str::to_owned));
            if !interactive {
                args.extend(["--cidfile".into(), cidfile.display().to_string()]);
            }
            if interactive {
                args.push("--interactive".into());
                args.push("--tty".into());
            }
            Some(image)
        };
        for e in box_env.iter().chain(env) {
            args.extend(["--env".into(), e.clone()]);
        }
        if let Some(image) = &image {
            args.extend(["--entrypoint=".into(), image.clone()]);
        } else {
            args.push(target.container.clone());
        }
        let container = image.clone().unwrap_or_else(|| target.container.clone());
        let Some(command) = command else {
            args.push("/bin/sh".into());
            self.engine.check_cancelled()?;
            let status = self.engine.command(&args).status()?;
            return Ok(Executed {
                container,
                command: String::new(),
                exit_status: status.code().unwrap_or(-1),
                stdout: String::new(),
                stderr: String::new(),
                disposable: image.is_some(),
                interactive: true,
            });
        };
        args.extend(sh(command));
        self.engine.check_cancelled()?;
        let mut guard = RemoveOnDrop { engine: &self.engine, cidfile, armed: image.is_some() };
        let out = self.block_exec(self.engine.output(&args, None, false));
        // Cancelled: the guard, dropped armed, removes the container.
        guard.armed &= out.is_err();
        let out = out?;
        if out.status == 125 {
            return Err(EngineError::Failed {
                command: format!("podman {}", args.first().map(String::as_str).unwrap_or_default()),
                status: out.status,
                stderr: out.stderr.trim().trim_start_matches("Error: ").to_owned(),
            }
            .into());
        }
        Ok(Executed {
            container,
            command: command.to_owned(),
            exit_status: out.status,
            stdout: out.stdout,
            stderr: out.stderr,
            disposable: image.is_some(),
            interactive: false,
        })
    }
}

/// While armed, dropping it removes the disposable container whose id podman wrote to
/// `cidfile` (best effort, blocking).
struct RemoveOnDrop<'a> {
    engine: &'a crate::engine::Engine,
    cidfile: std::path::PathBuf,
    armed: bool,
}

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let id = std::fs::read_to_string(&self.cidfile).unwrap_or_default();
        if !id.trim().is_empty() {
            let _ = self.engine.command(&["rm", "--force", "--time", "0", id.trim()]).output();
        }
    }
}

fn sh(command: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), command.to_owned()]
}
