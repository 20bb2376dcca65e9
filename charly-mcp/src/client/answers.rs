//! [`Answers`]: what charly tells a server that asks for input (a form to fill, a model
//! sample, the client's roots), given on the command line or in a check plan, and
//! [`Question`], what it could not answer.
//!
//! charly runs unattended, so nothing is asked of a person: a form is filled from the answers
//! given for it (`--elicit FIELD=VALUE`) and the schema's `default`s; a question left open
//! makes the operation fail with an error naming it and how to answer it. The same answers
//! serve a server-to-client request (protocol 2025-11-25 and before) and an input-required
//! result (2026-07-28).

#![allow(deprecated)] // Sampling and roots are deprecated by SEP-2577, still part of 2026-07-28.

use std::collections::BTreeMap;
use std::fmt;

use rmcp::model::{
    ClientCapabilities, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability, JsonObject, ListRootsResult, Root,
    RootsCapabilities, SamplingCapability, SamplingMessage,
};
use serde_json::Value;

use super::error::ClientError;

/// The answers the client gives when a server asks for input.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Answers {
    /// Form fields, by name, as text (`--elicit FIELD=VALUE`); each is converted to the type
    /// the form's schema gives the field (integer, number, boolean, an array as a
    /// comma-separated list, text otherwise).
    pub fields: BTreeMap<String, String>,
    /// The text that answers a sampling request (`--sample TEXT`); without it the client does
    /// not declare the `sampling` capability.
    pub sample: Option<String>,
    /// The roots the client reports (`--root URI`); without any it does not declare `roots`.
    pub roots: Vec<String>,
}

/// A question the client could not answer, for the error that names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Question {
    /// The method the server asked with (`elicitation/create`, `sampling/createMessage`,
    /// `roots/list`).
    pub method: String,
    /// The input key of the question (2026-07-28), when it has one.
    pub key: Option<String>,
    /// What the server asked, and what is missing, in words.
    pub detail: String,
}

impl fmt::Display for Question {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(f, "{} (input `{key}`): {}", self.method, self.detail),
            None => write!(f, "{}: {}", self.method, self.detail),
        }
    }
}

impl Answers {
    /// Adds one `FIELD=VALUE` answer, as `--elicit` takes it.
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidInput`] when `arg` has no `=` or an empty field name.
    pub fn elicit(mut self, arg: &str) -> Result<Answers, ClientError> {
        match arg.split_once('=') {
            Some((field, value)) if !field.trim().is_empty() => {
                self.fields.insert(field.trim().to_owned(), value.to_owned());
                Ok(self)
            }
            _ => Err(ClientError::InvalidInput(format!(
                "--elicit {arg:?}: expected FIELD=VALUE, e.g. --elicit name=Alice"
            ))),
        }
    }

    /// The capabilities these answers let the client declare: form elicitation always (a
    /// form can be filled from its defaults), `sampling` with a sample, `roots` with roots,
    /// and the tasks extension (SEP-2663), whose tasks the client follows to their end.
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut capabilities = ClientCapabilities::default();
        // Not the builder's `enable_tasks`: rmcp offers it only with its `server` feature.
        let tasks = (rmcp::model::TASKS_EXTENSION_ID.to_owned(), Default::default());
        capabilities.extensions = Some([tasks].into_iter().collect());
        capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        if self.sample.is_some() {
            capabilities.sampling = Some(SamplingCapability::default());
        }
        if !self.roots.is_empty() {
            capabilities.roots = Some(RootsCapabilities::default());
        }
        capabilities
    }

    /// The answer to an elicitation: `accept` with every field given for it or defaulted in
    /// its schema, once every required field has one.
    ///
    /// # Errors
    ///
    /// The [`Question`] when a required field has no value, a value does not fit its field's
    /// type, or the elicitation is a URL one (which needs a person).
    pub fn answer_elicitation(
        &self,
        params: &ElicitRequestParams,
        key: Option<&str>,
    ) -> Result<ElicitResult, Question> {
        let question = |detail: String| Question {
            method: "elicitation/create".into(),
            key: key.map(str::to_owned),
            detail,
        };
        let (message, schema) = match params {
            ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
                (message.clone(), serde_json::to_value(requested_schema).unwrap_or_default())
            }
            ElicitRequestParams::UrlElicitationParams { url, message, .. } => {
                return Err(question(format!(
                    "{message:?} asks a person to open {url}, which charly cannot do unattended"
                )));
            }
            _ => return Err(question("a kind of elicitation charly does not know".to_owned())),
        };
        let mut content = JsonObject::new();
        let mut problems = Vec::new();
        let properties = schema.get("properties").and_then(Value::as_object);
        let fields: Vec<&str> = properties.into_iter().flat_map(|p| p.keys()).map(String::as_str).collect();
        // Answers serve every form of an operation (a multi-round call asks several): a given
        // field this form lacks is refused when none of the given fields is one of this form's,
        // which is a misspelt or misplaced answer, not one meant for the next form.
        let given_here = self.fields.keys().any(|k| fields.contains(&k.as_str()));
        if !self.fields.is_empty() && !given_here {
            let unknown: Vec<String> = self.fields.keys().map(|k| format!("--elicit {k}")).collect();
            problems.push(format!(
                "{message:?}: {} is not a field of this form (its fields: {})",
                unknown.join(", "),
                if fields.is_empty() { "none".to_owned() } else { fields.join(", ") }
            ));
        }
        for (name, property) in properties.into_iter().flatten() {
            match self.fields.get(name) {
                Some(text) => match coerce(text, property).and_then(|v| allowed(v, property)) {
                    Ok(value) => {
                        content.insert(name.clone(), value);
                    }
                    Err(why) => problems.push(format!("--elicit {name}={text:?}: {why}")),
                },
                None => {
                    if let Some(default) = property.get("default") {
                        content.insert(name.clone(), default.clone());
                    }
                }
            }
        }
        let required = schema.get("required").and_then(Value::as_array);
        let missing: Vec<String> = required
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|name| !content.contains_key(*name))
            .map(|name| {
                let kind = properties
                    .and_then(|p| p.get(name))
                    .and_then(|p| p.get("type"))
                    .and_then(Value::as_str)
                    .unwrap_or("value");
                format!("{name} ({kind})")
            })
            .collect();
        if !missing.is_empty() {
            let hint: Vec<String> = missing
                .iter()
                .map(|m| format!("--elicit {}=VALUE", m.split(' ').next().unwrap_or_default()))
                .collect();
            problems.push(format!(
                "{message:?} needs {}: answer with {}",
                missing.join(", "),
                hint.join(" ")
            ));
        }
        if !problems.is_empty() {
            return Err(question(problems.join("; ")));
        }
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(content)))
    }

    /// The answer to a sampling request: the sample text as the assistant's message.
    ///
    /// # Errors
    ///
    /// The [`Question`] when no sample was given.
    pub fn answer_sampling(
        &self,
        params: &CreateMessageRequestParams,
        key: Option<&str>,
    ) -> Result<CreateMessageResult, Question> {
        let Some(text) = &self.sample else {
            let asked: Vec<String> = params
                .messages
                .iter()
                .filter_map(|m| serde_json::to_value(&m.content).ok())
                .filter_map(|c| c.get("text").and_then(Value::as_str).map(str::to_owned))
                .collect();
            return Err(Question {
                method: "sampling/createMessage".into(),
                key: key.map(str::to_owned),
                detail: format!("the server asks a model {:?}: answer with --sample TEXT", asked.join(" ")),
            });
        };
        let message = SamplingMessage::assistant_text(text.clone());
        Ok(CreateMessageResult::new(message, "charly".to_owned())
            .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
    }

    /// The answer to `roots/list`: the roots given.
    ///
    /// # Errors
    ///
    /// The [`Question`] when none were given.
    pub fn answer_roots(&self, key: Option<&str>) -> Result<ListRootsResult, Question> {
        if self.roots.is_empty() {
            return Err(Question {
                method: "roots/list".into(),
                key: key.map(str::to_owned),
                detail: "the server asks for the client's roots: answer with --root URI".into(),
            });
        }
        Ok(ListRootsResult::new(self.roots.iter().map(Root::new).collect()))
    }
}

/// The values a form field allows, when its schema lists them: `enum`, or the `const`s of a
/// titled `oneOf`/`anyOf` (SEP-1330); for an array, those of its `items`.
fn choices(property: &Value) -> Option<Vec<&Value>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(values.iter().collect());
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = property.get(key).and_then(Value::as_array) {
            let consts: Vec<&Value> = options.iter().filter_map(|o| o.get("const")).collect();
            if !consts.is_empty() {
                return Some(consts);
            }
        }
    }
    None
}

/// `value`, when `property` allows it; otherwise what it allows.
fn allowed(value: Value, property: &Value) -> Result<Value, String> {
    let items = property.get("items");
    let (values, schema): (Vec<&Value>, &Value) = match (&value, items) {
        (Value::Array(values), Some(items)) => (values.iter().collect(), items),
        _ => (vec![&value], property),
    };
    let Some(choices) = choices(schema) else { return Ok(value) };
    if let Some(bad) = values.iter().find(|v| !choices.contains(v)) {
        let listed: Vec<String> =
            choices.iter().map(|c| c.as_str().map_or_else(|| c.to_string(), str::to_owned)).collect();
        return Err(format!("{bad} is not one of the allowed values: {}", listed.join(", ")));
    }
    Ok(value)
}

/// `text` as the JSON value `property` (a JSON Schema) asks for.
fn coerce(text: &str, property: &Value) -> Result<Value, String> {
    let kind = property.get("type").and_then(Value::as_str).unwrap_or("string");
    match kind {
        "integer" => text.trim().parse::<i64>().map(Value::from).map_err(|_| "not an integer".to_owned()),
        "number" => text
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| "not a number".to_owned()),
        "boolean" => match text.trim() {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" => Ok(Value::Bool(false)),
            _ => Err("not a boolean (true or false)".to_owned()),
        },
        "array" => Ok(Value::Array(
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| Value::String(s.to_owned()))
                .collect(),
        )),
        _ => Ok(Value::String(text.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form(schema: Value) -> ElicitRequestParams {
        serde_json::from_value(json!({"mode": "form", "message": "Who?", "requestedSchema": schema})).unwrap()
    }

    #[test]
    fn a_form_is_filled_from_answers_and_defaults() {
        let answers = Answers::default().elicit("name=Alice").unwrap().elicit("age=30").unwrap();
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string"}, "age": {"type": "integer"},
            "status": {"type": "string", "default": "active"}, "note": {"type": "string"}},
            "required": ["name", "age"]});
        let result = answers.answer_elicitation(&form(schema), Some("user")).unwrap();
        let value = serde_json::to_value(result).unwrap();
        assert_eq!(
            value,
            json!({"action": "accept", "content": {"name": "Alice", "age": 30, "status": "active"}})
        );
    }

    #[test]
    fn an_open_question_names_what_is_missing_and_how_to_answer() {
        let schema =
            json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
        let question =
            Answers::default().answer_elicitation(&form(schema.clone()), Some("user_name")).unwrap_err();
        assert_eq!(
            question.to_string(),
            r#"elicitation/create (input `user_name`): "Who?" needs name (string): answer with --elicit name=VALUE"#
        );
        let bad = Answers::default().elicit("nmae=x").unwrap();
        let schema = json!({"type": "object", "properties": {"name": {"type": "string", "default": "a"},
            "age": {"type": "integer", "default": 1}}});
        assert_eq!(
            bad.answer_elicitation(&form(schema.clone()), None).unwrap_err().detail,
            r#""Who?": --elicit nmae is not a field of this form (its fields: name, age)"#
        );
        // A field meant for another form of the same call is not refused here.
        let both = Answers::default().elicit("name=x").unwrap().elicit("color=red").unwrap();
        assert!(both.answer_elicitation(&form(schema), None).is_ok());
        let schema = json!({"type": "object", "properties": {
            "size": {"type": "string", "enum": ["S", "M"]},
            "tone": {"type": "string", "oneOf": [{"const": "warm", "title": "Warm"}, {"const": "cold"}]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}}});
        let ok = Answers::default()
            .elicit("size=M")
            .unwrap()
            .elicit("tone=cold")
            .unwrap()
            .elicit("tags=a,b")
            .unwrap();
        assert!(ok.answer_elicitation(&form(schema.clone()), None).is_ok());
        let wrong = Answers::default().elicit("size=XL").unwrap().elicit("tags=a,z").unwrap();
        let detail = wrong.answer_elicitation(&form(schema), None).unwrap_err().detail;
        assert!(
            detail.contains(r#"--elicit size="XL": "XL" is not one of the allowed values: S, M"#),
            "{detail}"
        );
        assert!(
            detail.contains(r#"--elicit tags="a,z": "z" is not one of the allowed values: a, b"#),
            "{detail}"
        );
        let wrong = Answers::default().elicit("n=abc").unwrap();
        let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert!(wrong.answer_elicitation(&form(schema), None).unwrap_err().detail.contains("not an integer"));
        assert!(Answers::default().elicit("novalue").is_err());
    }

    #[test]
    fn capabilities_follow_the_answers() {
        let none = serde_json::to_value(Answers::default().capabilities()).unwrap();
        let tasks = json!({"io.modelcontextprotocol/tasks": {}});
        assert_eq!(none, json!({"elicitation": {"form": {}}, "extensions": tasks}));
        let all =
            Answers { sample: Some("hi".into()), roots: vec!["file:///r".into()], ..Default::default() };
        let all = serde_json::to_value(all.capabilities()).unwrap();
        assert!(all["sampling"].is_object() && all["roots"].is_object());
    }
}
