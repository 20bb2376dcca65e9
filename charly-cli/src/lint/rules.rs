//! The lint rules, as data: one small type per rule, each registered once in [`RULES`], which
//! drives running, the report's rule list and the docs (STYLE.md §12). Above each rule, the
//! public evidence it rests on: a host's own error message, quoted from a public report.
//!
//! A rule with [`Severity::Error`] is something a host refuses (a 400 from the model API, a tool
//! list withheld, a tool dropped); [`Severity::Warning`] is advice no host enforces.

use std::collections::BTreeMap;

use charly::server::rmcp::model::Tool;
use serde_json::{Map, Value};

use super::schema::{type_of, types, walk};
use super::{Host, Severity, Violation};

/// One check over a server's tool list.
pub(crate) trait Rule: Sync {
    /// Stable id, e.g. `name-pattern`.
    fn id(&self) -> &'static str;
    /// What a violation costs.
    fn severity(&self) -> Severity;
    /// The hosts that refuse (or, for a warning, are hurt by) a violation.
    fn hosts(&self) -> &'static [Host];
    /// What the rule checks, one line.
    fn summary(&self) -> &'static str;
    /// Pushes `(tool, where, message)` for every violation in `tools`.
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>);
}

/// Every rule, in report order.
pub(crate) static RULES: &[&dyn Rule] = &[
    &NamePattern,
    &NameLength,
    &DuplicateName,
    &SchemaKeyword,
    &SchemaRef,
    &UnresolvedRef,
    &TypeArray,
    &ArrayWithoutItems,
    &NonStandardFormat,
    &ObjectWithoutProperties,
    &EnumValues,
    &OutputSchemaRoot,
    &OutputSchemaDialect,
    &MissingDescription,
    &MissingAnnotations,
];

/// Runs every rule over `tools`.
pub(crate) fn run(tools: &[Tool]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for rule in RULES {
        let mut found = Vec::new();
        rule.check(tools, &mut found);
        violations.extend(found.into_iter().map(|(tool, at, message)| Violation {
            rule: rule.id().to_owned(),
            severity: rule.severity(),
            hosts: rule.hosts().iter().map(|h| h.as_str().to_owned()).collect(),
            tool,
            at,
            message,
        }));
    }
    violations
}

/// Which schemas of a tool a schema rule reads.
#[derive(Clone, Copy)]
enum Part {
    Input,
    Output,
}

/// Calls `visit(tool, "inputSchema/..", node)` for every subschema of each tool's `parts`.
fn each_node(tools: &[Tool], parts: &[Part], mut visit: impl FnMut(&Tool, &str, &Map<String, Value>)) {
    for tool in tools {
        for part in parts {
            let (label, schema) = match part {
                Part::Input => ("inputSchema", Some(&tool.input_schema)),
                Part::Output => ("outputSchema", tool.output_schema.as_ref()),
            };
            let Some(schema) = schema else { continue };
            walk(schema, &mut |at, node| visit(tool, &format!("{label}{at}"), node));
        }
    }
}

// ===== names =====

/// Claude's clients check every tool name against `^[a-zA-Z0-9_-]{1,64}$` and withhold the
/// whole tool list when one fails: claude.ai and Claude Desktop report
/// `tools.25.FrontendRemoteMcpToolDefinition.name: String should match pattern
/// '^[a-zA-Z0-9_-]{1,64}$'` (evoila/meho#2745, barryw/ImmichMCP#3), Claude Code's API calls
/// fail with `tools.11.custom.name: String should match pattern` (anthropics/claude-code#467).
/// OpenAI: `Invalid 'tools[48].name': string does not match pattern ... '^[a-zA-Z0-9_-]+$'`
/// (openai/codex#8174). GitHub Copilot: `tools.134.custom.name: String should match pattern
/// '^[a-zA-Z0-9_-]{1,128}$'` (github/copilot-cli#1879). MCP itself allows `.` and `/` (SEP-986).
struct NamePattern;

impl Rule for NamePattern {
    fn id(&self) -> &'static str {
        "name-pattern"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Claude, Host::Openai, Host::Copilot]
    }
    fn summary(&self) -> &'static str {
        "tool names use only a-z A-Z 0-9 _ - (no dots, slashes or spaces)"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools {
            let bad: Vec<char> =
                tool.name.chars().filter(|c| !c.is_ascii_alphanumeric() && !"_-".contains(*c)).collect();
            if tool.name.is_empty() {
                found.push((String::new(), "name".into(), "the name is empty".into()));
            } else if let Some(first) = bad.first() {
                found.push((
                    tool.name.to_string(),
                    "name".into(),
                    format!(
                        "{first:?} is not allowed (^[a-zA-Z0-9_-]{{1,64}}$); e.g. {:?}",
                        suggest(&tool.name)
                    ),
                ));
            }
        }
    }
}

/// The name with every disallowed character replaced by `_`.
fn suggest(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect()
}

/// Names longer than 64 characters: claude.ai `tools.13.FrontendRemoteMcpToolDefinition.name:
/// String should have at most 64 characters` (mims-harvard/ToolUniverse#3); OpenAI function
/// names and Gemini function declarations take at most 64 (their API references).
struct NameLength;

impl Rule for NameLength {
    fn id(&self) -> &'static str {
        "name-length"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Claude, Host::Openai, Host::Gemini]
    }
    fn summary(&self) -> &'static str {
        "tool names are at most 64 characters"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools.iter().filter(|t| t.name.chars().count() > 64) {
            let n = tool.name.chars().count();
            found.push((
                tool.name.to_string(),
                "name".into(),
                format!("{n} characters, at most 64 are allowed"),
            ));
        }
    }
}

/// Two tools with one name: the Claude API refuses a request whose tool names are not unique
/// (`tools: Tool names must be unique`), OpenAI likewise; MCP says names SHOULD be unique
/// within a server (SEP-986), and a client can reach only one of them.
struct DuplicateName;

impl Rule for DuplicateName {
    fn id(&self) -> &'static str {
        "duplicate-name"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &Host::ALL
    }
    fn summary(&self) -> &'static str {
        "every tool name is listed once"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for tool in tools {
            *count.entry(tool.name.as_ref()).or_default() += 1;
        }
        for (name, n) in count.into_iter().filter(|(_, n)| *n > 1) {
            found.push((name.to_owned(), "name".into(), format!("listed {n} times")));
        }
    }
}

// ===== input schemas (Gemini's function declarations, Copilot) =====

/// `$schema` in a tool's parameters: Gemini answers `Invalid JSON payload received. Unknown
/// name "$schema" at 'request.tools[0].function_declarations[0].parameters': Cannot find
/// field.` (router-for-me/CLIProxyAPI#97, promptfoo/promptfoo#4200).
struct SchemaKeyword;

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
struct SchemaRef;

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
struct UnresolvedRef;

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
struct TypeArray;

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
struct ArrayWithoutItems;

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

/// The `format` values of JSON Schema 2020-12 (§7.3 of the validation vocabulary).
const STANDARD_FORMATS: [&str; 19] = [
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

/// A `format` JSON Schema does not define (`uint16`, `int64`, as schemars writes for Rust
/// integers): Ajv in strict mode refuses to compile the schema, `unknown format "uint16"
/// ignored in schema` being an error, not a warning (Ajv docs, "Strict mode": "Unknown
/// formats"); MCP Inspector strips vendor keys for this reason (MCPJam/inspector#1422).
struct NonStandardFormat;

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
                && !STANDARD_FORMATS.contains(&format.as_str())
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
struct ObjectWithoutProperties;

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
        for tool in tools.iter().filter(|t| !t.input_schema.contains_key("properties")) {
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
struct EnumValues;

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

// ===== output schemas =====

/// An `outputSchema` whose root is not `"type": "object"`: the MCP schema (2025-06-18 on)
/// types it so, the TypeScript SDK's `ToolSchema` parses `type` as the literal `"object"` and
/// refuses the whole `tools/list` result otherwise, and rmcp leaves it out for older peers.
struct OutputSchemaRoot;

impl Rule for OutputSchemaRoot {
    fn id(&self) -> &'static str {
        "output-schema-root"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Ajv]
    }
    fn summary(&self) -> &'static str {
        "an `outputSchema` has `\"type\": \"object\"` at its root"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools {
            let Some(schema) = &tool.output_schema else { continue };
            if schema.get("type") != Some(&Value::String("object".into())) {
                let got = schema.get("type").map_or("no type".to_owned(), |t| format!("type {t}"));
                found.push((
                    tool.name.to_string(),
                    "outputSchema/type".into(),
                    format!("the root has {got}, not \"object\""),
                ));
            }
        }
    }
}

/// A `$schema` naming a dialect other than 2020-12: the TypeScript SDK's default validator
/// (Claude Code, OpenCode) refuses every call of the tool, `Tool '...' has an invalid
/// outputSchema: JSON Schema declares an unsupported dialect ("$schema":
/// "http://json-schema.org/draft-07/schema#")` (inkeep/open-knowledge#1226,
/// nataliapc/mcp-openmsx#22); older Ajv setups fail the other way round, `no schema with key or
/// ref "https://json-schema.org/draft/2020-12/schema"` (nicobailon/pi-mcp-adapter#2).
struct OutputSchemaDialect;

/// The one dialect MCP tool schemas default to (SEP-2106).
const DIALECT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

impl Rule for OutputSchemaDialect {
    fn id(&self) -> &'static str {
        "schema-dialect"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &[Host::Ajv]
    }
    fn summary(&self) -> &'static str {
        "a `$schema`, where given, is JSON Schema 2020-12"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools {
            for (label, schema) in
                [("inputSchema", Some(&tool.input_schema)), ("outputSchema", tool.output_schema.as_ref())]
            {
                let Some(Value::String(dialect)) = schema.and_then(|s| s.get("$schema")) else { continue };
                if dialect.trim_end_matches('#') != DIALECT_2020_12 {
                    found.push((
                        tool.name.to_string(),
                        format!("{label}/$schema"),
                        format!("dialect {dialect:?}, not 2020-12"),
                    ));
                }
            }
        }
    }
}

// ===== advice =====

/// A tool without a description: hosts show the model the name alone, and the model picks
/// tools by their descriptions (the MCP tools spec: "description: human-readable description
/// of functionality").
struct MissingDescription;

impl Rule for MissingDescription {
    fn id(&self) -> &'static str {
        "missing-description"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn hosts(&self) -> &'static [Host] {
        &Host::ALL
    }
    fn summary(&self) -> &'static str {
        "every tool has a description"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools.iter().filter(|t| t.description.as_deref().is_none_or(|d| d.trim().is_empty())) {
            found.push((tool.name.to_string(), "description".into(), "no description".into()));
        }
    }
}

/// A tool without the four annotation hints: a host then assumes the worst (MCP tools spec:
/// `destructiveHint` defaults to true, `readOnlyHint` to false) and asks before every call, or
/// offers no read-only mode.
struct MissingAnnotations;

impl Rule for MissingAnnotations {
    fn id(&self) -> &'static str {
        "missing-annotations"
    }
    fn severity(&self) -> Severity {
        Severity::Warning
    }
    fn hosts(&self) -> &'static [Host] {
        &Host::ALL
    }
    fn summary(&self) -> &'static str {
        "every tool states readOnlyHint, destructiveHint, idempotentHint and openWorldHint"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools {
            let missing: Vec<&str> = match &tool.annotations {
                None => vec!["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"],
                Some(a) => [
                    ("readOnlyHint", a.read_only_hint),
                    ("destructiveHint", a.destructive_hint),
                    ("idempotentHint", a.idempotent_hint),
                    ("openWorldHint", a.open_world_hint),
                ]
                .into_iter()
                .filter(|(_, v)| v.is_none())
                .map(|(k, _)| k)
                .collect(),
            };
            if !missing.is_empty() {
                found.push((
                    tool.name.to_string(),
                    "annotations".into(),
                    format!("no {}", missing.join(", ")),
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_kebab_case() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id()).collect();
        assert!(ids.iter().all(|id| id.chars().all(|c| c.is_ascii_lowercase() || c == '-')), "{ids:?}");
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn a_suggestion_replaces_dots() {
        assert_eq!(suggest("box.new.project"), "box_new_project");
    }
}
