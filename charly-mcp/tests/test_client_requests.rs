//! A tool asks the client to sample an LLM and to elicit user input, through its
//! `CallContext`, with a real rmcp client answering in memory; and is refused at once, with
//! nothing sent, when the client cannot answer (no capability declared, stateless HTTP).

// Sampling is deprecated by SEP-2577 only for protocol 2026-07-28.
#![allow(deprecated)]

mod common;

use charly_mcp::Annotations;
use charly_mcp::server::rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, SamplingMessage,
};
use charly_mcp::server::rmcp::service::RequestContext;
use charly_mcp::server::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt as _};
use charly_mcp::server::{Server, ServerOptions, Tool, ToolError, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Clone, Debug, Default)]
struct Answering;

impl ClientHandler for Answering {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let asked = serde_json::to_value(&params.messages).unwrap();
        let prompt = asked[0]["content"]["text"].as_str().unwrap_or_default().to_owned();
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text(format!("echo: {prompt}")),
            "test-model".into(),
        ))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let asked = serde_json::to_value(&request).unwrap();
        assert_eq!(asked["requestedSchema"]["properties"]["name"]["type"], "string");
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"})))
    }

    fn get_info(&self) -> ClientConfig {
        let caps = ClientCapabilities::builder().enable_sampling().enable_elicitation().build();
        ClientConfig::new(caps, Implementation::new("answering", "0"))
    }
}

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn server() -> Server {
    let ask_llm = Tool::new(
        "ask-llm",
        "Samples the client's LLM",
        no_args(),
        Annotations::default(),
        |_, cx| async move {
            let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text("hello")], 50);
            let result = cx.create_message(params).await?;
            let message = serde_json::to_value(&result.message).map_err(ToolError::msg)?;
            Ok(ToolOutput::text(message["content"]["text"].as_str().unwrap_or_default()))
        },
    );
    let ask_user = Tool::new(
        "ask-user",
        "Elicits a name",
        no_args(),
        Annotations::default(),
        |_, cx| async move {
            let params: ElicitRequestParams = serde_json::from_value(json!({
            "mode": "form", "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }))
        .map_err(ToolError::msg)?;
            let result = cx.elicit(params).await?;
            let result = serde_json::to_value(&result).map_err(ToolError::msg)?;
            Ok(ToolOutput::text(format!("{} {}", result["action"], result["content"]["name"])))
        },
    );
    Server::new(ServerOptions::new("asks", "0").tool(ask_llm).tool(ask_user))
}

#[tokio::test]
async fn tools_sample_and_elicit_through_their_context() {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server_io);
    let server = server();
    let serving = tokio::spawn(async move { server.serve_io(sr, sw).await });
    let client = Answering.serve(tokio::io::split(client_io)).await.unwrap();
    let _server = serving.await.unwrap().unwrap();

    let text =
        |r: charly_mcp::server::rmcp::model::CallToolResult| r.content[0].as_text().unwrap().text.clone();
    let sampled = client.call_tool(CallToolRequestParams::new("ask-llm")).await.unwrap();
    assert_eq!(text(sampled), "echo: hello");
    let elicited = client.call_tool(CallToolRequestParams::new("ask-user")).await.unwrap();
    assert_eq!(text(elicited), r#""accept" "Ada""#);
}

#[tokio::test]
async fn a_detached_context_cannot_ask_the_client() {
    let cx = charly_mcp::server::CallContext::detached("ask-llm", serde_json::Map::new());
    let tool = server().tool("ask-llm").unwrap().clone();
    let err = tool.call(serde_json::Map::new(), cx).await.unwrap_err();
    assert!(err.to_string().contains("no client connection"), "{err}");
}

/// A client that declares `.1` (no capabilities by default), counting the server requests it
/// gets anyway.
#[derive(Clone, Default)]
struct Undeclared(Arc<AtomicUsize>, ClientCapabilities);

impl ClientHandler for Undeclared {
    async fn create_message(
        &self,
        _: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(ErrorData::invalid_request("sampling was not declared", None))
    }

    async fn create_elicitation(
        &self,
        _: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err(ErrorData::invalid_request("elicitation was not declared", None))
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(self.1.clone(), Implementation::new("undeclared", "0"))
    }
}

#[tokio::test]
async fn a_client_that_did_not_declare_the_capability_is_not_asked() {
    let url_only: ClientCapabilities = serde_json::from_value(json!({"elicitation": {"url": {}}})).unwrap();
    let cases = [
        (ClientCapabilities::default(), "ask-llm", "`sampling`"),
        (ClientCapabilities::default(), "ask-user", "`elicitation`"),
        (url_only, "ask-user", "`elicitation.form`"),
    ];
    for (declared, tool, capability) in cases {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server_io);
        let server = server();
        let serving = tokio::spawn(async move { server.serve_io(sr, sw).await });
        let asked = Undeclared(Arc::default(), declared);
        let client = asked.clone().serve(tokio::io::split(client_io)).await.unwrap();
        let _server = serving.await.unwrap().unwrap();

        let call = client.call_tool(CallToolRequestParams::new(tool));
        let result = tokio::time::timeout(Duration::from_secs(10), call).await.expect(tool).unwrap();
        assert_eq!(result.is_error, Some(true), "{tool}");
        let text = &result.content[0].as_text().unwrap().text;
        assert!(text.contains(&format!("did not declare the {capability} capability")), "{tool}: {text}");
        assert_eq!(asked.0.load(Ordering::SeqCst), 0, "{tool}: sent a request the client had not declared");
    }
}

#[tokio::test]
async fn a_stateless_server_does_not_ask_the_client() {
    let options = common::http::loopback().stateless(true);
    let handle = server().serve_http(options).await.unwrap();
    for tool in ["ask-llm", "ask-user"] {
        let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": tool}});
        let response = common::http::post(&handle.url(), &call.to_string())
            .header("mcp-protocol-version", "2025-11-25")
            .timeout(Duration::from_secs(10))
            .send()
            .await
            .unwrap();
        let messages = common::http::messages(response).await;
        assert_eq!(messages.len(), 1, "{tool}: only the result, no server request: {messages:?}");
        let result = &messages[0]["result"];
        assert_eq!(result["isError"], true, "{tool}: {result}");
        assert!(result["content"][0]["text"].as_str().unwrap().contains("stateless"), "{tool}: {result}");
    }
    handle.shutdown().await.unwrap();
}
