//! logging/setLevel filtering, resources (static, template, subscribe), prompts and
//! completion, with a real rmcp client in memory.

// Logging and resources/subscribe are deprecated only for protocol 2026-07-28.
#![allow(deprecated)]

mod common;

use std::time::{Duration, Instant};

use charly_mcp::server::rmcp::ServiceError;
use charly_mcp::server::rmcp::model::{
    ArgumentInfo, CompleteRequestParams, ErrorCode, GetPromptRequestParams, GetPromptResult, LoggingLevel,
    PromptArgument, PromptMessage, ReadResourceRequestParams, Reference, ResourceContents, Role,
    SetLevelRequestParams, SubscribeRequestParams,
};
use charly_mcp::server::{Prompt, Resource, ResourceTemplate, Server};
use common::{Seen, call, connect, options};
use serde_json::json;

/// Waits until `count()` reaches `want` (or 2 s pass), then a little longer, and returns it.
async fn settle(count: impl Fn() -> usize, want: usize) -> usize {
    let start = Instant::now();
    while count() < want && start.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    count()
}

fn log_count(seen: &Seen) -> usize {
    seen.logs.lock().unwrap().len()
}

#[tokio::test]
async fn log_messages_honour_set_level() {
    let pair = connect(&Server::new(options())).await;
    let (c, seen) = (&pair.client, &pair.seen);
    call(c, "logs", json!({})).await.unwrap();
    assert_eq!(settle(|| log_count(seen), 2).await, 2, "info and above by default");
    seen.logs.lock().unwrap().clear();

    c.set_level(SetLevelRequestParams::new(LoggingLevel::Debug)).await.unwrap();
    call(c, "logs", json!({})).await.unwrap();
    assert_eq!(settle(|| log_count(seen), 3).await, 3, "debug lets everything through");
    let logs = seen.logs.lock().unwrap().clone();
    assert!(logs.iter().all(|l| l.logger.as_deref() == Some("logs")), "{logs:?}");
    seen.logs.lock().unwrap().clear();

    c.set_level(SetLevelRequestParams::new(LoggingLevel::Error)).await.unwrap();
    call(c, "logs", json!({})).await.unwrap();
    assert_eq!(settle(|| log_count(seen), 1).await, 1, "error only");
}

fn content_server() -> Server {
    Server::new(
        options()
            .resource(Resource::text("test://readme", "readme", "text/plain", "read me"))
            .resource_template(
                ResourceTemplate::new(
                    charly_mcp::server::rmcp::model::ResourceTemplate::new("test://items/{id}", "item"),
                    |uri, vars| async move {
                        Ok(vec![ResourceContents::text(format!("item {}", vars["id"]), uri)])
                    },
                )
                .with_completion(|_, typed| {
                    ["10", "11", "20"]
                        .iter()
                        .filter(|v| v.starts_with(typed))
                        .map(|v| v.to_string())
                        .collect()
                }),
            )
            .prompt(
                Prompt::new(
                    "greet",
                    "Greets someone",
                    vec![PromptArgument::new("name").with_required(true)],
                    |args| async move {
                        let name = args["name"].as_str().unwrap_or_default().to_owned();
                        Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                            Role::User,
                            format!("Hello, {name}"),
                        )]))
                    },
                )
                .with_completion(|_, typed| (0..150).map(|i| format!("{typed}{i}")).collect()),
            ),
    )
}

#[tokio::test]
async fn resources_read_by_uri_and_template() {
    let pair = connect(&content_server()).await;
    let c = &pair.client;
    let listed = c.list_all_resources().await.unwrap();
    assert_eq!(listed.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>(), ["test://readme"]);
    let read = c.read_resource(ReadResourceRequestParams::new("test://readme")).await.unwrap();
    assert_eq!(serde_json::to_value(&read.contents).unwrap()[0]["text"], "read me");
    let read = c.read_resource(ReadResourceRequestParams::new("test://items/42")).await.unwrap();
    assert_eq!(serde_json::to_value(&read.contents).unwrap()[0]["text"], "item 42");
    let err = c.read_resource(ReadResourceRequestParams::new("test://nothing")).await.unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("{err:?}") };
    assert_eq!(err.code, ErrorCode::RESOURCE_NOT_FOUND);
    assert!(err.message.contains("test://nothing"), "{}", err.message);
}

#[tokio::test]
async fn subscribers_hear_about_updates() {
    let server = content_server();
    let pair = connect(&server).await;
    pair.client.subscribe(SubscribeRequestParams::new("test://items/7")).await.unwrap();
    assert_eq!(server.notify_resource_updated("test://items/7").await, 1);
    assert_eq!(server.notify_resource_updated("test://readme").await, 0);
    let updated = settle(|| pair.seen.updated.lock().unwrap().len(), 1).await;
    assert_eq!(updated, 1);
    assert_eq!(pair.seen.updated.lock().unwrap()[0], "test://items/7");
    let err = pair.client.subscribe(SubscribeRequestParams::new("test://nothing")).await.unwrap_err();
    assert!(matches!(err, ServiceError::McpError(_)), "{err:?}");
}

#[tokio::test]
async fn prompts_check_required_arguments_and_complete() {
    let pair = connect(&content_server()).await;
    let c = &pair.client;
    let args = json!({"name": "Ada"}).as_object().unwrap().clone();
    let got = c.get_prompt(GetPromptRequestParams::new("greet").with_arguments(args)).await.unwrap();
    assert!(serde_json::to_string(&got.messages).unwrap().contains("Hello, Ada"));
    let err = c.get_prompt(GetPromptRequestParams::new("greet")).await.unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("{err:?}") };
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("`name`"), "{}", err.message);

    let done = c
        .complete(CompleteRequestParams::new(Reference::for_prompt("greet"), ArgumentInfo::new("name", "x")))
        .await
        .unwrap();
    assert_eq!(done.completion.values.len(), 100);
    assert_eq!((done.completion.total, done.completion.has_more), (Some(150), Some(true)));
    let done = c
        .complete(CompleteRequestParams::new(
            Reference::for_resource("test://items/{id}"),
            ArgumentInfo::new("id", "1"),
        ))
        .await
        .unwrap();
    assert_eq!(done.completion.values, ["10", "11"]);
}

/// A server without prompts declares no `prompts` capability and answers the prompt methods
/// as methods it does not serve (the conformance suite's `sep-2575-server-declares-prompts-in-discover`
/// failed on `charly mcp serve`, which answered `prompts/list` with an empty list).
#[tokio::test]
async fn a_server_without_prompts_does_not_serve_them() {
    let pair = connect(&Server::new(options())).await;
    let c = &pair.client;
    assert!(c.peer_info().unwrap().capabilities.prompts.is_none());
    let err = c.list_prompts(None).await.unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("{err:?}") };
    assert_eq!(err.code, ErrorCode::METHOD_NOT_FOUND);
    assert!(err.message.contains("`prompts/list`") && err.message.contains("no prompts"), "{}", err.message);
    let err = c.get_prompt(GetPromptRequestParams::new("greet")).await.unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("{err:?}") };
    assert_eq!(err.code, ErrorCode::METHOD_NOT_FOUND, "{}", err.message);
    // Completing a prompt's argument says there are none, not to look in prompts/list
    // (trial 28, L4).
    let err = c
        .complete(CompleteRequestParams::new(Reference::for_prompt("greet"), ArgumentInfo::new("name", "x")))
        .await
        .unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("{err:?}") };
    assert!(
        err.message.contains("has no prompts") && !err.message.contains("prompts/list names"),
        "{}",
        err.message
    );
}
