//! `deploy.{export,import,path,reset,show,status}`: each takes the deploy file's path (the
//! command passes [`deploy_path`](super::deploy_path)) and returns its report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use yaml_edit::Document;

use super::file::{self, DeployFile, Outcome, node_path};
use super::report::{DeployPath, DeployStatus, Exported, Imported, Reset, Shown, StatusRow};
use super::{DeployFileError, container_of, schema};
use crate::hostfile;
use crate::project::yamlfile;
use crate::project::{Cancel, KeyPath};

/// `deploy path`.
pub fn path(path: &Path) -> DeployPath {
    DeployPath { path: path.display().to_string(), exists: path.exists() }
}

/// `deploy show [key]`: the whole file as written, or one entry.
///
/// # Errors
///
/// The file's [`DeployFile::load`] errors; [`DeployFileError::NoEntry`] for a `key` it lacks.
pub fn show(path: &Path, key: Option<&str>) -> Result<Shown, DeployFileError> {
    let file = DeployFile::load(path)?;
    let shown = |yaml: String, content| Shown {
        path: path.display().to_string(),
        exists: file.exists(),
        key: key.map(str::to_owned),
        yaml,
        content,
    };
    match key {
        None => Ok(shown(file.text().to_owned(), file.json())),
        Some(key) => {
            let yaml = subset(&file, &[key.to_owned()], false)?;
            let content = file::to_json(&yaml);
            Ok(shown(yaml, content))
        }
    }
}

/// `deploy export [keys] [-o file]`: the whole file as written (comments kept), or the named
/// entries (with the file's `version`); written to `output` (atomically, mode 0600) when given.
///
/// # Errors
///
/// As [`show`]; [`DeployFileError::Write`] when `output` cannot be written.
pub fn export(
    path: &Path,
    keys: &[String],
    output: Option<&Path>,
    cancel: &Cancel,
) -> Result<Exported, DeployFileError> {
    let file = DeployFile::load(path)?;
    let (yaml, keys) = if keys.is_empty() {
        (file.text().to_owned(), file.keys())
    } else {
        let mut unique = Vec::new();
        for key in keys {
            container_of(key)?;
            if !unique.contains(key) {
                unique.push(key.clone());
            }
        }
        (subset(&file, &unique, true)?, unique)
    };
    if let Some(output) = output {
        cancel.check(output)?;
        hostfile::write_atomic(output, yaml.as_bytes(), 0o600).map_err(|source| DeployFileError::Write {
            action: "write",
            path: output.to_owned(),
            source,
        })?;
    }
    Ok(Exported {
        path: path.display().to_string(),
        keys,
        yaml,
        output: output.map(|o| o.display().to_string()),
    })
}

/// A new document holding `keys`' entries of `file` (and its `version` when `version`).
fn subset(file: &DeployFile, keys: &[String], version: bool) -> Result<String, DeployFileError> {
    let doc = Document::new_mapping();
    let version_path = KeyPath::from_keys(["version"]);
    if version && let Some(v) = yamlfile::get(file.doc(), &version_path) {
        yamlfile::set_path(&doc, file.path(), &version_path, &v)?;
    }
    for key in keys {
        container_of(key)?;
        let node = file.node(key).ok_or_else(|| file.no_entry(key, ""))?;
        yamlfile::set_path(&doc, file.path(), &node_path(key), &node)?;
    }
    Ok(doc.to_string())
}

/// A file to import, read and checked.
struct Source {
    path: PathBuf,
    doc: Document,
    keys: Vec<String>,
    sidecars: Vec<String>,
    provides: bool,
}

/// `deploy import <files> [--replace] [--box key]`: merges the files' `deploy:` entries into
/// the deploy file, left to right, field by field (a field of a later file replaces the same
/// field before it; an entry new to the file is added whole), and their `sidecar` templates
/// by name. With `replace`, the base is an empty file instead of the current one; with
/// `only`, only that entry is taken. Every file is read and checked before anything is
/// written: a bad file changes nothing. `provides` are left out (this host's own, written
/// by `config setup`).
///
/// # Errors
///
/// [`DeployFileError::Read`]/[`DeployFileError::Invalid`] naming the file to import that is
/// unreadable or not a deploy file; [`DeployFileError::NoEntry`] when `only` is in none of
/// them; the deploy file's own load and write errors.
pub fn import(
    path: &Path,
    files: &[PathBuf],
    replace: bool,
    only: Option<&str>,
    cancel: &Cancel,
) -> Result<Imported, DeployFileError> {
    let mut sources = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).map_err(|source| DeployFileError::Read { path: f.clone(), source })?;
        let fix = "fix that file and import it again (nothing was changed)";
        let (doc, schema) = file::parse(f, &text, fix)?;
        let keys = top_keys(&doc, "deploy");
        let sidecars = top_keys(&doc, "sidecar");
        one_line_entries(&text, only).map_err(|problem| DeployFileError::Invalid {
            path: f.clone(),
            problem,
            fix,
        })?;
        sources.push(Source { path: f.clone(), doc, keys, sidecars, provides: schema.provides.is_some() });
    }
    if let Some(only) = only {
        container_of(only)?;
        if !sources.iter().any(|s| s.keys.iter().any(|k| k == only)) {
            let known: BTreeSet<String> = sources.iter().flat_map(|s| s.keys.iter().cloned()).collect();
            return Err(DeployFileError::NoEntry {
                key: only.to_owned(),
                path: PathBuf::from(
                    files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "),
                ),
                known: known.into_iter().collect(),
                hint: "; nothing was imported".into(),
            });
        }
    }
    let ignored: Vec<String> = sources
        .iter()
        .filter(|s| s.provides)
        .map(|s| {
            format!("provides of {} (this host's own, written by `charly config setup`)", s.path.display())
        })
        .collect();
    let (keys, changed) = file::edit(path, cancel, |current| {
        let fresh = Document::new_mapping();
        let doc = if replace { &fresh } else { current.doc() };
        let mut written = Vec::new();
        for source in &sources {
            for key in source.keys.iter().filter(|k| only.is_none_or(|o| o == k.as_str())) {
                merge_entry(doc, path, &source.doc, key)?;
                if !written.contains(key) {
                    written.push(key.clone());
                }
            }
            if only.is_none() {
                for name in &source.sidecars {
                    let at = KeyPath::from_keys(["sidecar", name.as_str()]);
                    if let Some(template) = yamlfile::get(&source.doc, &at) {
                        yamlfile::set_path(doc, path, &at, &template)?;
                    }
                }
            }
        }
        Ok((written, Outcome::Write(doc.to_string())))
    })?;
    Ok(Imported {
        path: path.display().to_string(),
        files: files.iter().map(|f| f.display().to_string()).collect(),
        keys,
        changed,
        ignored,
    })
}

/// Refuses, in a file to import, a value that a quadlet unit cannot hold
/// ([`schema::one_line_values`]) in the entries `only` takes (all when `None`) and, with all,
/// the sidecar templates: `config setup --run-mode quadlet` would refuse them later, leaving an
/// entry that only a hand edit fixes (trial 30, L2).
fn one_line_entries(text: &str, only: Option<&str>) -> Result<(), String> {
    let Ok(Some(yaml_serde::Value::Mapping(top))) = yaml_serde::from_str::<Option<yaml_serde::Value>>(text)
    else {
        return Ok(());
    };
    let section =
        |name: &str| top.get(name).and_then(yaml_serde::Value::as_mapping).cloned().unwrap_or_default();
    for (key, node) in &section("deploy") {
        let Some(key) = key.as_str() else { continue };
        if only.is_none_or(|o| o == key) {
            schema::one_line_values(&format!("deploy.{key}"), node)?;
        }
    }
    if only.is_none() {
        for (name, template) in &section("sidecar") {
            let name = name.as_str().unwrap_or_default();
            schema::one_line_values(&format!("sidecar.{name}"), template)?;
        }
    }
    Ok(())
}

/// The keys of the top-level map `name`, in file order.
fn top_keys(doc: &Document, name: &str) -> Vec<String> {
    doc.as_mapping()
        .and_then(|m| m.get_mapping(name))
        .map(|m| m.keys().filter_map(|k| k.as_scalar().map(|s| s.as_string())).collect())
        .unwrap_or_default()
}

/// Merges entry `key` of `source` into `doc`: whole when `doc` has no such entry (or an
/// empty one), else field by field.
fn merge_entry(doc: &Document, path: &Path, source: &Document, key: &str) -> Result<(), DeployFileError> {
    let at = node_path(key);
    let Some(incoming) = yamlfile::get(source, &at) else { return Ok(()) };
    let existing = yamlfile::get(doc, &at);
    match (existing.as_ref().and_then(|n| n.as_mapping().cloned()), incoming.as_mapping()) {
        (Some(_), Some(fields)) => {
            for (field, value) in fields.iter() {
                let Some(field) = field.as_scalar().map(|s| s.as_string()) else { continue };
                yamlfile::set_path(doc, path, &KeyPath::from_keys(["deploy", key, field.as_str()]), &value)?;
            }
        }
        (Some(_), None) => {} // an empty entry adds no field
        (None, _) => yamlfile::set_path(doc, path, &at, &incoming)?,
    }
    Ok(())
}

/// `deploy reset [key]`: deletes the whole file, or one entry and the `provides` whose
/// `source` is that entry (the file too when nothing is left in it). Quadlet units and
/// containers are not touched. Idempotent: nothing to remove is not an error.
///
/// # Errors
///
/// The deploy file's load and write errors (a broken file can still be reset whole).
pub fn reset(path: &Path, key: Option<&str>, cancel: &Cancel) -> Result<Reset, DeployFileError> {
    let shown = path.display().to_string();
    let Some(key) = key else {
        let existed = path.symlink_metadata().is_ok();
        if existed {
            // Under the lock: an edit in flight finishes first, and none starts meanwhile.
            let _lock = hostfile::FileLock::acquire(&file::write_target(path))
                .map_err(|source| DeployFileError::Write { action: "lock", path: path.to_owned(), source })?;
            cancel.check(path)?;
            std::fs::remove_file(path).map_err(|source| DeployFileError::Write {
                action: "remove",
                path: path.to_owned(),
                source,
            })?;
        }
        let summary =
            if existed { format!("Removed {shown}") } else { format!("No deploy file to remove ({shown})") };
        return Ok(Reset {
            path: shown,
            key: None,
            changed: existed,
            file_removed: existed,
            provides_removed: Vec::new(),
            summary,
        });
    };
    container_of(key)?;
    let ((had, provides, known, emptied, keys_left), changed) = file::edit(path, cancel, |file| {
        if !file.has(key) {
            return Ok(((false, Vec::new(), file.keys(), false, file.keys()), Outcome::Keep));
        }
        let keys_left: Vec<String> = file.keys().into_iter().filter(|k| k != key).collect();
        let doc = file.doc();
        if let Some(deploy) = doc.as_mapping().and_then(|m| m.get_mapping("deploy")) {
            deploy.remove(key);
        }
        let provides = remove_provides(doc, key);
        drop_if_empty(doc, &["deploy"]);
        // Without entries the file goes, unless it has comments: someone wrote those by hand,
        // so it stays, holding them and no entries.
        let mut text = doc.to_string();
        let emptied = file::is_empty(doc) && !file::has_comments(&text);
        if file::is_empty(doc) {
            // Only the comments stay (not an empty `{}` the editor renders for the map).
            let lines = text.lines().filter(|l| l.trim().is_empty() || l.trim_start().starts_with('#'));
            text = lines.map(|l| format!("{l}\n")).collect();
        }
        let outcome = if emptied { Outcome::Remove } else { Outcome::Write(text) };
        Ok(((true, provides, Vec::new(), emptied, keys_left), outcome))
    })?;
    let summary = match (had, emptied) {
        (false, _) => format!(
            "No deploy entry {key:?} in {shown} (entries: {}); nothing to remove",
            if known.is_empty() { "none".into() } else { known.join(", ") }
        ),
        (true, false) if keys_left.is_empty() => {
            format!("Removed deploy entry {key:?}, the last one; {shown} keeps its comments and no entries")
        }
        (true, false) => format!("Removed deploy entry {key:?} from {shown}"),
        (true, true) => format!("Removed deploy entry {key:?}, the last one: deleted {shown}"),
    };
    Ok(Reset {
        path: shown,
        key: Some(key.to_owned()),
        changed,
        file_removed: emptied && changed,
        provides_removed: provides,
        summary,
    })
}

/// Removes the `provides.env` and `provides.mcp` entries whose `source` is `key`; returns
/// `env:NAME` / `mcp:NAME` of each.
fn remove_provides(doc: &Document, key: &str) -> Vec<String> {
    let mut removed = Vec::new();
    let Some(provides) = doc.as_mapping().and_then(|m| m.get_mapping("provides")) else { return removed };
    for list in ["env", "mcp"] {
        let Some(seq) = provides.get_sequence(list) else { continue };
        let items: Vec<(Option<String>, Option<String>)> = seq
            .values()
            .map(|v| {
                let field = |f: &str| {
                    v.as_mapping().and_then(|m| m.get(f)).and_then(|s| s.as_scalar().map(|s| s.as_string()))
                };
                (field("source"), field("name"))
            })
            .collect();
        for index in (0..items.len()).rev() {
            if items[index].0.as_deref() == Some(key) {
                seq.remove(index);
                removed.push(format!("{list}:{}", items[index].1.clone().unwrap_or_default()));
            }
        }
        if seq.is_empty() {
            provides.remove(list);
        }
    }
    removed.reverse();
    drop_if_empty(doc, &["provides"]);
    removed
}

/// Removes top-level `keys` whose map has become empty.
fn drop_if_empty(doc: &Document, keys: &[&str]) {
    let Some(map) = doc.as_mapping() else { return };
    for key in keys {
        if map.get_mapping(*key).is_some_and(|m| m.is_empty()) {
            map.remove(*key);
        }
    }
}

/// `deploy status`: every deploy entry, quadlet unit (`charly-*.container`) and charly
/// container (`containers`: name → state, `None` when podman could not be asked), side by side.
///
/// # Errors
///
/// The deploy file's load errors.
pub fn status(
    path: &Path,
    quadlets: &Path,
    containers: Option<&BTreeMap<String, String>>,
) -> Result<DeployStatus, DeployFileError> {
    let file = DeployFile::load(path)?;
    let units: BTreeSet<String> = std::fs::read_dir(quadlets)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".container")?;
            stem.starts_with("charly-").then(|| stem.to_owned())
        })
        .collect();
    let mut rows = BTreeMap::new();
    for key in file.keys() {
        let container = container_of(&key)?;
        rows.insert(key.clone(), (container, true));
    }
    let known: BTreeSet<String> = rows.values().map(|(c, _)| c.clone()).collect();
    let others = units.iter().chain(containers.into_iter().flat_map(|c| c.keys()));
    for name in others.filter(|n| !known.contains(*n)) {
        rows.insert(name.clone(), (name.clone(), false));
    }
    let rows = rows
        .into_iter()
        .map(|(key, (container, deploy_entry))| {
            let quadlet = units.contains(&container);
            let state = containers.and_then(|c| c.get(&container).cloned());
            let verdict = match (deploy_entry, quadlet || state.is_some()) {
                (true, true) => "ok",
                (true, false) => "not deployed",
                (false, _) => "no deploy entry",
            };
            StatusRow { key, container, deploy_entry, quadlet, state, verdict: verdict.into() }
        })
        .collect();
    Ok(DeployStatus {
        path: path.display().to_string(),
        quadlet_dir: quadlets.display().to_string(),
        podman: containers.is_some(),
        rows,
    })
}
