//! Rules on a tool's shape: an `inputSchema` that is there and is an object schema, and a tool
//! that parses as an MCP `Tool` at all. The tools that do not parse are the `malformed` list
//! (raw JSON); every other rule reads only the tools that parse.

use charly::server::rmcp::model::Tool;
use serde_json::Value;

use super::Rule;
use crate::lint::schema::type_of;
use crate::lint::{Host, Severity};

/// The tool's name in a malformed tool's JSON (empty when it has none or it is not a string).
pub(super) fn malformed_name(tool: &Value) -> String {
    tool.get("name").and_then(Value::as_str).unwrap_or_default().to_owned()
}

/// What is wrong with an `inputSchema` root whose `type` is `ty` (`None`: no `type` key).
fn root_type_fault(ty: Option<&Value>) -> Option<String> {
    match ty {
        Some(Value::String(t)) if t == "object" => None,
        Some(other) => Some(format!("the root has type {other}, not \"object\"")),
        None => {
            Some("the root has no `type`; it must be \"object\" (at least {\"type\": \"object\"})".into())
        }
    }
}

/// An `inputSchema` that is missing, not a JSON object, or whose root `type` is not
/// `"object"`: the MCP schema requires `type: "object"` at the root; the TypeScript SDK's
/// `ListToolsResultSchema` parses it as that literal and rejects the whole `tools/list`
/// (`"code": "invalid_literal", "expected": "object", "path": ["tools", 0, "inputSchema",
/// "type"]`, modelcontextprotocol/servers#3051), Claude Code drops such tools
/// (awwaiid/mcp-server-taskwarrior#11), OpenAI answers `Invalid schema for function 'x':
/// schema must be a JSON Schema of 'type: "object"', got 'type: "None"'` (vercel/ai#7005), and
/// Gemini's function declarations take an OBJECT as `parameters`.
pub(super) struct InputSchemaRoot;

impl Rule for InputSchemaRoot {
    fn id(&self) -> &'static str {
        "input-schema-root"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &Host::ALL
    }
    fn summary(&self) -> &'static str {
        "every tool has an `inputSchema`, a JSON object with `\"type\": \"object\"` at its root"
    }
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>) {
        for tool in tools {
            if let Some(fault) = root_type_fault(tool.input_schema.get("type")) {
                found.push((tool.name.to_string(), "inputSchema/type".into(), fault));
            }
        }
    }
    fn check_malformed(&self, malformed: &[Value], found: &mut Vec<(String, String, String)>) {
        for tool in malformed {
            let name = malformed_name(tool);
            match tool.get("inputSchema") {
                None => found.push((
                    name,
                    "inputSchema".into(),
                    "no `inputSchema`: every tool needs one, at least {\"type\": \"object\"}".into(),
                )),
                Some(Value::Object(schema)) => {
                    if let Some(fault) = root_type_fault(schema.get("type")) {
                        found.push((name, "inputSchema/type".into(), fault));
                    }
                }
                Some(other) => found.push((
                    name,
                    "inputSchema".into(),
                    format!("the `inputSchema` is {} ({other}), not a schema object", type_of(other)),
                )),
            }
        }
    }
}

/// A tool that is not an MCP `Tool` for another reason than its `inputSchema` (no `name`, an
/// `outputSchema` that is not an object, an `annotations` of the wrong type, ...): a client
/// that parses `tools/list` with the MCP schema (the TypeScript SDK, rmcp) refuses the whole
/// page it is on, not only the tool.
pub(super) struct ToolShape;

impl Rule for ToolShape {
    fn id(&self) -> &'static str {
        "tool-shape"
    }
    fn severity(&self) -> Severity {
        Severity::Error
    }
    fn hosts(&self) -> &'static [Host] {
        &Host::ALL
    }
    fn summary(&self) -> &'static str {
        "every listed tool parses as an MCP `Tool` (name, schemas, annotations of the right types)"
    }
    fn check(&self, _tools: &[Tool], _found: &mut Vec<(String, String, String)>) {}
    fn check_malformed(&self, malformed: &[Value], found: &mut Vec<(String, String, String)>) {
        for tool in malformed {
            // An `inputSchema` fault is `input-schema-root`'s to report.
            if !tool.get("inputSchema").is_some_and(Value::is_object) {
                continue;
            }
            let why = match serde_json::from_value::<Tool>(tool.clone()) {
                Ok(_) => continue,
                Err(e) => e.to_string(),
            };
            found.push((malformed_name(tool), "tool".into(), format!("not an MCP tool: {why}")));
        }
    }
}
