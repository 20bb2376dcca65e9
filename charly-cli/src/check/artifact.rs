//! Where a step's `artifact:` (the PNG of a `cdp:`, `vnc:` or `wl:` screenshot) is written,
//! and the check of what was written.
//!
//! A relative path is relative to the project directory (as `--junit`). For an MCP call
//! ([`RunOptions::confined`]) the path must lie beneath the project root, as every path a
//! served call names: no absolute path, no `..`, no symlink leading out. Missing directories
//! on the way are made (beneath the root for an MCP call). Without a project root (a plan run
//! as a library) the path is used as given.

use std::path::{Path, PathBuf};

use super::RunOptions;
use crate::project::Project;

/// The path `artifact:` names, its directory made.
///
/// # Errors
///
/// A sentence naming the artifact: a path outside the project for an MCP call, or a
/// directory that cannot be made.
pub(super) fn place(given: &Path, options: &RunOptions) -> Result<PathBuf, String> {
    let Some(root) = &options.root else { return Ok(given.to_owned()) };
    if options.confined {
        let project = Project::at(root.clone());
        let (absolute, relative) =
            project.resolve_inside(given).map_err(|e| format!("artifact {}: {e}", given.display()))?;
        if let Some(dir) = relative.parent().filter(|d| !d.as_os_str().is_empty()) {
            project.enter_dir(dir).map_err(|e| format!("artifact {}: {e}", given.display()))?;
        }
        return Ok(absolute);
    }
    let path = if given.is_absolute() { given.to_owned() } else { root.join(given) };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("artifact {}: making {}: {e}", given.display(), dir.display()))?;
    }
    Ok(path)
}

/// Removes what an earlier run left at `placed`, so the check after sees this run's file.
pub(super) fn clear(placed: &Path) {
    let _ = std::fs::remove_file(placed);
}

/// A reason when `placed` (shown as `given`) was not written or holds fewer than
/// `min_bytes` bytes.
pub(super) fn verify(placed: &Path, given: &Path, min_bytes: u64) -> Option<String> {
    match std::fs::metadata(placed) {
        Ok(m) if m.len() >= min_bytes => None,
        Ok(m) => {
            Some(format!("artifact {}: {} bytes, expected at least {min_bytes}", given.display(), m.len()))
        }
        Err(_) => Some(format!("artifact {} was not written", given.display())),
    }
}
