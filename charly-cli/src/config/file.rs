//! `config.yml`: where it is, reading it (with the permission warning) and writing it
//! (atomically, mode 0600). The file is kept as a YAML mapping, so keys charly does not know
//! (written by a newer charly) survive an edit.
//!
//! Edits are lossless: each one is applied twice, to the parsed mapping (the truth every read
//! uses) and, with the lossless editor yaml-edit (as charly.yml and the deploy file are
//! edited), to the file's text, so comments, key order, quoting and other keys stay byte for
//! byte. The edited text is parsed again and must give exactly the edited mapping; when it
//! does not (a construct the editor does not keep, a file its validator refuses), the file is
//! written from the mapping instead, which is correct but drops the comments.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml_edit::Document;
use yaml_serde::{Mapping, Value};

use super::ConfigError;
use crate::hostfile;
use crate::project::KeyPath;
use crate::project::yamlfile;

/// The YAML key of the config backend's plaintext credentials (REFERENCE.md §18.8).
pub const VNC_PASSWORDS: &str = "vnc_passwords";
/// The config backend's OAuth tokens of remote MCP servers (service `charly/oauth`), one
/// entry a server key. Before, they were kept in `vnc_passwords` (as `charly/oauth/<key>`),
/// which is still read.
pub const OAUTH_TOKENS: &str = "oauth_tokens";
/// The YAML key of the shadow index of keyring items (`service/key`, no values).
pub const KEYRING_KEYS: &str = "keyring_keys";

/// `$XDG_CONFIG_HOME/charly` (an absolute `XDG_CONFIG_HOME` only, as the XDG spec says), else
/// `~/.config/charly`.
pub fn config_dir() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from) {
        Some(dir) if dir.is_absolute() => dir.join("charly"),
        _ => hostfile::home().join(".config").join("charly"),
    }
}

/// `config.yml` in [`config_dir`].
pub fn config_path() -> PathBuf {
    config_dir().join("config.yml")
}

/// The contents of config.yml.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigFile {
    path: PathBuf,
    map: Mapping,
    /// The text as it will be written: the file's, with the edits applied losslessly.
    text: String,
    /// Set when the file is readable by group or others.
    warning: Option<String>,
}

impl ConfigFile {
    /// Reads `path`; a missing or empty file is an empty config.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`] when the file cannot be read, [`ConfigError::Parse`] when it
    /// is not a YAML mapping.
    pub fn load(path: &Path) -> Result<ConfigFile, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => return Err(ConfigError::Read { path: path.to_owned(), source }),
        };
        let warning = hostfile::readable_by_others(path);
        let map = match yaml_serde::from_str::<Value>(&text) {
            Ok(Value::Mapping(map)) => map,
            Ok(Value::Null) => Mapping::new(),
            Ok(_) => {
                return Err(ConfigError::Parse {
                    path: path.to_owned(),
                    message: "the top level is not a mapping of keys".into(),
                });
            }
            Err(e) => return Err(ConfigError::Parse { path: path.to_owned(), message: e.to_string() }),
        };
        Ok(ConfigFile { path: path.to_owned(), map, text, warning })
    }

    /// Reads the config file of this user ([`config_path`]).
    ///
    /// # Errors
    ///
    /// As [`ConfigFile::load`].
    pub fn load_default() -> Result<ConfigFile, ConfigError> {
        ConfigFile::load(&config_path())
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The permission warning, when the file is readable by group or others.
    pub fn warning(&self) -> Option<&str> {
        self.warning.as_deref()
    }

    /// Every warning about the file: the permission warning, then each entry no setting
    /// reads (an unknown key, a section that is not a mapping), in file order.
    pub fn warnings(&self) -> Vec<String> {
        self.warning.iter().cloned().chain(super::strays::strays(self)).collect()
    }

    /// The top-level mapping as read.
    pub(super) fn mapping(&self) -> &Mapping {
        &self.map
    }

    /// Whether the file holds no keys.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The value at a YAML path, as text (`true`, `3600`, `podman`); `None` when absent or null.
    pub fn get(&self, yaml: &[&str]) -> Option<String> {
        let mut node = self.map.get(yaml.first()?)?;
        for part in &yaml[1..] {
            node = node.as_mapping()?.get(part)?;
        }
        match node {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// `"a list"` or `"a mapping"` when the value at `yaml` is one (which [`get`](Self::get)
    /// does not read as a value); `None` for a scalar or nothing.
    pub fn shape_of(&self, yaml: &[&str]) -> Option<&'static str> {
        let mut node = self.map.get(yaml.first()?)?;
        for part in &yaml[1..] {
            node = node.as_mapping()?.get(part)?;
        }
        match node {
            Value::Sequence(_) => Some("a list"),
            Value::Mapping(_) => Some("a mapping"),
            _ => None,
        }
    }

    /// Applies `edit` to the text losslessly, after the same edit was applied to the mapping;
    /// falls back to the mapping's serialisation when the edited text does not parse back to
    /// exactly the mapping.
    fn edit_text(&mut self, edit: impl FnOnce(&Document)) {
        let lossless = (|| {
            let doc = if is_blank(&self.text) {
                Document::new_mapping()
            } else {
                yamlfile::parse_checked(&self.text, &self.path).ok()?
            };
            doc.as_mapping()?;
            edit(&doc);
            let text = doc.to_string();
            let text = if self.map.is_empty() { comments_only(&text) } else { text };
            (parse_map(&text).as_ref() == Some(&self.map)).then_some(text)
        })();
        self.text = lossless.unwrap_or_else(|| serialise(&self.map));
    }

    /// Sets the value at a YAML path, creating the mappings on the way.
    pub fn set(&mut self, yaml: &[&str], value: Value) {
        self.set_in_map(yaml, value.clone());
        let Some(node) = node_of(&value) else {
            self.text = serialise(&self.map);
            return;
        };
        let path = self.path.clone();
        self.edit_text(|doc| {
            let _ = yamlfile::set_path(doc, &path, &KeyPath::from_keys(yaml.iter().copied()), node);
        });
    }

    fn set_in_map(&mut self, yaml: &[&str], value: Value) {
        let (last, parents) = yaml.split_last().expect("a YAML path has at least one part");
        let mut map = &mut self.map;
        for part in parents {
            let entry = map
                .entry(Value::String((*part).to_owned()))
                .or_insert_with(|| Value::Mapping(Mapping::new()));
            if !entry.is_mapping() {
                *entry = Value::Mapping(Mapping::new());
            }
            map = entry.as_mapping_mut().expect("just made a mapping");
        }
        map.insert(Value::String((*last).to_owned()), value);
    }

    /// Removes the value at a YAML path, and mappings it leaves empty; whether it was there.
    pub fn remove(&mut self, yaml: &[&str]) -> bool {
        let removed = self.remove_in_map(yaml);
        if removed {
            self.edit_text(|doc| {
                if let Some(map) = doc.as_mapping() {
                    remove_lossless(&map, yaml);
                }
            });
        }
        removed
    }

    fn remove_in_map(&mut self, yaml: &[&str]) -> bool {
        fn remove_in(map: &mut Mapping, yaml: &[&str]) -> bool {
            match yaml {
                [] => false,
                [last] => map.shift_remove(*last).is_some(),
                [first, rest @ ..] => {
                    let Some(Value::Mapping(child)) = map.get_mut(*first) else { return false };
                    let removed = remove_in(child, rest);
                    if child.is_empty() {
                        map.shift_remove(*first);
                    }
                    removed
                }
            }
        }
        remove_in(&mut self.map, yaml)
    }

    /// Drops every key (and the comments: the file becomes empty).
    pub fn clear(&mut self) {
        self.map.clear();
        self.text.clear();
    }

    /// The config backend's credentials: `vnc_passwords` (key `<key>` for `charly/vnc`,
    /// `<service>/<key>` otherwise; OAuth tokens are in [`ConfigFile::oauth_tokens`]).
    pub fn vnc_passwords(&self) -> BTreeMap<String, String> {
        self.string_map(VNC_PASSWORDS)
    }

    /// Replaces the `vnc_passwords` map (an empty map removes the key).
    pub fn set_vnc_passwords(&mut self, passwords: &BTreeMap<String, String>) {
        self.set_string_map(VNC_PASSWORDS, passwords);
    }

    /// The config backend's OAuth tokens: `oauth_tokens`, server key to document.
    pub fn oauth_tokens(&self) -> BTreeMap<String, String> {
        self.string_map(OAUTH_TOKENS)
    }

    /// Replaces the `oauth_tokens` map (an empty map removes the key).
    pub fn set_oauth_tokens(&mut self, tokens: &BTreeMap<String, String>) {
        self.set_string_map(OAUTH_TOKENS, tokens);
    }

    /// The map of strings at top-level key `name` (scalars as text; other values skipped).
    fn string_map(&self, name: &str) -> BTreeMap<String, String> {
        let Some(Value::Mapping(map)) = self.map.get(name) else { return BTreeMap::new() };
        map.iter()
            .filter_map(|(k, v)| {
                let value = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => return None,
                };
                Some((k.as_str()?.to_owned(), value))
            })
            .collect()
    }

    /// Replaces the map at top-level key `name`, entry by entry (an empty map removes the key).
    fn set_string_map(&mut self, name: &str, entries: &BTreeMap<String, String>) {
        let current = self.string_map(name);
        if entries.is_empty() {
            if self.map.contains_key(name) {
                self.remove(&[name]);
            }
            return;
        }
        // Entry by entry, so the others (and their comments) stay as they are.
        for key in current.keys().filter(|k| !entries.contains_key(*k)) {
            self.remove(&[name, key]);
        }
        for (key, value) in entries.iter().filter(|(k, v)| current.get(*k) != Some(*v)) {
            self.set(&[name, key], Value::String(value.clone()));
        }
    }

    /// The shadow index of keyring items: `service/key` strings.
    pub fn keyring_keys(&self) -> Vec<String> {
        let Some(Value::Sequence(list)) = self.map.get(KEYRING_KEYS) else { return Vec::new() };
        list.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
    }

    /// Adds (`present`) or removes `entry` from the keyring index; whether it changed.
    pub fn index_keyring_key(&mut self, entry: &str, present: bool) -> bool {
        let mut keys = self.keyring_keys();
        let had = keys.iter().any(|k| k == entry);
        match (had, present) {
            (false, true) => keys.push(entry.to_owned()),
            (true, false) => keys.retain(|k| k != entry),
            _ => return false,
        }
        if keys.is_empty() {
            self.remove(&[KEYRING_KEYS]);
        } else {
            let list = keys.into_iter().map(Value::String).collect();
            self.set(&[KEYRING_KEYS], Value::Sequence(list));
        }
        true
    }

    /// The file's text as it would be written.
    pub fn to_yaml(&self) -> String {
        self.text.clone()
    }

    /// Writes the file atomically with mode 0600 (its directory 0700 when new).
    ///
    /// # Errors
    ///
    /// [`ConfigError::Write`].
    pub fn save(&self) -> Result<(), ConfigError> {
        hostfile::write_atomic(&self.path, self.to_yaml().as_bytes(), 0o600)
            .map_err(|source| ConfigError::Write { path: self.path.clone(), source })
    }
}

/// A value as a lossless-editor node, through its serde text (so its quoting is serde's: a
/// string `true` or `10` stays a string).
fn node_of(value: &Value) -> Option<yaml_edit::YamlNode> {
    let text = yaml_serde::to_string(value).ok()?;
    yamlfile::parse_value(text.trim_end()).ok()
}

/// Removes a YAML path through the lossless editor, and the mappings it leaves empty.
fn remove_lossless(map: &yaml_edit::Mapping, yaml: &[&str]) {
    match yaml {
        [] => {}
        [last] => {
            map.remove(*last);
        }
        [first, rest @ ..] => {
            if let Some(child) = map.get_mapping(*first) {
                remove_lossless(&child, rest);
                if child.is_empty() {
                    map.remove(*first);
                }
            }
        }
    }
}

/// The mapping YAML text holds (`None` when it is no mapping).
fn parse_map(text: &str) -> Option<Mapping> {
    match yaml_serde::from_str::<Value>(text).ok()? {
        Value::Mapping(map) => Some(map),
        Value::Null => Some(Mapping::new()),
        _ => None,
    }
}

/// The mapping as serde writes it ("" when empty).
fn serialise(map: &Mapping) -> String {
    if map.is_empty() {
        return String::new();
    }
    yaml_serde::to_string(&Value::Mapping(map.clone())).expect("a YAML mapping serialises")
}

/// Only whitespace and comments.
fn is_blank(text: &str) -> bool {
    text.lines().map(str::trim).all(|l| l.is_empty() || l.starts_with('#'))
}

/// The comment lines of a text whose last key went (an empty file when there are none).
fn comments_only(text: &str) -> String {
    text.lines().filter(|l| l.trim_start().starts_with('#')).map(|l| format!("{l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_remove_by_yaml_path() {
        let mut file = ConfigFile::default();
        file.set(&["engine", "build"], Value::String("podman".into()));
        file.set(&["kdbx_cache"], Value::Bool(false));
        assert_eq!(file.get(&["engine", "build"]).as_deref(), Some("podman"));
        assert_eq!(file.get(&["kdbx_cache"]).as_deref(), Some("false"));
        assert!(file.remove(&["engine", "build"]));
        assert_eq!(file.to_yaml(), "kdbx_cache: false\n");
        assert!(file.index_keyring_key("charly/vnc/web", true));
        assert!(!file.index_keyring_key("charly/vnc/web", true));
        assert_eq!(file.keyring_keys(), ["charly/vnc/web"]);
    }
}
