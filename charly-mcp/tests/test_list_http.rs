//! `tools/list` over Streamable HTTP: a plain request of a live session is answered from
//! pages serialised once (`application/json`), with exactly what rmcp answers on its own path
//! (an SSE event); everything else still goes to rmcp and gets rmcp's answer. Also DELETE,
//! which this endpoint answers 404 for unknown sessions and 200 for ended ones.

mod common;

use common::http::{initialize, loopback, messages, post};
use reqwest::StatusCode;
use serde_json::{Value, json};

fn list(id: Value, cursor: Option<&str>) -> String {
    let params = cursor.map_or(json!({}), |c| json!({ "cursor": c }));
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}).to_string()
}

fn content_type(response: &reqwest::Response) -> String {
    response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default()
}

/// Every page, through the cache and through rmcp (a body over 512 bytes, padded with spaces,
/// sends a request there): the same JSON-RPC response, ids echoed as sent, cursors leading to
/// the end.
#[tokio::test]
async fn cached_pages_match_what_rmcp_serves() {
    let server = charly_mcp::server::Server::new(common::options().page_size(4));
    let served: Vec<Value> = server.tools().iter().map(|t| json!(t.name())).collect();
    let handle = server.serve_http(loopback()).await.unwrap();
    let url = handle.url();
    let session = initialize(&url).await;
    let (mut cursor, mut pages, mut names) = (None::<String>, 0, Vec::new());
    loop {
        let id = if pages % 2 == 0 { json!(pages + 10) } else { json!(format!("page-{pages}")) };
        let body = list(id.clone(), cursor.as_deref());
        let cached = post(&url, &body).header("mcp-session-id", &session).send().await.unwrap();
        assert_eq!(cached.status(), StatusCode::OK);
        assert_eq!(content_type(&cached), "application/json");
        let cached = messages(cached).await.remove(0);
        let padded = format!("{body}{}", " ".repeat(600));
        let rmcp = post(&url, &padded).header("mcp-session-id", &session);
        let rmcp = rmcp.send().await.unwrap();
        assert!(content_type(&rmcp).starts_with("text/event-stream"), "{}", content_type(&rmcp));
        let rmcp = messages(rmcp).await.pop().unwrap();
        assert_eq!(cached, rmcp, "page {pages}");
        assert_eq!(cached["id"], id);
        pages += 1;
        names.extend(cached["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].clone()));
        match cached["result"].get("nextCursor") {
            Some(next) => cursor = Some(next.as_str().unwrap().to_owned()),
            None => break,
        }
    }
    // The fixture has 13 tools; the `read-only` feature (which `--all-features` turns on)
    // leaves its one destructive leaf, `remove`, out of the catalog at compile time.
    let expected = if cfg!(feature = "read-only") { 12_usize } else { 13 };
    assert_eq!(names, served, "every served tool once, in order");
    assert_eq!((pages, names.len()), (expected.div_ceil(4), expected), "4 a page");
    handle.shutdown().await.unwrap();
}

/// What the cache does not answer gets rmcp's answer: a bad cursor is invalid params, an
/// unknown or deleted session is 404, a foreign host or origin is 403, a protocol version rmcp
/// does not know is 400; and other methods and `_meta` still work.
#[tokio::test]
async fn everything_else_gets_rmcps_answer() {
    let handle = common::server().serve_http(loopback()).await.unwrap();
    let url = handle.url();
    let session = initialize(&url).await;
    let send = |body: String| post(&url, &body).header("mcp-session-id", &session).send();

    let bad_cursor = messages(send(list(json!(1), Some("bm90LW91cnM"))).await.unwrap()).await;
    assert_eq!(bad_cursor.last().unwrap()["error"]["code"], -32602, "{bad_cursor:?}");
    let with_meta = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": {"progressToken": 7}}});
    let with_meta = messages(send(with_meta.to_string()).await.unwrap()).await;
    assert!(with_meta.last().unwrap()["result"]["tools"].is_array(), "{with_meta:?}");
    let ping =
        messages(send(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}).to_string()).await.unwrap());
    assert_eq!(ping.await.last().unwrap()["result"], json!({}));

    // Requests the cache must not answer, because rmcp refuses them: an id rmcp cannot hold
    // (above i64), an Accept that refuses JSON with q=0.
    let big_id = r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"tools/list"}"#;
    let big_id = post(&url, big_id).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(big_id.status(), StatusCode::BAD_REQUEST);
    let refused: Value = big_id.json().await.unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let q0 = ({
        charly_mcp::client::install_tls_provider();
        reqwest::Client::new()
    })
    .post(&url)
    .header("content-type", "application/json")
    .header("accept", "application/json;q=0, text/event-stream")
    .header("mcp-session-id", &session)
    .body(list(json!(8), None));
    assert_eq!(q0.send().await.unwrap().status(), StatusCode::NOT_ACCEPTABLE);

    let unknown = post(&url, &list(json!(4), None)).header("mcp-session-id", "no-such-session");
    assert_eq!(unknown.send().await.unwrap().status(), StatusCode::NOT_FOUND);
    let evil =
        post(&url, &list(json!(5), None)).header("mcp-session-id", &session).header("host", "evil.example");
    assert_eq!(evil.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    let evil = post(&url, &list(json!(5), None))
        .header("mcp-session-id", &session)
        .header("origin", "http://evil.example");
    assert_eq!(evil.send().await.unwrap().status(), StatusCode::FORBIDDEN);
    // An allowed Origin passes rmcp's check, so the cache answers (it left every request with
    // an Origin to rmcp while it had no Origin check of its own).
    let origin = format!("http://localhost:{}", handle.local_addr().port());
    let own = post(&url, &list(json!(5), None)).header("mcp-session-id", &session).header("origin", origin);
    let own = own.send().await.unwrap();
    assert_eq!((own.status(), content_type(&own)), (StatusCode::OK, "application/json".to_owned()));
    let version = post(&url, &list(json!(6), None))
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "1999-01-01");
    assert_eq!(version.send().await.unwrap().status(), StatusCode::BAD_REQUEST);

    // DELETE: 200 for a live session (rmcp says 202, which the Python SDK warns about), then
    // 404 for it and for any id that was never a session, as a POST gets; rmcp's Host check
    // still comes first.
    let delete = |id: &str, host: &str| {
        ({
            charly_mcp::client::install_tls_provider();
            reqwest::Client::new()
        })
        .delete(&url)
        .header("mcp-session-id", id)
        .header("host", host)
        .send()
    };
    let own = format!("127.0.0.1:{}", handle.local_addr().port());
    assert_eq!(delete(&session, &own).await.unwrap().status(), StatusCode::OK);
    let after = post(&url, &list(json!(7), None)).header("mcp-session-id", &session);
    assert_eq!(after.send().await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(delete(&session, &own).await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(delete("never-a-session", &own).await.unwrap().status(), StatusCode::NOT_FOUND);
    assert_eq!(delete("never-a-session", "evil.example").await.unwrap().status(), StatusCode::FORBIDDEN);
    handle.shutdown().await.unwrap();
}

/// Read-only servers list from the same filtered pages on both paths.
#[tokio::test]
async fn read_only_pages_leave_destructive_tools_out() {
    let server = charly_mcp::server::Server::new(common::options().read_only(true).page_size(0));
    let handle = server.serve_http(loopback()).await.unwrap();
    let session = initialize(&handle.url()).await;
    let page = post(&handle.url(), &list(json!(1), None)).header("mcp-session-id", &session);
    let page = messages(page.send().await.unwrap()).await.remove(0);
    let names: Vec<&str> =
        page["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(!names.contains(&"remove") && names.len() == 12, "{names:?}");
    assert!(page["result"].get("nextCursor").is_none());
    handle.shutdown().await.unwrap();
}

/// The bearer token guards cached answers too.
#[tokio::test]
async fn cached_answers_need_the_bearer_token() {
    let token = charly_mcp::server::BearerToken::new("s3cret-token").unwrap();
    let handle = common::server().serve_http(loopback().bearer_token(token)).await.unwrap();
    let url = handle.url();
    let init = post(&url, common::http::INIT).bearer_auth("s3cret-token").send().await.unwrap();
    let session = init.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let without = post(&url, &list(json!(1), None)).header("mcp-session-id", &session);
    assert_eq!(without.send().await.unwrap().status(), StatusCode::UNAUTHORIZED);
    let with =
        post(&url, &list(json!(2), None)).header("mcp-session-id", &session).bearer_auth("s3cret-token");
    let with = with.send().await.unwrap();
    assert_eq!((with.status(), content_type(&with)), (StatusCode::OK, "application/json".to_owned()));
    handle.shutdown().await.unwrap();
}

/// rmcp's body limit holds for cached answers too: the cache answers only after rmcp accepted
/// a probe of the request's length (it used to answer any `tools/list` up to 512 bytes).
#[tokio::test]
async fn the_body_limit_holds_for_cached_answers() {
    let handle = common::server().serve_http(loopback().max_body_bytes(200)).await.unwrap();
    let url = handle.url();
    let session = initialize(&url).await;
    let short = list(json!(1), None);
    let padded = format!("{short}{}", " ".repeat(300));
    let cached = post(&url, &short).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!((cached.status(), content_type(&cached)), (StatusCode::OK, "application/json".to_owned()));
    let refused = post(&url, &padded).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::PAYLOAD_TOO_LARGE);
    handle.shutdown().await.unwrap();
}
