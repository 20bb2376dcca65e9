//! Atomic writes under the per-file edit lock, with nothing left where people look.
//!
//! A write never changes a file in place: the new contents go to a temporary file in the same
//! directory, flushed to disk, which then replaces the target in one `rename` — a crash leaves
//! the old file or the new one, never half a file. The temporary file is anonymous where the
//! file system allows it (`O_TMPFILE`, ext4/xfs/btrfs/tmpfs): it has no name until it is
//! complete, so a process killed while writing leaves nothing behind, and `ls`, `git status` or
//! `box.cat` never see it. It is then linked in under a `.charly-<pid>-<n>.tmp` name and renamed
//! over the target at once; a file created new (`create_new`) is linked straight to its name.
//! Where `O_TMPFILE` is refused, the file is created under that temporary name from the start.
//! Either way, a name `.charly-*.tmp` can only be left behind by a process killed between two
//! system calls; the next edit of the same directory removes every such file (under the lock,
//! when no other charly can be writing one), and `box.cat`/`box.write` refuse those names.
//!
//! Two edits of the same file must not lose either edit, so each read-modify-write holds an
//! [`EditLock`]. The lock has two layers:
//!
//! * an in-process slot per file (directory device and inode, and the name), kept in a global
//!   set: threads of one process (parallel MCP calls) queue on it without touching the file
//!   system;
//! * an advisory `flock` on the file's *directory*, held with the slot: it serialises edits by
//!   other processes (a terminal `charly` next to a running `charly mcp serve`) and makes the
//!   cleanup of stale temporary files safe. The directory is locked rather than the file because
//!   the file itself is replaced by the rename: a lock on the old inode would not stop a process
//!   that opens the new one.
//!
//! Every step works on directory handles from [`super::beneath`], never on names from the root,
//! and checks the call's [`Cancel`] at the point of no return.

use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, RenameFlags};
use rustix::io::Errno;

use super::beneath::{Entry, is_temporary};
use super::cancel::Cancel;
use super::error::{ProjectError, Result};

/// An edited file's identity in this process: its directory's device and inode, and its name.
type Key = (u64, u64, OsString);

/// The files currently being edited in this process, and a condition variable to wait for one
/// of them to be released.
fn in_process() -> &'static (Mutex<HashSet<Key>>, Condvar) {
    static LOCKED: OnceLock<(Mutex<HashSet<Key>>, Condvar)> = OnceLock::new();
    LOCKED.get_or_init(Default::default)
}

/// How often a cancellable wait looks at its [`Cancel`].
const POLL: Duration = Duration::from_millis(10);

/// Exclusive right to read-modify-write one file; released on drop.
#[derive(Debug)]
pub(crate) struct EditLock {
    // Field order is drop order: unlock the directory, then let the next thread of this process in.
    /// The file's directory, opened for reading (and `flock`ed).
    dir: File,
    _slot: Slot,
    /// The file's name in `dir`.
    name: OsString,
    /// The file's path from the project root, for messages.
    relative: PathBuf,
}

/// A file's place in the in-process set; removed (and waiters woken) on drop.
#[derive(Debug)]
struct Slot(Key);

impl EditLock {
    /// Locks the file `entry` names (which need not exist; its directory does), waiting for
    /// other edits of it, and removes stale temporary files from its directory. A wait stops
    /// with [`ProjectError::Cancelled`] when `cancel` fires.
    pub(crate) fn acquire(entry: &Entry, cancel: &Cancel) -> Result<EditLock> {
        let relative = entry.relative.clone();
        let io = |action, e: Errno| ProjectError::io(action, parent_of(&relative), e.into());
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = File::from(
            rfs::openat(&entry.dir, ".", flags, Mode::empty()).map_err(|e| io("open directory", e))?,
        );
        let stat = rfs::fstat(&dir).map_err(|e| io("open directory", e))?;
        let key: Key = (stat.st_dev, stat.st_ino, entry.name.clone());
        let slot = Slot::take(key, cancel, &relative)?;
        lock_dir(&dir, cancel, &relative)?;
        let lock = EditLock { dir, _slot: slot, name: entry.name.clone(), relative };
        lock.remove_stale();
        Ok(lock)
    }

    /// Locks the file at `path` outside any project (an MCP host's own config file, e.g.
    /// `~/.claude.json`): the same lock, its directory opened by name. The directory must exist.
    pub(crate) fn acquire_path(path: &Path) -> Result<EditLock> {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = rfs::open(dir, flags, Mode::empty())
            .map_err(|e| ProjectError::io("open directory", dir, e.into()))?;
        let name = path.file_name().unwrap_or_default().to_owned();
        let entry = Entry { dir: fd, name, relative: path.to_owned(), kind: None };
        EditLock::acquire(&entry, &Cancel::default())
    }

    /// The file's current text; `None` when it does not exist.
    pub(crate) fn read(&self) -> Result<Option<String>> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let fd = match rfs::openat(&self.dir, &self.name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP) => {
                return Err(ProjectError::UnsafePath {
                    path: self.relative.display().to_string(),
                    reason: "it was replaced by a symlink during the edit; try again".into(),
                });
            }
            Err(e) => return Err(ProjectError::io("read", &self.relative, e.into())),
        };
        let mut text = String::new();
        File::from(fd).read_to_string(&mut text).map_err(|e| ProjectError::io("read", &self.relative, e))?;
        Ok(Some(text))
    }

    /// Replaces the file (or creates it) with `contents`, atomically. An existing file keeps
    /// its permissions.
    pub(crate) fn replace(&self, contents: &[u8], cancel: &Cancel) -> Result<()> {
        self.put(contents, cancel, false)
    }

    /// Creates the file with `contents`, atomically; an existing file (even an empty one, or a
    /// dangling symlink) is [`ProjectError::AlreadyExists`] and is never replaced.
    pub(crate) fn create(&self, contents: &[u8], cancel: &Cancel) -> Result<()> {
        self.put(contents, cancel, true)
    }

    fn put(&self, contents: &[u8], cancel: &Cancel, create_new: bool) -> Result<()> {
        let mode = match rfs::statat(&self.dir, &self.name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) if create_new => return Err(self.already_exists()),
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                Some(Mode::from_raw_mode(st.st_mode & 0o7777))
            }
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                return Err(ProjectError::UnsafePath {
                    path: self.relative.display().to_string(),
                    reason: "it was replaced by a symlink during the edit; try again".into(),
                });
            }
            Ok(_) => return Err(self.io("replace", Errno::ISDIR)),
            Err(Errno::NOENT) => None,
            Err(e) => return Err(self.io("replace", e)),
        };
        match self.anonymous(contents, mode)? {
            Some(file) => match self.link_in(&file, cancel, create_new) {
                Err(Fallback) => self.named(contents, mode, cancel, create_new),
                Ok(done) => done,
            },
            None => self.named(contents, mode, cancel, create_new),
        }
    }

    /// The contents in an anonymous file (`O_TMPFILE`) in the directory, flushed to disk; `None`
    /// when the file system has no anonymous files.
    fn anonymous(&self, contents: &[u8], mode: Option<Mode>) -> Result<Option<File>> {
        let flags = OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC;
        let file = match rfs::openat(&self.dir, ".", flags, Mode::from_raw_mode(0o666)) {
            Ok(fd) => File::from(fd),
            Err(Errno::OPNOTSUPP | Errno::ISDIR | Errno::INVAL | Errno::NOENT) => return Ok(None),
            Err(e) => return Err(self.io("create a temporary file for", e)),
        };
        self.fill(&file, contents, mode)?;
        Ok(Some(file))
    }

    /// Gives the anonymous `file` its name: straight to the target for `create_new` (`linkat`
    /// fails on an existing name), else under a temporary name renamed over the target.
    /// `Err(Fallback)` when `/proc` is not there to link through.
    fn link_in(&self, file: &File, cancel: &Cancel, create_new: bool) -> Result<Result<()>, Fallback> {
        // linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH; /proc/self/fd/N works for everyone.
        let source = format!("/proc/self/fd/{}", file.as_raw_fd());
        let link =
            |name: &OsStr| rfs::linkat(rfs::CWD, source.as_str(), &self.dir, name, AtFlags::SYMLINK_FOLLOW);
        if let Err(e) = cancel.check(&self.relative) {
            return Ok(Err(e));
        }
        if create_new {
            return match link(&self.name) {
                Ok(()) => Ok(Ok(())),
                Err(Errno::EXIST) => Ok(Err(self.already_exists())),
                Err(Errno::NOENT) => Err(Fallback),
                Err(e) => Ok(Err(self.io("create", e))),
            };
        }
        let temp = loop {
            let temp = temporary_name();
            match link(&temp) {
                Ok(()) => break temp,
                Err(Errno::EXIST) => continue,
                Err(Errno::NOENT) => return Err(Fallback),
                Err(e) => return Ok(Err(self.io("create a temporary file for", e))),
            }
        };
        Ok(self.rename_over(&temp))
    }

    /// The fallback: the contents written under a temporary name, then renamed over the target.
    fn named(&self, contents: &[u8], mode: Option<Mode>, cancel: &Cancel, create_new: bool) -> Result<()> {
        let flags = OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let (temp, file) = loop {
            let temp = temporary_name();
            match rfs::openat(&self.dir, &temp, flags, Mode::from_raw_mode(0o666)) {
                Ok(fd) => break (temp, File::from(fd)),
                Err(Errno::EXIST) => continue,
                Err(e) => return Err(self.io("create a temporary file for", e)),
            }
        };
        let written = self.fill(&file, contents, mode).and_then(|()| cancel.check(&self.relative));
        drop(file);
        if let Err(e) = written {
            self.unlink(&temp);
            return Err(e);
        }
        if !create_new {
            return self.rename_over(&temp);
        }
        let placed = match rfs::renameat_with(&self.dir, &temp, &self.dir, &self.name, RenameFlags::NOREPLACE)
        {
            // A file system without RENAME_NOREPLACE: a hard link fails on an existing name too.
            Err(Errno::INVAL | Errno::NOSYS) => {
                rfs::linkat(&self.dir, &temp, &self.dir, &self.name, AtFlags::empty())
            }
            other => other,
        };
        self.unlink(&temp);
        match placed {
            Ok(()) => Ok(()),
            Err(Errno::EXIST) => Err(self.already_exists()),
            Err(e) => Err(self.io("create", e)),
        }
    }

    /// Renames `temp` over the target; removes `temp` when that fails.
    fn rename_over(&self, temp: &OsStr) -> Result<()> {
        rfs::renameat(&self.dir, temp, &self.dir, &self.name).map_err(|e| {
            self.unlink(temp);
            self.io("replace", e)
        })
    }

    /// Writes `contents` to `file`, gives it `mode` and flushes it to disk.
    fn fill(&self, file: &File, contents: &[u8], mode: Option<Mode>) -> Result<()> {
        let mut writer = file;
        writer.write_all(contents).map_err(|e| ProjectError::io("write", &self.relative, e))?;
        if let Some(mode) = mode {
            rfs::fchmod(file, mode).map_err(|e| self.io("set permissions of", e))?;
        }
        file.sync_all().map_err(|e| ProjectError::io("sync", &self.relative, e))
    }

    /// Removes every `.charly-*.tmp` regular file from the directory: under the lock, no other
    /// charly is writing one, so each is left over from a process killed mid-write. Failures
    /// are ignored (the edit itself does not depend on them).
    fn remove_stale(&self) {
        let Ok(entries) = rfs::Dir::read_from(&self.dir) else { return };
        for entry in entries.flatten() {
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if !is_temporary(name) {
                continue;
            }
            let regular = match entry.file_type() {
                FileType::RegularFile => true,
                FileType::Unknown => rfs::statat(&self.dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile),
                _ => false,
            };
            if regular {
                tracing::debug!(dir = %parent_of(&self.relative).display(), name = ?name, "removing a stale temporary file");
                self.unlink(name);
            }
        }
    }

    fn unlink(&self, name: &OsStr) {
        let _ = rfs::unlinkat(&self.dir, name, AtFlags::empty());
    }

    fn already_exists(&self) -> ProjectError {
        ProjectError::AlreadyExists { path: self.relative.clone() }
    }

    fn io(&self, action: &'static str, e: Errno) -> ProjectError {
        ProjectError::io(action, &self.relative, e.into())
    }
}

/// `link_in` could not link (no `/proc`): write a named temporary file instead.
struct Fallback;

impl Slot {
    /// Waits until no other thread of this process edits `key`, then takes it.
    fn take(key: Key, cancel: &Cancel, relative: &Path) -> Result<Slot> {
        let (set, released) = in_process();
        let mut locked = set.lock().unwrap_or_else(|p| p.into_inner());
        while locked.contains(&key) {
            if cancel.can_cancel() {
                cancel.check(relative)?;
                locked = released.wait_timeout(locked, POLL).unwrap_or_else(|p| p.into_inner()).0;
            } else {
                locked = released.wait(locked).unwrap_or_else(|p| p.into_inner());
            }
        }
        cancel.check(relative)?;
        locked.insert(key.clone());
        Ok(Slot(key))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (set, released) = in_process();
        set.lock().unwrap_or_else(|p| p.into_inner()).remove(&self.0);
        released.notify_all();
    }
}

/// `flock`s `dir`, waiting for other processes; a cancellable wait polls.
fn lock_dir(dir: &File, cancel: &Cancel, relative: &Path) -> Result<()> {
    let failed = |e| ProjectError::io("lock directory", parent_of(relative), e);
    if !cancel.can_cancel() {
        return dir.lock().map_err(failed);
    }
    loop {
        match dir.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                cancel.check(relative)?;
                std::thread::sleep(POLL);
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(failed(e)),
        }
    }
}

/// Replaces `path` (a file outside any project, named by path: an MCP host's config file)
/// with `contents` atomically: a `.charly-*.tmp` file in the same directory, flushed, renamed
/// over it. An existing file keeps its permissions; with `create_new`, an existing file is
/// [`ProjectError::AlreadyExists`] and is never replaced. Callers hold
/// [`EditLock::acquire_path`] for the file.
pub(crate) fn write_atomic(path: &Path, contents: &[u8], create_new: bool) -> Result<()> {
    write_atomic_with(path, contents, create_new, None)
}

/// [`write_atomic`] for a copy of another file (a backup): the temporary file is created
/// with `mode` (less the umask, so never wider), never chmod-ed afterwards, and the mode of a
/// file already at `path` is not taken over. A copy of a 0600 file holding secrets is thus
/// never readable by others, not even for a moment.
pub(crate) fn write_atomic_mode(path: &Path, contents: &[u8], mode: u32) -> Result<()> {
    write_atomic_with(path, contents, false, Some(mode & 0o7777))
}

fn write_atomic_with(path: &Path, contents: &[u8], create_new: bool, mode: Option<u32>) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".charly-").suffix(".tmp");
    // A new file gets the usual 0666 less the umask (tempfile's own default is 0600), or the
    // mode asked for, set as the file is created.
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(mode.unwrap_or(0o666)));
    let mut tmp =
        builder.tempfile_in(dir).map_err(|e| ProjectError::io("create a temporary file in", dir, e))?;
    tmp.write_all(contents).map_err(|e| ProjectError::io("write", tmp.path(), e))?;
    if mode.is_none()
        && let Ok(meta) = std::fs::metadata(path)
    {
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

/// A fresh `.charly-<pid>-<n>.tmp` name.
fn temporary_name() -> OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!(".charly-{}-{n}.tmp", std::process::id()).into()
}

/// The directory part of a path from the root, for messages (`.` for the root itself).
fn parent_of(relative: &Path) -> PathBuf {
    match relative.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::beneath::{Beneath, Missing};

    fn locked(dir: &Path, name: &str) -> EditLock {
        let root = Beneath::open(dir).unwrap();
        let entry = root.locate(Path::new(name), Missing::Fail).unwrap();
        EditLock::acquire(&entry, &Cancel::default()).unwrap()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// The fallback for file systems without `O_TMPFILE`: same results, nothing left.
    #[test]
    fn the_named_fallback_replaces_creates_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f"), "old").unwrap();
        let lock = locked(dir.path(), "f");
        lock.named(b"new", None, &Cancel::default(), false).unwrap();
        assert_eq!(std::fs::read_to_string(dir.path().join("f")).unwrap(), "new");
        assert!(matches!(
            lock.named(b"other", None, &Cancel::default(), true),
            Err(ProjectError::AlreadyExists { .. })
        ));
        let cancelled = Cancel::when(|| true);
        assert!(matches!(lock.named(b"no", None, &cancelled, false), Err(ProjectError::Cancelled { .. })));
        assert_eq!(std::fs::read_to_string(dir.path().join("f")).unwrap(), "new");
        drop(lock);
        locked(dir.path(), "g").named(b"fresh", None, &Cancel::default(), true).unwrap();
        assert_eq!(names(dir.path()), ["f", "g"]);
    }

    /// `O_TMPFILE` (ext4, tmpfs, ...): the file keeps its mode; create_new never replaces.
    #[test]
    fn replace_keeps_the_mode_and_create_never_replaces() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
        let lock = locked(dir.path(), "run.sh");
        lock.replace(b"new", &Cancel::default()).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o750);
        assert!(matches!(lock.create(b"x", &Cancel::default()), Err(ProjectError::AlreadyExists { .. })));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(names(dir.path()), ["run.sh"]);
    }
}
