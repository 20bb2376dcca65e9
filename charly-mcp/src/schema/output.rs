//! Output schemas: rmcp's schema of a report type, made strict.

use std::sync::Arc;

use serde_json::Value;

use super::strict::{Position, STANDARD_FORMATS, for_each_subschema_mut};
use crate::model::JsonObject;

/// The `outputSchema` of a tool whose `structuredContent` is a serialised `T`: rmcp's
/// [`schema_for_output::<T>()`](rmcp::handler::server::tool::schema_for_output) (schemars
/// 1.x, JSON Schema 2020-12, the serialize contract: what `T`'s `Serialize` writes), made
/// strict so that it passes [`super::strict_violations`]:
///
/// - every `$ref` is replaced by the `$defs` entry it names (keys beside the `$ref`, such as
///   a field's `description`, win), and `$defs` and `$schema` are removed;
/// - non-standard `format`s (`uint32`, `uint`, `int64`, `double`, ...) are dropped; the ones
///   JSON Schema 2020-12 defines (`date-time`, `uri`, `uuid`, ...) stay;
/// - `null` is taken out of type arrays, `enum`s and `anyOf`/`oneOf` (an `Option<T>` field
///   becomes `T`'s schema; an `anyOf` left with one member is merged into its parent), so no
///   `"type": [.., "null"]` remains, which hosts such as Gemini reject;
/// - every `"type": "object"` gets `properties` (empty for a map such as
///   `BTreeMap<String, String>`, whose values stay under `additionalProperties`);
/// - a `oneOf` of constants (a unit enum whose variants have doc comments) becomes
///   `{"type": "string", "enum": [..]}`, as a value enum is in an input schema (the variants'
///   own doc comments are dropped; the field's stays);
/// - `type`, `description`, `enum`, `properties` and `required` come first in each schema.
///
/// Taking `null` out stays true only where a value can be absent instead: a property not in
/// `required`. With the serialize contract, an `Option` field is left out of `required` only
/// when `None` is not written, so **report types skip serializing `None`**:
///
/// ```
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Report {
///     /// Where the image went.
///     path: String,
///     /// The digest, once known.
///     #[serde(skip_serializing_if = "Option::is_none")]
///     digest: Option<String>,
/// }
///
/// let schema = charly_mcp::schema::output_schema::<Report>();
/// assert_eq!(serde_json::Value::Object((*schema).clone()), serde_json::json!({
///     "type": "object",
///     "properties": {
///         "path": {"type": "string", "description": "Where the image went."},
///         "digest": {"type": "string", "description": "The digest, once known."}
///     },
///     "required": ["path"]
/// }));
/// ```
///
/// `#[mcp_tool(output = T)]` calls this when the catalog is built. The result is cached per
/// thread by rmcp before it is made strict; call it once per tool.
///
/// # Panics
///
/// With a message naming `T`, when the schema cannot be made strict and true:
/// - `T`'s JSON does not have an object at its root (a report's JSON is an object; put a
///   list under a named field), so rmcp could not list it for peers older than 2026-07-28;
/// - `T` is recursive (a `$ref` to a definition being inlined), which has no inlined form;
/// - `null` is a value `T` writes where it cannot be left out instead: an `Option` field
///   without `#[serde(skip_serializing_if = "Option::is_none")]`, an `Option` inside a list
///   or map, or a unit `()`.
pub fn output_schema<T: schemars::JsonSchema + 'static>() -> Arc<JsonObject> {
    let ty = std::any::type_name::<T>();
    let mut schema = rmcp::handler::server::tool::schema_for_output::<T>().as_ref().clone();
    schema.remove("$schema");
    let mut defs = match schema.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => JsonObject::new(),
    };
    if let Some(Value::Object(more)) = schema.remove("definitions") {
        defs.extend(more);
    }
    let strict = Strict { ty, defs: &defs };
    strict.inline(&mut schema, &mut Vec::new());
    strict.strip_null(&mut schema, "#", Position::Value);
    strict.finish(&mut schema);
    match schema.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        other => panic!(
            "charly: the output type `{ty}` has {} at the root of its JSON schema, but a report's \
             JSON has an object at its root (put a list or a value under a named field): MCP \
             clients before 2026-07-28 get `outputSchema` and `structuredContent` only for objects",
            match other {
                Some(t) => format!("`\"type\": {t}`"),
                None => "no `type`".to_owned(),
            }
        ),
    }
    Arc::new(schema)
}

/// One output type's schema being made strict.
struct Strict<'a> {
    /// The type, for panic messages.
    ty: &'a str,
    /// Its `$defs`, by name.
    defs: &'a JsonObject,
}

impl Strict<'_> {
    /// Replaces every `$ref` below `schema` with its definition; `stack` holds the names
    /// being inlined, so a definition that refers to itself is found.
    fn inline(&self, schema: &mut JsonObject, stack: &mut Vec<String>) {
        if let Some(reference) = schema.remove("$ref") {
            let name = reference
                .as_str()
                .and_then(|r| r.strip_prefix("#/$defs/").or_else(|| r.strip_prefix("#/definitions/")))
                .map(|n| n.replace("~1", "/").replace("~0", "~"));
            let ty = self.ty;
            let Some(name) = name else {
                // `#` is the root type itself.
                panic!(
                    "charly: the output type `{ty}` is recursive (it contains itself, {reference} in \
                     its schema), and an output schema has every `$ref` inlined; give the recursive \
                     part a flat shape (a list with parent ids, say)"
                );
            };
            if stack.contains(&name) {
                panic!(
                    "charly: the output type `{ty}` is recursive (`{name}` contains itself: {} > \
                     {name}), and an output schema has every `$ref` inlined; give the recursive part \
                     a flat shape (a list with parent ids, say)",
                    stack.join(" > ")
                );
            }
            let Some(Value::Object(def)) = self.defs.get(&name) else {
                panic!("charly: the output schema of `{ty}` refers to `{name}`, which it does not define");
            };
            let mut def = def.clone();
            stack.push(name);
            self.inline(&mut def, stack);
            stack.pop();
            // The keys beside the `$ref` (a field's description) win over the definition's.
            for (key, value) in std::mem::take(schema) {
                def.insert(key, value);
            }
            *schema = def;
        }
        for_each_subschema_mut(schema, |_, sub, _| {
            if let Value::Object(sub) = sub {
                self.inline(sub, stack);
            }
        });
    }

    /// Takes `null` out of `schema` and its subschemas; panics where a `null` the type writes
    /// would then fail the schema (anywhere but a property that may be absent).
    fn strip_null(&self, schema: &mut JsonObject, pointer: &str, position: Position) {
        let mut nullable = false;
        if let Some(Value::Array(types)) = schema.get_mut("type") {
            let before = types.len();
            types.retain(|t| t != "null");
            nullable |= types.len() < before;
            if types.len() == 1 {
                let only = types.remove(0);
                schema.insert("type".into(), only);
            }
        }
        if schema.get("type").and_then(Value::as_str) == Some("null") {
            self.null_panic(pointer, "always writes `null` (a unit `()`)", "leave that field out");
        }
        if let Some(Value::Array(values)) = schema.get_mut("enum") {
            let before = values.len();
            values.retain(|v| !v.is_null());
            nullable |= values.len() < before;
        }
        if schema.get("const") == Some(&Value::Null) {
            self.null_panic(pointer, "always writes `null`", "leave that field out");
        }
        let mut merge = None;
        for key in ["anyOf", "oneOf"] {
            let Some(Value::Array(members)) = schema.get_mut(key) else { continue };
            let before = members.len();
            members.retain(|m| !is_null_schema(m));
            nullable |= members.len() < before;
            if members.len() == 1 && members.len() < before {
                merge = members.pop();
                schema.remove(key);
            }
        }
        if nullable && position != Position::OptionalProperty {
            if pointer == "#" {
                panic!(
                    "charly: the output type `{}` may be `null`, but a report's JSON has an object at \
                     its root",
                    self.ty
                );
            }
            if position == Position::Other
                || pointer.ends_with("/items")
                || pointer.ends_with("/additionalProperties")
            {
                self.null_panic(
                    pointer,
                    "may write `null` (an `Option` inside a list, a map or an enum)",
                    "use a type without `null` there",
                );
            }
            self.null_panic(
                pointer,
                "writes `null` for `None`",
                "add `#[serde(skip_serializing_if = \"Option::is_none\")]` to that field, so that \
                 `None` is left out",
            );
        }
        if let Some(Value::Object(member)) = merge {
            // The parent's own keys (a field's description) win over the member's.
            for (key, value) in member {
                schema.entry(key).or_insert(value);
            }
            // The member may hold nulls of its own (`Option<Option<T>>`).
            return self.strip_null(schema, pointer, position);
        }
        for_each_subschema_mut(schema, |step, sub, position| {
            if let Value::Object(sub) = sub {
                self.strip_null(sub, &format!("{pointer}{step}"), position);
            }
        });
    }

    fn null_panic(&self, pointer: &str, what: &str, fix: &str) -> ! {
        panic!(
            "charly: the output type `{}` {what} at {pointer}, but an output schema has no `null` \
             type (hosts reject type arrays): {fix}",
            self.ty
        )
    }

    /// Turns `oneOf` lists of constants into `enum`s, drops non-standard formats, gives every
    /// object `properties`, and puts `type` and `description` first.
    fn finish(&self, schema: &mut JsonObject) {
        for key in ["oneOf", "anyOf"] {
            if let Some(Value::Array(members)) = schema.get(key)
                && let Some((ty, values)) = constants(members)
            {
                schema.remove(key);
                if let Some(ty) = ty {
                    schema.insert("type".into(), ty);
                }
                schema.insert("enum".into(), Value::Array(values));
            }
        }
        let standard =
            schema.get("format").and_then(Value::as_str).is_none_or(|f| STANDARD_FORMATS.contains(&f));
        if !standard {
            schema.remove("format");
        }
        if schema.get("type").and_then(Value::as_str) == Some("object") && !schema.contains_key("properties")
        {
            schema.insert("properties".into(), Value::Object(JsonObject::new()));
        }
        for_each_subschema_mut(schema, |_, sub, _| {
            if let Value::Object(sub) = sub {
                self.finish(sub);
            }
        });
        // schemars orders keys as its generator happened to write them; a reader (and a
        // snapshot) wants `type` first, then `description`, then `properties` and `required`.
        let mut ordered = JsonObject::new();
        for key in ["type", "description", "enum", "properties", "required"] {
            if let Some(value) = schema.remove(key) {
                ordered.insert(key.into(), value);
            }
        }
        ordered.append(schema);
        *schema = ordered;
    }
}

/// The `type` and values of a `oneOf` whose members are each one constant (schemars writes
/// a unit enum whose variants have doc comments so, one `{"const": .., "description": ..}`
/// per variant): the same as an `enum`, which is what input schemas use for value enums.
/// `None` when a member is anything more than a constant, or the members' types differ.
fn constants(members: &[Value]) -> Option<(Option<Value>, Vec<Value>)> {
    let mut ty = None;
    let mut values = Vec::with_capacity(members.len());
    for (i, member) in members.iter().enumerate() {
        let member = member.as_object()?;
        if !member.keys().all(|k| matches!(k.as_str(), "const" | "type" | "description" | "title")) {
            return None;
        }
        values.push(member.get("const")?.clone());
        let member_ty = member.get("type").cloned();
        if i == 0 {
            ty = member_ty;
        } else if member_ty != ty {
            return None;
        }
    }
    Some((ty, values))
}

/// `{"type": "null"}` (with nothing else that matters).
fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
}
