//! What the conformance suite's MCP 2026-07-28 scenarios call: tools and a prompt that ask the
//! client for input (input-required results, SEP-2322), a tool needing a capability the client
//! must declare, a tool with an `x-mcp-header` parameter (SEP-2243), and the diagnostic tools
//! of `server-stateless`. All of them ask through the one `CallContext` API, so a client
//! before 2026-07-28 gets the same questions as server-to-client requests.

// Sampling and roots are deprecated by SEP-2577 and still part of 2026-07-28.
#![allow(deprecated)]

use charly_mcp::server::rmcp::ErrorData as McpError;
use charly_mcp::server::rmcp::model::{
    ContentBlock, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    GetPromptResult, PromptMessage, Role, SamplingMessage,
};
use charly_mcp::server::{CallContext, Prompt, Tool, ToolError, ToolOutput};
use serde_json::{Value, json};

use super::{no_args, object, tool};

/// A form elicitation asking `message` with `properties`, all required.
pub(super) fn form(message: &str, properties: Value) -> ElicitRequestParams {
    let required: Vec<&String> = properties.as_object().map(|p| p.keys().collect()).unwrap_or_default();
    let schema = json!({"type": "object", "properties": properties, "required": required});
    serde_json::from_value(json!({"mode": "form", "message": message, "requestedSchema": schema}))
        .expect("a valid form elicitation")
}

/// The value of `field` in an accepted elicitation, or why there is none.
pub(super) fn accepted(result: &ElicitResult, field: &str) -> Result<Value, ToolError> {
    let value = serde_json::to_value(result).unwrap_or_default();
    if value["action"] != "accept" {
        return Err(ToolError::msg(format!("the user did not accept (action: {})", value["action"])));
    }
    Ok(value["content"][field].clone())
}

pub(super) fn text_of(value: &Value) -> String {
    value.as_str().map_or_else(|| value.to_string(), str::to_owned)
}

/// The text of a sampling result.
fn sampled(result: &CreateMessageResult) -> String {
    let content = serde_json::to_value(&result.message.content).unwrap_or_default();
    text_of(content.get("text").unwrap_or(&content))
}

fn sample(text: &str, max_tokens: u32) -> CreateMessageRequestParams {
    CreateMessageRequestParams::new(vec![SamplingMessage::user_text(text)], max_tokens)
}

pub(super) async fn ask_name(cx: &CallContext, key: &str, message: &str) -> Result<String, ToolError> {
    let answer = cx.input(key).elicit(form(message, json!({"name": {"type": "string"}}))).await?;
    Ok(text_of(&accepted(&answer, "name")?))
}

pub(super) fn tools() -> Vec<Tool> {
    vec![
        tool(
            "test_input_required_result_elicitation",
            "Asks the user for their name",
            no_args(),
            |_, cx| async move {
                let name = ask_name(&cx, "user_name", "What is your name?").await?;
                Ok(ToolOutput::text(format!("Hello, {name}!")))
            },
        ),
        tool(
            "test_input_required_result_sampling",
            "Asks the client's model a question",
            no_args(),
            |_, cx| async move {
                let answer = cx
                    .input("capital_question")
                    .create_message(sample("What is the capital of France?", 100))
                    .await?;
                Ok(ToolOutput::text(format!("The model says: {}", sampled(&answer))))
            },
        ),
        tool(
            "test_input_required_result_list_roots",
            "Asks for the client's roots",
            no_args(),
            |_, cx| async move {
                let roots = cx.input("client_roots").list_roots().await?;
                let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
                Ok(ToolOutput::text(format!("Client roots: {}", uris.join(", "))))
            },
        ),
        tool(
            "test_input_required_result_request_state",
            "Asks for confirmation across two rounds",
            no_args(),
            |_, cx| async move {
                let answer = cx
                    .input("confirm")
                    .elicit(form("Please confirm", json!({"ok": {"type": "boolean"}})))
                    .await?;
                let ok = accepted(&answer, "ok")?;
                // The framework opened (and verified) the sealed state before this run.
                Ok(ToolOutput::text(format!("state-ok: round {}, confirmed {ok}", cx.round())))
            },
        ),
        tool(
            "test_input_required_result_tampered_state",
            "Asks for confirmation; its state is sealed",
            no_args(),
            |_, cx| async move {
                let answer = cx
                    .input("confirm")
                    .elicit(form("Please confirm", json!({"ok": {"type": "boolean"}})))
                    .await?;
                Ok(ToolOutput::text(format!("confirmed {}", accepted(&answer, "ok")?)))
            },
        ),
        tool(
            "test_input_required_result_multiple_inputs",
            "Asks three questions in one round",
            no_args(),
            |_, cx| async move {
                let (name, greeting, roots) = tokio::join!(
                    ask_name(&cx, "user_name", "What is your name?"),
                    cx.input("greeting").create_message(sample("Generate a greeting", 50)),
                    cx.input("client_roots").list_roots(),
                );
                let (name, greeting, roots) = (name?, greeting?, roots?);
                Ok(ToolOutput::text(format!("{} {name} ({} roots)", sampled(&greeting), roots.roots.len())))
            },
        ),
        tool(
            "test_input_required_result_multi_round",
            "Asks two questions, one round each",
            no_args(),
            |_, cx| async move {
                let name = ask_name(&cx, "step1", "Step 1: What is your name?").await?;
                let color = cx
                    .input("step2")
                    .elicit(form(
                        "Step 2: What is your favorite color?",
                        json!({"color": {"type": "string"}}),
                    ))
                    .await?;
                Ok(ToolOutput::text(format!("{name} likes {}", text_of(&accepted(&color, "color")?))))
            },
        ),
        tool(
            "test_input_required_result_capabilities",
            "Asks only what the client can answer",
            no_args(),
            |_, cx| async move {
                let caps = cx.client_capabilities();
                let name = async {
                    match caps.elicitation {
                        Some(_) => ask_name(&cx, "user_name", "What is your name?").await.map(Some),
                        None => Ok(None),
                    }
                };
                let greeting = async {
                    match caps.sampling {
                        Some(_) => cx
                            .input("greeting")
                            .create_message(sample("Generate a greeting", 50))
                            .await
                            .map(Some),
                        None => Ok(None),
                    }
                };
                let (name, greeting) = tokio::join!(name, greeting);
                let (name, greeting) = (name?, greeting?);
                Ok(ToolOutput::text(format!(
                    "name: {}, greeting: {}",
                    name.unwrap_or_else(|| "(no elicitation)".into()),
                    greeting.as_ref().map_or_else(|| "(no sampling)".into(), sampled)
                )))
            },
        ),
        tool(
            "test_missing_capability",
            "Needs the client's sampling capability",
            no_args(),
            |_, cx| async move {
                let answer = cx.create_message(sample("Say hello", 20)).await?;
                Ok(ToolOutput::text(sampled(&answer)))
            },
        ),
        tool("test_streaming_elicitation", "Asks the user while it runs", no_args(), |_, cx| async move {
            let name = ask_name(&cx, "user_name", "What is your name?").await?;
            Ok(ToolOutput::text(format!("Hello, {name}!")))
        }),
        tool(
            "test_logging_tool",
            "Logs while it runs (only at a level the request names)",
            no_args(),
            |_, cx| async move {
                for step in ["started", "working", "done"] {
                    cx.log().info(format!("test_logging_tool {step}")).await;
                }
                Ok(ToolOutput::text("Logged three messages at info"))
            },
        ),
        tool(
            "test_header_echo",
            "Echoes a parameter the client mirrors into the Mcp-Param-Region header (SEP-2243)",
            object(
                json!({"region": {"type": "string", "description": "A region", "x-mcp-header": "Region"}}),
                &["region"],
            ),
            |args, _| async move { Ok(ToolOutput::text(format!("region: {}", text_of(&args["region"])))) },
        ),
        tool(
            "test_trigger_tool_change",
            "Does nothing: this server's tool list never changes",
            no_args(),
            |_, _| async { Ok(ToolOutput::text("the tool list is fixed")) },
        ),
    ]
}

/// The prompt of `input-required-result-non-tool-request`.
pub(super) fn prompt() -> Prompt {
    Prompt::with_context(
        "test_input_required_result_prompt",
        "A prompt that asks the user for its context first",
        vec![],
        |_, cx| async move {
            let answer = cx
                .input("user_context")
                .elicit(form("What context should the prompt use?", json!({"context": {"type": "string"}})))
                .await?;
            let context = accepted(&answer, "context").map_err(McpError::from)?;
            Ok(GetPromptResult::new(vec![PromptMessage::new(
                Role::User,
                ContentBlock::text(format!("Use this context: {}", text_of(&context))),
            )]))
        },
    )
}
