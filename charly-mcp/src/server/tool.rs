//! [`Tool`]: one MCP tool the server lists and calls, and [`ToolOutput`], what a call returns.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

use super::context::CallContext;
use super::error::ToolError;
use super::schema_errors;
use super::tasks::{TaskStart, TaskSupport};
// Also where the server's other modules find `ToolError`.
use crate::model::{Annotations, JsonObject};

/// The future a tool call returns.
pub type ToolFuture = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'static>>;

pub(crate) type Handler = Arc<dyn Fn(JsonObject, CallContext) -> ToolFuture + Send + Sync>;

/// One MCP tool: name, description, raw JSON Schema input, optional output schema,
/// annotations, optional `_meta`, and an async call
/// `(arguments, CallContext) -> Result<ToolOutput, ToolError>`.
///
/// Two kinds exist. Hand-written tools come from [`Tool::new`] with their own JSON Schema;
/// CLI leaves come from [`crate::server::cli_tools`] (a [`crate::Catalog`] plus a
/// [`crate::server::CliRunner`]). The server validates the arguments before calling and
/// turns every failure into an `isError` result: a hand-written tool's against its schema
/// with `jsonschema`, a CLI leaf's with the argv rebuild the derive generated from the same
/// spec as its schema ([`crate::CliTool::argv`]), which refuses exactly what the schema
/// refuses and needs no schema compiled at run time.
#[derive(Clone)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) input_schema: Arc<JsonObject>,
    pub(crate) output_schema: Option<Arc<JsonObject>>,
    /// The output validator (hand-written tools and CLI leaves alike), compiled on the tool's
    /// first successful call and kept (as the input validators are: `ServerState`).
    output_check: Arc<OnceLock<Result<jsonschema::Validator, String>>>,
    pub(crate) annotations: Annotations,
    pub(crate) meta: Option<JsonObject>,
    pub(crate) handler: Handler,
    pub(crate) validation: Validation,
    /// Whether its calls may run as tasks, and when they become one.
    pub(crate) tasks: (TaskSupport, TaskStart),
}

/// Who checks a tool's arguments before its code runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Validation {
    /// The server, against the input schema, with a `jsonschema` validator compiled on the
    /// tool's first call.
    Schema,
    /// The handler, first thing: a CLI leaf's generated argv rebuild.
    Argv,
}

impl Tool {
    /// A hand-written tool.
    ///
    /// `input_schema` is the raw JSON Schema (2020-12) of the arguments object, served as is
    /// (`$schema`, `$defs`, `additionalProperties` included). `call` receives the arguments
    /// (an empty object when the client sent none) only after they validated.
    ///
    /// # Panics
    ///
    /// When `name` is not a valid MCP tool name (`^[a-zA-Z0-9_.-]{1,64}$`), or `input_schema`
    /// is not a JSON object with `"type": "object"` at its root (MCP requires an object schema
    /// for a tool's arguments; `json!({})` is refused): all are programming mistakes, found
    /// when the server is built. `Server::new` checks the schema against its meta-schema in
    /// debug builds.
    #[track_caller]
    pub fn new<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        annotations: Annotations,
        call: F,
    ) -> Tool
    where
        F: Fn(JsonObject, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
    {
        let name = name.into();
        assert!(
            crate::names::is_valid_tool_name(&name),
            "charly: tool name `{name}` is not a valid MCP tool name (1 to 64 of `a-z A-Z 0-9 _ . -`)"
        );
        let Value::Object(schema) = input_schema else {
            panic!("charly: the input schema of tool `{name}` must be a JSON object, got {input_schema}");
        };
        // MCP's `Tool.inputSchema` is an object schema on every protocol revision: clients
        // check it when they read `tools/list` (the Python SDK refuses the whole list, every
        // tool with it, over one schema without `"type": "object"`).
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            let got =
                schema.get("type").map_or_else(|| "no `type`".to_owned(), |t| format!("`\"type\": {t}`"));
            panic!(
                "charly: the input schema of tool `{name}` must have `\"type\": \"object\"` at its root \
                 (MCP tool arguments are an object), got {got}"
            );
        }
        Tool {
            name,
            title: None,
            description: description.into(),
            input_schema: Arc::new(schema),
            output_schema: None,
            output_check: Default::default(),
            annotations,
            meta: None,
            handler: Arc::new(move |args, cx| Box::pin(call(args, cx))),
            validation: Validation::Schema,
            tasks: Default::default(),
        }
    }

    /// A CLI leaf: `handler` validates its own arguments ([`Validation::Argv`]).
    pub(crate) fn cli_leaf(
        name: String,
        description: String,
        input_schema: Arc<JsonObject>,
        output_schema: Option<Arc<JsonObject>>,
        annotations: Annotations,
        handler: Handler,
    ) -> Tool {
        Tool {
            name,
            title: None,
            description,
            input_schema,
            output_schema,
            output_check: Default::default(),
            annotations,
            meta: None,
            handler,
            validation: Validation::Argv,
            tasks: Default::default(),
        }
    }

    /// Sets the tool's `_meta`, published in `tools/list`.
    pub fn with_meta(mut self, meta: JsonObject) -> Tool {
        self.meta = Some(meta);
        self
    }

    /// Sets the JSON Schema of the tool's `structuredContent`, published in `tools/list` as
    /// `outputSchema` (MCP 2025-06-18, "Output Schema").
    ///
    /// The schema should have `"type": "object"` at its root: rmcp 3.11 leaves any other
    /// `outputSchema` (and `structuredContent` that is not an object) out for clients that
    /// negotiated a protocol older than 2026-07-28. [`crate::schema::output_schema`] builds a
    /// strict one from a `schemars::JsonSchema` type. A tool that declares one should return
    /// structured content that the schema accepts ([`ToolOutput::structured`],
    /// [`ToolOutput::report`]) from every successful call: clients check it (the Python SDK
    /// raises on a mismatch). The server checks every successful result against it (with
    /// `jsonschema`, compiled on the tool's first call; a CLI leaf's `#[mcp_tool(output =
    /// Report)]` schema likewise, since nothing ties its runner's report to that type): a
    /// result without
    /// `structuredContent`, or with one the schema refuses, becomes an `isError` result
    /// ([`ToolError::InvalidOutput`]) naming the tool and what was wrong, instead of invalid
    /// structured content on the wire. Results marked [`ToolOutput::with_error`] are not
    /// checked.
    pub fn with_output_schema(mut self, output_schema: Arc<JsonObject>) -> Tool {
        self.output_schema = Some(output_schema);
        self.output_check = Default::default();
        self
    }

    /// Lets calls of the tool run as tasks (the tasks extension, SEP-2663): see
    /// [`TaskSupport`]. A server with such a tool declares the extension in its
    /// capabilities.
    pub fn with_task_support(mut self, support: TaskSupport) -> Tool {
        self.tasks.0 = support;
        self
    }

    /// When a call that may be a task becomes one: see [`TaskStart`] (default: at once).
    pub fn with_task_start(mut self, start: TaskStart) -> Tool {
        self.tasks.1 = start;
        self
    }

    /// Whether calls of the tool may run as tasks.
    pub fn task_support(&self) -> TaskSupport {
        self.tasks.0
    }

    /// Sets a human-readable title, published in `tools/list`.
    pub fn with_title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    /// The tool name as given (dotted for CLI leaves: `box.new.project`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The description.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// The raw JSON Schema of the arguments object.
    pub fn input_schema(&self) -> &Arc<JsonObject> {
        &self.input_schema
    }

    /// The JSON Schema of the tool's `structuredContent`, when it declares one
    /// ([`Tool::with_output_schema`], or a CLI leaf's `#[mcp_tool(output = Report)]`).
    pub fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        self.output_schema.as_ref()
    }

    /// The four MCP annotations.
    pub fn annotations(&self) -> Annotations {
        self.annotations
    }

    /// Whether the tool is destructive (left out by a read-only server).
    pub fn is_destructive(&self) -> bool {
        self.annotations.destructive_hint && !self.annotations.read_only_hint
    }

    /// The tool's `_meta`, if any.
    pub fn meta(&self) -> Option<&JsonObject> {
        self.meta.as_ref()
    }

    /// Calls the tool directly. A hand-written tool's arguments are not validated here (the
    /// server validates them first); a CLI leaf's are, by its argv rebuild. A successful
    /// result of either kind is checked against the tool's output schema, if it has one (see
    /// [`Tool::with_output_schema`]).
    pub fn call(&self, arguments: JsonObject, cx: CallContext) -> ToolFuture {
        let run = (self.handler)(arguments, cx);
        match &self.output_schema {
            Some(schema) => {
                let (name, schema, check) = (self.name.clone(), schema.clone(), self.output_check.clone());
                Box::pin(async move { check_output(&name, &schema, &check, run.await?) })
            }
            _ => run,
        }
    }

    pub(crate) fn to_model(&self, published_name: &str) -> rmcp::model::Tool {
        let a = self.annotations;
        let mut tool = rmcp::model::Tool::new(
            published_name.to_owned(),
            self.description.clone(),
            self.input_schema.clone(),
        );
        tool.title = self.title.clone();
        tool.output_schema = self.output_schema.clone();
        tool.annotations = Some(rmcp::model::ToolAnnotations::from_raw(
            None,
            Some(a.read_only_hint),
            Some(a.destructive_hint),
            Some(a.idempotent_hint),
            Some(a.open_world_hint),
        ));
        tool.meta = self.meta.clone().map(rmcp::model::MetaObject);
        tool
    }
}

/// `output` if it is an error result or its `structuredContent` matches `schema`; otherwise
/// [`ToolError::InvalidOutput`] saying what is wrong. `check` keeps the compiled validator.
fn check_output(
    name: &str,
    schema: &JsonObject,
    check: &OnceLock<Result<jsonschema::Validator, String>>,
    output: ToolOutput,
) -> Result<ToolOutput, ToolError> {
    if output.is_error() {
        return Ok(output);
    }
    let message = match output.structured_content() {
        None => "it returned no `structuredContent`; a tool with an output schema returns structured \
                 content the schema accepts from every successful call"
            .to_owned(),
        Some(structured) => {
            let validator = check.get_or_init(|| {
                jsonschema::validator_for(&Value::Object(schema.clone())).map_err(|e| e.to_string())
            });
            match validator {
                Ok(validator) if validator.is_valid(structured) => return Ok(output),
                Ok(validator) => format!(
                    "its `structuredContent` does not match: {}",
                    schema_errors::describe(validator, structured)
                ),
                Err(why) => format!("its output schema cannot be compiled: {why}"),
            }
        }
    };
    // The server's author should hear of it too, not only the caller.
    tracing::warn!(tool = name, "{message}");
    Err(ToolError::InvalidOutput { tool: name.to_owned(), message })
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("annotations", &self.annotations)
            .finish_non_exhaustive()
    }
}

/// What a successful tool call returns: a `tools/call` result.
///
/// Build one from text ([`ToolOutput::text`], or `String`/`&str` via `From`), from text plus
/// JSON ([`ToolOutput::structured`], [`ToolOutput::report`]: text content and
/// `structuredContent`), from content blocks ([`ToolOutput::content`]: text, image, audio,
/// embedded resources), or from a full [`CallToolResult`] (`_meta`); `()` converts into an
/// empty output. [`ToolOutput::with_image`] appends an image (a screenshot, say), and
/// [`ToolOutput::with_error`] marks the result `isError: true` while keeping its content and
/// structured content; a plain failure is normally a returned [`ToolError`] instead.
///
/// ```
/// use charly_mcp::server::ToolOutput;
///
/// let output = ToolOutput::structured("2 images pulled", serde_json::json!({"pulled": 2}))
///     .with_image("iVBORw0KGgo=".to_owned(), "image/png");
/// assert_eq!(output.structured_content(), Some(&serde_json::json!({"pulled": 2})));
/// assert_eq!(output.blocks().len(), 2);
/// assert!(!output.is_error());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutput(pub(crate) CallToolResult);

impl ToolOutput {
    /// One `{"type":"text"}` content block.
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    /// These content blocks, in order.
    pub fn content(content: Vec<ContentBlock>) -> ToolOutput {
        ToolOutput(CallToolResult::success(content))
    }

    /// `text` as one `{"type":"text"}` block for the reader, and `json` as the result's
    /// `structuredContent` for programs. `json` should match the tool's output schema, if it
    /// has one, and be an object: rmcp 3.11 moves a `structuredContent` that is not an object
    /// into a text block for clients older than protocol 2026-07-28.
    pub fn structured(text: impl Into<String>, json: Value) -> ToolOutput {
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json);
        ToolOutput(result)
    }

    /// A report (DESIGN.md, "The command shape"): its `Display` text as the text block and its
    /// JSON as `structuredContent`, the pair a terminal shows as text or `--json`.
    ///
    /// # Errors
    ///
    /// [`ToolError::Report`], naming the report type, when `R`'s `Serialize` fails (a map with
    /// keys that are not strings, a custom `Serialize` returning an error).
    pub fn report<R: Serialize + fmt::Display>(report: &R) -> Result<ToolOutput, ToolError> {
        let json = serde_json::to_value(report)
            .map_err(|source| ToolError::Report { report: std::any::type_name::<R>(), source })?;
        Ok(ToolOutput::structured(report.to_string(), json))
    }

    /// Appends an `{"type":"image"}` block: `data_base64` is the image, base64-encoded
    /// (standard alphabet, padded, as MCP's `ImageContent.data`), `mime` its type
    /// (`image/png`, `image/jpeg`, ...).
    pub fn with_image(mut self, data_base64: String, mime: impl Into<String>) -> ToolOutput {
        self.0.content.push(ContentBlock::image(data_base64, mime));
        self
    }

    /// Sets `isError`: with `true` the caller is told the call failed, while the content and
    /// `structuredContent` stay (a check report whose checks failed, say).
    pub fn with_error(mut self, is_error: bool) -> ToolOutput {
        self.0.is_error = Some(is_error);
        self
    }

    /// The content blocks, in order.
    pub fn blocks(&self) -> &[ContentBlock] {
        &self.0.content
    }

    /// The `structuredContent`, if any.
    pub fn structured_content(&self) -> Option<&Value> {
        self.0.structured_content.as_ref()
    }

    /// Whether the result is marked `isError: true`.
    pub fn is_error(&self) -> bool {
        self.0.is_error == Some(true)
    }

    /// The result as it goes on the wire.
    pub fn into_result(self) -> CallToolResult {
        self.0
    }
}

impl From<CallToolResult> for ToolOutput {
    fn from(result: CallToolResult) -> Self {
        ToolOutput(result)
    }
}

impl From<String> for ToolOutput {
    fn from(text: String) -> Self {
        ToolOutput::text(text)
    }
}

impl From<&str> for ToolOutput {
    fn from(text: &str) -> Self {
        ToolOutput::text(text)
    }
}

/// No content: what a CLI runner returns when everything it has to say went to
/// [`CallContext::out`].
impl From<()> for ToolOutput {
    fn from((): ()) -> Self {
        ToolOutput::content(Vec::new())
    }
}
