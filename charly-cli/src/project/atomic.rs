//! Atomic writes and the per-file edit lock.
//!
//! A write goes to a temporary file in the same directory, is flushed to disk and then renamed over
//! the target, so a crash leaves either the old file or the new one, never half a file.
//!
//! Two edits of the same file must not lose either edit, so each read-modify-write holds
//! [`EditLock`] for the file. The lock has two layers:
//!
//! * an in-process mutex, one per canonical file path, kept in a global map: threads of one process
//!   (parallel MCP calls) queue on it without touching the file system;
//! * an advisory `flock` ([`std::fs::File::lock`]) on the file's *directory*, held while the mutex
//!   is held: it serialises edits made by other processes (a terminal `charly` next to a running
//!   `charly mcp serve`). The directory is locked rather than the file because the file itself is
//!   replaced by the rename: a lock on the old inode would not stop a process that opens the new
//!   one. A sidecar `.lock` file would work as well but would litter the project.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};

use super::error::{ProjectError, Result};

/// The canonical paths currently being edited in this process, and a condition variable to wait
/// for one of them to be released.
fn in_process() -> &'static (Mutex<HashSet<PathBuf>>, Condvar) {
    static LOCKED: OnceLock<(Mutex<HashSet<PathBuf>>, Condvar)> = OnceLock::new();
    LOCKED.get_or_init(Default::default)
}

/// Exclusive right to read-modify-write one file; released on drop.
#[derive(Debug)]
pub(crate) struct EditLock {
    // Field order is drop order: unlock the directory, then let the next thread of this process in.
    _dir: File,
    _slot: Slot,
}

/// A path's place in the in-process set; removed (and waiters woken) on drop.
#[derive(Debug)]
struct Slot(PathBuf);

impl EditLock {
    /// Locks `file` (which need not exist yet; its directory must).
    pub(crate) fn acquire(file: &Path) -> Result<EditLock> {
        let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let dir = dir.canonicalize().map_err(|e| ProjectError::io("open directory", dir, e))?;
        let key = dir.join(file.file_name().unwrap_or_default());
        let (set, released) = in_process();
        let mut locked = set.lock().unwrap_or_else(|p| p.into_inner());
        while locked.contains(&key) {
            locked = released.wait(locked).unwrap_or_else(|p| p.into_inner());
        }
        locked.insert(key.clone());
        drop(locked);
        let slot = Slot(key);
        Ok(EditLock { _dir: open_locked(&dir)?, _slot: slot })
    }
}

fn open_locked(dir: &Path) -> Result<File> {
    let handle = File::open(dir).map_err(|e| ProjectError::io("open directory", dir, e))?;
    handle.lock().map_err(|e| ProjectError::io("lock directory", dir, e))?;
    Ok(handle)
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (set, released) = in_process();
        set.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.0);
        released.notify_all();
    }
}

/// Replaces `path` with `contents` atomically (temporary file in the same directory, then rename).
///
/// An existing file keeps its permissions. With `create_new`, an existing file is an error and is
/// never replaced.
pub(crate) fn write_atomic(path: &Path, contents: &[u8], create_new: bool) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".charly-").suffix(".tmp");
    // A new file gets the usual 0666 less the umask (tempfile's own default is 0600).
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut tmp =
        builder.tempfile_in(dir).map_err(|e| ProjectError::io("create a temporary file in", dir, e))?;
    tmp.write_all(contents).map_err(|e| ProjectError::io("write", tmp.path(), e))?;
    if let Ok(meta) = std::fs::metadata(path) {
        std::fs::set_permissions(tmp.path(), meta.permissions())
            .map_err(|e| ProjectError::io("set permissions of", tmp.path(), e))?;
    }
    tmp.as_file().sync_all().map_err(|e| ProjectError::io("sync", tmp.path(), e))?;
    if create_new {
        tmp.persist_noclobber(path).map_err(|e| match e.error.kind() {
            std::io::ErrorKind::AlreadyExists => ProjectError::AlreadyExists { path: path.to_owned() },
            _ => ProjectError::io("create", path, e.error),
        })?;
    } else {
        tmp.persist(path).map_err(|e| ProjectError::io("replace", path, e.error))?;
    }
    Ok(())
}
