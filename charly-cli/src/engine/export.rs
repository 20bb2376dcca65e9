//! An image's file system as a tar stream (`vm build`): a container created from the image and
//! never started, `podman export`ed, then removed.

use std::process::Stdio;

use super::{Engine, EngineError};

/// A container made only to export its image's file system; removed when dropped (also when
/// the command that made it fails or is cancelled midway).
#[derive(Debug)]
pub struct ExportContainer {
    program: std::ffi::OsString,
    /// Its id.
    pub id: String,
}

impl Drop for ExportContainer {
    fn drop(&mut self) {
        let _ = std::process::Command::new(&self.program)
            .args(["rm", "--force", "--time", "0", &self.id])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

impl Engine {
    /// `podman create` of `image` (an id or a local reference; nothing is pulled), never
    /// started, labelled `label` (`ai.opencharly.vm-build=<vm>`) so a leftover one can be found.
    ///
    /// # Errors
    ///
    /// As [`change`](Self::change).
    pub async fn create_for_export(&self, image: &str, label: &str) -> Result<ExportContainer, EngineError> {
        // The command is never run; `create` needs one for an image without a CMD.
        let args = ["create", "--pull=never", "--label", label, "--entrypoint", "", image, "/"];
        let id = self.change(&args).await?.trim().to_owned();
        Ok(ExportContainer { program: self.program.clone(), id })
    }

    /// Removes the containers labelled `label` (left by an export that was killed midway):
    /// their ids.
    ///
    /// # Errors
    ///
    /// As [`change`](Self::change).
    pub async fn remove_labelled(&self, label: &str) -> Result<Vec<String>, EngineError> {
        let filter = format!("label={label}");
        let ids: Vec<String> = self
            .query(&["ps", "--all", "--quiet", "--filter", &filter])
            .await?
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        for id in &ids {
            self.change(&["rm", "--force", "--time", "0", id]).await?;
        }
        Ok(ids)
    }

    /// `podman export <id>` with its stdout piped (the tar stream) and its stderr captured,
    /// killed when dropped.
    pub fn export_command(&self, container: &ExportContainer) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(["export", &container.id])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        command
    }
}
