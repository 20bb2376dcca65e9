//! Editing a host's JSON config in place with `jsonc-parser`'s CST (dprint's parser, kept by
//! its author; chosen because its concrete syntax tree keeps every comment, blank line,
//! indentation and trailing comma of the parts it does not touch, which VS Code's and Gemini
//! CLI's JSONC files have, and writes new members in the file's own indentation).

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstObject, CstRootNode};
use serde_json::{Map, Value};

use super::entry::stale_keys;

/// Why a file could not be edited (the caller adds the path).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum JsonProblem {
    /// It does not parse.
    Parse(String),
    /// `what` is there but is not a JSON object.
    NotAnObject(String),
    /// The key `.0` appears twice in `.1` (`the file's top level` or `` `mcpServers` ``...):
    /// which of them a host reads is unclear, and an edit of one would leave the other.
    Duplicate(String, String),
}

/// The first key that appears twice among `object`'s members.
fn duplicate(object: &CstObject) -> Option<String> {
    let mut seen = std::collections::HashSet::new();
    object
        .properties()
        .iter()
        .filter_map(|p| p.name()?.decoded_value().ok())
        .find(|name| !seen.insert(name.clone()))
}

/// Refuses a duplicate key where charly reads or edits: the top level, the servers object
/// `key` and its entry `name`.
fn check_duplicates(root: &CstRootNode, key: &str, name: &str) -> Result<(), JsonProblem> {
    let Some(top) = root.object_value() else { return Ok(()) };
    let twice = |object: &CstObject, what: String| match duplicate(object) {
        Some(k) => Err(JsonProblem::Duplicate(k, what)),
        None => Ok(()),
    };
    twice(&top, "the file's top level".into())?;
    let Some(servers) = top.get(key).and_then(|p| p.object_value()) else { return Ok(()) };
    twice(&servers, format!("`{key}`"))?;
    let Some(entry) = servers.get(name).and_then(|p| p.object_value()) else { return Ok(()) };
    twice(&entry, format!("`{key}.{name}`"))
}

fn parse(text: &str) -> Result<CstRootNode, JsonProblem> {
    let root =
        CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| JsonProblem::Parse(e.to_string()))?;
    match root.value() {
        None => {}
        Some(node) if node.as_object().is_some() => {}
        Some(_) => return Err(JsonProblem::NotAnObject("the file's top level".into())),
    }
    Ok(root)
}

/// The servers object `key` of the file, if there is one.
fn servers(root: &CstRootNode, key: &str, create: bool) -> Result<Option<CstObject>, JsonProblem> {
    let top = if create {
        root.object_value_or_set()
    } else if let Some(top) = root.object_value() {
        top
    } else {
        return Ok(None);
    };
    match top.get(key) {
        Some(prop) => match prop.value() {
            Some(value) if value.as_object().is_some() => Ok(value.as_object()),
            _ => Err(JsonProblem::NotAnObject(format!("`{key}`"))),
        },
        None if create => Ok(Some(top.object_value_or_set(key))),
        None => Ok(None),
    }
}

/// A serde value as the CST's input value, keys in order.
fn input(value: &Value) -> CstInputValue {
    match value {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        Value::Object(map) => CstInputValue::Object(map.iter().map(|(k, v)| (k.clone(), input(v))).collect()),
    }
}

/// `text` with `key.name` set to `entry`: a new member is appended; an existing entry keeps
/// the keys charly does not own and their comments. Returns the new text (equal to `text`
/// when nothing changed).
pub(crate) fn upsert(
    text: &str,
    key: &str,
    name: &str,
    entry: &Map<String, Value>,
) -> Result<String, JsonProblem> {
    let root = parse(if text.trim().is_empty() { "{}" } else { text })?;
    check_duplicates(&root, key, name)?;
    let servers = servers(&root, key, true)?.expect("created");
    match servers.get(name) {
        None => {
            servers.append(name, input(&Value::Object(entry.clone())));
        }
        Some(prop) => match prop.object_value() {
            None => prop.set_value(input(&Value::Object(entry.clone()))),
            Some(existing) => {
                for (k, v) in entry {
                    match existing.get(k) {
                        Some(member) if member.to_serde_value().as_ref() == Some(v) => {}
                        Some(member) => member.set_value(input(v)),
                        None => {
                            existing.append(k, input(v));
                        }
                    }
                }
                for stale in stale_keys(entry) {
                    if let Some(member) = existing.get(stale) {
                        member.remove();
                    }
                }
            }
        },
    }
    let out = root.to_string();
    Ok(if text.trim().is_empty() && !out.ends_with('\n') { format!("{out}\n") } else { out })
}

/// `text` without `key.name`; `None` when there is no such entry.
pub(crate) fn remove(text: &str, key: &str, name: &str) -> Result<Option<String>, JsonProblem> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let root = parse(text)?;
    check_duplicates(&root, key, name)?;
    let Some(servers) = servers(&root, key, false)? else { return Ok(None) };
    let Some(prop) = servers.get(name) else { return Ok(None) };
    prop.remove();
    Ok(Some(root.to_string()))
}

/// The entry `key.name` of `text`, as JSON (`None` when absent or the text does not parse).
pub(crate) fn get(text: &str, key: &str, name: &str) -> Option<Value> {
    let value: Value = jsonc_parser::parse_to_serde_value(text, &ParseOptions::default()).ok()?;
    value.get(key)?.get(name).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn comments_other_servers_and_unknown_keys_stay() {
        let text = "{\n  // my servers\n  \"servers\": {\n    \"other\": {\"type\": \"stdio\", \"command\": \"x\"}, // keep\n  },\n  \"inputs\": [],\n}\n";
        let out = upsert(
            text,
            "servers",
            "charly",
            &entry(json!({"type": "stdio", "command": "/bin/charly", "args": ["mcp"]})),
        )
        .unwrap();
        assert!(
            out.contains("// my servers") && out.contains("// keep") && out.contains("\"inputs\": []"),
            "{out}"
        );
        assert!(out.contains("\"other\": {\"type\": \"stdio\", \"command\": \"x\"}"), "{out}");
        assert_eq!(get(&out, "servers", "charly").unwrap()["command"], "/bin/charly");
        // Again: no change at all.
        let again = upsert(
            &out,
            "servers",
            "charly",
            &entry(json!({"type": "stdio", "command": "/bin/charly", "args": ["mcp"]})),
        )
        .unwrap();
        assert_eq!(again, out);
        let removed = remove(&out, "servers", "charly").unwrap().unwrap();
        assert!(removed.contains("// keep") && get(&removed, "servers", "charly").is_none(), "{removed}");
        assert_eq!(remove(&removed, "servers", "charly").unwrap(), None);
    }

    #[test]
    fn an_update_keeps_the_users_keys_and_drops_the_other_transport() {
        let text = r#"{"mcpServers": {"charly": {"command": "old", "args": [], "env": {"A": "1"}, "disabled": false}}}"#;
        let out = upsert(text, "mcpServers", "charly", &entry(json!({"url": "http://x/mcp"}))).unwrap();
        let got = get(&out, "mcpServers", "charly").unwrap();
        // `env` is a stdio entry's: an HTTP entry drops it with `command` and `args`.
        assert_eq!(got, json!({"disabled": false, "url": "http://x/mcp"}));
    }

    #[test]
    fn an_empty_file_becomes_an_object_and_a_bad_one_is_refused() {
        let out = upsert("", "mcpServers", "c", &entry(json!({"command": "x"}))).unwrap();
        assert_eq!(get(&out, "mcpServers", "c").unwrap(), json!({"command": "x"}));
        assert!(out.ends_with('\n'));
        assert!(matches!(upsert("{", "mcpServers", "c", &Map::new()), Err(JsonProblem::Parse(_))));
        assert_eq!(
            upsert("[]", "mcpServers", "c", &Map::new()),
            Err(JsonProblem::NotAnObject("the file's top level".into()))
        );
        assert_eq!(
            upsert(r#"{"mcpServers": 1}"#, "mcpServers", "c", &Map::new()),
            Err(JsonProblem::NotAnObject("`mcpServers`".into()))
        );
    }
}
