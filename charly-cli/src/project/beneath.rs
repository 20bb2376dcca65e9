//! Paths resolved beneath the project root, safe against a tree that changes meanwhile.
//!
//! Checking a path by name and then opening it by name is a race: a directory checked to be
//! inside the root can be replaced by a symlink leading out before the open. So a path is never
//! opened by name from the root. [`Beneath`] holds the root open and walks a path one component
//! at a time, each step an `openat(parent, name, O_PATH | O_NOFOLLOW)` relative to a directory
//! handle it already holds: the kernel follows no symlink, and the directories stay the ones
//! that were checked whatever happens to their names. A symlink met on the way is read
//! (`readlinkat`) and its target resolved by the same walk: a relative target from the link's
//! directory, `..` by going back to a directory handle already held (never by asking the kernel
//! for `..`, which would climb out of a directory moved outside the root), an absolute target
//! only when it names the root or a path beneath it. Anything else is a refusal.
//!
//! This is `openat2(RESOLVE_BENEATH)` done one step at a time. `openat2` itself (and cap-std,
//! which uses it) refuses every absolute symlink, even one pointing back inside the root, which
//! charly has always followed (`box/candies -> /abs/project/candy`); the step-by-step walk is
//! the resolution cap-std falls back to where `openat2` is missing, with that one addition.
//!
//! Linux only (`O_PATH`), like the rest of charly.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Read as _;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{self as rfs, FileType, Mode, OFlags};
use rustix::io::Errno;

/// Most symlinks one resolution follows (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// A directory held open; every path is resolved beneath it.
#[derive(Debug)]
pub(crate) struct Beneath {
    root: OwnedFd,
    /// The root's canonical path when it was opened: absolute symlinks that start with it lead
    /// back inside.
    canonical: PathBuf,
}

/// Why a path was refused or could not be followed.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// A symlink on the way leads outside the root.
    Outside,
    /// A symlink on the way leads to nothing.
    Nowhere,
    /// More than [`MAX_LINKS`] symlinks.
    Loop,
    /// The path resolves to the root itself.
    Root,
    /// The operating system's error at `at` (the part of the path walked so far).
    Io {
        /// The path from the root, as resolved so far.
        at: PathBuf,
        /// The error.
        error: std::io::Error,
    },
}

/// Where a path led: an entry (or a missing one) in a directory beneath the root.
#[derive(Debug)]
pub(crate) struct Entry {
    /// The directory holding the entry (an `O_PATH` handle).
    pub(crate) dir: OwnedFd,
    /// The entry's name in `dir`; never a symlink when it exists (symlinks were followed).
    pub(crate) name: OsString,
    /// The path from the root, symlinks resolved.
    pub(crate) relative: PathBuf,
    /// The entry's type; `None` when it does not exist.
    pub(crate) kind: Option<FileType>,
}

/// What to do with a directory on the way that does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// Fail with `NotFound`.
    Fail,
    /// Create it (`mkdirat`, mode 0777 less the umask), as `mkdir -p` would.
    Create,
}

/// One component still to walk, and whether it came from a symlink's target (a missing one
/// then means the symlink leads nowhere).
type Step = (OsString, bool);

impl Beneath {
    /// Opens `root`.
    pub(crate) fn open(root: &Path) -> std::io::Result<Beneath> {
        let fd = rfs::open(root, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        let canonical = root.canonicalize()?;
        Ok(Beneath { root: fd, canonical })
    }

    /// The root's canonical path when it was opened.
    pub(crate) fn canonical(&self) -> &Path {
        &self.canonical
    }

    /// Resolves `relative` (plain components only: the caller refuses `..` and absolute paths
    /// in what a person gave) beneath the root, following symlinks that stay inside. A missing
    /// last component is an [`Entry`] with no `kind`; missing directories on the way are
    /// handled as `missing` says.
    pub(crate) fn locate(&self, relative: &Path, missing: Missing) -> Result<Entry, Refusal> {
        let mut todo: VecDeque<Step> = VecDeque::new();
        push_front(&mut todo, relative, false);
        self.walk(todo, missing)
    }

    /// Opens the regular file at `relative` for reading; returns it with its resolved path.
    pub(crate) fn open_file(&self, relative: &Path) -> Result<(File, PathBuf), Refusal> {
        // A file that turns into a symlink between the walk and the open is walked again, a
        // bounded number of times.
        for _ in 0..MAX_LINKS {
            let entry = self.locate(relative, Missing::Fail)?;
            let io = |error| Refusal::Io { at: entry.relative.clone(), error };
            match entry.kind {
                None => return Err(io(Errno::NOENT.into())),
                Some(FileType::RegularFile) => {}
                Some(FileType::Directory) => return Err(io(Errno::ISDIR.into())),
                Some(_) => return Err(io(std::io::Error::other("not a regular file"))),
            }
            // NOFOLLOW: the name was a file a moment ago; if it became a symlink since, walk again.
            // NONBLOCK: a file swapped for a FIFO must not hang the read.
            let flags =
                OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
            match rfs::openat(&entry.dir, &entry.name, flags, Mode::empty()) {
                Ok(fd) => {
                    let kind = rfs::fstat(&fd).map_err(|e| io(e.into()))?;
                    if FileType::from_raw_mode(kind.st_mode) != FileType::RegularFile {
                        return Err(io(std::io::Error::other("not a regular file")));
                    }
                    return Ok((File::from(fd), entry.relative));
                }
                Err(Errno::LOOP) => continue,
                Err(e) => return Err(io(e.into())),
            }
        }
        Err(Refusal::Loop)
    }

    /// Reads the regular file at `relative` as UTF-8 text.
    pub(crate) fn read_to_string(&self, relative: &Path) -> Result<(String, PathBuf), Refusal> {
        let (mut file, resolved) = self.open_file(relative)?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(|error| Refusal::Io { at: resolved.clone(), error })?;
        Ok((text, resolved))
    }

    /// The names in the directory at `relative` (without `.`, `..` and charly's temporary
    /// files), in no particular order.
    pub(crate) fn list(&self, relative: &Path) -> Result<Vec<OsString>, Refusal> {
        let entry = self.locate(relative, Missing::Fail)?;
        let io = |error| Refusal::Io { at: entry.relative.clone(), error };
        if entry.kind.is_none() {
            return Err(io(Errno::NOENT.into()));
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = rfs::openat(&entry.dir, &entry.name, flags, Mode::empty()).map_err(|e| io(e.into()))?;
        let mut names = Vec::new();
        for item in rfs::Dir::read_from(&dir).map_err(|e| io(e.into()))? {
            let item = item.map_err(|e| io(e.into()))?;
            let name = OsStr::from_bytes(item.file_name().to_bytes());
            if name != "." && name != ".." && !is_temporary(name) {
                names.push(name.to_owned());
            }
        }
        Ok(names)
    }

    /// Whether `relative` leads to a regular file beneath the root.
    pub(crate) fn is_file(&self, relative: &Path) -> bool {
        self.locate(relative, Missing::Fail).is_ok_and(|e| e.kind == Some(FileType::RegularFile))
    }

    /// The directory an [`Entry`] names, held open as a root of its own (`box.new.project`
    /// scaffolds there); `relative` is its path from this root.
    pub(crate) fn enter(&self, entry: &Entry) -> std::io::Result<Beneath> {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rfs::openat(&entry.dir, &entry.name, flags, Mode::empty())?;
        Ok(Beneath { root: fd, canonical: self.canonical.join(&entry.relative) })
    }

    fn walk(&self, mut todo: VecDeque<Step>, missing: Missing) -> Result<Entry, Refusal> {
        // The directories walked into below the root (handles), and their names.
        let mut dirs: Vec<OwnedFd> = Vec::new();
        let mut names: Vec<OsString> = Vec::new();
        let mut links = 0;
        while let Some((name, from_link)) = todo.pop_front() {
            if name == ".." {
                if dirs.pop().is_none() {
                    // Only a symlink's target can climb (the caller refuses `..`): where it
                    // points, for the message.
                    let rest: PathBuf = todo.iter().take_while(|(_, l)| *l).map(|(n, _)| n).collect();
                    let above = self.canonical.parent().unwrap_or(Path::new("/"));
                    return Err(self.escape(&above.join(rest)));
                }
                names.pop();
                continue;
            }
            let last = todo.is_empty();
            let here = dirs.last().map_or(self.root.as_fd(), |d| d.as_fd());
            let at = |names: &[OsString], name: &OsStr| {
                names.iter().map(OsString::as_os_str).chain([name]).collect()
            };
            let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            let fd = match rfs::openat(here, &name, flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) if from_link => return Err(Refusal::Nowhere),
                Err(Errno::NOENT) if last => {
                    let dir = here
                        .try_clone_to_owned()
                        .map_err(|error| Refusal::Io { at: at(&names, &name), error })?;
                    return Ok(Entry { dir, relative: at(&names, &name), name, kind: None });
                }
                Err(Errno::NOENT) if missing == Missing::Create => {
                    match rfs::mkdirat(here, &name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(Refusal::Io { at: at(&names, &name), error: e.into() }),
                    }
                    todo.push_front((name, from_link));
                    continue;
                }
                Err(e) => return Err(Refusal::Io { at: at(&names, &name), error: e.into() }),
            };
            let stat = rfs::fstat(&fd).map_err(|e| Refusal::Io { at: at(&names, &name), error: e.into() })?;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink => {
                    links += 1;
                    if links > MAX_LINKS {
                        return Err(Refusal::Loop);
                    }
                    let target = rfs::readlinkat(&fd, "", Vec::new())
                        .map_err(|e| Refusal::Io { at: at(&names, &name), error: e.into() })?;
                    let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
                    if target.is_absolute() {
                        let Ok(rest) = target.strip_prefix(&self.canonical) else {
                            return Err(self.escape(&target));
                        };
                        let rest = rest.to_owned();
                        dirs.clear();
                        names.clear();
                        push_front(&mut todo, &rest, true);
                    } else {
                        push_front(&mut todo, &target, true);
                    }
                    if todo.is_empty() {
                        // The link points at `.` or the root: the walk ends at a directory.
                        return self.finish_at_dir(dirs, names);
                    }
                }
                kind if last => {
                    let dir = here
                        .try_clone_to_owned()
                        .map_err(|error| Refusal::Io { at: at(&names, &name), error })?;
                    return Ok(Entry { dir, relative: at(&names, &name), name, kind: Some(kind) });
                }
                FileType::Directory => {
                    dirs.push(fd);
                    names.push(name);
                }
                _ => return Err(Refusal::Io { at: at(&names, &name), error: Errno::NOTDIR.into() }),
            }
        }
        self.finish_at_dir(dirs, names)
    }

    /// The walk ended on a directory (a path ending in `..` through a symlink, or a link to `.`):
    /// its entry in its parent, or [`Refusal::Root`].
    fn finish_at_dir(&self, mut dirs: Vec<OwnedFd>, mut names: Vec<OsString>) -> Result<Entry, Refusal> {
        let (Some(_), Some(name)) = (dirs.pop(), names.pop()) else { return Err(Refusal::Root) };
        let parent = dirs.pop().map_or_else(|| self.root.try_clone(), Ok);
        let relative = names.iter().map(OsString::as_os_str).chain([name.as_os_str()]).collect();
        let dir = parent.map_err(|error| Refusal::Io { at: PathBuf::from(&name), error })?;
        Ok(Entry { dir, name, relative, kind: Some(FileType::Directory) })
    }

    /// A symlink pointing at `target` (absolute) outside the root: [`Refusal::Nowhere`] when
    /// nothing is there, else [`Refusal::Outside`]. Only the message depends on it; nothing
    /// outside is opened.
    fn escape(&self, target: &Path) -> Refusal {
        if std::fs::symlink_metadata(target).is_ok() { Refusal::Outside } else { Refusal::Nowhere }
    }
}

/// Pushes the components of `path` in front of `todo`, in order.
fn push_front(todo: &mut VecDeque<Step>, path: &Path, from_link: bool) {
    let parts: Vec<Step> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some((n.to_owned(), from_link)),
            Component::ParentDir => Some((OsString::from(".."), from_link)),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect();
    for step in parts.into_iter().rev() {
        todo.push_front(step);
    }
}

/// Whether `name` is the name of one of charly's temporary files (`.charly-*.tmp`).
pub(crate) fn is_temporary(name: &OsStr) -> bool {
    let bytes = name.as_bytes();
    bytes.starts_with(b".charly-") && bytes.ends_with(b".tmp")
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    fn setup() -> (tempfile::TempDir, tempfile::TempDir) {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("a/b")).unwrap();
        std::fs::write(root.path().join("a/b/f"), "f").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        (root, outside)
    }

    fn resolved(root: &Path, path: &str) -> Result<PathBuf, Refusal> {
        Beneath::open(root).unwrap().locate(Path::new(path), Missing::Fail).map(|e| e.relative)
    }

    #[test]
    fn symlinks_are_followed_physically_and_only_inside() {
        let (root, outside) = setup();
        let r = root.path();
        symlink("b", r.join("a/rel")).unwrap();
        symlink(r.join("a/b"), r.join("abs")).unwrap();
        symlink("../..", r.join("a/b/up2")).unwrap();
        symlink("../../..", r.join("a/b/up3")).unwrap();
        symlink(outside.path(), r.join("out")).unwrap();
        symlink(".", r.join("a/dot")).unwrap();
        symlink("loop2", r.join("loop1")).unwrap();
        symlink("loop1", r.join("loop2")).unwrap();
        assert_eq!(resolved(r, "a/rel/f").unwrap(), Path::new("a/b/f"));
        assert_eq!(resolved(r, "abs/f").unwrap(), Path::new("a/b/f"));
        // `..` after a symlink is the parent of where it led (as the kernel resolves it).
        assert_eq!(resolved(r, "abs/up2/a/b/f").unwrap(), Path::new("a/b/f"));
        assert!(matches!(resolved(r, "a/b/up3/x"), Err(Refusal::Outside | Refusal::Nowhere)));
        assert!(matches!(resolved(r, "out/secret"), Err(Refusal::Outside)));
        assert!(matches!(resolved(r, "out/missing"), Err(Refusal::Outside)));
        assert_eq!(resolved(r, "a/dot").unwrap(), Path::new("a"));
        assert!(matches!(resolved(r, "a/b/up2"), Err(Refusal::Root)));
        assert!(matches!(resolved(r, "loop1"), Err(Refusal::Loop)));
        // A file on the way is not a directory.
        assert!(matches!(resolved(r, "a/b/f/x"), Err(Refusal::Io { .. })));
    }

    #[test]
    fn missing_directories_are_created_only_when_asked_and_never_through_a_dangling_link() {
        let (root, _outside) = setup();
        let r = root.path();
        let b = Beneath::open(r).unwrap();
        assert!(matches!(b.locate(Path::new("x/y/z"), Missing::Fail), Err(Refusal::Io { .. })));
        let e = b.locate(Path::new("x/y/z"), Missing::Create).unwrap();
        assert_eq!((e.relative.as_path(), e.kind), (Path::new("x/y/z"), None));
        assert!(r.join("x/y").is_dir());
        symlink("nowhere", r.join("dangling")).unwrap();
        assert!(matches!(b.locate(Path::new("dangling/new"), Missing::Create), Err(Refusal::Nowhere)));
        assert!(!r.join("nowhere").exists());
        assert!(matches!(b.locate(Path::new("dangling"), Missing::Fail), Err(Refusal::Nowhere)));
    }
}
