//! What `jsonschema` finds wrong with a value, in one message for a caller: the input checks
//! of hand-written tools and the output checks of their structured content share it.

use serde_json::Value;

use crate::quote::{long_strings, shorten_in};

/// Every error `validator` finds in `instance`, joined by `; `, each after the JSON pointer of
/// the value it is about (none for the root). Values longer than a quote are shortened
/// ([`shorten_in`]): the validator's messages quote what they judge.
pub(crate) fn describe(validator: &jsonschema::Validator, instance: &Value) -> String {
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| {
            let path = e.instance_path().to_string();
            let message = unexpected_keys(&e, instance).unwrap_or_else(|| e.to_string());
            if path.is_empty() { message } else { format!("`{path}`: {message}") }
        })
        .collect();
    let long = match instance {
        Value::Object(map) => long_strings(map),
        _ => Vec::new(),
    };
    shorten_in(&errors.join("; "), long).into_owned()
}

/// The message for `additionalProperties: false` on an object schema without `properties`:
/// jsonschema reports it as a false schema refusing the first member's value ("False schema
/// does not allow 1"), naming no key; every key of such an object is unexpected, so this names
/// them all, in the words jsonschema uses when `properties` is there.
fn unexpected_keys(error: &jsonschema::ValidationError<'_>, instance: &Value) -> Option<String> {
    if !matches!(error.kind(), jsonschema::error::ValidationErrorKind::FalseSchema) {
        return None;
    }
    let mut segments = error.schema_path().as_str().rsplit('/');
    // `/properties/additionalProperties` is a property of that name whose schema is `false`.
    let keyword = segments.next()?;
    let parent = segments.next();
    if keyword != "additionalProperties"
        || matches!(
            parent,
            Some("properties" | "patternProperties" | "$defs" | "definitions" | "dependentSchemas")
        )
    {
        return None;
    }
    let Value::Object(object) = instance.pointer(error.instance_path().as_str())? else { return None };
    if object.is_empty() {
        return None;
    }
    let keys: Vec<String> = object.keys().map(|k| format!("'{k}'")).collect();
    let verb = if keys.len() == 1 { "was" } else { "were" };
    Some(format!("Additional properties are not allowed ({} {verb} unexpected)", keys.join(", ")))
}
