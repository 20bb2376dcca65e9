//! Locating, reading, validating and writing the deploy file.
//!
//! A read-modify-write holds the file's [`FileLock`] from the read to the rename, re-reads the
//! file under it, edits the parsed document with the lossless editor, re-parses and re-checks
//! the result, and writes it atomically with mode 0600 only if the text changed.

use std::path::{Path, PathBuf};

use yaml_edit::{Document, YamlNode};

use super::DeployFileError;
use super::schema::{self, FileSchema};
use crate::hostfile::{self, FileLock};
use crate::project::yamlfile;
use crate::project::{Cancel, KeyPath};

/// The deploy file's name in charly's config directory.
pub const FILE_NAME: &str = "charly.yml";

/// The older layout's file, an error when it is still there.
pub const LEGACY_NAME: &str = "deploy.yml";

/// `$XDG_CONFIG_HOME/charly/charly.yml` (an absolute `XDG_CONFIG_HOME`), else
/// `~/.config/charly/charly.yml`.
pub fn deploy_path() -> PathBuf {
    crate::config::config_dir().join(FILE_NAME)
}

/// [`deploy_path`] for a leaf that reads or writes the file: an error when there is no home
/// to put it in (no absolute `$XDG_CONFIG_HOME`, `$HOME` unset and no home in `/etc/passwd`),
/// rather than `/.config/charly/charly.yml`.
///
/// # Errors
///
/// [`DeployFileError::NoHome`].
pub fn checked_deploy_path() -> Result<PathBuf, DeployFileError> {
    let xdg = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from);
    locate(xdg, hostfile::known_home)
}

/// The deploy file under `xdg` (used when absolute), else under the home `home` gives.
fn locate(xdg: Option<PathBuf>, home: impl FnOnce() -> Option<PathBuf>) -> Result<PathBuf, DeployFileError> {
    match xdg {
        Some(dir) if dir.is_absolute() => Ok(dir.join("charly").join(FILE_NAME)),
        _ => home().map(|h| h.join(".config/charly").join(FILE_NAME)).ok_or(DeployFileError::NoHome),
    }
}

/// The quadlet directory: `$XDG_CONFIG_HOME/containers/systemd` (absolute only), else
/// `~/.config/containers/systemd`.
pub fn quadlet_dir() -> PathBuf {
    let config = match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir,
        _ => hostfile::home().join(".config"),
    };
    config.join("containers").join("systemd")
}

/// What to tell someone whose deploy file is broken.
const FIX_DEPLOY_FILE: &str = "fix it by hand where it says (nothing was written to it), or remove only the broken \
     entry (`charly deploy reset <box>[/<instance>]`); `charly deploy reset` alone removes every entry";

/// The deploy file as read: its text (None when missing), the lossless document and the
/// checked contents.
#[derive(Debug)]
pub struct DeployFile {
    path: PathBuf,
    text: Option<String>,
    doc: Document,
    schema: FileSchema,
}

impl DeployFile {
    /// Reads and checks the file at `path`: a missing or blank file has no entries.
    ///
    /// # Errors
    ///
    /// [`DeployFileError::Read`], [`DeployFileError::Invalid`] (not YAML, not a deploy file),
    /// [`DeployFileError::Legacy`] (a `deploy.yml` beside it).
    pub fn load(path: &Path) -> Result<DeployFile, DeployFileError> {
        let legacy = path.with_file_name(LEGACY_NAME);
        if legacy.exists() {
            return Err(DeployFileError::Legacy { legacy, path: path.to_owned() });
        }
        let text = match std::fs::read_to_string(path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => return Err(DeployFileError::Read { path: path.to_owned(), source }),
        };
        let (doc, schema) = parse(path, text.as_deref().unwrap_or(""), FIX_DEPLOY_FILE)?;
        Ok(DeployFile { path: path.to_owned(), text, doc, schema })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file exists.
    pub fn exists(&self) -> bool {
        self.text.is_some()
    }

    /// The file's text ("" when missing).
    pub fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }

    /// The lossless document (an empty mapping for a missing or blank file).
    pub fn doc(&self) -> &Document {
        &self.doc
    }

    /// The checked contents.
    pub fn schema(&self) -> &FileSchema {
        &self.schema
    }

    /// The deployment names, sorted.
    pub fn keys(&self) -> Vec<String> {
        self.schema.deploy.iter().flatten().map(|(k, _)| k.clone()).collect()
    }

    /// Whether `key` has an entry.
    pub fn has(&self, key: &str) -> bool {
        self.schema.deploy.as_ref().is_some_and(|d| d.contains_key(key))
    }

    /// The node of `key` as the lossless editor holds it.
    pub fn node(&self, key: &str) -> Option<YamlNode> {
        yamlfile::get(&self.doc, &node_path(key))
    }

    /// [`DeployFileError::NoEntry`] for `key`, listing the entries.
    pub fn no_entry(&self, key: &str, hint: &str) -> DeployFileError {
        DeployFileError::NoEntry {
            key: key.to_owned(),
            path: self.path.clone(),
            known: self.keys(),
            hint: hint.to_owned(),
        }
    }

    /// The file's contents as JSON (an empty object for a missing file).
    pub fn json(&self) -> serde_json::Map<String, serde_json::Value> {
        to_json(self.text())
    }
}

/// Parses `text` (the contents of `path`) losslessly and checks it against the schema.
pub(crate) fn parse(
    path: &Path,
    text: &str,
    fix: &'static str,
) -> Result<(Document, FileSchema), DeployFileError> {
    let invalid = |problem: String| DeployFileError::Invalid { path: path.to_owned(), problem, fix };
    let doc = if is_blank(text) {
        Document::new_mapping()
    } else {
        let doc = yamlfile::parse_checked(text, path).map_err(|e| invalid(yaml_problem(e)))?;
        if doc.as_mapping().is_none() {
            return Err(invalid(
                "the top level is not a map of keys (version, provides, deploy, sidecar)".into(),
            ));
        }
        doc
    };
    let schema = schema::check(text).map_err(invalid)?;
    Ok((doc, schema))
}

/// The parser's or validator's complaint, without the path (the error names the file).
fn yaml_problem(e: crate::project::ProjectError) -> String {
    use crate::project::ProjectError;
    match e {
        ProjectError::InvalidYaml { message, .. } => format!("it is not YAML: {message}"),
        ProjectError::UnsafeYaml { location, message, tabs, .. } => {
            let hint = if tabs { " (indent with spaces, not tabs)" } else { "" };
            format!("at {location}: {message}{hint}")
        }
        ProjectError::MultiDocument { documents, .. } => {
            format!("it holds {documents} YAML documents; charly edits files of one document")
        }
        other => other.to_string(),
    }
}

fn is_blank(text: &str) -> bool {
    text.lines().map(str::trim).all(|l| l.is_empty() || l.starts_with('#'))
}

/// Whether `text` has a comment line (a hand-written note worth keeping).
pub(crate) fn has_comments(text: &str) -> bool {
    text.lines().any(|l| l.trim_start().starts_with('#'))
}

/// `deploy.<key>`.
pub(crate) fn node_path(key: &str) -> KeyPath {
    KeyPath::from_keys(["deploy", key])
}

/// YAML text as a JSON object (non-maps and unreadable text: an empty object).
pub(crate) fn to_json(text: &str) -> serde_json::Map<String, serde_json::Value> {
    match yaml_serde::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    }
}

/// What a locked edit does with the file.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// Write this text (when it differs from the file's).
    Write(String),
    /// Delete the file.
    Remove,
    /// Leave it.
    Keep,
}

/// Runs `edit` on the file at `path` under its lock, checks the result as a deploy file and
/// writes it atomically (mode 0600), or removes the file; `cancel` is asked just before.
/// Returns what `edit` returned and whether the file changed.
pub(crate) fn edit<T>(
    path: &Path,
    cancel: &Cancel,
    edit: impl FnOnce(&DeployFile) -> Result<(T, Outcome), DeployFileError>,
) -> Result<(T, bool), DeployFileError> {
    let target = write_target(path);
    let _lock = FileLock::acquire(&target).map_err(|source| DeployFileError::Write {
        action: "lock",
        path: path.to_owned(),
        source,
    })?;
    let file = DeployFile::load(&target)?;
    let (value, outcome) = edit(&file)?;
    let changed = match outcome {
        Outcome::Keep => false,
        Outcome::Write(text) if file.exists() && text == file.text() => false,
        Outcome::Write(text) if !file.exists() && is_blank(&text) => false,
        Outcome::Write(text) => {
            // A file of comments only was read as an empty map: its comments go first.
            let text = if file.exists() && is_blank(file.text()) && has_comments(file.text()) {
                format!("{}\n{text}", file.text().trim_end())
            } else {
                text
            };
            parse(path, &text, "this is a defect of charly; please report it")?;
            cancel.check(path)?;
            hostfile::write_atomic(&target, text.as_bytes(), 0o600).map_err(|source| {
                DeployFileError::Write { action: "write", path: path.to_owned(), source }
            })?;
            true
        }
        Outcome::Remove if !file.exists() => false,
        Outcome::Remove => {
            cancel.check(path)?;
            std::fs::remove_file(&target).map_err(|source| DeployFileError::Write {
                action: "remove",
                path: path.to_owned(),
                source,
            })?;
            true
        }
    };
    Ok((value, changed))
}

/// The file a write replaces: a symlink's target (a dotfile manager's link stays a link).
pub(crate) fn write_target(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => path.canonicalize().unwrap_or_else(|_| path.to_owned()),
        _ => path.to_owned(),
    }
}

/// Whether `doc` holds nothing worth a file: no keys, or only `version` and an empty `deploy`.
pub(crate) fn is_empty(doc: &Document) -> bool {
    let Some(map) = doc.as_mapping() else { return true };
    map.keys().all(|k| {
        let name = k.as_scalar().map(|s| s.as_string()).unwrap_or_default();
        match name.as_str() {
            "version" => true,
            "deploy" => match map.get("deploy") {
                Some(YamlNode::Mapping(m)) => m.is_empty(),
                Some(YamlNode::Scalar(s)) => s.is_null(),
                _ => false,
            },
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn the_deploy_file_needs_a_home_or_an_absolute_xdg_config_home() {
        let home = || Some(PathBuf::from("/home/u"));
        let none = || None;
        assert_eq!(super::locate(None, home).unwrap(), PathBuf::from("/home/u/.config/charly/charly.yml"));
        let xdg = Some(PathBuf::from("/x/cfg"));
        assert_eq!(super::locate(xdg.clone(), none).unwrap(), PathBuf::from("/x/cfg/charly/charly.yml"));
        // No home, a relative XDG_CONFIG_HOME (ignored, as the XDG spec says): refused, naming both.
        let err = super::locate(Some(PathBuf::from("rel")), none).unwrap_err().to_string();
        assert!(err.contains("$HOME") && err.contains("$XDG_CONFIG_HOME"), "{err}");
        assert!(super::locate(None, none).is_err());
    }
}
