//! The YAML key-path parser (charly-cli/src/project/keypath.rs `KeyPath::parse`) and its
//! translation into yaml-edit's syntax, which `box.set`/`candy.set` rely on.
//!
//! Input: a dot path. Checked, for every path that parses:
//! - its display parses back to the same keys;
//! - setting it with yaml-edit (through `to_yaml_edit`, as `box.set` does) writes exactly
//!   those keys: the re-parsed text, walked key by key with no path syntax involved, holds the
//!   value under them, and yaml-edit's validator finds no error in it.
#![no_main]

use std::str::FromStr as _;

use charly_cli::project::KeyPath;
use libfuzzer_sys::fuzz_target;
use yaml_edit::path::YamlPath as _;
use yaml_edit::validator::{Severity, Validator};
use yaml_edit::{Document, YamlNode};

const VALUE: &str = "fuzzed-value";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(path) = KeyPath::parse(text) else { return };
    let shown = path.to_string();
    let again = KeyPath::parse(&shown).unwrap_or_else(|e| panic!("display {shown:?} does not parse: {e}"));
    assert_eq!(again, path, "display {shown:?} parses to other keys");

    let doc = Document::from_str("project:\n  version: 1\n").unwrap();
    if doc.try_set_path(&path.to_yaml_edit(), VALUE).is_err() {
        // Refused (charly reports it as an error and writes nothing).
        return;
    }
    let written = doc.to_string();
    let reparsed = Document::from_str(&written)
        .unwrap_or_else(|e| panic!("{:?} set {path:?}, giving text that does not parse: {e}\n{written}", path.keys()));
    if let Some(v) = Validator::new().validate(&reparsed).into_iter().find(|v| v.severity == Severity::Error) {
        panic!("keys {:?}: the written text has a validator error {}\n{written}", path.keys(), v.message);
    }
    let mut node = reparsed.as_mapping().map(YamlNode::Mapping).expect("the top level is a map");
    for key in path.keys() {
        let map = node.as_mapping().unwrap_or_else(|| panic!("keys {:?}: {key:?} is not under a map\n{written}", path.keys()));
        let found = map.iter().find(|(k, _)| k.as_scalar().is_some_and(|s| s.as_string() == *key));
        node = found.map(|(_, v)| v).unwrap_or_else(|| panic!("keys {:?}: no key {key:?} in the written text\n{written}", path.keys()));
    }
    let value = node.as_scalar().map(|s| s.as_string());
    assert_eq!(value.as_deref(), Some(VALUE), "keys {:?}: wrong value\n{written}", path.keys());
});
