//! `config.yml`: where it is, reading it (with the permission warning) and writing it
//! (atomically, mode 0600). The file is kept as a YAML mapping, so keys charly does not know
//! (written by a newer charly) survive an edit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml_serde::{Mapping, Value};

use super::ConfigError;
use crate::hostfile;

/// The YAML key of the config backend's plaintext credentials (REFERENCE.md §18.8).
pub const VNC_PASSWORDS: &str = "vnc_passwords";
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
        Ok(ConfigFile { path: path.to_owned(), map, warning })
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

    /// Sets the value at a YAML path, creating the mappings on the way.
    pub fn set(&mut self, yaml: &[&str], value: Value) {
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

    /// Drops every key.
    pub fn clear(&mut self) {
        self.map.clear();
    }

    /// The config backend's credentials: `vnc_passwords` (key `<key>` for `charly/vnc`,
    /// `<service>/<key>` otherwise).
    pub fn vnc_passwords(&self) -> BTreeMap<String, String> {
        let Some(Value::Mapping(map)) = self.map.get(VNC_PASSWORDS) else { return BTreeMap::new() };
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

    /// Replaces the `vnc_passwords` map (an empty map removes the key).
    pub fn set_vnc_passwords(&mut self, passwords: &BTreeMap<String, String>) {
        if passwords.is_empty() {
            self.map.shift_remove(VNC_PASSWORDS);
            return;
        }
        let map: Mapping =
            passwords.iter().map(|(k, v)| (Value::String(k.clone()), Value::String(v.clone()))).collect();
        self.map.insert(Value::String(VNC_PASSWORDS.into()), Value::Mapping(map));
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
            self.map.shift_remove(KEYRING_KEYS);
        } else {
            let list = keys.into_iter().map(Value::String).collect();
            self.map.insert(Value::String(KEYRING_KEYS.into()), Value::Sequence(list));
        }
        true
    }

    /// The file's text as it would be written.
    pub fn to_yaml(&self) -> String {
        if self.map.is_empty() {
            return String::new();
        }
        yaml_serde::to_string(&Value::Mapping(self.map.clone())).expect("a YAML mapping serialises")
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
