//! Running the desktop's tools (`wtype`, `grim`, `wl-copy`, `xdotool`, ...) inside the target,
//! always as an argv: `podman exec --user UID:GID --env ... <container> <tool> <arg>...` for a
//! box, the tool itself on this machine (through `setpriv` to the desktop's user when charly
//! runs as root). Nothing goes through a shell, so no value can become shell syntax.

use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt as _;

use super::WlError;
use super::session::{Place, Session};
use crate::engine::Engine;

/// Where a container's tools are looked for (a Debian image's PATH).
const CONTAINER_PATH: [&str; 6] =
    ["/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"];

/// What a tool printed and its exit status.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ran {
    /// Its exit status (-1 when killed by a signal).
    pub status: i32,
    /// Its stdout, as printed.
    pub stdout: Vec<u8>,
    /// Its stderr.
    pub stderr: String,
}

impl Ran {
    /// stdout as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// The `PATH` of a program run as the desktop's user when sway's own is not known.
const STANDARD_PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";

/// The caller's variables a program run as the desktop's user still gets: the locale, the
/// terminal, and the buses a caller inside the desktop session names (sway's own, when
/// known, win over them).
pub const PASSED_ON: [&str; 6] =
    ["LANG", "LC_ALL", "LC_CTYPE", "TERM", "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"];

/// `program` as charly's `PATH` finds it (an absolute path), or as given when it holds a `/`
/// or is not found (the exec then fails and says so).
fn on_path(program: &str) -> std::ffi::OsString {
    if program.contains('/') {
        return program.into();
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|dir| dir.join(program))
        .find(|p| std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
        .map_or_else(|| program.into(), std::path::PathBuf::into_os_string)
}

/// How to run tools in a session: the session, the engine (for a container) and the timeout
/// of each run.
#[derive(Clone, Debug)]
pub struct Tools<'a> {
    /// The session.
    pub session: &'a Session,
    /// The engine, whose cancellation stops a running tool.
    pub engine: &'a Engine,
    /// The timeout of each tool.
    pub timeout: Duration,
}

impl Tools<'_> {
    /// Whether `tool` is installed in the target: an executable file in the container's PATH
    /// directories, or on this machine's PATH (an absolute path: that file).
    pub fn has(&self, tool: &str) -> bool {
        let executable = |p: &std::path::Path| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        };
        if tool.starts_with('/') {
            return executable(&self.session.host_path(tool));
        }
        match self.session.place {
            Place::Local => std::env::var_os("PATH")
                .is_some_and(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(tool)))),
            Place::Container { .. } => {
                CONTAINER_PATH.iter().any(|dir| executable(&self.session.host_path(&format!("{dir}/{tool}"))))
            }
        }
    }

    /// `Ok` when `tool` is installed, else [`WlError::Missing`] naming it, its Debian package
    /// and what needs it.
    ///
    /// # Errors
    ///
    /// [`WlError::Missing`].
    pub fn require(&self, tool: &str, package: &str, what: &str) -> Result<(), WlError> {
        if self.has(tool) {
            return Ok(());
        }
        let install = match &self.session.place {
            Place::Local => format!("install it on this machine (Debian package {package})"),
            Place::Container { fix, .. } => {
                let box_name = fix.split(' ').next().unwrap_or(fix);
                format!(
                    "add Debian package {package} to box {box_name} (`charly candy add-deb <CANDY> {package}` on one of its candies) and rebuild it"
                )
            }
        };
        Err(WlError::Missing(format!(
            "{what} needs {tool}, which is not installed {}: {install}",
            self.session.at()
        )))
    }

    /// `podman exec` arguments that run `argv` in `container` as the desktop's user.
    fn exec_args(&self, container: &str, argv: &[&str], stdin: bool, detach: bool) -> Vec<String> {
        let mut args: Vec<String> = vec!["exec".into()];
        if stdin {
            args.push("--interactive".into());
        }
        if detach {
            args.push("--detach".into());
        }
        args.extend(["--user".into(), format!("{}:{}", self.session.uid, self.session.gid)]);
        for (k, v) in self.session.env() {
            args.extend(["--env".into(), format!("{k}={v}")]);
        }
        args.push(container.to_owned());
        args.extend(argv.iter().map(|a| (*a).to_owned()));
        args
    }

    /// The command that runs `argv` on this machine, as the desktop's user (`setpriv` when
    /// charly runs as root and the desktop is another user's).
    ///
    /// Run as another user, the program does not get charly's environment: it gets a standard
    /// `PATH`, then sway's own ([`Session::user_env`]), the caller's [`PASSED_ON`] variables,
    /// then [`Session::env`]; it starts in the desktop user's `HOME` (else `/`), not in charly's
    /// working directory; and a bare program name is found on charly's `PATH`, as
    /// [`has`](Self::has) found it.
    fn local_command(&self, argv: &[&str]) -> tokio::process::Command {
        // /proc/self belongs to the process's effective uid.
        let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
        let mut command;
        if root && self.session.uid != 0 {
            command = tokio::process::Command::new("setpriv");
            let (uid, gid) = (self.session.uid.to_string(), self.session.gid.to_string());
            command.args(["--reuid", &uid, "--regid", &gid, "--clear-groups", "--"]);
            command.arg(on_path(argv[0])).args(&argv[1..]);
            command.env_clear().env("PATH", STANDARD_PATH);
            command.envs(self.session.user_env.iter().cloned());
            command.envs(PASSED_ON.iter().filter_map(|k| std::env::var_os(k).map(|v| (k, v))));
            let home = self.session.extra_env.iter().find(|(k, _)| k == "HOME").map(|(_, v)| v.as_str());
            command.current_dir(home.filter(|h| std::path::Path::new(h).is_dir()).unwrap_or("/"));
        } else {
            command = tokio::process::Command::new(argv[0]);
            command.args(&argv[1..]);
        }
        command.envs(self.session.env()).kill_on_drop(true);
        command
    }

    /// Runs `argv` (`stdin` on its input) to completion, whatever its exit status.
    ///
    /// # Errors
    ///
    /// [`WlError::Engine`] when podman could not run, [`WlError::NoSession`] when the
    /// container stopped, [`WlError::Missing`] when the tool cannot be started,
    /// [`WlError::Timeout`].
    pub async fn run(&self, argv: &[&str], stdin: Option<&[u8]>) -> Result<Ran, WlError> {
        self.engine.check_cancelled()?;
        let tool = argv[0];
        let running = async {
            match &self.session.place {
                Place::Container { container, .. } => {
                    let args = self.exec_args(container, argv, stdin.is_some(), false);
                    let out = self.engine.output_raw(&args, stdin).await?;
                    let ran = Ran { status: out.status, stdout: out.stdout, stderr: out.stderr };
                    self.podman_failure(container, tool, &ran)?;
                    Ok(ran)
                }
                Place::Local => {
                    let mut command = self.local_command(argv);
                    command.stdout(Stdio::piped()).stderr(Stdio::piped());
                    command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
                    let mut child = command.spawn().map_err(|e| cannot_start(tool, &e))?;
                    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
                        // A tool that exits without reading is not our error: its status says.
                        let _ = pipe.write_all(input).await;
                        drop(pipe);
                    }
                    let out = child.wait_with_output().await.map_err(|e| cannot_start(tool, &e))?;
                    Ok(Ran {
                        status: out.status.code().unwrap_or(-1),
                        stdout: out.stdout,
                        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                    })
                }
            }
        };
        match tokio::time::timeout(self.timeout, running).await {
            Ok(ran) => ran,
            Err(_) => {
                Err(WlError::Timeout { what: format!("{tool} {}", self.session.at()), after: self.timeout })
            }
        }
    }

    /// [`run`](Self::run), which must exit 0.
    ///
    /// # Errors
    ///
    /// As [`run`](Self::run); [`WlError::Tool`] for another exit status.
    pub async fn run_ok(&self, argv: &[&str], stdin: Option<&[u8]>) -> Result<Ran, WlError> {
        let ran = self.run(argv, stdin).await?;
        if ran.status != 0 {
            return Err(WlError::Tool {
                tool: argv[0].to_owned(),
                place: self.session.at(),
                status: ran.status,
                stderr: ran.stderr,
            });
        }
        Ok(ran)
    }

    /// Runs a tool that leaves a process of its own behind holding its output (`wl-copy`
    /// serves the clipboard from a child): only its exit is waited for; on this machine its
    /// stderr goes to a temporary file, read once it exited (podman exec returns at the exit).
    ///
    /// # Errors
    ///
    /// As [`run_ok`](Self::run_ok).
    pub async fn run_forking(&self, argv: &[&str]) -> Result<(), WlError> {
        if let Place::Container { .. } = self.session.place {
            return self.run_ok(argv, None).await.map(|_| ());
        }
        self.engine.check_cancelled()?;
        let tool = argv[0];
        let mut stderr = tempfile::tempfile().map_err(|e| cannot_start(tool, &e))?;
        let mut command = self.local_command(argv);
        let err = stderr.try_clone().map_err(|e| cannot_start(tool, &e))?;
        command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(err);
        let mut child = command.spawn().map_err(|e| cannot_start(tool, &e))?;
        drop(command);
        let status = match tokio::time::timeout(self.timeout, child.wait()).await {
            Ok(status) => status.map_err(|e| cannot_start(tool, &e))?,
            Err(_) => {
                let what = format!("{tool} {}", self.session.at());
                return Err(WlError::Timeout { what, after: self.timeout });
            }
        };
        if status.success() {
            return Ok(());
        }
        let mut text = String::new();
        use std::io::{Read as _, Seek as _};
        let _ = stderr.rewind().and_then(|_| stderr.read_to_string(&mut text));
        Err(WlError::Tool {
            tool: tool.into(),
            place: self.session.at(),
            status: status.code().unwrap_or(-1),
            stderr: text,
        })
    }

    /// Starts `argv` in the target without waiting for it (`podman exec --detach`, or a new
    /// process group on this machine whose exit tokio reaps): its pid on this machine.
    ///
    /// # Errors
    ///
    /// As [`run_ok`](Self::run_ok).
    pub async fn launch(&self, argv: &[&str]) -> Result<Option<u32>, WlError> {
        self.engine.check_cancelled()?;
        let tool = argv[0];
        match &self.session.place {
            Place::Container { container, .. } => {
                let args = self.exec_args(container, argv, false, true);
                let out = self.engine.output_raw(&args, None).await?;
                let ran = Ran { status: out.status, stdout: out.stdout, stderr: out.stderr };
                self.podman_failure(container, tool, &ran)?;
                if ran.status != 0 {
                    let place = self.session.at();
                    return Err(WlError::Tool {
                        tool: tool.into(),
                        place,
                        status: ran.status,
                        stderr: ran.stderr,
                    });
                }
                Ok(None)
            }
            Place::Local => {
                let mut command = self.local_command(argv);
                command.kill_on_drop(false).process_group(0);
                command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
                let child = command.spawn().map_err(|e| cannot_start(tool, &e))?;
                Ok(child.id())
            }
        }
    }

    /// podman's own failures (125: the container is gone or stopped; 126/127: the tool cannot
    /// run in it), as errors; the tool's status otherwise.
    fn podman_failure(&self, container: &str, tool: &str, ran: &Ran) -> Result<(), WlError> {
        let last =
            ran.stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim_start_matches("Error: ");
        match ran.status {
            125 => Err(WlError::NoSession(format!(
                "podman could not run {tool} in container {container}: {last}"
            ))),
            126 | 127 => Err(WlError::Missing(format!("{tool} cannot run in container {container}: {last}"))),
            _ => Ok(()),
        }
    }
}

fn cannot_start(tool: &str, e: &std::io::Error) -> WlError {
    match e.kind() {
        std::io::ErrorKind::NotFound => {
            WlError::Missing(format!("{tool} is not installed on this machine (not on PATH)"))
        }
        _ => WlError::Missing(format!("{tool} cannot be started on this machine: {e}")),
    }
}
