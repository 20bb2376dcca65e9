//! Files of the host's own state (config.yml, the KDBX file, alias scripts, udev rules):
//! atomic writes with an explicit mode, and a lock that serialises read-modify-write cycles
//! of one file across threads (parallel MCP calls) and processes.
//!
//! A write goes to a temporary file in the same directory with the final mode, is synced and
//! renamed over the target: a crash, a full disk or a refused value leaves the old file as it
//! was, never half a file.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};

/// Replaces (or creates) `path` with `contents`, atomically, with permission bits `mode`;
/// creates the parent directory (mode 0700 for new directories) when it is missing.
///
/// # Errors
///
/// The I/O error, with the path in its message.
pub fn write_atomic(path: &Path, contents: &[u8], mode: u32) -> io::Result<()> {
    let dir = parent(path);
    create_private_dir(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".charly-")
        .suffix(".tmp")
        .permissions(std::fs::Permissions::from_mode(mode))
        .tempfile_in(dir)
        .map_err(|e| with_path(e, "create a temporary file in", dir))?;
    tmp.write_all(contents).map_err(|e| with_path(e, "write", tmp.path()))?;
    // The umask may have taken bits the caller asked for (0755 scripts).
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(mode))
        .map_err(|e| with_path(e, "set the mode of", tmp.path()))?;
    tmp.as_file().sync_all().map_err(|e| with_path(e, "sync", tmp.path()))?;
    tmp.persist(path).map_err(|e| with_path(e.error, "replace", path))?;
    Ok(())
}

/// Creates `dir` and its missing parents with mode 0700 (the XDG rule for state directories).
///
/// # Errors
///
/// The I/O error, with the path in its message.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| with_path(e, "create the directory", dir))
}

use std::os::unix::fs::DirBuilderExt as _;

fn parent(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// An I/O error whose message says what was done to which path.
pub fn with_path(e: io::Error, what: &str, path: &Path) -> io::Error {
    io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
}

/// The paths locked in this process, and a condition variable to wait for one.
fn in_process() -> &'static (Mutex<HashSet<PathBuf>>, Condvar) {
    static LOCKED: OnceLock<(Mutex<HashSet<PathBuf>>, Condvar)> = OnceLock::new();
    LOCKED.get_or_init(Default::default)
}

/// Exclusive right to read-modify-write one file; released on drop. Threads of this process
/// queue on an in-process set; other processes on an advisory lock (`flock`) of a sidecar
/// `.<name>.lock` file beside it (the file itself is replaced by each write, so a lock on it
/// would not hold; a lock on the directory would make two files of one directory exclude each
/// other, and deadlock one process that edits both).
///
/// The sidecar leaves nothing behind: the holder deletes it before it lets go, and whoever
/// gets the lock next checks that the path still names the file it locked (a waiter that
/// locked a deleted sidecar starts over on the new one), so deleting it never lets two
/// holders in at once. A failed operation leaves no `.<name>.lock` beside the file.
#[derive(Debug)]
pub struct FileLock {
    path: PathBuf,
    _file: File,
    _slot: Slot,
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // While the lock is still held; the file closes (and unlocks) after this.
        let _ = std::fs::remove_file(&self.path);
    }
}

#[derive(Debug)]
struct Slot(PathBuf);

impl FileLock {
    /// Locks `file`, creating its directory (0700) when missing.
    ///
    /// # Errors
    ///
    /// The I/O error of creating, opening or locking the lock file.
    pub fn acquire(file: &Path) -> io::Result<FileLock> {
        FileLock::acquire_noting(file, || {})
    }

    /// [`FileLock::acquire`], calling `waiting` once when another process holds the lock (before
    /// it waits for it): a command that waits says so.
    ///
    /// # Errors
    ///
    /// As [`FileLock::acquire`].
    pub fn acquire_noting(file: &Path, waiting: impl FnOnce()) -> io::Result<FileLock> {
        let mut waiting = Some(waiting);
        let dir = parent(file);
        create_private_dir(dir)?;
        let dir = dir.canonicalize().map_err(|e| with_path(e, "open the directory", dir))?;
        let name = file.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let key = dir.join(&name);
        let (set, released) = in_process();
        let mut locked = set.lock().unwrap_or_else(|p| p.into_inner());
        while locked.contains(&key) {
            locked = released.wait(locked).unwrap_or_else(|p| p.into_inner());
        }
        locked.insert(key.clone());
        drop(locked);
        let slot = Slot(key);
        let lock_path = dir.join(format!(".{name}.lock"));
        loop {
            let handle = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(0o600)
                .open(&lock_path)
                .map_err(|e| with_path(e, "open the lock file", &lock_path))?;
            match handle.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    if let Some(waiting) = waiting.take() {
                        waiting();
                    }
                    handle.lock().map_err(|e| with_path(e, "lock", &lock_path))?;
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(with_path(e, "lock", &lock_path)),
            }
            // The holder before us may have deleted the file we locked: then lock the new one.
            let locked = handle.metadata().map_err(|e| with_path(e, "stat", &lock_path))?;
            match std::fs::metadata(&lock_path) {
                Ok(now) if now.dev() == locked.dev() && now.ino() == locked.ino() => {
                    return Ok(FileLock { path: lock_path, _file: handle, _slot: slot });
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(with_path(e, "stat", &lock_path)),
            }
        }
    }
}

use std::os::unix::fs::MetadataExt as _;
use std::os::unix::fs::OpenOptionsExt as _;

impl Drop for Slot {
    fn drop(&mut self) {
        let (set, released) = in_process();
        set.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.0);
        released.notify_all();
    }
}

/// The warning for a file that may hold secrets and that its group or others can read
/// (`config.yml`, a KDBX database), or `None` (a private or missing file). Every host-state
/// family warns with this one text.
pub fn readable_by_others(path: &Path) -> Option<String> {
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o7777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "{} is readable by others (mode {mode:04o}); it may hold credentials: chmod 600 it",
            path.display()
        )
    })
}

/// `$HOME`; when it is unset, the user's home from `/etc/passwd`; else `/`.
pub fn home() -> PathBuf {
    known_home().unwrap_or_else(|| PathBuf::from("/"))
}

/// `$HOME`; when it is unset or empty, the user's home from `/etc/passwd`; else `None` (a
/// process with neither: where a per-user file would go is unknown).
pub fn known_home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from).or_else(passwd_home)
}

/// The home directory `/etc/passwd` gives this process's user (its real uid from
/// `/proc/self/status`), for a process started without `$HOME` (a service, `env -i`): the
/// deploy file is then the user's, not `/.config/charly/charly.yml`.
fn passwd_home() -> Option<PathBuf> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let uid = status.lines().find_map(|l| l.strip_prefix("Uid:"))?.split_whitespace().next()?.to_owned();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        (fields.len() >= 6 && fields[2] == uid && !fields[5].is_empty()).then(|| PathBuf::from(fields[5]))
    })
}

/// `~/x` and `$HOME/x` with the home directory put in; other paths as given.
pub fn expand_home(path: &str) -> PathBuf {
    for prefix in ["~/", "$HOME/"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            return home().join(rest);
        }
    }
    if path == "~" || path == "$HOME" { home() } else { PathBuf::from(path) }
}

/// The program `name` on `PATH`, if there is one.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| {
        candidate.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}
