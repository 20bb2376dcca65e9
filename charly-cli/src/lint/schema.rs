//! Walking a JSON Schema: every subschema with its JSON pointer, so a rule looks at one node at
//! a time and says where it found the problem.

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
const ONE: [&str; 9] = [
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
];

/// Keywords whose value is a list of subschemas.
const LIST: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords whose value is a map of names to subschemas.
const MAP: [&str; 5] = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];

/// Calls `visit(pointer, node)` for `schema` (pointer `""`) and every subschema below it, in
/// document order. Boolean schemas and values that are not objects are not visited.
pub(crate) fn walk(schema: &Map<String, Value>, visit: &mut dyn FnMut(&str, &Map<String, Value>)) {
    walk_at(schema, String::new(), visit);
}

fn walk_at(node: &Map<String, Value>, at: String, visit: &mut dyn FnMut(&str, &Map<String, Value>)) {
    visit(&at, node);
    for (key, value) in node {
        let key = key.as_str();
        let here = |rest: &str| format!("{at}/{}{rest}", escape(key));
        match value {
            Value::Object(sub) if ONE.contains(&key) => walk_at(sub, here(""), visit),
            // Draft-07 tuple form `items: [..]`, still seen in the wild.
            Value::Array(list) if LIST.contains(&key) || key == "items" => {
                for (i, item) in list.iter().enumerate() {
                    if let Value::Object(sub) = item {
                        walk_at(sub, here(&format!("/{i}")), visit);
                    }
                }
            }
            Value::Object(map) if MAP.contains(&key) => {
                for (name, item) in map {
                    if let Value::Object(sub) = item {
                        walk_at(sub, here(&format!("/{}", escape(name))), visit);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A JSON pointer token (RFC 6901): `~` → `~0`, `/` → `~1`.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The node's `type` values: `"string"` → `["string"]`, `["string","null"]` → both, none → `[]`.
pub(crate) fn types(node: &Map<String, Value>) -> Vec<&str> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The JSON type name of a value, as JSON Schema spells it.
pub(crate) fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subschema_is_visited_with_its_pointer() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"a/b": {"type": "array", "items": {"type": "string"}}},
            "$defs": {"x": {"anyOf": [{"type": "integer"}, true]}},
            "enum": [{"properties": {"no": {}}}]
        });
        let mut seen = Vec::new();
        walk(schema.as_object().unwrap(), &mut |at, _| seen.push(at.to_owned()));
        assert_eq!(seen, ["", "/properties/a~1b", "/properties/a~1b/items", "/$defs/x", "/$defs/x/anyOf/0"]);
    }
}
