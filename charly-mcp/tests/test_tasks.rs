//! Tools that run as tasks (the tasks extension, SEP-2663) over Streamable HTTP on
//! 127.0.0.1, with raw 2026-07-28 requests: a task created, polled, answered, cancelled; the
//! gating on the extension; a call that becomes a task after an input-required round.

mod common;

use std::time::{Duration, Instant};

use charly_mcp::Annotations;
use charly_mcp::server::rmcp::ErrorData as McpError;
use charly_mcp::server::{
    CallContext, Server, ServerHandle, ServerOptions, TaskStart, TaskSupport, Tool, ToolError, ToolOutput,
};
use common::http::{loopback, messages, post};
use serde_json::{Value, json};

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn tool<F, Fut>(name: &str, schema: Value, call: F) -> Tool
where
    F: Fn(charly_mcp::JsonObject, CallContext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    Tool::new(name, format!("the {name} tool"), schema, Annotations::default(), call)
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A form elicitation of one boolean, `confirm`.
fn confirm() -> charly_mcp::server::rmcp::model::ElicitRequestParams {
    serde_json::from_value(json!({"mode": "form", "message": "Go on?", "requestedSchema":
        {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}))
    .unwrap()
}

fn tools() -> Vec<Tool> {
    vec![
        tool("plain", no_args(), |_, cx| async move {
            Ok(ToolOutput::text(format!("plain, task {:?}", cx.task_id())))
        }),
        tool(
            "sleep",
            json!({"type": "object", "properties": {"ms": {"type": "integer"}}}),
            |args, cx| async move {
                let ms = args["ms"].as_u64().unwrap_or_default();
                tokio::time::sleep(Duration::from_millis(ms)).await;
                Ok(ToolOutput::text(format!("slept {ms} ms, task {}", cx.task_id().is_some())))
            },
        )
        .with_task_support(TaskSupport::Optional),
        tool("ask", no_args(), |_, cx| async move {
            let answer = cx.input("confirm").elicit(confirm()).await?;
            Ok(ToolOutput::text(format!("answer: {}", serde_json::to_value(&answer).unwrap()["content"])))
        })
        .with_task_support(TaskSupport::Optional),
        tool("tool_error", no_args(), |_, _| async { Err(ToolError::msg("it failed as a tool")) })
            .with_task_support(TaskSupport::Required),
        tool("rpc_error", no_args(), |_, _| async {
            Err(ToolError::Request(McpError::internal_error("it failed as a request", None)))
        })
        .with_task_support(TaskSupport::Optional),
        tool("later", no_args(), |_, cx| async move {
            let answer = cx.input("confirm").elicit(confirm()).await?;
            let task = cx.start_task().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
            let content = serde_json::to_value(&answer).unwrap()["content"].clone();
            Ok(ToolOutput::text(format!("task {task} {:?}: {content}", cx.task_id().is_some())))
        })
        .with_task_support(TaskSupport::Required)
        .with_task_start(TaskStart::OnRequest),
    ]
}

async fn start(tools: Vec<Tool>) -> ServerHandle {
    Server::new(ServerOptions::new("tasks", "0").tools(tools)).serve_http(loopback()).await.unwrap()
}

/// A 2026-07-28 request with the client capabilities `capabilities`; its JSON-RPC answer.
async fn rpc(url: &str, method: &str, mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": capabilities});
    let name = params.get("name").or_else(|| params.get("taskId")).and_then(Value::as_str).map(str::to_owned);
    let body = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
    let mut request = post(url, &body.to_string())
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let answer = messages(request.send().await.unwrap()).await.pop().unwrap();
    assert_eq!(answer["id"], 5, "{answer}");
    answer
}

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

async fn call(url: &str, name: &str, arguments: Value, capabilities: Value) -> Value {
    rpc(url, "tools/call", json!({"name": name, "arguments": arguments}), capabilities).await
}

async fn get(url: &str, task: &str) -> Value {
    rpc(url, "tasks/get", json!({"taskId": task}), with_tasks()).await["result"].clone()
}

/// Polls the task until its status is `want` or a terminal one (5 s at most).
async fn until(url: &str, task: &str, want: &str) -> Value {
    let start = Instant::now();
    loop {
        let state = get(url, task).await;
        let status = state["status"].as_str().unwrap_or_default().to_owned();
        if status == want || ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return state;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "task {task} still {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The task id of a `CreateTaskResult`, checking its shape.
fn created(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "task", "{answer}");
    assert_eq!(result["status"], "working", "{answer}");
    assert!(result["ttlMs"].is_u64() && result["pollIntervalMs"].is_u64(), "{answer}");
    assert!(result.get("requestState").is_none() && result.get("result").is_none(), "{answer}");
    result["taskId"].as_str().expect("a task id").to_owned()
}

#[tokio::test]
async fn a_task_completes_fails_or_is_cancelled() {
    let server = start(tools()).await;
    let url = server.url();
    let discovered = rpc(&url, "server/discover", json!({}), json!({})).await;
    assert!(discovered["result"]["capabilities"]["extensions"][TASKS].is_object(), "{discovered}");

    // Declared: a task, its result inlined once it completed.
    let task = created(&call(&url, "sleep", json!({"ms": 200}), with_tasks()).await);
    assert_eq!(get(&url, &task).await["status"], "working", "durable at once");
    let done = until(&url, &task, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "slept 200 ms, task true", "{done}");

    // Not declared: a plain call; tasks/* refused with -32021.
    let plain = call(&url, "sleep", json!({"ms": 0}), json!({})).await;
    assert_eq!(plain["result"]["content"][0]["text"], "slept 0 ms, task false", "{plain}");
    assert!(plain["result"].get("taskId").is_none(), "{plain}");
    let refused = rpc(&url, "tasks/get", json!({"taskId": task}), json!({})).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    let plain = call(&url, "plain", json!({}), with_tasks()).await;
    assert_eq!(plain["result"]["content"][0]["text"], "plain, task None", "a tool without task support");

    // A required task, not declared: -32021 naming the extension, before the handler runs.
    let required = call(&url, "tool_error", json!({}), json!({})).await;
    assert_eq!(required["error"]["code"], -32021, "{required}");
    assert!(required["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(), "{required}");

    // A tool error completes the task (isError); a JSON-RPC error fails it.
    let task = created(&call(&url, "tool_error", json!({}), with_tasks()).await);
    let done = until(&url, &task, "completed").await;
    assert_eq!(
        (done["status"].as_str(), done["result"]["isError"].as_bool()),
        (Some("completed"), Some(true))
    );
    let task = created(&call(&url, "rpc_error", json!({}), with_tasks()).await);
    let failed = until(&url, &task, "failed").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");

    // Cancelled while it runs: an empty ack, then `cancelled`; again once ended: the same ack.
    let task = created(&call(&url, "sleep", json!({"ms": 60_000}), with_tasks()).await);
    let ack = rpc(&url, "tasks/cancel", json!({"taskId": task}), with_tasks()).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(until(&url, &task, "cancelled").await["status"], "cancelled");
    let again = rpc(&url, "tasks/cancel", json!({"taskId": task}), with_tasks()).await;
    assert_eq!(again["result"], json!({"resultType": "complete"}), "{again}");

    let unknown = rpc(&url, "tasks/get", json!({"taskId": "no-such-task"}), with_tasks()).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_task_asks_and_tasks_update_answers() {
    let server = start(tools()).await;
    let url = server.url();
    let task = created(&call(&url, "ask", json!({}), with_tasks()).await);
    let waiting = until(&url, &task, "input_required").await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(waiting["inputRequests"]["confirm"]["method"], "elicitation/create", "{waiting}");
    let answers = json!({"confirm": {"action": "accept", "content": {"confirm": true}}, "stray": {}});
    let ack =
        rpc(&url, "tasks/update", json!({"taskId": task, "inputResponses": answers}), with_tasks()).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = until(&url, &task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], r#"answer: {"confirm":true}"#, "{done}");

    // Cancelled while it waits for its answer.
    let task = created(&call(&url, "ask", json!({}), with_tasks()).await);
    until(&url, &task, "input_required").await;
    rpc(&url, "tasks/cancel", json!({"taskId": task}), with_tasks()).await;
    assert_eq!(until(&url, &task, "cancelled").await["status"], "cancelled");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_call_becomes_a_task_after_an_input_required_round() {
    let server = start(tools()).await;
    let url = server.url();
    let first = call(&url, "later", json!({}), with_tasks()).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert!(result.get("taskId").is_none(), "{first}");
    let state = result["requestState"].clone();
    let params = json!({"name": "later", "arguments": {}, "requestState": state,
                        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}});
    let second = rpc(&url, "tools/call", params, with_tasks()).await;
    let task = created(&second);
    let done = until(&url, &task, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], r#"task true true: {"confirm":true}"#, "{done}");
    server.shutdown().await.unwrap();
}

#[tokio::test]
async fn a_server_without_task_tools_has_no_tasks() {
    let server = start(vec![tool("plain", no_args(), |_, _| async { Ok(ToolOutput::text("plain")) })]).await;
    let url = server.url();
    let discovered = rpc(&url, "server/discover", json!({}), json!({})).await;
    assert!(discovered["result"]["capabilities"].get("extensions").is_none(), "{discovered}");
    let get = rpc(&url, "tasks/get", json!({"taskId": "x"}), with_tasks()).await;
    assert_eq!(get["error"]["code"], -32601, "{get}");
    server.shutdown().await.unwrap();
}

/// charly's own client declares the extension and follows a task to its end, answering its
/// questions with `tasks/update` from its answers.
#[tokio::test]
async fn the_client_follows_a_task() {
    use charly_mcp::client::{Answers, ConnectOptions, Endpoint, TransportKind, connect};
    let server = start(tools()).await;
    let endpoint = Endpoint::url(&server.url(), TransportKind::StreamableHttp).unwrap();
    let options =
        ConnectOptions { answers: Answers::default().elicit("confirm=true").unwrap(), ..Default::default() };
    let client = connect(&endpoint, &options).await.unwrap();
    let text = |result: &charly_mcp::server::rmcp::model::CallToolResult| {
        serde_json::to_value(&result.content).unwrap()[0]["text"].as_str().unwrap_or_default().to_owned()
    };
    let slept =
        client.call_tool("sleep", Some(json!({"ms": 50}).as_object().unwrap().clone())).await.unwrap();
    assert_eq!(text(&slept), "slept 50 ms, task true");
    let asked = client.call_tool("ask", None).await.unwrap();
    assert_eq!(text(&asked), r#"answer: {"confirm":true}"#);
    let later = client.call_tool("later", None).await.unwrap();
    assert_eq!(text(&later), r#"task true true: {"confirm":true}"#);
    server.shutdown().await.unwrap();
}
