//! Running the external programs charly drives (`podman`, `git`).

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Output};

use super::error::{ProjectError, Result};

/// Runs `program args...`, copies its stdout and stderr to `out`, and fails when it cannot be
/// started ([`ProjectError::ToolMissing`]) or exits unsuccessfully ([`ProjectError::CommandFailed`]).
pub(crate) fn run<I, S>(
    program: &OsStr,
    args: I,
    purpose: &'static str,
    out: &mut dyn Write,
) -> Result<Output>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut command = Command::new(program);
    command.args(args);
    let output = command.output().map_err(|source| ProjectError::ToolMissing {
        program: program.to_string_lossy().into_owned(),
        purpose,
        source,
    })?;
    let sink = |e| ProjectError::io("pass on the output of", program, e);
    out.write_all(&output.stdout).map_err(sink)?;
    out.write_all(&output.stderr).map_err(sink)?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(ProjectError::CommandFailed {
            command: command_line(&command),
            status: output.status,
            stderr: tail.into_iter().rev().collect::<Vec<_>>().join("\n"),
        });
    }
    Ok(output)
}

/// The first line of `program --version`, or `None` when it cannot be run.
pub(crate) fn version(program: &OsStr) -> Option<String> {
    let output = Command::new(program).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    output.status.success().then(|| text.lines().next().unwrap_or_default().trim().to_owned())
}

fn command_line(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}
