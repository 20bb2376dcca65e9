//! MCP tool names: `^[a-zA-Z0-9_.-]{1,64}$` (the form MCP clients accept; the derive checks
//! the same rule at compile time).

/// Longest tool name, in characters.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// Whether `name` matches `^[a-zA-Z0-9_.-]{1,64}$`.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LEN).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The `_`-joined spelling of a dotted tool name, for clients that reject dots
/// (`box.new.project` → `box_new_project`).
pub fn underscored(name: &str) -> String {
    name.replace('.', "_")
}

/// `text` with every dotted tool name in it (`is_tool` says which) spelled `_`-joined, for a
/// client that sees the `_` names: `None` when there is none. A name is a whole word, a
/// maximal run of `[A-Za-z0-9_.-]` without its trailing dots (a sentence's full stop):
/// `box.list` is not touched inside `box.list.boxes` or `notes/box.list.txt`, and
/// `` `box.write`: `` becomes `` `box_write`: ``.
pub fn respell(text: &str, is_tool: impl Fn(&str) -> bool) -> Option<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    let mut out = String::new();
    let mut changed = false;
    let mut rest = text;
    while let Some(start) = rest.find(word) {
        let len = rest[start..].find(|c: char| !word(c)).unwrap_or(rest.len() - start);
        let token = &rest[start..start + len];
        let core = token.trim_end_matches('.');
        out.push_str(&rest[..start]);
        if core.contains('.') && is_tool(core) {
            out.push_str(&underscored(core));
            out.push_str(&token[core.len()..]);
            changed = true;
        } else {
            out.push_str(token);
        }
        rest = &rest[start + len..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// [`respell`] on every `description` and `title` string of a JSON Schema (or any JSON), in
/// place; whether anything changed. Keys, `enum`/`const`/`default` values and patterns are
/// left alone: they are data, not prose.
pub fn respell_descriptions(value: &mut serde_json::Value, is_tool: &dyn Fn(&str) -> bool) -> bool {
    let mut changed = false;
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match item {
                    serde_json::Value::String(text) if key == "description" || key == "title" => {
                        if let Some(new) = respell(text, is_tool) {
                            *text = new;
                            changed = true;
                        }
                    }
                    serde_json::Value::Object(_) | serde_json::Value::Array(_)
                        if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") =>
                    {
                        changed |= respell_descriptions(item, is_tool);
                    }
                    _ => {}
                }
            }
        }
        serde_json::Value::Array(list) => {
            for item in list {
                changed |= respell_descriptions(item, is_tool);
            }
        }
        _ => {}
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        for ok in ["a", "box.new.project", "candy.add-rpm", "A_b-9", &"x".repeat(64)] {
            assert!(is_valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "a b", "é", "a/b", &"x".repeat(65)] {
            assert!(!is_valid_tool_name(bad), "{bad}");
        }
        assert_eq!(underscored("box.new.project"), "box_new_project");
    }

    #[test]
    fn respelling_changes_whole_tool_names_only() {
        let tools = ["box.write", "box.list", "box.list.boxes"];
        let is_tool = |n: &str| tools.contains(&n);
        assert_eq!(
            respell("tool `box.write`: argument `path`: see box.list.boxes.", is_tool).as_deref(),
            Some("tool `box_write`: argument `path`: see box_list_boxes.")
        );
        assert_eq!(
            respell("box.write: no such file notes/box.list.txt", is_tool).as_deref(),
            Some("box_write: no such file notes/box.list.txt")
        );
        assert_eq!(respell("nothing here: box.lister, v1.2.3", is_tool), None);
        let mut schema = serde_json::json!({
            "description": "Like box.list",
            "properties": {"box.list": {"description": "see box.write", "enum": ["box.list"]}}
        });
        assert!(respell_descriptions(&mut schema, &is_tool));
        assert_eq!(
            schema,
            serde_json::json!({
                "description": "Like box_list",
                "properties": {"box.list": {"description": "see box_write", "enum": ["box.list"]}}
            })
        );
    }
}
