//! Loading and losslessly editing one YAML file with yaml-edit.
//!
//! Every edit follows the same steps (DESIGN.md, "The project files"):
//!
//! 1. resolve the file beneath the project root and take its [`EditLock`];
//! 2. read it: a missing or empty (blank or comment-only) file is "not found";
//! 3. parse it and run yaml-edit's validator; a file it flags with an error (tab indentation, ...)
//!    is refused rather than edited into garbage;
//! 4. apply the edit through yaml-edit's tree API, with paths escaped by [`KeyPath::to_yaml_edit`];
//! 5. re-parse the result, validate it again and check that the edited path reads back;
//! 6. check the project with the result in place of the file (`box.validate`'s checks, on the
//!    text in memory): an edit that adds a problem the project did not have is refused, naming
//!    the problems, and nothing is written;
//! 7. write it atomically, only if the text changed, unless the call was cancelled meanwhile (the
//!    project's [`super::Cancel`], asked just before the rename).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use yaml_edit::path::{PathError, YamlPath};
use yaml_edit::validator::{Severity, Validator};
use yaml_edit::{AsYaml, Document, YamlNode};

use super::atomic::EditLock;
use super::beneath::{Beneath, Missing, Refusal};
use super::error::{ProjectError, Result};
use super::files::refused;
use super::keypath::{KeyPath, Segment};
use super::model::Project;
use super::report::Edited;

/// What an edit did to a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditOutcome {
    /// The file, relative to the project root.
    pub(crate) file: PathBuf,
    /// Whether the file's text changed (false: the edit was already in place).
    pub(crate) changed: bool,
}

impl EditOutcome {
    /// The report of this edit, with its summary: `then` when the file changed, `unchanged`
    /// when the edit was already in place.
    pub(crate) fn report(self, then: String, unchanged: String) -> Edited {
        let summary = if self.changed { then } else { unchanged };
        Edited { file: self.file, changed: self.changed, summary }
    }
}

/// Reads and parses `file` (relative to the project root `root`), refusing files the validator
/// flags.
pub(crate) fn load(root: &Beneath, file: &Path) -> Result<Document> {
    let text = match root.read_to_string(file) {
        Ok((text, _)) => text,
        Err(Refusal::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(ProjectError::FileNotFound { path: file.to_owned(), reason: "missing" });
        }
        Err(refusal) => return Err(refused(file, "read", refusal)),
    };
    parse_checked(&text, file)
}

/// Parses `text` as the contents of `shown` and runs the validator.
pub(crate) fn parse_checked(text: &str, shown: &Path) -> Result<Document> {
    if is_blank(text) {
        return Err(ProjectError::FileNotFound { path: shown.to_owned(), reason: "empty" });
    }
    let doc = Document::from_str(text).map_err(|e| {
        // yaml-edit's own words for a second document name its API (`Use YamlFile::from_str()`).
        match yaml_edit::YamlFile::from_str(text).map(|f| f.documents().count()) {
            Ok(documents) if documents > 1 => {
                ProjectError::MultiDocument { path: shown.to_owned(), documents }
            }
            _ => ProjectError::InvalidYaml { what: shown.display().to_string(), message: e.to_string() },
        }
    })?;
    if let Some(v) = Validator::new().validate(&doc).into_iter().find(|v| v.severity == Severity::Error) {
        return Err(ProjectError::UnsafeYaml {
            path: shown.to_owned(),
            location: v.location.unwrap_or_else(|| "?".into()),
            message: v.message,
            tabs: has_tab_indentation(text),
        });
    }
    Ok(doc)
}

/// Whether a line of `text` is indented with a tab (the validator's complaint is then about
/// tabs, or may come from them).
fn has_tab_indentation(text: &str) -> bool {
    text.lines().any(|l| l.trim_start_matches(' ').starts_with('\t'))
}

/// Whether a file has no YAML content: only whitespace and comments.
fn is_blank(text: &str) -> bool {
    text.lines().map(str::trim).all(|l| l.is_empty() || l.starts_with('#'))
}

/// Runs `edit` on the parsed `file` (relative to `project`'s root) under its lock, then `verify`
/// on the re-parsed result, then writes the result atomically if it changed.
pub(crate) fn edit_file<T>(
    project: &Project,
    file: &Path,
    edit: impl FnOnce(&Document) -> Result<T>,
    verify: impl FnOnce(&Document) -> Result<()>,
) -> Result<(T, EditOutcome)> {
    edit_text(
        project,
        file,
        |doc, _| {
            let value = edit(doc)?;
            Ok((value, doc.to_string()))
        },
        verify,
    )
}

/// Like [`edit_file`], for an edit that produces the new text itself from the parsed document and
/// the current text (appending a whole node in the file's own indentation, say). The result goes
/// through the same validation, check and atomic write.
pub(crate) fn edit_text<T>(
    project: &Project,
    file: &Path,
    edit: impl FnOnce(&Document, &str) -> Result<(T, String)>,
    verify: impl FnOnce(&Document) -> Result<()>,
) -> Result<(T, EditOutcome)> {
    let missing = || ProjectError::FileNotFound { path: file.to_owned(), reason: "missing" };
    let entry = match project.beneath()?.locate(file, Missing::Fail) {
        Ok(entry) if entry.kind.is_some() => entry,
        Ok(_) => return Err(missing()),
        Err(Refusal::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(missing());
        }
        Err(refusal) => return Err(refused(file, "read", refusal)),
    };
    let cancel = project.cancel();
    let lock = EditLock::acquire(&entry, cancel)?;
    let before = lock.read()?.ok_or_else(missing)?;
    let doc = parse_checked(&before, file)?;
    let (value, after) = edit(&doc, &before)?;
    let changed = after != before;
    if changed {
        let reparsed = parse_checked(&after, file)?;
        verify(&reparsed)?;
        // The edit changed `doc` in place: the text before it is parsed again to compare (the
        // validator passed it above).
        let unedited = Document::from_str(&before).map_err(|e| ProjectError::InvalidYaml {
            what: file.display().to_string(),
            message: e.to_string(),
        })?;
        let problems = project.problems_added(file, &unedited, &reparsed)?;
        if !problems.is_empty() {
            return Err(ProjectError::EditAddsProblems { file: file.to_owned(), problems });
        }
        lock.replace(after.as_bytes(), cancel)?;
    }
    Ok((value, EditOutcome { file: file.to_owned(), changed }))
}

/// The file's indentation step: the indentation of its first indented line, or 2 spaces.
pub(crate) fn indent_unit(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|l| l.len() - l.trim_start_matches(' ').len())
        .find(|&n| n > 0)
        .unwrap_or(2)
}

/// `text` with `block` (lines ending in `\n`) appended as new lines, in the file's line endings.
pub(crate) fn append_lines(text: &str, block: &str) -> String {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = text.to_owned();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(eol);
    }
    out.push_str(&block.replace('\n', eol));
    out
}

/// Parses a value given on the command line as YAML; the empty string is null.
pub(crate) fn parse_value(text: &str) -> Result<YamlNode> {
    let what = || format!("the value {text:?}");
    let source = if text.trim().is_empty() { "null" } else { text };
    let doc = Document::from_str(source)
        .map_err(|e| ProjectError::InvalidYaml { what: what(), message: e.to_string() })?;
    if let Some(v) = Validator::new().validate(&doc).into_iter().find(|v| v.severity == Severity::Error) {
        return Err(ProjectError::InvalidYaml { what: what(), message: v.message });
    }
    // A tagged value first: `as_scalar` and the others see through the tag, which would be lost.
    doc.as_tagged()
        .map(YamlNode::TaggedNode)
        .or_else(|| doc.as_mapping().map(YamlNode::Mapping))
        .or_else(|| doc.as_sequence().map(YamlNode::Sequence))
        .or_else(|| doc.as_scalar().map(YamlNode::Scalar))
        .ok_or_else(|| ProjectError::InvalidYaml { what: what(), message: "no value".into() })
}

/// The value at `path`, or `None` when some key on the way is missing.
pub(crate) fn get(doc: &Document, path: &KeyPath) -> Option<YamlNode> {
    doc.try_get_path(&path.to_yaml_edit()).ok()
}

/// A phrase naming what a node holds, for error messages.
pub(crate) fn describe(node: &YamlNode) -> &'static str {
    match node {
        YamlNode::Scalar(s) if s.is_null() => "an empty value",
        YamlNode::Scalar(_) => "a scalar",
        YamlNode::Mapping(_) => "a map",
        YamlNode::Sequence(_) => "a list",
        YamlNode::Alias(_) => "an alias",
        YamlNode::TaggedNode(_) => "a tagged value",
    }
}

/// Sets `path` to `value`, creating missing maps (and a list for `[0]`) on the way, after
/// [`walk`] accepted the path. The value at the path may be an alias: replacing it changes no
/// other node.
pub(crate) fn set_path(doc: &Document, file: &Path, path: &KeyPath, value: impl AsYaml) -> Result<()> {
    walk(doc, file, path)?;
    doc.try_set_path(&path.to_yaml_edit(), value).map_err(|e| path_error(e, file, path))
}

/// Walks `path` through the file's own nodes for an edit and returns the value there (`None`
/// when the edit will create it). Refused, naming the segment:
/// - a key under something that is not a map, an index under something that is not a list
///   (a missing or empty value on the way is fine: the edit creates it);
/// - an index past the end of its list (the length itself appends; a list the edit creates
///   starts at `[0]`);
/// - a segment, before the last, that holds an alias (`*name`): going through it would edit
///   the anchored node, and so every other alias of it;
/// - a key the node has only through a merge key (`<<: *name`): an edit would either change the
///   merged node or hide the rest of it.
pub(crate) fn walk(doc: &Document, file: &Path, path: &KeyPath) -> Result<Option<YamlNode>> {
    let segments = path.segments();
    let shown = |n: usize| if n == 0 { "(the top level)".to_owned() } else { path.prefix(n).to_string() };
    let Some(root) = doc.as_mapping() else {
        let found = doc.as_sequence().map_or("a scalar", |_| "a list");
        return Err(not_a_map(file, path, shown(0), found));
    };
    let mut node = YamlNode::Mapping(root);
    for (i, segment) in segments.iter().enumerate() {
        let child = match segment {
            Segment::Key(key) => {
                let Some(map) = map_of(&node) else {
                    return Err(not_a_map(file, path, shown(i), describe(&node)));
                };
                match own_value(&map, key) {
                    Some(value) => value,
                    None if get(doc, &path.prefix(i + 1)).is_some() => {
                        return Err(ProjectError::ThroughMerge {
                            file: file.to_owned(),
                            path: path.to_string(),
                            segment: shown(i + 1),
                        });
                    }
                    None => return created(file, path, i + 1).map(|()| None),
                }
            }
            Segment::Index(index) => {
                let Some(list) = list_of(&node) else {
                    return Err(ProjectError::NotAListAt {
                        file: file.to_owned(),
                        path: path.to_string(),
                        segment: shown(i),
                        found: describe(&node),
                    });
                };
                match list.get(*index) {
                    Some(item) => item,
                    None if *index == list.len() => return created(file, path, i + 1).map(|()| None),
                    None => {
                        return Err(ProjectError::NoSuchItem {
                            file: file.to_owned(),
                            path: path.to_string(),
                            segment: shown(i),
                            len: list.len(),
                        });
                    }
                }
            }
        };
        if i + 1 < segments.len() {
            match &child {
                YamlNode::Alias(alias) => return Err(through_alias(file, path, shown(i + 1), alias)),
                YamlNode::Scalar(s) if s.is_null() => return created(file, path, i + 1).map(|()| None),
                _ => {}
            }
        }
        node = child;
    }
    Ok(Some(node))
}

/// The error for an edit of `path` that would go through the alias at `segment`.
pub(crate) fn through_alias(
    file: &Path,
    path: &KeyPath,
    segment: String,
    alias: &yaml_edit::Alias,
) -> ProjectError {
    ProjectError::ThroughAlias {
        file: file.to_owned(),
        path: path.to_string(),
        segment,
        anchor: alias.name(),
    }
}

/// Checks the segments from `n` on, which the edit creates: an index there is `[0]` (a new
/// list starts empty).
fn created(file: &Path, path: &KeyPath, n: usize) -> Result<()> {
    let segments = path.segments();
    match (n..segments.len()).find(|&i| matches!(segments[i], Segment::Index(index) if index > 0)) {
        Some(i) => Err(ProjectError::NoSuchItem {
            file: file.to_owned(),
            path: path.to_string(),
            segment: path.prefix(i).to_string(),
            len: 0,
        }),
        None => Ok(()),
    }
}

/// The map a node holds (a tagged map too).
fn map_of(node: &YamlNode) -> Option<yaml_edit::Mapping> {
    match node {
        YamlNode::Mapping(m) => Some(m.clone()),
        YamlNode::TaggedNode(t) => t.as_mapping(),
        _ => None,
    }
}

/// The list a node holds (a tagged list too).
fn list_of(node: &YamlNode) -> Option<yaml_edit::Sequence> {
    match node {
        YamlNode::Sequence(s) => Some(s.clone()),
        YamlNode::TaggedNode(t) => t.as_sequence(),
        _ => None,
    }
}

/// The value of `key` among the map's own entries (not those a merge key brings in): a string
/// key, or a scalar key spelled the same (`8080`).
fn own_value(map: &yaml_edit::Mapping, key: &str) -> Option<YamlNode> {
    map.get(key).or_else(|| {
        map.iter().find(|(k, _)| k.as_scalar().is_some_and(|s| s.as_string() == key)).map(|(_, v)| v)
    })
}

fn not_a_map(file: &Path, path: &KeyPath, segment: String, found: &'static str) -> ProjectError {
    ProjectError::NotAMap { file: file.to_owned(), path: path.to_string(), segment, found }
}

/// Turns a yaml-edit path error into a [`ProjectError`].
fn path_error(e: PathError, file: &Path, path: &KeyPath) -> ProjectError {
    match e {
        PathError::TypeMismatch { at } => ProjectError::NotAMap {
            file: file.to_owned(),
            path: path.to_string(),
            segment: at,
            found: "something else",
        },
        PathError::AliasRefused { at, alias } => ProjectError::ThroughAlias {
            file: file.to_owned(),
            path: path.to_string(),
            segment: at,
            anchor: alias,
        },
        other => ProjectError::PathSyntax { path: path.to_string(), message: other.to_string() },
    }
}

/// Checks, on a re-parsed document, that `path` holds a value equal to `expected`.
pub(crate) fn verify_equals(doc: &Document, file: &Path, path: &KeyPath, expected: &YamlNode) -> Result<()> {
    match get(doc, path) {
        Some(actual) if actual.yaml_eq(expected) => Ok(()),
        _ => Err(ProjectError::EditNotVerified { file: file.to_owned(), path: path.to_string() }),
    }
}

/// The strings of a list of scalars (non-scalars are skipped).
pub(crate) fn string_items(node: &YamlNode) -> Vec<String> {
    node.as_sequence()
        .map(|seq| seq.values().filter_map(|v| v.as_scalar().map(|s| s.as_string())).collect())
        .unwrap_or_default()
}
