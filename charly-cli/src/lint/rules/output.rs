//! Rules on output schemas, and the advice rules (descriptions, annotations).

use charly::server::rmcp::model::Tool;
use serde_json::Value;

use super::Rule;
use crate::lint::{Host, Severity};

/// An `outputSchema` whose root is not `"type": "object"`: the MCP schema (2025-06-18 on)
/// types it so, the TypeScript SDK's `ToolSchema` parses `type` as the literal `"object"` and
/// refuses the whole `tools/list` result otherwise, and rmcp leaves it out for older peers.
pub(super) struct OutputSchemaRoot;

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
pub(super) struct OutputSchemaDialect;

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
pub(super) struct MissingDescription;

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
pub(super) struct MissingAnnotations;

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
