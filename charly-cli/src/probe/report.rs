//! The reports of `charly check mcp <method>`: what the server sent, as it sent it.
//!
//! Lists keep every item whole (a tool's `inputSchema` and `outputSchema` exactly as the
//! server sent them, `$ref`s and 2020-12 keywords included), so `--json` and
//! `structuredContent` serve scripts; the text is the client contract's columns
//! (DESIGN.md "The client contract").

use std::fmt;

use charly::client::Endpoint;
use charly::server::rmcp::model::{CallToolResult, Prompt, ReadResourceResult, Resource, Tool};
use schemars::JsonSchema;
use serde::Serialize;

use super::print;
use crate::report::Report;

/// A JSON object of the MCP wire format, for schemas.
type Object = serde_json::Map<String, serde_json::Value>;

/// Writes a printer's lines into a formatter.
fn lines(f: &mut fmt::Formatter<'_>, write: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> fmt::Result {
    let mut buffer = Vec::new();
    write(&mut buffer).map_err(|_| fmt::Error)?;
    f.write_str(&String::from_utf8_lossy(&buffer))
}

/// `ping`: the server answered.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Pong {
    /// The server's `serverInfo.name`, from its `initialize` result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    /// The server's `serverInfo.version`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    /// The MCP revision the session agreed on, e.g. `2026-07-28`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
    /// Why `server/discover` (2026-07-28) did not start the session, when the client fell
    /// back to `initialize`, e.g. `server/discover failed with error -32601: Method not found`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
}

impl Pong {
    /// The answer of the server `client` is connected to.
    pub fn of(client: &charly::client::Client) -> Pong {
        let info = client.server_info();
        Pong {
            server_name: info.as_ref().map(|i| i.name.clone()),
            server_version: info.map(|i| i.version),
            protocol_version: client.protocol_version().map(|v| v.to_string()),
            fallback: client.fallback().map(str::to_owned),
        }
    }
}

impl fmt::Display for Pong {
    /// `ok`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ok\n")
    }
}

impl Report for Pong {}

/// One server of [`ServerList`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ServerEntry {
    /// The server's name (empty for `--url`).
    pub name: String,
    /// Its URL (http and sse).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its command line (stdio).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// `http`, `sse` or `stdio`.
    pub transport: String,
}

impl ServerEntry {
    /// The URL or the command line: the text's second column.
    pub fn location(&self) -> &str {
        self.url.as_deref().or(self.command.as_deref()).unwrap_or_default()
    }
}

/// `servers`: the endpoints a source names, not dialled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ServerList {
    /// In the source's order.
    pub servers: Vec<ServerEntry>,
}

impl ServerList {
    /// The list of `endpoints`.
    pub fn of(endpoints: &[Endpoint]) -> ServerList {
        let servers = endpoints
            .iter()
            .map(|e| {
                let stdio = e.transport() == charly::client::TransportKind::Stdio;
                ServerEntry {
                    name: e.name.clone(),
                    url: (!stdio).then(|| e.location()),
                    command: stdio.then(|| e.location()),
                    transport: e.transport().as_str().to_owned(),
                }
            })
            .collect();
        ServerList { servers }
    }
}

impl fmt::Display for ServerList {
    /// `name<TAB>url<TAB>transport` per server.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in &self.servers {
            writeln!(f, "{}\t{}\t{}", print::field(&s.name), print::field(s.location()), s.transport)?;
        }
        Ok(())
    }
}

impl Report for ServerList {}

/// `list-tools`: every page, each tool whole.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct ToolList {
    /// The tools, as the server sent them (`name`, `description`, `inputSchema`, ...).
    #[schemars(with = "Vec<Object>")]
    pub tools: Vec<Tool>,
}

impl fmt::Display for ToolList {
    /// `name<TAB>first line of description` per tool.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        lines(f, |out| print::write_tools(out, &self.tools))
    }
}

impl Report for ToolList {}

/// `list-resources`: every page, each resource whole.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct ResourceList {
    /// The resources, as the server sent them (`uri`, `name`, `mimeType`, ...).
    #[schemars(with = "Vec<Object>")]
    pub resources: Vec<Resource>,
}

impl fmt::Display for ResourceList {
    /// `uri<TAB>name<TAB>mime` per resource.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        lines(f, |out| print::write_resources(out, &self.resources))
    }
}

impl Report for ResourceList {}

/// `list-prompts`: every page, each prompt whole.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct PromptList {
    /// The prompts, as the server sent them (`name`, `description`, `arguments`, ...).
    #[schemars(with = "Vec<Object>")]
    pub prompts: Vec<Prompt>,
}

impl fmt::Display for PromptList {
    /// `name<TAB>description` per prompt.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        lines(f, |out| print::write_prompts(out, &self.prompts))
    }
}

impl Report for PromptList {}

/// `call`: the tool's result, exactly as the server sent it (a `tools/call` result:
/// `content`, `structuredContent`, `isError`, `_meta`). It records a failure when `isError`
/// is true.
#[derive(Clone, Debug, Serialize)]
#[serde(transparent)]
pub struct Called {
    /// The result.
    pub result: CallToolResult,
}

/// The schema of [`Called`]: a `tools/call` result.
#[derive(JsonSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // Only its schema is used.
struct CallShape {
    /// The content blocks (`text`, `image`, `audio`, `resource`, `resource_link`).
    content: Vec<Object>,
    /// The tool's structured result, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<Object>,
    /// Whether the result is an error.
    #[serde(skip_serializing_if = "Option::is_none")]
    is_error: Option<bool>,
}

impl JsonSchema for Called {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Called".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        CallShape::json_schema(generator)
    }
}

impl fmt::Display for Called {
    /// Each content block on its own line(s); images and audio as placeholders.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        lines(f, |out| print::write_call_result(out, &self.result))
    }
}

impl Report for Called {
    fn failure(&self) -> Option<String> {
        (self.result.is_error == Some(true)).then(|| "the tool's result is an error (isError: true)".into())
    }
}

/// `read`: the resource's contents, as the server sent them.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ReadContents {
    /// Text or blob contents (`uri`, `mimeType`, `text` or `blob`).
    #[schemars(with = "Vec<Object>")]
    pub contents: Vec<charly::server::rmcp::model::ResourceContents>,
}

impl From<ReadResourceResult> for ReadContents {
    fn from(result: ReadResourceResult) -> Self {
        ReadContents { contents: result.contents }
    }
}

impl fmt::Display for ReadContents {
    /// Text contents as they are, blobs as `[binary resource: <uri>, <mime>, <N> bytes]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        lines(f, |out| print::write_contents(out, &self.contents))
    }
}

impl Report for ReadContents {}

/// The report of any method, for check plans (their `stdout` and exit status).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum Outcome {
    /// `ping`.
    Pong(Pong),
    /// `servers`.
    Servers(ServerList),
    /// `list-tools`.
    Tools(ToolList),
    /// `list-resources`.
    Resources(ResourceList),
    /// `list-prompts`.
    Prompts(PromptList),
    /// `call`.
    Called(Called),
    /// `read`.
    Read(ReadContents),
    /// `lint`.
    Lint(crate::lint::LintReport),
    /// `list-skills`.
    Skills(super::SkillList),
    /// `read-skill`.
    Skill(super::SkillFiles),
}

impl Outcome {
    /// The method's report, as a trait object.
    fn report(&self) -> &dyn fmt::Display {
        match self {
            Outcome::Pong(r) => r,
            Outcome::Servers(r) => r,
            Outcome::Tools(r) => r,
            Outcome::Resources(r) => r,
            Outcome::Prompts(r) => r,
            Outcome::Called(r) => r,
            Outcome::Read(r) => r,
            Outcome::Lint(r) => r,
            Outcome::Skills(r) => r,
            Outcome::Skill(r) => r,
        }
    }

    /// [`Report::failure`] of the method's report.
    pub fn failure(&self) -> Option<String> {
        match self {
            Outcome::Called(r) => r.failure(),
            Outcome::Lint(r) => r.failure(),
            _ => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.report().fmt(f)
    }
}
