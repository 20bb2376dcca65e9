//! A hand-written server whose resources change while it runs (a `ResourceList`): listed as
//! they are at each `resources/list`, `notifications/resources/list_changed` when a tool call
//! changed the set, `notifications/resources/updated` when it changed a subscribed resource's
//! contents. With a real rmcp client, in memory and over Streamable HTTP.

// resources/subscribe is deprecated only for protocol 2026-07-28.
#![allow(deprecated)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use charly_mcp::Annotations;
use charly_mcp::server::rmcp::model::{
    ReadResourceRequestParams, ResourceContents, SubscribeRequestParams, UnsubscribeRequestParams,
};
use charly_mcp::server::rmcp::{ErrorData as McpError, ServiceExt as _};
use charly_mcp::server::{Resource, ResourceList, Server, ServerOptions, Tool, ToolOutput};
use common::{Recorder, Seen, call};
use serde_json::json;

type Notes = Arc<Mutex<BTreeMap<String, String>>>;

/// Notes `note://<name>` from a shared map; tool `put` (not read-only) sets one, tool `sneak`
/// (which says it is read-only, wrongly) sets one too, and a fixed resource `note://about`.
fn notes_server() -> (Server, Notes) {
    let notes: Notes = Arc::new(Mutex::new(BTreeMap::from([("a".to_owned(), "first".to_owned())])));
    let listed = notes.clone();
    let list = ResourceList::new(move || {
        let notes = listed.lock().unwrap().clone();
        notes
            .into_keys()
            .map(|name| {
                let model = charly_mcp::server::rmcp::model::Resource::new(format!("note://{name}"), &name);
                let notes = listed.clone();
                Resource::new(model, move |uri| {
                    let text = notes.lock().unwrap().get(&name).cloned();
                    async move {
                        let text = text.ok_or_else(|| McpError::resource_not_found("gone", None))?;
                        Ok(vec![ResourceContents::text(text, uri)])
                    }
                })
            })
            .collect()
    });
    let setter = |name: &'static str, read_only: bool, notes: Notes| {
        Tool::new(
            name,
            "Sets a note",
            json!({"type": "object", "properties": {"name": {"type": "string"}, "text": {"type": "string"}},
                   "required": ["name", "text"], "additionalProperties": false}),
            Annotations { read_only_hint: read_only, ..Default::default() },
            move |args, _| {
                let notes = notes.clone();
                async move {
                    let (name, text) = (args["name"].as_str().unwrap(), args["text"].as_str().unwrap());
                    notes.lock().unwrap().insert(name.to_owned(), text.to_owned());
                    Ok(ToolOutput::text("set"))
                }
            },
        )
    };
    let options = ServerOptions::new("notes", "1.0.0")
        .resource(Resource::text("note://about", "about", "text/plain", "notes"))
        .resource_list(list)
        .tool(setter("put", false, notes.clone()))
        .tool(setter("sneak", true, notes.clone()));
    (Server::new(options), notes)
}

/// Waits until `count()` reaches `want` (or 2 s pass), then a little longer, and returns it.
async fn settle(count: impl Fn() -> usize, want: usize) -> usize {
    let start = Instant::now();
    while count() < want && start.elapsed() < Duration::from_secs(2) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    count()
}

fn changed(seen: &Seen) -> usize {
    *seen.list_changed.lock().unwrap()
}

fn updated(seen: &Seen, uri: &str) -> usize {
    seen.updated.lock().unwrap().iter().filter(|u| *u == uri).count()
}

/// The same steps on any transport: `client` is connected to the notes server.
async fn exercise(client: &common::Client, seen: &Seen) {
    let caps = client.peer_info().unwrap().capabilities.resources.clone().unwrap();
    assert_eq!((caps.subscribe, caps.list_changed), (Some(true), Some(true)));
    let uris = || async {
        client.list_all_resources().await.unwrap().into_iter().map(|r| r.uri.clone()).collect::<Vec<_>>()
    };
    assert_eq!(uris().await, ["note://about", "note://a"]);

    call(client, "put", json!({"name": "b", "text": "second"})).await.unwrap();
    assert_eq!(uris().await, ["note://about", "note://a", "note://b"]);
    assert_eq!(settle(|| changed(seen), 1).await, 1);
    let read = client.read_resource(ReadResourceRequestParams::new("note://b")).await.unwrap();
    assert_eq!(serde_json::to_value(&read.contents).unwrap()[0]["text"], "second");

    client.subscribe(SubscribeRequestParams::new("note://a")).await.unwrap();
    call(client, "put", json!({"name": "a", "text": "changed"})).await.unwrap();
    assert_eq!(settle(|| updated(seen, "note://a"), 1).await, 1);
    // The same text again, another note, and a call that claims to be read-only: no news.
    call(client, "put", json!({"name": "a", "text": "changed"})).await.unwrap();
    call(client, "put", json!({"name": "b", "text": "other"})).await.unwrap();
    call(client, "sneak", json!({"name": "a", "text": "sneaked"})).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!((updated(seen, "note://a"), updated(seen, "note://b"), changed(seen)), (1, 0, 1));
    // The next checked call sees the sneaked change too.
    call(client, "put", json!({"name": "c", "text": "third"})).await.unwrap();
    assert_eq!(settle(|| updated(seen, "note://a"), 2).await, 2);
    assert_eq!(settle(|| changed(seen), 2).await, 2);

    client.unsubscribe(UnsubscribeRequestParams::new("note://a")).await.unwrap();
    call(client, "put", json!({"name": "a", "text": "unheard"})).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(updated(seen, "note://a"), 2);
}

#[tokio::test]
async fn resource_changes_are_announced_in_memory() {
    let (server, _notes) = notes_server();
    let pair = common::connect(&server).await;
    exercise(&pair.client, &pair.seen).await;
}

#[tokio::test]
async fn resource_changes_are_announced_over_http() {
    let (server, _notes) = notes_server();
    let handle = server.serve_http(common::http::loopback()).await.unwrap();
    let recorder = Recorder::default();
    let seen = recorder.seen.clone();
    let client = recorder
        .serve({
            charly_mcp::client::install_tls_provider();
            charly_mcp::server::rmcp::transport::StreamableHttpClientTransport::from_uri(handle.url())
        })
        .await
        .unwrap();
    exercise(&client, &seen).await;
    client.cancel().await.unwrap();
    handle.shutdown().await.unwrap();
}

/// Another session of the same server hears of a change the first one's call made.
#[tokio::test]
async fn other_sessions_hear_of_a_change() {
    let (server, _notes) = notes_server();
    let (editor, watcher) = (common::connect(&server).await, common::connect(&server).await);
    watcher.client.subscribe(SubscribeRequestParams::new("note://a")).await.unwrap();
    call(&editor.client, "put", json!({"name": "a", "text": "news"})).await.unwrap();
    assert_eq!(settle(|| updated(&watcher.seen, "note://a"), 1).await, 1);
    assert_eq!(settle(|| changed(&watcher.seen), 0).await, 0);
    call(&editor.client, "put", json!({"name": "z", "text": "new"})).await.unwrap();
    assert_eq!(settle(|| changed(&watcher.seen), 1).await, 1);
}

/// A server with fixed resources only declares no `listChanged`.
#[tokio::test]
async fn fixed_resources_declare_no_list_changes() {
    let server = Server::new(ServerOptions::new("fixed", "1.0.0").resource(Resource::text(
        "note://about",
        "about",
        "text/plain",
        "x",
    )));
    let pair = common::connect(&server).await;
    let caps = pair.client.peer_info().unwrap().capabilities.resources.clone().unwrap();
    assert_eq!((caps.subscribe, caps.list_changed), (Some(true), None));
}
