//! The schemas of CLI leaves: plain JSON Schema 2020-12 objects that strict validators and
//! strict hosts take without a warning.
//!
//! | item | what |
//! |---|---|
//! | [`ObjectSchema`] | a leaf's input schema, built from its argument specs |
//! | [`output_schema`] | a leaf's output schema, from its report type (`#[mcp_tool(output = T)]`) |
//! | [`strict_violations`] | the strict rules both follow, checkable over a whole catalog |
//!
//! Every input schema is
//! `{"type":"object","properties":{..},"required":[..],"additionalProperties":false}`
//! (`required` only when something is), with a concrete `type` on every property and no
//! `$schema`, `$ref`, `$defs` or `format` keys.

mod output;
mod strict;

pub use output::output_schema;
pub use strict::{STANDARD_FORMATS, strict_violations};

use serde_json::{Map, Value, json};

use crate::arg::{Arg, FlagAction, Help, Scalar, Shape};
use crate::model::JsonObject;

/// The input schema of one leaf: one [`ObjectSchema::arg`] per clap argument, in declaration
/// order (flattened structs merged in place), made once per leaf from the specs its generated
/// code lists ([`crate::arg::ArgList`]).
#[derive(Debug, Default)]
pub struct ObjectSchema {
    properties: Map<String, Value>,
    required: Vec<Value>,
}

impl ObjectSchema {
    /// Adds the property for `arg`.
    ///
    /// `defaults` are clap's default value texts (`default_value`, `default_values`, or the
    /// `Display` of `default_value_t`), coerced to the property's type; a text that does not
    /// coerce is left out (clap rejects it when parsing). `possible` are the allowed values
    /// (a `ValueEnum` or `value_parser = [..]`), in clap's spelling.
    pub fn arg(&mut self, arg: &Arg, help: Help, defaults: &[String], possible: Option<Vec<String>>) {
        let mut prop = match arg.shape {
            Shape::Flag(action) => {
                json!({"type": "boolean", "default": action == FlagAction::SetFalse})
            }
            Shape::Count => json!({"type": "integer", "minimum": 0, "maximum": u8::MAX, "default": 0}),
            Shape::Single => {
                let mut prop = scalar_schema(arg.scalar, arg.delimiter, possible);
                if let Some(default) = defaults.first().and_then(|d| coerce(arg.scalar, d)) {
                    prop["default"] = default;
                }
                prop
            }
            Shape::Many { min, max } => {
                let mut prop =
                    json!({"type": "array", "items": scalar_schema(arg.scalar, arg.delimiter, possible)});
                if min > 0 {
                    prop["minItems"] = min.into();
                }
                if let Some(max) = max {
                    prop["maxItems"] = max.into();
                }
                let coerced: Option<Vec<Value>> = defaults.iter().map(|d| coerce(arg.scalar, d)).collect();
                if let Some(coerced) = coerced.filter(|c| !c.is_empty()) {
                    prop["default"] = Value::Array(coerced);
                }
                prop
            }
        };
        if let Some(description) = describe(help) {
            prop["description"] = description.into();
        }
        if arg.required {
            self.required.push(arg.id.into());
        }
        self.properties.insert(arg.id.to_owned(), prop);
    }

    /// The schema as a JSON object.
    pub fn into_json(self) -> JsonObject {
        let mut schema = Map::new();
        schema.insert("type".into(), "object".into());
        schema.insert("properties".into(), Value::Object(self.properties));
        if !self.required.is_empty() {
            schema.insert("required".into(), Value::Array(self.required));
        }
        schema.insert("additionalProperties".into(), false.into());
        schema
    }
}

/// The schema of one value. With a `value_delimiter`, a text value cannot hold the delimiter
/// (clap would split it): `pattern` says so.
fn scalar_schema(scalar: Scalar, delimiter: Option<char>, possible: Option<Vec<String>>) -> Value {
    let mut schema = match scalar {
        Scalar::Bool => json!({"type": "boolean"}),
        Scalar::Int { min, max } => {
            json!({"type": "integer", "minimum": number(min), "maximum": number(max)})
        }
        Scalar::Float { bits: 32 } => {
            let max = f64::from(f32::MAX);
            json!({"type": "number", "minimum": -max, "maximum": max})
        }
        Scalar::Float { .. } => json!({"type": "number"}),
        Scalar::Char => json!({"type": "string", "minLength": 1, "maxLength": 1}),
        Scalar::Path => json!({"type": "string", "minLength": 1}),
        Scalar::String => json!({"type": "string"}),
    };
    match (possible, delimiter) {
        (Some(values), _) => schema["enum"] = values.into(),
        (None, Some(d)) if matches!(scalar, Scalar::Char | Scalar::Path | Scalar::String) => {
            schema["pattern"] = format!("^[^{}]*$", class_escape(d)).into();
        }
        (None, _) => {}
    }
    schema
}

/// `c` inside a regex character class.
fn class_escape(c: char) -> String {
    if matches!(c, '\\' | ']' | '[' | '^' | '-') { format!("\\{c}") } else { c.to_string() }
}

/// An integer bound as a JSON number (bounds are held to `i64::MIN..=u64::MAX`).
fn number(n: i128) -> Value {
    match (i64::try_from(n), u64::try_from(n)) {
        (Ok(i), _) => i.into(),
        (_, Ok(u)) => u.into(),
        _ => unreachable!("integer bounds are clamped to the range of JSON numbers"),
    }
}

/// A default value text as the property's JSON type, the way clap's value parser reads it.
fn coerce(scalar: Scalar, text: &str) -> Option<Value> {
    match scalar {
        Scalar::Bool => text.parse::<bool>().ok().map(Value::Bool),
        Scalar::Int { .. } => text.parse::<i128>().ok().map(number_checked)?,
        Scalar::Float { .. } => {
            text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
        }
        Scalar::Char | Scalar::Path | Scalar::String => Some(Value::String(text.to_owned())),
    }
}

fn number_checked(n: i128) -> Option<Value> {
    i64::try_from(n).map(Value::from).or_else(|_| u64::try_from(n).map(Value::from)).ok()
}

/// `help`, or `long_help` when there is one, with `[env: VAR]` appended as clap's help shows it.
fn describe(help: Help) -> Option<String> {
    let text = help.long_help.or(help.help);
    match (text, help.env) {
        (None, None) => None,
        (Some(text), None) => Some(text.to_owned()),
        (None, Some(env)) => Some(format!("[env: {env}]")),
        (Some(text), Some(env)) => Some(format!("{text} [env: {env}]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_example_from_the_design() {
        let mut s = ObjectSchema::default();
        let base = Arg {
            id: "name",
            long: None,
            short: None,
            positional: true,
            shape: Shape::Single,
            scalar: Scalar::String,
            required: true,
            index: None,
            delimiter: None,
            value_name: None,
            send_default: false,
            default_texts: Vec::new(),
        };
        s.arg(&base, Help { help: Some("Candy name"), ..Help::default() }, &[], None);
        s.arg(
            &Arg { id: "packages", shape: Shape::Many { min: 1, max: None }, ..base.clone() },
            Help { help: Some("Packages to add"), ..Help::default() },
            &[],
            None,
        );
        s.arg(
            &Arg {
                id: "refresh",
                long: Some("refresh"),
                positional: false,
                scalar: Scalar::Bool,
                required: false,
                ..base
            },
            Help { help: Some("Refresh the package index first"), ..Help::default() },
            &["true".to_owned()],
            None,
        );
        assert_eq!(
            Value::Object(s.into_json()),
            json!({"type":"object","properties":{
                "name":{"type":"string","description":"Candy name"},
                "packages":{"type":"array","items":{"type":"string"},"minItems":1,"description":"Packages to add"},
                "refresh":{"type":"boolean","default":true,"description":"Refresh the package index first"}},
              "required":["name","packages"],"additionalProperties":false})
        );
    }

    #[test]
    fn delimited_text_cannot_hold_its_delimiter() {
        assert_eq!(
            scalar_schema(Scalar::String, Some(','), None),
            json!({"type":"string","pattern":"^[^,]*$"})
        );
        assert_eq!(scalar_schema(Scalar::String, Some(']'), None)["pattern"], "^[^\\]]*$");
        assert_eq!(scalar_schema(Scalar::Int { min: 0, max: 1 }, Some(','), None).get("pattern"), None);
        let with_enum = scalar_schema(Scalar::String, Some(','), Some(vec!["a".into()]));
        assert_eq!(with_enum, json!({"type":"string","enum":["a"]}));
    }

    #[test]
    fn defaults_coerce_or_are_left_out() {
        assert_eq!(coerce(Scalar::Int { min: 0, max: 9 }, "7"), Some(json!(7)));
        assert_eq!(coerce(Scalar::Int { min: 0, max: 9 }, "x"), None);
        assert_eq!(coerce(Scalar::Float { bits: 64 }, "1.5"), Some(json!(1.5)));
        assert_eq!(coerce(Scalar::Bool, "true"), Some(json!(true)));
        assert_eq!(coerce(Scalar::String, "30s"), Some(json!("30s")));
        assert_eq!(number(u64::MAX.into()), json!(u64::MAX));
        assert_eq!(
            describe(Help { help: Some("Token"), long_help: None, env: Some("TOKEN") }).unwrap(),
            "Token [env: TOKEN]"
        );
    }
}
