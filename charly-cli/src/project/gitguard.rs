//! Nothing charly writes makes or enters a git directory: a path with a `.git` component, a
//! directory that is one by its contents (`HEAD`, `objects/`, `refs/`: a bare repository, a
//! `--separate-git-dir`), or the write that would complete one. Git runs what its config and
//! hooks name (`core.fsmonitor`, `core.pager`, a hook), so a file written there by a client
//! that may only write the project would run commands on the host at the next `git status`
//! (trial 28 H3, trial 30 H1/M1, trial 31 HIGH-1/MED-1).
//!
//! Each write is checked before anything on its way is made; a write that another one,
//! running at the same time, turned into the last piece of a git directory is found by a
//! second check after it, and what it made is removed again.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType};

use super::beneath::{Beneath, Entry, Missing};
use super::error::{ProjectError, Result};

fn unsafe_path(path: &Path, reason: &str) -> ProjectError {
    ProjectError::unsafe_path(path, reason)
}

/// Refuses a write into a repository's own files: a path (from `root`, any symlink on the way
/// resolved) with a `.git` component, or through a directory that is a git directory by its
/// contents (`HEAD`, `objects/`, `refs/`: one `git init --separate-git-dir` put elsewhere in the
/// project, or a bare repository: trial 30, H1), or a project whose own root is one or lies in
/// one (`-C .git`). Git runs what its config and hooks name (`core.fsmonitor`, `core.pager`, a
/// hook), so a file written there by a client that may only write the project would run
/// commands on the host at the next `git status`.
pub(super) fn in_git(root: &Path, path: &Path, relative: &Path) -> Result<()> {
    let named = |p: &Path| p.components().any(|c| c.as_os_str().eq_ignore_ascii_case(".git"));
    if named(root) || named(relative) {
        return Err(unsafe_path(
            path,
            "it is inside .git/, the repository's own files, which git runs commands from (its config and \
             hooks); charly does not write there",
        ));
    }
    let mut dir = root.to_path_buf();
    let mut found = is_git_dir(&dir).then(|| dir.clone());
    for part in relative.parent().into_iter().flat_map(Path::components) {
        if found.is_some() {
            break;
        }
        dir.push(part);
        found = is_git_dir(&dir).then(|| dir.clone());
    }
    match found {
        // A bare or separate git directory has no `.git` in its name: named by where it is
        // (trial 31, L1).
        Some(git) => {
            let shown = git.strip_prefix(root).ok().filter(|p| !p.as_os_str().is_empty());
            let shown = shown.map_or_else(|| git.display().to_string(), |p| format!("{}/", p.display()));
            Err(unsafe_path(
                path,
                &format!(
                    "it is inside a git directory ({shown}), the repository's own files, which git runs \
                     commands from (its config and hooks); charly does not write there"
                ),
            ))
        }
        None => Ok(()),
    }
}

/// Whether `dir` is a git directory: it holds `HEAD`, `objects/` and `refs/`, as git itself
/// decides (`is_git_directory` in git's setup.c).
fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir()
}

/// What a write makes at the end of its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Made {
    /// A file (`box.write`, `--junit`, a generated Containerfile).
    File,
    /// A directory (`box.new.project DIR`, a scaffold's `box/`).
    Dir,
}

/// Whether adding the entry `name` (a file or, with everything under it, a directory) to the
/// existing directory `dir` would make `dir` a git directory ([`is_git_dir`]): it is the last of
/// `HEAD`, `objects/` and `refs/` to arrive. Only the directory that gets a new entry can change:
/// the directories a write creates below it hold one entry each. The names are compared
/// ignoring case, as a case-insensitive file system would (`head` is `HEAD` there).
fn completes_git_dir(dir: &Path, name: &OsStr, made: Made) -> bool {
    let is = |marker: &str| name.eq_ignore_ascii_case(marker);
    let head = dir.join("HEAD").is_file() || (made == Made::File && is("HEAD"));
    let objects = dir.join("objects").is_dir() || (made == Made::Dir && is("objects"));
    let refs = dir.join("refs").is_dir() || (made == Made::Dir && is("refs"));
    head && objects && refs
}

/// The refusal of a write whose new entry in `dir` would complete a git directory.
fn completing(path: &Path, dir: &Path) -> ProjectError {
    unsafe_path(
        path,
        &format!(
            "it would make {} a git directory (HEAD, objects/ and refs/ together), whose config and hooks \
             git runs commands from; charly does not make one",
            match dir.as_os_str().is_empty() {
                true => "the project root".to_owned(),
                false => format!("{}/", dir.display()),
            }
        ),
    )
}

/// The first entry `given` (beneath `root`) would add: the missing entry nearest the root, in
/// the deepest directory of its path that exists (symlinks resolved), and whether it is the
/// path's last component. `None` when `given` exists, or when its path cannot be walked (the
/// write that follows reports why).
fn first_new(root: &Beneath, given: &Path) -> Option<(Entry, bool)> {
    let mut part = given.to_path_buf();
    let mut last = true;
    loop {
        match root.locate(&part, Missing::Fail) {
            Ok(entry) if entry.kind.is_none() => return Some((entry, last)),
            Ok(_) => return None,
            Err(_) => {
                if !part.pop() || part.as_os_str().is_empty() {
                    return None;
                }
                last = false;
            }
        }
    }
}

/// Refuses a write of `given` beneath `root` that would complete a git directory from its
/// parts ([`completes_git_dir`]): `d/config`, then `d/HEAD`, then `d/objects/x` are each
/// ordinary files, but `d/refs/y` after them makes `d` a repository whose config a client chose
/// (trial 31, MED-1). Checked before anything on the way is made, so a refused write leaves no
/// directory behind. Returns the first directory the write will make, if it makes any (from
/// the root, symlinks resolved), for [`checked_after`].
pub(super) fn refuse_completing(
    root: &Beneath,
    path: &Path,
    given: &Path,
    made: Made,
) -> Result<Option<PathBuf>> {
    let Some((entry, last)) = first_new(root, given) else { return Ok(None) };
    let kind = if last { made } else { Made::Dir };
    let dir = entry.relative.parent().unwrap_or(Path::new(""));
    if completes_git_dir(&root.canonical().join(dir), &entry.name, kind) {
        return Err(completing(path, dir));
    }
    Ok((kind == Made::Dir).then_some(entry.relative))
}

/// The check after a write made its directories: `first` (what [`refuse_completing`]
/// returned) down to `deepest`. Refused, and the directories it made removed again (those
/// still empty), when a directory on its way (`relative` from the root, as [`in_git`] takes
/// it) is a git directory now, or when the one that got `first` is: another write, at the same
/// time, made the rest of the set. Of two such writes at least one sees the other's part.
pub(super) fn checked_after(
    root: &Beneath,
    path: &Path,
    relative: &Path,
    first: Option<&Path>,
    deepest: &Path,
) -> Result<()> {
    let completed = first.and_then(|first| {
        let dir = first.parent().unwrap_or(Path::new(""));
        is_git_dir(&root.canonical().join(dir)).then(|| completing(path, dir))
    });
    let refusal = match completed {
        Some(refusal) => refusal,
        None => match in_git(root.canonical(), path, relative) {
            Ok(()) => return Ok(()),
            Err(refusal) => refusal,
        },
    };
    if let Some(first) = first {
        remove_empty_dirs(root, first, deepest);
    }
    Err(refusal)
}

/// [`checked_after`] for a path charly made (a new candy's file, a scaffold's directory):
/// only whether the directory that got `first` is a git directory now.
pub(super) fn completed_after(
    root: &Beneath,
    path: &Path,
    first: Option<&Path>,
    deepest: &Path,
) -> Result<()> {
    let Some(first) = first else { return Ok(()) };
    let dir = first.parent().unwrap_or(Path::new(""));
    if !is_git_dir(&root.canonical().join(dir)) {
        return Ok(());
    }
    remove_empty_dirs(root, first, deepest);
    Err(completing(path, dir))
}

/// Removes the directories `first` down to `deepest` (from the root), deepest first, each only
/// when it is empty; errors are ignored (what stays is empty, and a refusal is reported).
fn remove_empty_dirs(root: &Beneath, first: &Path, deepest: &Path) {
    let mut dir = if deepest.starts_with(first) { deepest.to_path_buf() } else { first.to_path_buf() };
    loop {
        if let Ok(Entry { dir: parent, name, kind: Some(FileType::Directory), .. }) =
            root.locate(&dir, Missing::Fail)
        {
            let _ = rustix::fs::unlinkat(&parent, &name, AtFlags::REMOVEDIR);
        }
        if dir == first || !dir.pop() || dir.as_os_str().is_empty() {
            break;
        }
    }
}

/// The check after a write made the file `relative` (from the root; `was_new`: it did not
/// exist before): a new `HEAD` whose directory is a git directory now (another write made
/// `objects/` or `refs/` at the same time) is removed again and the write refused.
pub(super) fn undo_new_head(root: &Beneath, path: &Path, relative: &Path, was_new: bool) -> Result<()> {
    let head = relative.file_name().is_some_and(|n| n.eq_ignore_ascii_case("HEAD"));
    let dir = relative.parent().unwrap_or(Path::new(""));
    if !was_new || !head || !is_git_dir(&root.canonical().join(dir)) {
        return Ok(());
    }
    if let Ok(Entry { dir: parent, name, kind: Some(FileType::RegularFile), .. }) =
        root.locate(relative, Missing::Fail)
    {
        let _ = rustix::fs::unlinkat(&parent, &name, AtFlags::empty());
    }
    Err(completing(path, dir))
}

/// [`in_git`] for a file on the host that a terminal run writes (`--junit FILE`), absolute or
/// not, before anything on its way is made: refused when it has a `.git` component, when it or a
/// directory above it is a git directory, symlinks resolved (the CLI's `--junit` wrote into
/// `.git/hooks` and over a bare repository's config: trial 31, HIGH-1), or when writing it would
/// complete one ([`completes_git_dir`]).
///
/// # Errors
///
/// [`ProjectError::UnsafePath`].
pub fn refuse_git_path(path: &Path) -> Result<()> {
    refuse_git_host(path, Made::File)
}

/// [`refuse_git_path`] for a directory a terminal run creates (`box new project DIR`).
///
/// # Errors
///
/// [`ProjectError::UnsafePath`].
pub fn refuse_git_dir(path: &Path) -> Result<()> {
    refuse_git_host(path, Made::Dir)
}

fn refuse_git_host(path: &Path, made: Made) -> Result<()> {
    let mut existing = path.to_path_buf();
    let mut missing = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        let Some(name) = existing.file_name().map(ToOwned::to_owned) else { break };
        missing.push(name);
        existing.pop();
    }
    let resolved = std::fs::canonicalize(&existing).unwrap_or(existing);
    let full = missing.iter().rev().fold(resolved.clone(), |p, name| p.join(name));
    let named = full.components().any(|c| c.as_os_str().eq_ignore_ascii_case(".git"));
    if named || resolved.ancestors().any(is_git_dir) {
        return Err(unsafe_path(
            path,
            "it is inside a git directory, the repository's own files, which git runs commands from (its \
             config and hooks); charly does not write there",
        ));
    }
    if let Some(first) = missing.last() {
        let made = if missing.len() == 1 { made } else { Made::Dir };
        if completes_git_dir(&resolved, first, made) {
            return Err(completing(path, &resolved));
        }
    }
    Ok(())
}

/// [`in_git`] for a directory charly makes a project in (`box new project .git`: trial 30, M1).
pub(crate) fn refuse_git_root(root: &Beneath, shown: &Path) -> Result<()> {
    in_git(root.canonical(), shown, Path::new("charly.yml"))
}

/// [`in_git`] for a path before anything on its way is made: `given` itself, and the deepest
/// part of it that exists, resolved (`box/g/new/x` where `box/g` is a symlink to `.git`); and
/// [`refuse_completing`], whose answer it returns.
pub(super) fn refuse_git(
    beneath: &Beneath,
    path: &Path,
    given: &Path,
    made: Made,
) -> Result<Option<PathBuf>> {
    let root = beneath.canonical();
    in_git(root, path, given)?;
    let mut existing = given.to_path_buf();
    while existing.pop() && !existing.as_os_str().is_empty() {
        if let Ok(entry) = beneath.locate(&existing, Missing::Fail) {
            in_git(root, path, &entry.relative.join("x"))?;
            break;
        }
    }
    refuse_completing(beneath, path, given, made)
}
