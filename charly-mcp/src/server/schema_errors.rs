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
            let message = e.to_string();
            if path.is_empty() { message } else { format!("`{path}`: {message}") }
        })
        .collect();
    let long = match instance {
        Value::Object(map) => long_strings(map),
        _ => Vec::new(),
    };
    shorten_in(&errors.join("; "), long).into_owned()
}
