//! Stateful Streamable HTTP sessions and their idle timeout (`HttpOptions::
//! session_idle_timeout`, 1 s here): a session is idle only when nothing of it is in flight.
//! Cached `tools/list` answers, a tool call still running and an open GET stream all keep it;
//! a silent one is closed, and from then on gets 404 (spec 2025-11-25, "Session Management").

mod common;

use std::time::Duration;

use charly_mcp::server::rmcp::model::ResourceContents;
use charly_mcp::server::{Resource, Server};
use common::http::{initialize, loopback, messages, post};
use reqwest::StatusCode;
use serde_json::json;

const IDLE: Duration = Duration::from_secs(1);

fn ping(url: &str, session: &str) -> impl Future<Output = reqwest::Result<reqwest::Response>> {
    post(url, &json!({"jsonrpc": "2.0", "id": 99, "method": "ping"}).to_string())
        .header("mcp-session-id", session)
        .send()
}

async fn assert_alive(url: &str, session: &str) {
    let pong = ping(url, session).await.unwrap();
    assert_eq!(pong.status(), StatusCode::OK);
    assert_eq!(messages(pong).await.last().unwrap()["result"], json!({}));
}

async fn assert_gone(url: &str, session: &str) {
    assert_eq!(ping(url, session).await.unwrap().status(), StatusCode::NOT_FOUND);
}

/// A session that only lists tools (answered from the cache, which rmcp never sees) outlives
/// the timeout; one that sends nothing does not.
#[tokio::test]
async fn listing_keeps_a_session_alive() {
    let handle = common::server().serve_http(loopback().session_idle_timeout(Some(IDLE))).await.unwrap();
    let url = handle.url();
    let (listing, idle) = (initialize(&url).await, initialize(&url).await);
    for id in 0..12 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let list = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string();
        let page = post(&url, &list).header("mcp-session-id", &listing).send().await.unwrap();
        let content_type = page.headers()["content-type"].to_str().unwrap().to_owned();
        assert_eq!((page.status(), content_type.as_str()), (StatusCode::OK, "application/json"));
    }
    assert_alive(&url, &listing).await;
    assert_gone(&url, &idle).await;
    handle.shutdown().await.unwrap();
}

/// A call running past the timeout, with nothing else from its client, still answers, and
/// its session lives on.
#[tokio::test]
async fn a_running_call_keeps_its_session_alive() {
    let handle = common::server().serve_http(loopback().session_idle_timeout(Some(IDLE))).await.unwrap();
    let url = handle.url();
    let session = initialize(&url).await;
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "sleep", "arguments": {"ms": 2500}}});
    let answer = post(&url, &call.to_string()).header("mcp-session-id", &session).send().await.unwrap();
    let answer = messages(answer).await;
    let result = &answer.last().unwrap_or_else(|| panic!("no answer: {answer:?}"))["result"];
    assert_eq!(result["content"][0]["text"], "slept 2500 ms\n", "{answer:?}");
    assert_alive(&url, &session).await;
    handle.shutdown().await.unwrap();
}

/// A client waiting on the GET stream (for resource updates, say) keeps its session; once the
/// stream is dropped, the session idles out.
#[tokio::test]
async fn an_open_get_stream_keeps_its_session_alive() {
    let handle = common::server().serve_http(loopback().session_idle_timeout(Some(IDLE))).await.unwrap();
    let url = handle.url();
    let session = initialize(&url).await;
    let stream = ({
        charly_mcp::client::install_tls_provider();
        reqwest::Client::new()
    })
    .get(&url)
    .header("accept", "text/event-stream")
    .header("mcp-session-id", &session)
    .send()
    .await
    .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    tokio::time::sleep(IDLE * 5 / 2).await;
    assert_alive(&url, &session).await;
    drop(stream);
    tokio::time::sleep(IDLE * 5 / 2).await;
    assert_gone(&url, &session).await;
    handle.shutdown().await.unwrap();
}

/// A request other than a tool call does not keep its session (a slow `resources/read` here):
/// the session idles out under it, and while the read is still finishing, the session's
/// requests get 404, not rmcp's 500.
#[tokio::test]
async fn an_ended_session_is_not_found_while_its_last_request_finishes() {
    let slow = Resource::new(
        charly_mcp::server::rmcp::model::Resource::new("test://slow", "slow"),
        |uri| async move {
            tokio::time::sleep(Duration::from_secs(4)).await;
            Ok(vec![ResourceContents::text("late", uri)])
        },
    );
    let server = Server::new(common::options().resource(slow));
    let handle = server.serve_http(loopback().session_idle_timeout(Some(IDLE))).await.unwrap();
    let url = handle.url();
    let session = initialize(&url).await;
    let read = json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read",
                      "params": {"uri": "test://slow"}});
    let read = post(&url, &read.to_string()).header("mcp-session-id", &session).send();
    let read = tokio::spawn(read);
    tokio::time::sleep(IDLE * 2).await;
    assert_gone(&url, &session).await;
    drop(read);
    handle.shutdown().await.unwrap();
}
