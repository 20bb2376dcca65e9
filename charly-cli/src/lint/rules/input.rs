//! Rules on input schemas: what Gemini's function declarations, Copilot and Ajv accept.

use charly::server::rmcp::model::Tool;
use serde_json::Value;

use super::{Part, Rule, each_node};
use crate::lint::schema::{type_of, types, walk};
use crate::lint::{Host, Severity};

/// `$schema` in a tool's parameters: Gemini answers `Invalid JSON payload received. Unknown
/// name "$schema" at 'request.tools[0].function_declarations[0].parameters': Cannot find
/// field.` (router-for-me/CLIProxyAPI#97, promptfoo/promptfoo#4200).
pub(super) struct SchemaKeyword;

impl Rule for SchemaKeyword {
    fn id(&self) -> &'static str {
        "schema-keyword"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Gemini]
    }
    fn summary(&self) -> &'static str {
        "input schemas carry no `$schema` key"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        each_node(tools, &[Part::Input], |tool, at, node| {
            if let Some(dialect) = node.get("$schema") {
                found.push((
                    tool.name.to_string(),
                    format!("{at}/$schema"),
                    format!("`$schema: {dialect}` is not accepted"),
                ));
            }
        });
    }
}

/// `$ref`/`$defs` in a tool's parameters: Gemini fails with `reference to undefined schema at
/// properties.target_object.anyOf.1` (google-gemini/gemini-cli#13326) or `$ref 'X' was set
/// alongside unsupported fields` (anomalyco/opencode#12295); clients inline them first.
pub(super) struct SchemaRef;

impl Rule for SchemaRef {
    fn id(&self) -> &'static str {
        "schema-ref"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Gemini]
    }
    fn summary(&self) -> &'static str {
        "input schemas are inlined: no `$ref`, `$defs` or `definitions`"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        each_node(tools, &[Part::Input], |tool, at, node| {
            for key in ["$ref", "$defs", "definitions"].into_iter().filter(|k| node.contains_key(*k)) {
                found.push((
                    tool.name.to_string(),
                    format!("{at}/{key}"),
                    format!("`{key}` is not accepted (inline it)"),
                ));
            }
        });
    }
}

/// A `$ref` that does not resolve inside the tool's own schema: Ajv, which the MCP TypeScript
/// SDK compiles every schema with, refuses to compile it, and Gemini CLI then skips the tool:
/// `Error discovering tools from beads: can't resolve reference #/$defs/Issue from id #`
/// (google-gemini/gemini-cli#13326).
pub(super) struct UnresolvedRef;

impl Rule for UnresolvedRef {
    fn id(&self) -> &'static str {
        "schema-ref-unresolved"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Ajv]
    }
    fn summary(&self) -> &'static str {
        "every `$ref` points into the same schema (`#/...`) at something that exists"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools {
            for (label, schema) in
                [("inputSchema", Some(&tool.input_schema)), ("outputSchema", tool.output_schema.as_ref())]
            {
                let Some(schema) = schema else { continue };
                let whole = Value::Object((**schema).clone());
                walk(schema, &mut |at, node| {
                    let Some(Value::String(target)) = node.get("$ref") else { return };
                    let resolves = target == "#"
                        || target
                            .strip_prefix('#')
                            .is_some_and(|p| p.starts_with('/') && whole.pointer(p).is_some());
                    if !resolves {
                        found.push((
                            tool.name.to_string(),
                            format!("{label}{at}/$ref"),
                            format!("`$ref: {target:?}` does not resolve inside the schema"),
                        ));
                    }
                });
            }
        }
    }
}

/// `type` given as a list (`["string", "null"]`): Gemini function declarations take one type;
/// `INVALID_ARGUMENT ... items: field predicate failed: $type == Type.ARRAY`
/// (anomalyco/opencode#48073, github/copilot-cli#4623, t8y2/dbx#6233).
pub(super) struct TypeArray;

impl Rule for TypeArray {
    fn id(&self) -> &'static str {
        "schema-type-array"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Gemini]
    }
    fn summary(&self) -> &'static str {
        "`type` is one type name, not a list"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        each_node(tools, &[Part::Input], |tool, at, node| {
            if let Some(Value::Array(list)) = node.get("type") {
                found.push((
                    tool.name.to_string(),
                    format!("{at}/type"),
                    format!("`type: {}` is a list", Value::Array(list.clone())),
                ));
            }
        });
    }
}

/// An array schema without `items`: Gemini `GenerateContentRequest.tools[0].
/// function_declarations[27].parameters.properties[tables].items: missing field.`
/// (backstage/backstage#34038, router-for-me/CLIProxyAPI#5292); VS Code Copilot `Failed to
/// validate tool ...: Error: tool parameters array type must have items`
/// (microsoft/vscode#325618, microsoft/vscode-copilot-release#11478).
pub(super) struct ArrayWithoutItems;

impl Rule for ArrayWithoutItems {
    fn id(&self) -> &'static str {
        "schema-array-items"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Gemini, Host::Copilot]
    }
    fn summary(&self) -> &'static str {
        "every array schema has `items`"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        each_node(tools, &[Part::Input], |tool, at, node| {
            if types(node).contains(&"array") && !node.contains_key("items") {
                found.push((tool.name.to_string(), at.to_owned(), "an array without `items`".into()));
            }
        });
    }
}

/// A `format` JSON Schema does not define (`uint16`, `int64`, as schemars writes for Rust
/// integers): Ajv in strict mode refuses to compile the schema, `unknown format "uint16"
/// ignored in schema` being an error, not a warning (Ajv docs, "Strict mode": "Unknown
/// formats"); MCP Inspector strips vendor keys for this reason (MCPJam/inspector#1422).
pub(super) struct NonStandardFormat;

impl Rule for NonStandardFormat {
    fn id(&self) -> &'static str {
        "schema-format"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Ajv]
    }
    fn summary(&self) -> &'static str {
        "`format` is one JSON Schema 2020-12 defines (date-time, email, uri, uuid, ...)"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        each_node(tools, &[Part::Input, Part::Output], |tool, at, node| {
            if let Some(Value::String(format)) = node.get("format")
                && !charly::schema::STANDARD_FORMATS.contains(&format.as_str())
            {
                found.push((
                    tool.name.to_string(),
                    format!("{at}/format"),
                    format!("`format: {format:?}` is not a standard format"),
                ));
            }
        });
    }
}

/// An input schema whose root object has no `properties` (a tool without arguments written as
/// `{"type": "object"}`): GitHub Copilot `Invalid schema for function '...': In context=(),
/// object schema missing properties.` and then fails every prompt (github/copilot-cli#1825).
pub(super) struct ObjectWithoutProperties;

impl Rule for ObjectWithoutProperties {
    fn id(&self) -> &'static str {
        "schema-object-properties"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Copilot]
    }
    fn summary(&self) -> &'static str {
        "the input schema's root object has `properties` (`{}` when there are no arguments)"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        // A root that is not `"type": "object"` is `input-schema-root`'s to report.
        let object_root = |t: &&Tool| t.input_schema.get("type").and_then(Value::as_str) == Some("object");
        for tool in tools.iter().filter(object_root).filter(|t| !t.input_schema.contains_key("properties")) {
            found.push((
                tool.name.to_string(),
                "inputSchema".into(),
                "an object schema without `properties`".into(),
            ));
        }
    }
}

/// `enum` values that are not all strings: Gemini declares `Schema.enum` as strings and fails
/// the whole request, `Invalid value at '...enum[0]' (TYPE_STRING), 0`
/// (google-gemini/gemini-cli#4127, mongodb-js/mongodb-mcp-server#715).
pub(super) struct EnumValues;

impl Rule for EnumValues {
    fn id(&self) -> &'static str {
        "schema-enum-values"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Gemini]
    }
    fn summary(&self) -> &'static str {
        "`enum` values are all strings (one type, no mixing)"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        each_node(tools, &[Part::Input], |tool, at, node| {
            let Some(Value::Array(values)) = node.get("enum") else { return };
            let mut kinds: Vec<&str> = values.iter().map(type_of).collect();
            kinds.sort_unstable();
            kinds.dedup();
            if kinds != ["string"] && !values.is_empty() {
                found.push((
                    tool.name.to_string(),
                    format!("{at}/enum"),
                    format!("enum values of type {}", kinds.join(", ")),
                ));
            }
        });
    }
}
