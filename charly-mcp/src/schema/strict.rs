//! The strict-schema rules every published schema (input and output) follows, as data a test
//! can assert over a whole catalog.

use serde_json::Value;

use crate::model::JsonObject;

/// The `format` values JSON Schema 2020-12 defines (§7.3 of its validation vocabulary, plus
/// `duration` and `uuid`). Any other `format` (schemars writes `uint32`, `int64`, `double`,
/// ...) is non-standard: strict validators warn about it, and an output schema drops it.
pub const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The JSON types a schema may name in `type` (JSON Schema 2020-12 §6.1.1), `null` aside.
const CONCRETE_TYPES: &[&str] = &["object", "array", "string", "number", "integer", "boolean"];

/// Keywords whose value is an object of subschemas.
const SCHEMA_MAPS: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose value is one subschema.
const SCHEMA_ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Where a subschema sits, for the rules that depend on it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    /// The schema of a value: the root, a property, `items`, a schema-valued
    /// `additionalProperties`. It needs a concrete `type`.
    Value,
    /// A property of an object that `required` does not list: the value may be absent.
    OptionalProperty,
    /// Anything else (`anyOf` members, `not`, `$defs` entries, ...).
    Other,
}

/// How a keyword holds subschemas.
enum Holds {
    /// An object of them (`properties`, `$defs`, ...).
    Map,
    /// One (`items` as a schema, `additionalProperties`, `not`, ...).
    One,
    /// An array of them (`anyOf`, `prefixItems`, `items` as an array, ...).
    List,
}

fn holds(key: &str, value: &Value) -> Option<Holds> {
    if SCHEMA_MAPS.contains(&key) {
        Some(Holds::Map)
    } else if SCHEMA_LISTS.contains(&key) || (key == "items" && value.is_array()) {
        Some(Holds::List)
    } else if SCHEMA_ONE.contains(&key) {
        Some(Holds::One)
    } else {
        None
    }
}

/// The position of a subschema held by `key` (under `name` for maps).
fn position(key: &str, name: Option<&str>, value: &Value, required: &[String]) -> Position {
    match (key, name) {
        ("properties", Some(name)) if required.iter().any(|r| r == name) => Position::Value,
        ("properties", Some(_)) => Position::OptionalProperty,
        // `additionalProperties: false` (or `true`) permits, it describes no value.
        ("items", None) => Position::Value,
        ("additionalProperties", None) if value.is_object() => Position::Value,
        _ => Position::Other,
    }
}

fn required_of(schema: &JsonObject) -> Vec<String> {
    match schema.get("required") {
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => Vec::new(),
    }
}

/// Calls `f` with each direct subschema of `schema`, the JSON-pointer step to it (`/items`,
/// `/properties/name`) and its [`Position`].
pub(crate) fn for_each_subschema(schema: &JsonObject, mut f: impl FnMut(String, &Value, Position)) {
    let required = required_of(schema);
    for (key, value) in schema {
        match holds(key, value) {
            Some(Holds::Map) => {
                let Value::Object(map) = value else { continue };
                for (name, sub) in map {
                    let position = position(key, Some(name), sub, &required);
                    f(format!("/{}/{}", escape(key), escape(name)), sub, position);
                }
            }
            Some(Holds::One) => f(format!("/{key}"), value, position(key, None, value, &required)),
            Some(Holds::List) => {
                let Value::Array(list) = value else { continue };
                for (i, sub) in list.iter().enumerate() {
                    f(format!("/{key}/{i}"), sub, Position::Other);
                }
            }
            None => {}
        }
    }
}

/// The mutable twin of [`for_each_subschema`].
pub(crate) fn for_each_subschema_mut(
    schema: &mut JsonObject,
    mut f: impl FnMut(String, &mut Value, Position),
) {
    let required = required_of(schema);
    for (key, value) in schema.iter_mut() {
        match holds(key, value) {
            Some(Holds::Map) => {
                let Value::Object(map) = value else { continue };
                for (name, sub) in map.iter_mut() {
                    let position = position(key, Some(name), sub, &required);
                    f(format!("/{}/{}", escape(key), escape(name)), sub, position);
                }
            }
            Some(Holds::One) => {
                let position = position(key, None, value, &required);
                f(format!("/{key}"), value, position)
            }
            Some(Holds::List) => {
                let Value::Array(list) = value else { continue };
                for (i, sub) in list.iter_mut().enumerate() {
                    f(format!("/{key}/{i}"), sub, Position::Other);
                }
            }
            None => {}
        }
    }
}

/// A JSON-pointer reference token (RFC 6901: `~` as `~0`, `/` as `~1`).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// What keeps `schema` from being the strict JSON Schema charly publishes, one message per
/// problem, each starting with the JSON pointer of the subschema it is about (`#` is the
/// root, `#/properties/tags/items` a list's items). Empty when the schema is strict.
///
/// The rules (DESIGN.md, "The derive contract" and "The command shape"; the same for input
/// and output schemas, because hosts such as Gemini and OpenAI's strict mode reject or warn
/// about anything else):
///
/// - no `$schema`, `$ref`, `$defs` or `definitions` key anywhere: every schema is inlined;
/// - no `format` outside the ones JSON Schema 2020-12 defines (`date-time`, `uri`, `uuid`,
///   ...): `uint32`, `int64`, `double` and the like are not formats strict validators know;
/// - no type arrays (`"type": ["string", "null"]`): a `type` is one string;
/// - the root, every property, every `items` and every schema-valued `additionalProperties`
///   has a concrete `type` (`object`, `array`, `string`, `number`, `integer` or `boolean`);
/// - every `"type": "object"` has `properties` (empty for a map or an object without fields).
///
/// Boolean subschemas (`true`, `false`) have no keys and pass, except in a position that needs
/// a `type`.
///
/// ```
/// use charly_mcp::schema::strict_violations;
///
/// let strict = serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}});
/// assert!(strict_violations(strict.as_object().unwrap()).is_empty());
///
/// let loose = serde_json::json!({"type": "object", "properties": {
///     "n": {"type": ["integer", "null"], "format": "uint32"},
///     "m": {"$ref": "#/$defs/M"}}});
/// assert_eq!(strict_violations(loose.as_object().unwrap()), [
///     "#/properties/n: non-standard `format` \"uint32\"",
///     "#/properties/n: `type` is an array ([\"integer\",\"null\"]); use one type",
///     "#/properties/m: `$ref` (inline the referenced schema)",
///     "#/properties/m: no concrete `type`",
/// ]);
/// ```
pub fn strict_violations(schema: &JsonObject) -> Vec<String> {
    let mut out = Vec::new();
    check(schema, "#", Position::Value, &mut out);
    out
}

fn check(schema: &JsonObject, pointer: &str, position: Position, out: &mut Vec<String>) {
    for key in ["$schema", "$ref", "$defs", "definitions"] {
        if schema.contains_key(key) {
            let why = match key {
                "$schema" => "(leave the dialect implicit)",
                "$ref" => "(inline the referenced schema)",
                _ => "(inline the definitions where they are used)",
            };
            out.push(format!("{pointer}: `{key}` {why}"));
        }
    }
    match schema.get("format") {
        Some(Value::String(f)) if STANDARD_FORMATS.contains(&f.as_str()) => {}
        Some(other) => out.push(format!("{pointer}: non-standard `format` {other}")),
        None => {}
    }
    let ty = schema.get("type");
    match ty {
        Some(Value::Array(_)) => {
            out.push(format!("{pointer}: `type` is an array ({}); use one type", ty.unwrap()))
        }
        Some(Value::String(t)) if CONCRETE_TYPES.contains(&t.as_str()) => {}
        Some(other) if position != Position::Other => {
            out.push(format!("{pointer}: `type` {other} is not a concrete type"))
        }
        None if position != Position::Other => out.push(format!("{pointer}: no concrete `type`")),
        _ => {}
    }
    if ty.and_then(Value::as_str) == Some("object") && !schema.contains_key("properties") {
        out.push(format!("{pointer}: an object without `properties` (add `\"properties\": {{}}`)"));
    }
    for_each_subschema(schema, |step, sub, position| match sub {
        Value::Object(sub) => check(sub, &format!("{pointer}{step}"), position, out),
        Value::Bool(_) if position != Position::Other => {
            out.push(format!("{pointer}{step}: a boolean schema has no concrete `type`"))
        }
        _ => {}
    });
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn violations(schema: Value) -> Vec<String> {
        strict_violations(schema.as_object().unwrap())
    }

    #[test]
    fn strict_schemas_pass() {
        assert_eq!(
            violations(json!({"type": "object", "properties": {
                "when": {"type": "string", "format": "date-time"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "properties": {}, "additionalProperties": {"type": "string"}},
                "level": {"type": "string", "enum": ["low", "high"]},
                "either": {"type": "string", "anyOf": [{"minLength": 1}, {"const": ""}]}
            }, "required": ["tags"], "additionalProperties": false})),
            Vec::<String>::new()
        );
    }

    #[test]
    fn every_rule_names_where() {
        assert_eq!(
            violations(json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
                "properties": {"a/b": {"$ref": "#/$defs/X"}, "m": {"type": "object"}},
                "$defs": {"X": {"type": "integer", "format": "int64"}},
                "items": true})),
            [
                "#: `$schema` (leave the dialect implicit)",
                "#: `$defs` (inline the definitions where they are used)",
                "#: no concrete `type`",
                "#/properties/a~1b: `$ref` (inline the referenced schema)",
                "#/properties/a~1b: no concrete `type`",
                "#/properties/m: an object without `properties` (add `\"properties\": {}`)",
                "#/$defs/X: non-standard `format` \"int64\"",
                "#/items: a boolean schema has no concrete `type`",
            ]
        );
        assert_eq!(violations(json!({"type": "null"})), ["#: `type` \"null\" is not a concrete type"]);
    }
}
