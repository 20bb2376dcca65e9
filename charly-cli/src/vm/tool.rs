//! The host programs `vm.*` runs (mkfs.ext4, qemu-img, qemu, ssh-keygen, ssh, tar), as argv
//! vectors through tokio: a child is killed when the run is cancelled (the future is dropped,
//! `kill_on_drop`), and a failure names the program, what it was doing and its last lines.

use std::ffi::OsStr;
use std::process::{Output, Stdio};
use std::time::Duration;

use super::{VmError, tail};

/// What installs e2fsprogs, tar and OpenSSH, for [`VmError::Missing`].
pub(super) const BASE_HINT: &str =
    "install e2fsprogs, tar and openssh-client (Debian: apt-get install e2fsprogs tar openssh-client)";

/// `program args...`, stdin closed, stdout and stderr captured, killed when dropped.
pub(super) fn command<S: AsRef<OsStr>>(program: &str, args: &[S]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    command
}

/// Runs `command` to its end, whatever its exit status.
///
/// # Errors
///
/// [`VmError::Missing`] when `program` cannot be started (`hint` says what installs it).
pub(super) async fn output(
    mut command: tokio::process::Command,
    program: &str,
    hint: &'static str,
) -> Result<Output, VmError> {
    command.output().await.map_err(|e| VmError::Missing {
        program: program.to_owned(),
        why: e.to_string(),
        hint,
    })
}

/// Runs `command`, which must exit 0; `what` says what it was for in the error.
///
/// # Errors
///
/// [`VmError::Missing`]; [`VmError::Tool`] with its exit status and last stderr lines.
pub(super) async fn checked(
    command: tokio::process::Command,
    program: &str,
    hint: &'static str,
    what: &str,
) -> Result<Output, VmError> {
    let out = output(command, program, hint).await?;
    if out.status.success() {
        return Ok(out);
    }
    Err(failed(what, &out))
}

/// [`VmError::Tool`] for a finished `out`.
pub(super) fn failed(what: &str, out: &Output) -> VmError {
    let status = match out.status.code() {
        Some(code) => format!("exit status {code}"),
        None => "killed by a signal".to_owned(),
    };
    let mut why = tail(&String::from_utf8_lossy(&out.stderr), 4);
    if why.is_empty() {
        why = tail(&String::from_utf8_lossy(&out.stdout), 4);
    }
    VmError::Tool { what: what.to_owned(), why: format!("{status}: {why}") }
}

/// Runs `command` for at most `limit`; `None` when it did not end in time (it is killed).
///
/// # Errors
///
/// As [`output`].
pub(super) async fn output_within(
    command: tokio::process::Command,
    program: &str,
    hint: &'static str,
    limit: Duration,
) -> Result<Option<Output>, VmError> {
    match tokio::time::timeout(limit, output(command, program, hint)).await {
        Ok(out) => out.map(Some),
        Err(_) => Ok(None),
    }
}
