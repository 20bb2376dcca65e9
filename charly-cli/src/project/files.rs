//! `box.write` and `box.cat`: files addressed relative to the project root.
//!
//! A path is refused when it is absolute, when it has a `..` component, or when it leads through a
//! symlink (an existing file, or any directory on the way) that resolves outside the root. The
//! check resolves the deepest part of the path that exists with [`std::fs::canonicalize`] and
//! compares it with the canonical root.

use std::path::{Component, Path, PathBuf};

use super::atomic::{EditLock, write_atomic};
use super::error::{ProjectError, Result};
use super::model::Project;
use super::report::{FileText, Written};

impl Project {
    /// `box.write`: writes `content` to `path` (relative to the project root), atomically, creating
    /// missing directories. The report gives the path written, relative to the root.
    pub fn write(&self, path: &Path, content: &str) -> Result<Written> {
        let (target, relative) = self.resolve_inside(path)?;
        if target.is_dir() {
            return Err(unsafe_path(path, "it is a directory; give a file path"));
        }
        let parent = target.parent().expect("a path inside the root has a parent");
        std::fs::create_dir_all(parent).map_err(|e| ProjectError::io("create directory", parent, e))?;
        let _lock = EditLock::acquire(&target)?;
        write_atomic(&target, content.as_bytes(), false)?;
        Ok(Written { path: relative, bytes: content.len() })
    }

    /// `box.cat`: reads `path` (relative to the project root), unchanged.
    pub fn cat(&self, path: &Path) -> Result<FileText> {
        let (target, relative) = self.resolve_inside(path)?;
        let content = std::fs::read_to_string(&target).map_err(|e| ProjectError::io("read", &relative, e))?;
        Ok(FileText { path: relative, content })
    }

    /// Resolves `path` against the root and checks that it stays inside. Returns the resolved
    /// absolute path (symlinks on the way resolved) and the path relative to the canonical root.
    pub(crate) fn resolve_inside(&self, path: &Path) -> Result<(PathBuf, PathBuf)> {
        let given = path;
        if given.to_string_lossy().chars().any(char::is_control) {
            return Err(unsafe_path(
                path,
                "it holds a control character such as a newline; name a plain file",
            ));
        }
        let mut parts = Vec::new();
        for component in given.components() {
            match component {
                Component::Normal(part) => parts.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(unsafe_path(
                        path,
                        "`..` is not allowed; give a path inside the project root",
                    ));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(unsafe_path(
                        path,
                        "absolute paths are not allowed; give a path relative to the project root",
                    ));
                }
            }
        }
        if parts.is_empty() {
            return Err(unsafe_path(path, "the path is empty; name a file inside the project root"));
        }
        let root =
            self.root().canonicalize().map_err(|e| ProjectError::io("open project root", self.root(), e))?;
        // The longest prefix that exists (a dangling symlink counts: it must not be written through).
        let mut existing = parts.len();
        while existing > 0
            && std::fs::symlink_metadata(root.join(parts[..existing].iter().collect::<PathBuf>())).is_err()
        {
            existing -= 1;
        }
        let mut resolved = root.join(parts[..existing].iter().collect::<PathBuf>());
        if existing > 0 {
            resolved = resolved.canonicalize().map_err(|_| {
                unsafe_path(path, "it goes through a symlink that leads nowhere; only paths inside the project root are allowed")
            })?;
        }
        if !resolved.starts_with(&root) {
            return Err(unsafe_path(
                path,
                "it goes through a symlink that leads outside the project root; only paths inside it are allowed",
            ));
        }
        resolved.extend(&parts[existing..]);
        let relative = resolved.strip_prefix(&root).expect("checked above").to_owned();
        if relative.as_os_str().is_empty() {
            return Err(unsafe_path(path, "it is the project root itself; name a file inside it"));
        }
        Ok((resolved, relative))
    }
}

fn unsafe_path(path: &Path, reason: &str) -> ProjectError {
    ProjectError::UnsafePath { path: path.display().to_string(), reason: reason.to_owned() }
}
