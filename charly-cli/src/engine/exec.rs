//! [`Engine::exec`]: a command run in a box's running container with `podman exec`, and
//! stopped there when charly stops waiting for it.
//!
//! `podman exec` does not forward signals, and killing it (a cancelled MCP call, a hook's
//! time limit, charly itself stopped by SIGTERM) leaves the command running in the container.
//! So each exec carries a marker, `CHARLY_EXEC_ID=<random hex>`, in its environment, which the
//! command's children inherit; when the call is dropped before the command ended, a second
//! `podman exec` finds the processes holding the marker (`/proc/*/environ`) and sends them
//! SIGTERM, then SIGKILL after 2 s ([`STOP_SCRIPT`]). The marker is charly's (hex digits) and
//! reaches that script as an argument, never as shell text.
//!
//! Chosen over the other ways: `--detach-keys` only detaches a terminal session; the exec'd
//! process is a session leader (runc), so a process group kill would miss children that start
//! their own session, and would need its pid, which `podman exec` does not print; a TTY-less
//! init would need a program in every image. The marker needs `sh`, `tr`, `grep` and `kill` in
//! the image, which `cmd`'s `sh -c` and the hooks need anyway (busybox and Debian have them).
//! A `kill -9` of charly itself cannot be caught: that command runs on.

use std::process::Stdio;
use std::time::{Duration, Instant};

use super::error::{is_no_container, not_running, state_word};
use super::{Engine, EngineError, Output, Target};

/// The environment variable that marks the processes of one exec.
pub const EXEC_ID_ENV: &str = "CHARLY_EXEC_ID";

/// Stops the processes whose environment holds `CHARLY_EXEC_ID=$1`: SIGTERM, then SIGKILL to
/// those left after 2 s. `/proc/<pid>/environ` is NUL-separated: `tr` makes it lines, as
/// busybox's `grep` stops at a NUL.
pub const STOP_SCRIPT: &str = r#"m="CHARLY_EXEC_ID=$1"
pids() { for p in /proc/[0-9]*; do tr '\0' '\n' < "$p/environ" 2>/dev/null | grep -qxF "$m" && echo "${p#/proc/}"; done; }
l=$(pids); [ -n "$l" ] || exit 0
kill -TERM $l 2>/dev/null
i=0
while [ $i -lt 20 ]; do l=$(pids); [ -n "$l" ] || exit 0; sleep 0.1; i=$((i+1)); done
kill -KILL $l 2>/dev/null
exit 0"#;

/// How long the stop of a dropped exec may take before charly gives up on it.
const STOP_LIMIT: Duration = Duration::from_secs(10);

/// A fresh marker: 16 random bytes as hex.
fn marker() -> String {
    let mut buf = [0u8; 16];
    // Without random bytes, the time and pid still tell two execs apart.
    if getrandom::fill(&mut buf).is_err() {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        buf[..8].copy_from_slice(&now.as_nanos().to_le_bytes()[..8]);
        buf[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// While armed, dropping it stops the marked processes in the container (synchronously,
/// bounded by [`STOP_LIMIT`]): the exec future was dropped before its command ended.
struct StopOnDrop<'a> {
    engine: &'a Engine,
    container: String,
    marker: String,
    armed: bool,
}

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.engine.stop_marked(&self.container, &self.marker);
        }
    }
}

impl Engine {
    /// Runs `command` in `target`'s running container (`podman exec`, no TTY, stdin closed),
    /// whatever its exit status. Checks the cancellation first: a command may change the
    /// container. When the returned future is dropped before the command ended (the call
    /// was cancelled, or a time limit around it ran out), the command and its children are
    /// stopped in the container (see the [module](self) docs).
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
        let marker = marker();
        let mut args: Vec<String> = vec!["exec".into(), "--env".into(), format!("{EXEC_ID_ENV}={marker}")];
        for e in env {
            args.extend(["--env".into(), e.clone()]);
        }
        args.push(target.container.clone());
        args.extend(command.iter().cloned());
        let mut guard = StopOnDrop { engine: self, container: target.container.clone(), marker, armed: true };
        let out = self.output(&args, None, false).await;
        guard.armed = false;
        let out = out?;
        // podman's own failures are 125 (and 126/127 for a command that cannot run); the
        // command's status otherwise. A container that went away answers 125 or 137.
        if out.status == 125 && is_no_container(&out.stderr) {
            return Err(self.missing(target));
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

    /// Stops the processes of exec `marker` in `container` ([`STOP_SCRIPT`]), waiting at most
    /// [`STOP_LIMIT`]; best effort (the container may be gone). Blocking: it runs where a
    /// future is dropped.
    pub fn stop_marked(&self, container: &str, marker: &str) {
        let child = self
            .command(&["exec", container, "sh", "-c", STOP_SCRIPT, "sh", marker])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        let Ok(mut child) = child else { return };
        let deadline = Instant::now() + STOP_LIMIT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}
