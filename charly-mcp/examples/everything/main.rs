//! A server implementing every tool, resource and prompt the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`: 0.1.16's active suite, and 0.2.0-alpha.12's
//! `--requirements 2026-07-28`) exercises, built only on `charly_mcp`'s public API. What only
//! the 2026-07-28 scenarios call is in `v2026.rs`, and what the tasks extension's (`tasks-*`)
//! call in `tasks.rs`, and the skills the skills extension's (`sep-2640-skills-*`) read in
//! `skills.rs`.
//!
//! ```text
//! cargo run --release -p charly-mcp --example everything -- --listen 127.0.0.1:18765
//! cargo run --release -p charly-mcp --example everything -- --stdio
//! ```

// Sampling is deprecated by SEP-2577 (protocol 2026-07-28), and still part of every revision.
#![allow(deprecated)]

mod skills;
mod tasks;
mod v2026;

use std::net::SocketAddr;
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use charly_mcp::Annotations;
use charly_mcp::server::rmcp::model::{
    ContentBlock, CreateMessageRequestParams, ElicitRequestParams, GetPromptResult, PromptArgument,
    PromptMessage, ResourceContents, Role, SamplingMessage,
};
use charly_mcp::server::{
    CallContext, HttpOptions, Prompt, Resource, ResourceTemplate, Server, ServerOptions, Tool, ToolError,
    ToolOutput,
};
use clap::Parser;
use serde_json::{Value, json};

/// A 1x1 red PNG.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// The everything server (conformance fixture).
#[derive(Parser, Debug)]
struct Args {
    /// Address to serve Streamable HTTP on
    #[arg(long, default_value = "127.0.0.1:18765")]
    listen: SocketAddr,
    /// Endpoint path
    #[arg(long, default_value = "/mcp")]
    path: String,
    /// Serve over stdin/stdout instead of HTTP
    #[arg(long)]
    stdio: bool,
    /// Serve HTTP without sessions
    #[arg(long)]
    stateless: bool,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let args = Args::parse();
    let server = Server::new(options());
    if args.stdio {
        server.serve_stdio().await?;
        return Ok(());
    }
    let handle = server
        .serve_http(HttpOptions::default().listen(args.listen).path(args.path).stateless(args.stateless))
        .await?;
    eprintln!("everything: serving {}", handle.url());
    tokio::signal::ctrl_c().await?;
    handle.shutdown().await?;
    Ok(())
}

fn options() -> ServerOptions {
    let mut options = ServerOptions::new("charly-everything", env!("CARGO_PKG_VERSION"))
        .instructions("Conformance fixture: every tool, resource and prompt of the MCP conformance suite.");
    for tool in tools().into_iter().chain(v2026::tools()).chain(tasks::tools()) {
        options = options.tool(tool);
    }
    for skill in skills::skills() {
        options = options.skill(skill);
    }
    options
        .prompt(v2026::prompt())
        .resource(Resource::text(
            "test://static-text",
            "static-text",
            "text/plain",
            "This is the content of the static text resource.",
        ))
        .resource(Resource::blob(
            "test://static-binary",
            "static-binary",
            "image/png",
            &BASE64.decode(RED_PIXEL_PNG).expect("a valid base64 constant"),
        ))
        .resource(Resource::text(
            "test://watched-resource",
            "watched-resource",
            "text/plain",
            "A resource clients can subscribe to.",
        ))
        .resource_template(
            ResourceTemplate::new(
                charly_mcp::server::rmcp::model::ResourceTemplate::new(
                    "test://template/{id}/data",
                    "template-data",
                )
                .with_mime_type("application/json"),
                |uri, vars| async move {
                    let id = vars.get("id").cloned().unwrap_or_default();
                    let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                    Ok(vec![ResourceContents::text(text.to_string(), uri).with_mime_type("application/json")])
                },
            )
            .with_completion(|_, typed| complete_from(&["1", "2", "3", "123"], typed)),
        )
        .prompt(Prompt::new("test_simple_prompt", "A prompt without arguments", vec![], |_| async {
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                "This is a simple prompt for testing.",
            )]))
        }))
        .prompt(
            Prompt::new(
                "test_prompt_with_arguments",
                "A prompt with two required arguments",
                vec![
                    PromptArgument::new("arg1").with_description("First test argument").with_required(true),
                    PromptArgument::new("arg2").with_description("Second test argument").with_required(true),
                ],
                |args| async move {
                    let arg = |k: &str| args.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                    let text =
                        format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1"), arg("arg2"));
                    Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]))
                },
            )
            .with_completion(|arg, typed| match arg {
                "arg1" => complete_from(&["paris", "park", "party", "test", "testValue1"], typed),
                _ => complete_from(&["alpha", "beta", "gamma"], typed),
            }),
        )
        .prompt(Prompt::new(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource",
            vec![
                PromptArgument::new("resourceUri")
                    .with_description("URI of the resource to embed")
                    .with_required(true),
            ],
            |args| async move {
                let uri = args
                    .get("resourceUri")
                    .and_then(Value::as_str)
                    .unwrap_or("test://static-text")
                    .to_owned();
                let resource = ResourceContents::text("Embedded resource content for testing.", uri)
                    .with_mime_type("text/plain");
                Ok(GetPromptResult::new(vec![
                    PromptMessage::new(Role::User, ContentBlock::resource(resource)),
                    PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
                ]))
            },
        ))
        .prompt(Prompt::new("test_prompt_with_image", "A prompt with an image", vec![], |_| async {
            Ok(GetPromptResult::new(vec![
                PromptMessage::new(Role::User, ContentBlock::image(RED_PIXEL_PNG, "image/png")),
                PromptMessage::new_text(Role::User, "Please analyze the image above."),
            ]))
        }))
}

fn complete_from(candidates: &[&str], typed: &str) -> Vec<String> {
    candidates.iter().filter(|c| c.starts_with(typed)).map(|c| (*c).to_owned()).collect()
}

/// `{"type":"object","properties":{..},"additionalProperties":false}` with these properties.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn read_only() -> Annotations {
    Annotations { read_only_hint: true, idempotent_hint: true, ..Annotations::default() }
}

fn tool<F, Fut>(name: &str, description: &str, schema: Value, call: F) -> Tool
where
    F: Fn(charly_mcp::JsonObject, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    Tool::new(name, description, schema, read_only(), call)
}

fn no_args() -> Value {
    object(json!({}), &[])
}

fn tools() -> Vec<Tool> {
    vec![
        tool("test_simple_text", "Returns simple text content", no_args(), |_, _| async {
            Ok(ToolOutput::text("This is a simple text response for testing."))
        }),
        tool("test_image_content", "Returns image content", no_args(), |_, _| async {
            Ok(ToolOutput::content(vec![ContentBlock::image(RED_PIXEL_PNG, "image/png")]))
        }),
        tool("test_audio_content", "Returns audio content", no_args(), |_, _| async {
            Ok(ToolOutput::content(vec![ContentBlock::audio(silent_wav_base64(), "audio/wav")]))
        }),
        tool("test_embedded_resource", "Returns an embedded resource", no_args(), |_, _| async {
            Ok(ToolOutput::content(vec![ContentBlock::resource(
                ResourceContents::text("This is an embedded resource content.", "test://embedded-resource")
                    .with_mime_type("text/plain"),
            )]))
        }),
        tool(
            "test_multiple_content_types",
            "Returns text, image and resource content",
            no_args(),
            |_, _| async {
                Ok(ToolOutput::content(vec![
                    ContentBlock::text("Multiple content types test:"),
                    ContentBlock::image(RED_PIXEL_PNG, "image/png"),
                    ContentBlock::resource(
                        ResourceContents::text(
                            r#"{"test":"data","value":123}"#,
                            "test://mixed-content-resource",
                        )
                        .with_mime_type("application/json"),
                    ),
                ]))
            },
        ),
        tool("test_tool_with_logging", "Sends log messages while it runs", no_args(), |_, cx| async move {
            cx.log().info("Tool execution started").await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            cx.log().info("Tool processing data").await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            cx.log().info("Tool execution completed").await;
            Ok(ToolOutput::text("Tool with logging executed successfully"))
        }),
        tool("test_error_handling", "Always fails", no_args(), |_, _| async {
            Err(ToolError::msg("This tool intentionally returns an error for testing"))
        }),
        tool("test_tool_with_progress", "Reports progress while it runs", no_args(), |_, cx| async move {
            for step in [0.0, 50.0, 100.0] {
                cx.progress().report(step, Some(100.0), Some(format!("Completed step {step}"))).await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Ok(ToolOutput::text("Tool with progress completed"))
        }),
        tool(
            "test_sampling",
            "Asks the client's LLM to answer a prompt",
            object(json!({"prompt": {"type": "string", "description": "The prompt to send"}}), &["prompt"]),
            |args, cx| async move {
                let prompt = args["prompt"].as_str().unwrap_or_default().to_owned();
                let request = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
                let result = cx.create_message(request).await?;
                let content = serde_json::to_value(&result.message.content).unwrap_or_default();
                let text = content
                    .get("text")
                    .and_then(Value::as_str)
                    .map_or_else(|| content.to_string(), str::to_owned);
                Ok(ToolOutput::text(format!("LLM response: {text}")))
            },
        ),
        tool(
            "test_elicitation",
            "Asks the user for information",
            object(json!({"message": {"type": "string", "description": "What to ask"}}), &["message"]),
            |args, cx| async move {
                let message = args["message"].as_str().unwrap_or_default();
                let schema = json!({"type": "object", "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}},
                    "required": ["username", "email"]});
                elicit(&cx, message, schema).await
            },
        ),
        tool(
            "test_elicitation_sep1034_defaults",
            "Elicitation with default values (SEP-1034)",
            no_args(),
            |_, cx| async move {
                let schema = json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status",
                           "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status", "default": true}},
                "required": []});
                elicit(&cx, "Please review and update the form fields with defaults", schema).await
            },
        ),
        tool(
            "test_elicitation_sep1330_enums",
            "Elicitation with every enum form (SEP-1330)",
            no_args(),
            |_, cx| async move {
                let schema = json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "description": "Untitled single-select",
                                   "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "description": "Titled single-select", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "description": "Legacy titled enum",
                               "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "description": "Untitled multi-select",
                                  "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "description": "Titled multi-select", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}]}}},
                "required": []});
                elicit(&cx, "Please select options from the enum fields", schema).await
            },
        ),
        tool(
            "json_schema_2020_12_tool",
            "A tool whose input schema uses JSON Schema 2020-12 features ($schema, $defs, $anchor, $ref, allOf, anyOf, if/then/else)",
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "type": "object",
                "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
                    "street": {"type": "string"}, "city": {"type": "string"}}}},
                "properties": {
                    "name": {"type": "string"},
                    "address": {"$ref": "#/$defs/address"},
                    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                    "phone": {"type": "string"},
                    "email": {"type": "string"}
                },
                "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                "then": {"required": ["phone"]},
                "else": {"required": ["email"]},
                "additionalProperties": false
            }),
            |args, _| async move { Ok(ToolOutput::text(format!("Received: {}", Value::Object(args)))) },
        ),
        tool(
            "test_reconnection",
            "Answers on the POST stream (SSE polling scenario)",
            no_args(),
            |_, _| async { Ok(ToolOutput::text("Reconnection test completed successfully")) },
        ),
    ]
}

async fn elicit(cx: &CallContext, message: &str, schema: Value) -> Result<ToolOutput, ToolError> {
    let params: ElicitRequestParams =
        serde_json::from_value(json!({"mode": "form", "message": message, "requestedSchema": schema}))
            .map_err(|e| ToolError::msg(format!("bad elicitation schema: {e}")))?;
    let result = cx.elicit(params).await?;
    let result = serde_json::to_value(&result).map_err(|e| ToolError::msg(e.to_string()))?;
    Ok(ToolOutput::text(format!("Elicitation result: {result}")))
}

/// A tenth of a second of silence: 8 kHz, 8-bit mono PCM WAV, base64.
fn silent_wav_base64() -> String {
    let samples = 800u32;
    let mut wav = Vec::with_capacity(44 + samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    wav.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&samples.to_le_bytes());
    wav.extend(std::iter::repeat_n(128u8, samples as usize));
    BASE64.encode(&wav)
}
