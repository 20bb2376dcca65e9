//! Raw Streamable HTTP helpers: a loopback server, JSON-RPC POSTs, SSE or JSON bodies.

use std::net::SocketAddr;

use charly_mcp::server::{HttpOptions, ServerHandle};
use reqwest::StatusCode;
use serde_json::Value;

pub fn loopback() -> HttpOptions {
    HttpOptions::default().listen(SocketAddr::from(([127, 0, 0, 1], 0)))
}

pub async fn start(options: HttpOptions) -> ServerHandle {
    super::server().serve_http(options).await.unwrap()
}

pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

pub fn post(url: &str, body: &str) -> reqwest::RequestBuilder {
    ({
        charly_mcp::client::install_tls_provider();
        reqwest::Client::new()
    })
    .post(url)
    .header("content-type", "application/json")
    .header("accept", "application/json, text/event-stream")
    .body(body.to_owned())
}

/// The JSON-RPC messages in an SSE (or plain JSON) response body, in order.
pub async fn messages(response: reqwest::Response) -> Vec<Value> {
    let is_sse = response
        .headers()
        .get("content-type")
        .is_some_and(|v| v.to_str().unwrap_or_default().starts_with("text/event-stream"));
    let body = response.text().await.unwrap();
    if !is_sse {
        return vec![serde_json::from_str(&body).unwrap()];
    }
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .filter(|data| !data.is_empty())
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

/// Initializes a session; returns its id.
pub async fn initialize(url: &str) -> String {
    let response = post(url, INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let session =
        response.headers().get("mcp-session-id").expect("a session id").to_str().unwrap().to_owned();
    assert_eq!(messages(response).await.last().unwrap()["id"], 1);
    let initialized = post(url, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert!(initialized.status().is_success(), "{}", initialized.status());
    session
}
