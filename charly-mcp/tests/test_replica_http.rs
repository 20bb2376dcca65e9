//! What replicas behind a load balancer need: the health endpoint (`HttpOptions::
//! health_path`: no token, no Host check, nothing revealed, 503 while stopping), session ids
//! that name their replica (`HttpOptions::session_id_prefix`), and stateless mode answering
//! without a session.

mod common;

use common::http::{INIT, initialize, loopback, messages, post, start};

use charly_mcp::server::{BearerToken, HttpOptions, ServeError};
use reqwest::StatusCode;
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn health_url(handle: &charly_mcp::server::ServerHandle) -> String {
    format!("http://{}/healthz", handle.local_addr())
}

/// A probe needs no token and may send any Host; the body is the status and nothing else.
#[tokio::test]
async fn health_needs_no_token_and_no_host() {
    let token = BearerToken::new("s3cret-token").unwrap();
    let handle = start(loopback().bearer_token(token).health_path("/healthz")).await;
    charly_mcp::client::install_tls_provider();
    let client = reqwest::Client::new();
    for host in [None, Some("10.1.2.3:8080"), Some("charly.default.svc.cluster.local")] {
        let mut get = client.get(health_url(&handle));
        if let Some(host) = host {
            get = get.header("host", host);
        }
        let answer = get.send().await.unwrap();
        assert_eq!(answer.status(), StatusCode::OK, "host {host:?}");
        assert_eq!(answer.headers()["content-type"], "application/json");
        assert_eq!(answer.text().await.unwrap(), r#"{"status":"ok"}"#);
    }
    let head = client.head(health_url(&handle)).send().await.unwrap();
    assert_eq!(head.status(), StatusCode::OK);
    // The MCP endpoint still wants the token, and still checks the Host.
    assert_eq!(post(&handle.url(), INIT).send().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    let foreign = post(&handle.url(), INIT).bearer_auth("s3cret-token").header("host", "evil.example.com");
    assert_eq!(foreign.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    let post_health = client.post(health_url(&handle)).body("{}").send().await.unwrap();
    assert_eq!(post_health.status(), StatusCode::METHOD_NOT_ALLOWED);
    handle.shutdown().await.unwrap();
}

/// Without `health_path` there is no health endpoint.
#[tokio::test]
async fn no_health_endpoint_unless_asked() {
    let handle = start(loopback()).await;
    let answer = ({
        charly_mcp::client::install_tls_provider();
        reqwest::Client::new()
    })
    .get(health_url(&handle))
    .send()
    .await
    .unwrap();
    assert_eq!(answer.status(), StatusCode::NOT_FOUND);
    handle.shutdown().await.unwrap();
}

/// Once the router's shutdown token is cancelled, the health endpoint answers 503, so a
/// balancer sends no new work to a replica that is draining.
#[tokio::test]
async fn health_says_stopping_during_shutdown() {
    let shutdown = CancellationToken::new();
    let options = loopback().health_path("/healthz");
    let router = common::server().http_router(&options, shutdown.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serving = tokio::spawn(async move { axum::serve(listener, router).await });
    let url = format!("http://{addr}/healthz");
    assert_eq!(
        ({
            charly_mcp::client::install_tls_provider();
            reqwest::Client::new()
        })
        .get(&url)
        .send()
        .await
        .unwrap()
        .status(),
        StatusCode::OK
    );
    shutdown.cancel();
    let answer = ({
        charly_mcp::client::install_tls_provider();
        reqwest::Client::new()
    })
    .get(&url)
    .send()
    .await
    .unwrap();
    assert_eq!(answer.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(answer.text().await.unwrap(), r#"{"status":"stopping"}"#);
    serving.abort();
}

/// Session ids carry the replica name before a dot; the session works as any other.
#[tokio::test]
async fn session_ids_name_their_replica() {
    let handle = start(loopback().session_id_prefix("charly-1")).await;
    let url = handle.url();
    for _ in 0..3 {
        let session = initialize(&url).await;
        let (replica, uuid) = session.split_once('.').unwrap_or_else(|| panic!("no dot in {session}"));
        assert_eq!(replica, "charly-1");
        assert_eq!(uuid.len(), 36, "{session}");
        let list = post(&url, &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string())
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(list.status(), StatusCode::OK);
        assert!(!messages(list).await[0]["result"]["tools"].as_array().unwrap().is_empty());
        let delete = ({
            charly_mcp::client::install_tls_provider();
            reqwest::Client::new()
        })
        .delete(&url)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
        assert_eq!(delete.status(), StatusCode::OK);
        let after = post(&url, &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string())
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        assert_eq!(after.status(), StatusCode::NOT_FOUND);
    }
    // Another replica's id (what a balancer that lost the replica sends elsewhere) is unknown.
    let foreign = post(&url, &json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}).to_string())
        .header("mcp-session-id", "charly-2.0b8e5d8e-54bb-4c5e-9a67-6d1e1b0f9d41")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), StatusCode::NOT_FOUND);
    handle.shutdown().await.unwrap();
}

/// Without a prefix, ids stay rmcp's bare UUIDs.
#[tokio::test]
async fn session_ids_are_bare_without_a_prefix() {
    let handle = start(loopback()).await;
    let session = initialize(&handle.url()).await;
    assert!(!session.contains('.') && session.len() == 36, "{session}");
    handle.shutdown().await.unwrap();
}

/// Stateless: `initialize` mints no session, and any request is served on its own.
#[tokio::test]
async fn stateless_answers_without_a_session() {
    let handle = start(loopback().stateless(true).session_id_prefix("ignored")).await;
    let url = handle.url();
    let init = post(&url, INIT).send().await.unwrap();
    assert_eq!(init.status(), StatusCode::OK);
    assert!(init.headers().get("mcp-session-id").is_none());
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).to_string();
    let list = post(&url, &call).header("mcp-protocol-version", "2025-06-18").send().await.unwrap();
    assert_eq!(list.status(), StatusCode::OK);
    assert!(!messages(list).await.last().unwrap()["result"]["tools"].as_array().unwrap().is_empty());
    handle.shutdown().await.unwrap();
}

/// Bad names and paths are refused before anything listens.
#[tokio::test]
async fn bad_prefix_or_health_path_is_refused() {
    let server = common::server();
    let refused = |options: HttpOptions| {
        let server = server.clone();
        async move { server.serve_http(options).await.unwrap_err() }
    };
    let dotted = refused(loopback().session_id_prefix("a.b")).await;
    assert!(matches!(&dotted, ServeError::SessionIdPrefix(why) if why.contains("\"a.b\"")), "{dotted}");
    let same = refused(loopback().health_path("/mcp")).await;
    assert!(matches!(&same, ServeError::Path(why) if why.contains("MCP endpoint")), "{same}");
    let relative = refused(loopback().health_path("healthz")).await;
    assert!(matches!(&relative, ServeError::Path(why) if why.contains("start with `/`")), "{relative}");
}
