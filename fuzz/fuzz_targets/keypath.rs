//! The YAML key-path parser (charly-cli/src/project/keypath.rs `KeyPath::parse`) and its
//! translation into yaml-edit's syntax, which `box.set`/`candy.set` rely on.
//!
//! Input: a dot path. Checked, for every path that parses:
//! - its display parses back to the same keys;
//! - setting it with yaml-edit (through `to_yaml_edit`, as `box.set` does) writes exactly
//!   those keys and list items: the re-parsed text, walked segment by segment with no path
//!   syntax involved, holds the value there, and yaml-edit's validator finds no error in it.
#![no_main]

use std::str::FromStr as _;

use charly_cli::project::{KeyPath, Segment};
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
        .unwrap_or_else(|e| panic!("{path} set, giving text that does not parse: {e}\n{written}"));
    if let Some(v) = Validator::new().validate(&reparsed).into_iter().find(|v| v.severity == Severity::Error) {
        panic!("{path}: the written text has a validator error {}\n{written}", v.message);
    }
    let mut node = reparsed.as_mapping().map(YamlNode::Mapping).expect("the top level is a map");
    for segment in path.segments() {
        let found = match segment {
            Segment::Key(key) => {
                let map = node.as_mapping().unwrap_or_else(|| panic!("{path}: {key:?} is not under a map\n{written}"));
                map.iter().find(|(k, _)| k.as_scalar().is_some_and(|s| s.as_string() == *key)).map(|(_, v)| v)
            }
            Segment::Index(index) => {
                // yaml-edit reads an index on a map as a key; charly refuses that path before
                // yaml-edit sees it (`yamlfile::walk`).
                let Some(list) = node.as_sequence() else { return };
                list.get(*index)
            }
        };
        node = found.unwrap_or_else(|| panic!("{path}: no {segment} in the written text\n{written}"));
    }
    let value = node.as_scalar().map(|s| s.as_string());
    assert_eq!(value.as_deref(), Some(VALUE), "{path}: wrong value\n{written}");
});
