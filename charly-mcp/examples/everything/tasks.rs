//! What the conformance suite's tasks-extension scenarios (`tasks-*`, SEP-2663) call: a plain
//! tool, tools whose calls run as tasks (a sleep that `tasks/cancel` stops, a tool error, a
//! JSON-RPC error, questions answered by `tasks/update`), and one that asks its question in
//! an input-required round before it goes on as a task.

use std::time::Duration;

use charly_mcp::server::rmcp::ErrorData as McpError;
use charly_mcp::server::{TaskStart, TaskSupport, Tool, ToolError, ToolOutput};
use serde_json::json;

use super::v2026::{accepted, ask_name, form, text_of};
use super::{no_args, object, tool};

pub(super) fn tools() -> Vec<Tool> {
    vec![
        tool(
            "greet",
            "Greets someone (never a task)",
            object(json!({"name": {"type": "string", "description": "Who to greet"}}), &["name"]),
            |args, _| async move { Ok(ToolOutput::text(format!("Hello, {}!", text_of(&args["name"])))) },
        ),
        tool(
            "slow_compute",
            "Sleeps `seconds`, then says so (a task when the client takes tasks)",
            object(
                json!({"seconds": {"type": "number", "minimum": 0, "description": "How long to sleep"},
                       "label": {"type": "string", "description": "A label echoed in the result"}}),
                &["seconds"],
            ),
            |args, cx| async move {
                let seconds = args["seconds"].as_f64().unwrap_or_default();
                let label = args.get("label").map(text_of).unwrap_or_default();
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {}
                    () = cx.cancelled() => return Err(ToolError::Cancelled),
                }
                Ok(ToolOutput::text(format!("computed `{label}` in {seconds} s")))
            },
        )
        .with_task_support(TaskSupport::Optional),
        tool("failing_job", "Fails as a tool after a second (only as a task)", no_args(), |_, _| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err(ToolError::msg("failing_job failed, as it always does"))
        })
        .with_task_support(TaskSupport::Required),
        tool("protocol_error_job", "Ends in a JSON-RPC error (a failed task)", no_args(), |_, _| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Err(ToolError::Request(McpError::internal_error(
                "protocol_error_job: an internal error, on purpose",
                None,
            )))
        })
        .with_task_support(TaskSupport::Optional),
        tool(
            "confirm_delete",
            "Asks the user to confirm, then pretends to delete the file (nothing is deleted)",
            object(json!({"filename": {"type": "string", "description": "The file"}}), &["filename"]),
            |args, cx| async move {
                let filename = text_of(&args["filename"]);
                let answer = cx
                    .input("confirm")
                    .elicit(form(&format!("Delete {filename}?"), json!({"confirm": {"type": "boolean"}})))
                    .await?;
                let confirmed = accepted(&answer, "confirm")?;
                Ok(ToolOutput::text(format!("confirmed {confirmed}: {filename} (nothing deleted)")))
            },
        )
        .with_task_support(TaskSupport::Optional),
        tool("multi_input", "Asks two questions at once", no_args(), |_, cx| async move {
            let (name, confirm) = tokio::join!(
                ask_name(&cx, "name", "What is your name?"),
                cx.input("confirm").elicit(form("Go on?", json!({"confirm": {"type": "boolean"}}))),
            );
            let confirmed = accepted(&confirm?, "confirm")?;
            Ok(ToolOutput::text(format!("{}: confirmed {confirmed}", name?)))
        })
        .with_task_support(TaskSupport::Optional),
        tool(
            "test_tool_with_task",
            "Asks the user's name in an input-required round, then goes on as a task",
            no_args(),
            |_, cx| async move {
                let name = ask_name(&cx, "user_name", "What is your name?").await?;
                cx.start_task().await;
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok(ToolOutput::text(format!("Hello, {name}! (task {})", cx.task_id().unwrap_or("none"))))
            },
        )
        .with_task_support(TaskSupport::Required)
        .with_task_start(TaskStart::OnRequest),
    ]
}
