//! [`Engine::output_raw`]: a podman call whose stdout is bytes (a PNG a tool printed inside a
//! container), not text.

use std::process::Stdio;

use tokio::io::AsyncWriteExt as _;

use super::{Engine, EngineError};

/// What a finished podman call printed, as bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawOutput {
    /// Its exit status (-1 when killed by a signal).
    pub status: i32,
    /// Its stdout, as printed.
    pub stdout: Vec<u8>,
    /// Its stderr, lossily decoded.
    pub stderr: String,
}

impl Engine {
    /// Runs `podman args...` to completion whatever its exit status, `stdin` on its standard
    /// input (closed when `None`); the child is killed when the call is dropped (a timeout, a
    /// cancelled command).
    ///
    /// # Errors
    ///
    /// [`EngineError::Missing`] when podman cannot be started.
    pub async fn output_raw<S: AsRef<str>>(
        &self,
        args: &[S],
        stdin: Option<&[u8]>,
    ) -> Result<RawOutput, EngineError> {
        let missing =
            |e: std::io::Error| EngineError::Missing { program: self.program(), message: e.to_string() };
        let mut command = tokio::process::Command::new(&self.program);
        command.args(args.iter().map(AsRef::as_ref)).kill_on_drop(true);
        command.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() });
        command.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().map_err(missing)?;
        if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
            // A child that exits without reading its stdin is not our error: its status says.
            let _ = pipe.write_all(input).await;
            drop(pipe);
        }
        let out = child.wait_with_output().await.map_err(missing)?;
        Ok(RawOutput {
            status: out.status.code().unwrap_or(-1),
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}
