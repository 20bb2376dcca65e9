//! `box.write` and `box.cat`: files addressed relative to the project root, and the one place
//! where a path someone gave is checked and resolved.
//!
//! A path is refused when it is absolute, when it has a `..` component, when it names one of
//! charly's temporary files (`.charly-*.tmp`), or when it leads through a symlink (an existing
//! file, or any directory on the way) that resolves outside the root; a path written is
//! refused inside `.git/` too (git runs commands its files name). Resolution is done by
//! [`Beneath`] one component at a time from directory handles, so a directory swapped for a
//! symlink while a call runs cannot lead a read or a write outside.

use std::path::{Component, Path, PathBuf};

use rustix::fs::FileType;

use super::atomic::EditLock;
use super::beneath::{Beneath, Entry, Missing, Refusal, is_temporary};
use super::cancel::Cancel;
use super::error::{ProjectError, Result};
use super::gitguard::{
    Made, checked_after, completed_after, in_git, refuse_completing, refuse_git, undo_new_head,
};
use super::model::Project;
use super::report::{FileText, Written};

/// The largest file `box.cat` returns as a tool, in bytes (1 MiB): its text goes out twice,
/// as text content and in `structuredContent`, and a client holds the whole answer in memory
/// (a 20 MB file was a 40 MB answer, trial 28 M5). The project's resources
/// (`charly://project/...`) are capped the same. On a terminal `charly box cat` prints any size.
pub const MAX_CAT_BYTES: u64 = 1024 * 1024;

/// How [`put`] writes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Put {
    /// Replace the file, or create it.
    Replace,
    /// Create the file; an existing one is [`ProjectError::AlreadyExists`].
    CreateNew,
}

impl Project {
    /// `box.write`: writes `content` to `path` (relative to the project root), atomically, creating
    /// missing directories. The report gives the path written, relative to the root, symlinks
    /// resolved.
    pub fn write(&self, path: &Path, content: &str) -> Result<Written> {
        self.write_file(path, content.as_bytes(), Missing::Create)
    }

    /// Writes `contents` to `path` as [`write`](Project::write) does; with `missing`
    /// [`Missing::Fail`], a missing directory on the way is an error rather than created (a
    /// JUnit report named by an MCP call).
    pub(crate) fn write_file(&self, path: &Path, contents: &[u8], missing: Missing) -> Result<Written> {
        // `notes/sub/` names a directory; the components alone would write a file `notes/sub`.
        if path.as_os_str().as_encoded_bytes().ends_with(b"/") {
            return Err(unsafe_path(path, "it ends with `/`, which names a directory; give a file path"));
        }
        let given = given(path)?;
        let beneath = self.beneath()?;
        let first = refuse_git(&beneath, path, &given, Made::File)?;
        let entry = beneath.locate(&given, missing).map_err(|r| refused(path, "write", r))?;
        let dir = entry.relative.parent().unwrap_or(Path::new(""));
        checked_after(&beneath, path, &entry.relative, first.as_deref(), dir)?;
        match entry.kind {
            Some(FileType::Directory) => {
                return Err(unsafe_path(path, "it is a directory; give a file path"));
            }
            // A FIFO, a socket, a device: replacing it is not writing a file (its rename
            // failed with "Is a directory").
            Some(kind) if kind != FileType::RegularFile => {
                return Err(unsafe_path(
                    path,
                    "it is not a regular file (a FIFO, socket or device); charly writes files",
                ));
            }
            _ => {}
        }
        let lock = EditLock::acquire(&entry, self.cancel())?;
        lock.replace(contents, self.cancel())?;
        drop(lock);
        undo_new_head(&beneath, path, &entry.relative, entry.kind.is_none())?;
        Ok(Written { path: entry.relative, bytes: contents.len() })
    }

    /// `box.cat`: reads `path` (relative to the project root), unchanged.
    pub fn cat(&self, path: &Path) -> Result<FileText> {
        let given = given(path)?;
        let (content, relative) =
            self.beneath()?.read_to_string(&given).map_err(|r| refused(path, "read", r))?;
        Ok(FileText { path: relative, content })
    }

    /// `box.cat` as a tool: [`cat`](Project::cat), refusing a file of more than `max` bytes
    /// ([`ProjectError::TooLargeToShow`]) before reading it. A file that grows past `max`
    /// while it is read is refused too: at most `max` + 1 bytes are read.
    pub fn cat_at_most(&self, path: &Path, max: u64) -> Result<FileText> {
        use std::io::Read as _;
        let given = given(path)?;
        let (file, relative) = self.beneath()?.open_file(&given).map_err(|r| refused(path, "read", r))?;
        let size = file.metadata().map_err(|e| ProjectError::io("read", &relative, e))?.len();
        let too_large = |size| ProjectError::TooLargeToShow { path: relative.clone(), size, max };
        if size > max {
            return Err(too_large(size));
        }
        let mut content = String::new();
        file.take(max + 1)
            .read_to_string(&mut content)
            .map_err(|e| ProjectError::io("read", &relative, e))?;
        if content.len() as u64 > max {
            return Err(too_large(content.len() as u64));
        }
        Ok(FileText { path: relative, content })
    }

    /// Opens the regular file `path` (relative to the project root, checked as
    /// [`cat`](Project::cat) checks it) for reading: for readers that bound how much they read
    /// (`check mcp call --input @FILE` over MCP). Returns it and its path from the root.
    pub(crate) fn open_inside(&self, path: &Path) -> Result<(std::fs::File, PathBuf)> {
        let given = given(path)?;
        self.beneath()?.open_file(&given).map_err(|r| refused(path, "read", r))
    }

    /// The file `path` (relative to the project root, checked as [`write`](Project::write)
    /// checks it) resolved beneath the root: its absolute path and its path from the root.
    /// For writers that go on by path (an MCP host's config file in the project); directories
    /// on the way that do not exist yet are taken as they are named.
    pub(crate) fn resolve_inside(&self, path: &Path) -> Result<(PathBuf, PathBuf)> {
        let given = given(path)?;
        let beneath = self.beneath()?;
        refuse_git(&beneath, path, &given, Made::File)?;
        match beneath.locate(&given, Missing::Fail) {
            Ok(entry) => {
                in_git(beneath.canonical(), path, &entry.relative.join("x"))?;
                Ok((beneath.canonical().join(&entry.relative), entry.relative))
            }
            Err(Refusal::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
                Ok((beneath.canonical().join(&given), given))
            }
            Err(r) => Err(refused(path, "write", r)),
        }
    }

    /// The directory `path` names, beneath the root, created (with missing directories on the
    /// way) when missing: where `box.new.project <dir>` scaffolds for an MCP call. Returns it
    /// held open, and its path from the root.
    pub(crate) fn enter_dir(&self, path: &Path) -> Result<(Beneath, PathBuf)> {
        let given = given(path)?;
        let beneath = self.beneath()?;
        let first = refuse_git(&beneath, path, &given, Made::Dir)?;
        let mut entry =
            beneath.locate(&given, Missing::Create).map_err(|r| refused(path, "create directory", r))?;
        let inside = entry.relative.join("x");
        let dir = entry.relative.parent().unwrap_or(Path::new(""));
        checked_after(&beneath, path, &inside, first.as_deref(), dir)?;
        match entry.kind {
            Some(FileType::Directory) => {}
            Some(_) => return Err(unsafe_path(path, "it is a file, not a directory")),
            None => {
                mkdir(&entry, &entry.relative)?;
                entry.kind = Some(FileType::Directory);
                checked_after(&beneath, path, &inside, first.as_deref(), &entry.relative)?;
            }
        }
        let inside =
            beneath.enter(&entry).map_err(|e| ProjectError::io("open directory", &entry.relative, e))?;
        Ok((inside, entry.relative))
    }
}

/// Writes `contents` to `relative` (a path charly made, not one a person gave) beneath `root`,
/// atomically under the file's edit lock, creating missing directories.
pub(crate) fn put(root: &Beneath, relative: &Path, contents: &[u8], how: Put, cancel: &Cancel) -> Result<()> {
    let first = refuse_completing(root, relative, relative, Made::File)?;
    let entry = root.locate(relative, Missing::Create).map_err(|r| refused(relative, "write", r))?;
    let dir = entry.relative.parent().unwrap_or(Path::new(""));
    completed_after(root, relative, first.as_deref(), dir)?;
    let lock = EditLock::acquire(&entry, cancel)?;
    match how {
        Put::Replace => lock.replace(contents, cancel)?,
        Put::CreateNew => lock.create(contents, cancel)?,
    }
    drop(lock);
    undo_new_head(root, relative, &entry.relative, entry.kind.is_none())
}

/// Creates the directory `relative` (a path charly made) beneath `root`, with missing
/// directories on the way; an existing directory is fine.
pub(crate) fn make_dir(root: &Beneath, relative: &Path) -> Result<()> {
    let first = refuse_completing(root, relative, relative, Made::Dir)?;
    let entry =
        root.locate(relative, Missing::Create).map_err(|r| refused(relative, "create directory", r))?;
    match entry.kind {
        Some(FileType::Directory) => Ok(()),
        Some(_) => {
            Err(ProjectError::io("create directory", &entry.relative, rustix::io::Errno::EXIST.into()))
        }
        None => {
            mkdir(&entry, &entry.relative)?;
            completed_after(root, relative, first.as_deref(), &entry.relative)
        }
    }
}

fn mkdir(entry: &Entry, shown: &Path) -> Result<()> {
    match rustix::fs::mkdirat(&entry.dir, &entry.name, rustix::fs::Mode::from_raw_mode(0o777)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
        Err(e) => Err(ProjectError::io("create directory", shown, e.into())),
    }
}

/// Checks a path someone gave: relative, no `..`, no control characters, not empty and not one
/// of charly's temporary files. Returns its plain components.
pub(crate) fn given(path: &Path) -> Result<PathBuf> {
    if path.to_string_lossy().chars().any(char::is_control) {
        return Err(unsafe_path(path, "it holds a control character such as a newline; name a plain file"));
    }
    let mut parts = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(unsafe_path(path, "`..` is not allowed; give a path inside the project root"));
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(unsafe_path(
                    path,
                    "absolute paths are not allowed; give a path relative to the project root",
                ));
            }
        }
    }
    if parts.as_os_str().is_empty() {
        return Err(unsafe_path(path, "the path is empty; name a file inside the project root"));
    }
    if parts.iter().any(is_temporary) {
        return Err(unsafe_path(
            path,
            "names like .charly-*.tmp are charly's temporary files (removed by the next edit of their \
             directory); choose another name",
        ));
    }
    Ok(parts)
}

/// A [`Refusal`] as the error of `action` on `path`.
pub(crate) fn refused(path: &Path, action: &'static str, refusal: Refusal) -> ProjectError {
    match refusal {
        Refusal::Outside => unsafe_path(
            path,
            "it goes through a symlink that leads outside the project root; only paths inside it are allowed",
        ),
        Refusal::Nowhere => unsafe_path(
            path,
            "it goes through a symlink that leads nowhere; only paths inside the project root are allowed",
        ),
        Refusal::Loop => unsafe_path(path, "it goes through too many symlinks (a loop?)"),
        Refusal::Root => unsafe_path(path, "it is the project root itself; name a file inside it"),
        // `box/nope/x.yml` when `box/nope` is missing: the message named only `box/nope`.
        Refusal::Io { at, error } if error.kind() == std::io::ErrorKind::NotFound && at != path => {
            let tilde = match path.starts_with("~") {
                true => " (paths are relative to the project root; `~` is not expanded)",
                false => "",
            };
            let why = format!("{} does not exist in the project{tilde}", at.display());
            ProjectError::io(action, path, std::io::Error::new(std::io::ErrorKind::NotFound, why))
        }
        Refusal::Io { at, error } => ProjectError::io(action, at, error),
    }
}

fn unsafe_path(path: &Path, reason: &str) -> ProjectError {
    ProjectError::unsafe_path(path, reason)
}
