//! Streamable HTTP on loopback: Host/Origin checks, bearer token, host meta, progress on the
//! SSE stream before the result, stateless mode, the versions real clients send, shutdown.

mod common;

use common::http::{INIT, initialize, loopback, messages, post, start};

use charly_mcp::server::rmcp::ServiceExt as _;
use charly_mcp::server::rmcp::transport::StreamableHttpClientTransport;
use charly_mcp::server::{BearerToken, HostMeta};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[tokio::test]
async fn foreign_origin_and_host_are_refused() {
    let handle = start(loopback()).await;
    let url = handle.url();
    let evil_origin = post(&url, INIT).header("origin", "http://evil.example.com").send().await.unwrap();
    assert_eq!(evil_origin.status(), StatusCode::FORBIDDEN);
    let evil_host = post(&url, INIT).header("host", "evil.example.com").send().await.unwrap();
    assert_eq!(evil_host.status(), StatusCode::FORBIDDEN);
    let port = handle.local_addr().port();
    let own = post(&url, INIT).header("origin", format!("http://localhost:{port}")).send().await.unwrap();
    assert_eq!(own.status(), StatusCode::OK);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn bearer_token_is_required_and_accepted() {
    let handle = start(loopback().bearer_token(BearerToken::new("s3cret-token").unwrap())).await;
    let url = handle.url();
    let none = post(&url, INIT).send().await.unwrap();
    assert_eq!(none.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(none.headers()["www-authenticate"], "Bearer");
    let wrong = post(&url, INIT).bearer_auth("s3cret-tokeN").send().await.unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let right = post(&url, INIT).bearer_auth("s3cret-token").send().await.unwrap();
    assert_eq!(right.status(), StatusCode::OK);
    assert_eq!(messages(right).await.last().unwrap()["result"]["serverInfo"]["name"], "fixture");
    handle.shutdown().await.unwrap();
}

#[test]
fn bearer_token_from_env_and_file() {
    let dir = std::env::temp_dir().join(format!("charly-token-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("token");
    std::fs::write(&file, "  from-file\n").unwrap();
    assert!(BearerToken::from_file(&file).is_ok());
    std::fs::write(&file, "\n").unwrap();
    let err = BearerToken::from_file(&file).unwrap_err().to_string();
    assert!(err.contains("is empty") && err.contains("token"), "{err}");
    let err = BearerToken::from_env("CHARLY_TEST_TOKEN_THAT_IS_NOT_SET").unwrap_err().to_string();
    assert!(err.contains("CHARLY_TEST_TOKEN_THAT_IS_NOT_SET"), "{err}");
    assert!(!format!("{:?}", BearerToken::new("visible?").unwrap()).contains("visible"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn progress_arrives_on_the_post_stream_before_the_result() {
    let handle = start(loopback()).await;
    let url = handle.url();
    let session = initialize(&url).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": 0}}});
    let response = post(&url, &call.to_string())
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    let got = messages(response).await;
    let methods: Vec<&str> = got.iter().map(|m| m["method"].as_str().unwrap_or("(result)")).collect();
    assert_eq!(
        methods,
        ["notifications/progress", "notifications/progress", "notifications/progress", "(result)"]
    );
    assert!(got[..3].iter().all(|m| m["params"]["progressToken"] == json!(0)), "{got:?}");
    assert_eq!(got[3]["result"]["content"][0]["text"], "done");
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn protocol_version_headers_real_clients_send_are_accepted() {
    let handle = start(loopback()).await;
    let url = handle.url();
    let session = initialize(&url).await;
    for version in ["2025-03-26", "2025-06-18", "2025-11-25"] {
        let response = post(&url, r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", version)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{version}");
        assert!(messages(response).await.last().unwrap()["result"]["tools"].is_array(), "{version}");
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn stateless_mode_needs_no_session() {
    let handle = start(loopback().stateless(true)).await;
    let url = handle.url();
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "no session"}}});
    let response =
        post(&url, &call.to_string()).header("mcp-protocol-version", "2025-06-18").send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers().get("mcp-session-id").is_none());
    // Nothing to stream: a plain JSON answer (the client accepts both).
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: serde_json::Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
    assert_eq!(body["result"]["content"][0]["text"], "no session\n");
    // Progress before the result: an SSE stream carrying all of it.
    let call = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
                      "params": {"name": "progress", "arguments": {}, "_meta": {"progressToken": 0}}});
    let response =
        post(&url, &call.to_string()).header("mcp-protocol-version", "2025-06-18").send().await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let got = messages(response).await;
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[3]["result"]["content"][0]["text"], "done", "{got:?}");
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn host_meta_from_a_mounting_router_wins_over_the_client() {
    let options = loopback();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let mut meta = serde_json::Map::new();
    meta.insert("user".into(), json!("alice"));
    let router = axum::Router::new()
        .route("/health", axum::routing::get(|| async { "ok" }))
        .merge(common::server().http_router(&options, shutdown.clone()))
        .layer(axum::middleware::from_fn(
            move |mut request: axum::extract::Request, next: axum::middleware::Next| {
                let meta = meta.clone();
                async move {
                    request.extensions_mut().insert(HostMeta(meta));
                    next.run(request).await
                }
            },
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let serving = tokio::spawn(
        axum::serve(listener, router)
            .with_graceful_shutdown(shutdown.clone().cancelled_owned())
            .into_future(),
    );
    let session = initialize(&url).await;
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                      "params": {"name": "meta", "arguments": {}, "_meta": {"user": "mallory", "trace": "t"}}});
    let response = post(&url, &call.to_string()).header("mcp-session-id", &session).send().await.unwrap();
    let got = messages(response).await;
    let meta: Value =
        serde_json::from_str(got.last().unwrap()["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(meta["user"], "alice");
    assert_eq!(meta["trace"], "t");
    shutdown.cancel();
    serving.await.unwrap().unwrap();
}

#[tokio::test]
async fn an_rmcp_client_lists_and_calls_over_http() {
    let handle = start(loopback()).await;
    let client = ()
        .serve({
            charly_mcp::client::install_tls_provider();
            StreamableHttpClientTransport::from_uri(handle.url())
        })
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "box.show"));
    let result = client
        .call_tool(
            charly_mcp::server::rmcp::model::CallToolRequestParams::new("box.show")
                .with_arguments(json!({"name": "db"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(common::text(&result), "box db\n");
    client.cancel().await.unwrap();
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn shutdown_releases_the_port() {
    let handle = start(loopback()).await;
    let addr = handle.local_addr();
    let session = initialize(&handle.url()).await;
    assert!(!session.is_empty());
    handle.shutdown().await.unwrap();
    let again = start(loopback().listen(addr)).await;
    assert_eq!(again.local_addr(), addr);
    again.shutdown().await.unwrap();
}

#[tokio::test]
async fn wildcard_or_missing_accept_is_served() {
    let handle = start(loopback()).await;
    let url = handle.url();
    for accept in [Some("*/*"), None, Some("application/json, text/event-stream;q=0.9")] {
        let mut request = ({
            charly_mcp::client::install_tls_provider();
            reqwest::Client::new()
        })
        .post(&url)
        .header("content-type", "application/json")
        .body(INIT);
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{accept:?}");
        assert_eq!(messages(response).await.last().unwrap()["id"], 1, "{accept:?}");
    }
    // An explicit header that leaves out event streams is still refused by the transport.
    let narrow = ({
        charly_mcp::client::install_tls_provider();
        reqwest::Client::new()
    })
    .post(&url)
    .header("content-type", "application/json")
    .header("accept", "text/html")
    .body(INIT)
    .send()
    .await
    .unwrap();
    assert_eq!(narrow.status(), StatusCode::NOT_ACCEPTABLE);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused() {
    let handle = start(loopback().max_body_bytes(1024)).await;
    let url = handle.url();
    let session = initialize(&url).await;
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
                      "params": {"name": "echo", "arguments": {"text": "x".repeat(4096)}}});
    let response = post(&url, &call.to_string()).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn log_messages_without_a_get_stream_never_stall_calls() {
    let handle = start(loopback()).await;
    let url = handle.url();
    let session = initialize(&url).await;
    let set_level =
        json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "debug"}});
    post(&url, &set_level.to_string()).header("mcp-session-id", &session).send().await.unwrap();
    // 40 calls x 3 log messages, and nobody reads the standalone GET stream.
    for id in 10..50 {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "logs", "arguments": {}}});
        let response = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            post(&url, &call.to_string()).header("mcp-session-id", &session).send(),
        )
        .await
        .unwrap_or_else(|_| panic!("call {id} stalled"))
        .unwrap();
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), messages(response))
            .await
            .unwrap_or_else(|_| panic!("call {id} stalled"));
        assert_eq!(got.last().unwrap()["result"]["content"][0]["text"], "logged", "{got:?}");
    }
    handle.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sleeping_calls_over_http_overlap() {
    let handle = start(loopback()).await;
    let client = ()
        .serve({
            charly_mcp::client::install_tls_provider();
            StreamableHttpClientTransport::from_uri(handle.url())
        })
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let calls = (0..20).map(|_| {
        client.call_tool(
            charly_mcp::server::rmcp::model::CallToolRequestParams::new("sleep")
                .with_arguments(json!({"ms": 200}).as_object().unwrap().clone()),
        )
    });
    for result in futures::future::join_all(calls).await {
        assert_eq!(common::text(&result.unwrap()), "slept 200 ms\n");
    }
    let elapsed = started.elapsed();
    assert!(elapsed < std::time::Duration::from_millis(1500), "20 calls took {elapsed:?}");
    client.cancel().await.unwrap();
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn params_that_do_not_fit_their_method_get_invalid_params_with_the_reason() {
    let handle = start(loopback()).await;
    let url = handle.url();
    let session = initialize(&url).await;
    let cases = [
        (
            json!({"method": "tools/call", "params": {}}),
            -32602,
            "invalid params for `tools/call`: missing field `name`",
        ),
        (
            json!({"method": "tools/call", "params": {"name": 5}}),
            -32602,
            "invalid type: integer `5`, expected a string",
        ),
        (
            json!({"method": "resources/read", "params": {}}),
            -32602,
            "invalid params for `resources/read`: missing field `uri`",
        ),
        (
            json!({"method": "logging/setLevel", "params": {"level": "loud"}}),
            -32602,
            "unknown variant `loud`",
        ),
        (json!({"method": "foo/bar"}), -32601, "unknown method `foo/bar`"),
    ];
    for (id, (mut request, code, text)) in cases.into_iter().enumerate() {
        request["jsonrpc"] = json!("2.0");
        request["id"] = json!(id + 10);
        let response =
            post(&url, &request.to_string()).header("mcp-session-id", &session).send().await.unwrap();
        let answer = messages(response).await.pop().unwrap();
        assert_eq!(answer["error"]["code"], code, "{request}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(text), "{request}: {message}");
    }
    // The session lives on.
    let ping = post(&url, r#"{"jsonrpc":"2.0","id":99,"method":"ping"}"#).header("mcp-session-id", &session);
    assert_eq!(messages(ping.send().await.unwrap()).await.pop().unwrap()["result"], json!({}));
    handle.shutdown().await.unwrap();
}

#[tokio::test]
async fn unreadable_bodies_get_400_with_a_json_rpc_error() {
    for options in [loopback(), loopback().stateless(true)] {
        let handle = start(options).await;
        let url = handle.url();
        for (body, code) in [
            (r#"{"jsonrpc":"2.0","id":2,"#, -32700),
            (r#"{"hello":1}"#, -32600),
            (r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#, -32600),
        ] {
            let response = post(&url, body).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{body}");
            let error: Value = response.json().await.unwrap();
            assert_eq!(error["error"]["code"], code, "{body}: {error}");
            // JSON-RPC 2.0 section 5: an id that cannot be read is answered as null.
            assert_eq!(error.get("id"), Some(&Value::Null), "{body}: {error}");
        }
        // A wrong Content-Type is still 415.
        let wrong = ({
            charly_mcp::client::install_tls_provider();
            reqwest::Client::new()
        })
        .post(&url)
        .header("content-type", "text/plain")
        .header("accept", "application/json, text/event-stream")
        .body(INIT)
        .send()
        .await
        .unwrap();
        assert_eq!(wrong.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        handle.shutdown().await.unwrap();
    }
}

#[test]
fn tokens_no_header_could_carry_are_refused() {
    for bad in ["pässwörd", "abc\ndef", "tab\there", " \n "] {
        let err = BearerToken::new(bad).unwrap_err().to_string();
        assert!(err.contains("the bearer token"), "{bad:?}: {err}");
    }
    assert!(BearerToken::new("  abc.DEF-123_~+/= x \n").is_ok());
    let path = std::env::temp_dir().join(format!("charly-token-test-{}", std::process::id()));
    std::fs::write(&path, "pässwörd\n").unwrap();
    let err = BearerToken::from_file(&path).unwrap_err().to_string();
    std::fs::remove_file(&path).unwrap();
    assert!(err.contains("bearer token file") && err.contains("'ä'"), "{err}");
}
