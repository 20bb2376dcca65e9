//! The caps rmcp 3.11 does not have: open sessions (`compat/open_sessions.rs`) and requests in
//! flight per session (`compat/calls_in_flight.rs`).

use tokio::io::AsyncReadExt as _;

use super::*;

/// charly's fixture server over HTTP with these caps, sessions closed after [`IDLE`].
async fn capped(max_sessions: Option<usize>, max_requests: Option<usize>) -> ServerHandle {
    let options = loopback()
        .session_idle_timeout(Some(IDLE))
        .max_sessions(max_sessions)
        .max_requests_per_session(max_requests);
    charly_server().0.serve_http(options).await.unwrap()
}

/// `initialize` without `notifications/initialized` after it: the status, and the session id
/// when one was opened.
async fn open(url: &str) -> (StatusCode, Option<String>, Option<String>) {
    let response = post(url, INIT).send().await.unwrap();
    let header = |name: &str| response.headers().get(name).map(|v| v.to_str().unwrap().to_owned());
    (response.status(), header("mcp-session-id"), header("retry-after"))
}

/// `compat/open_sessions.rs`: rmcp opens a session for every `initialize`; charly opens at
/// most `max_sessions`, answers the next `initialize` with 503 and `Retry-After` (opening
/// nothing), and has a slot again once a session is deleted or idles out (whether or not
/// its client finished the handshake). Concurrent `initialize`s cannot overshoot the cap.
#[tokio::test]
async fn sessions_past_the_cap() {
    let (bare, _) = BareHttp::start(Some(IDLE)).await;
    for i in 0..5 {
        assert_eq!(open(&bare.url).await.0, StatusCode::OK, "rmcp opens session {i}");
    }

    let charly = capped(Some(2), None).await;
    let url = charly.url();
    let first = initialize(&url).await;
    let (status, id, _) = open(&url).await;
    assert_eq!((status, id.is_some()), (StatusCode::OK, true), "charly, the second session");
    let (status, id, retry) = open(&url).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "charly, the third session");
    assert_eq!((id, retry.as_deref()), (None, Some("5")), "charly: nothing opened, Retry-After");
    let text = post(&url, INIT).send().await.unwrap().text().await.unwrap();
    assert!(text.contains("2 sessions are open"), "charly names the cap: {text}");

    // Deleting one frees its slot.
    assert_eq!(delete(&url, &first).send().await.unwrap().status(), StatusCode::OK);
    assert_eq!(open(&url).await.0, StatusCode::OK, "charly, a session after a DELETE");
    assert_eq!(open(&url).await.0, StatusCode::SERVICE_UNAVAILABLE, "charly, full again");

    // Neither session is used: both idle out (one never finished its handshake) and free
    // their slots.
    tokio::time::sleep(IDLE * 3).await;
    let again = [open(&url).await.0, open(&url).await.0];
    assert_eq!(again, [StatusCode::OK; 2], "charly, after the idle timeout");
    charly.shutdown().await.unwrap();

    // Concurrent `initialize`s on an empty server: exactly the cap gets sessions.
    let charly = capped(Some(3), None).await;
    let url = charly.url();
    let opens: Vec<_> = (0..24)
        .map(|_| {
            tokio::spawn({
                let url = url.clone();
                async move { open(&url).await }
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for task in opens {
        let (status, _, retry) = task.await.unwrap();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            assert_eq!(retry.as_deref(), Some("5"), "charly: every refusal has Retry-After");
        }
        statuses.push(status);
    }
    let ok = statuses.iter().filter(|s| **s == StatusCode::OK).count();
    let full = statuses.iter().filter(|s| **s == StatusCode::SERVICE_UNAVAILABLE).count();
    assert_eq!((ok, full), (3, 21), "charly, 24 concurrent initializes, cap 3: {statuses:?}");
    charly.shutdown().await.unwrap();
}

/// A `tools/call` of the fixture's `sleep` with this id, in this session.
fn sleep_call(url: &str, session: &str, id: u64, ms: u64) -> reqwest::RequestBuilder {
    let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "sleep", "arguments": {"ms": ms}}});
    post(url, &call.to_string()).header("mcp-session-id", session)
}

/// The `text` of each call's result, spawned now, in order.
fn spawn_calls(
    url: &str,
    session: &str,
    ids: std::ops::Range<u64>,
    ms: u64,
) -> Vec<tokio::task::JoinHandle<Vec<Value>>> {
    ids.map(|id| {
        let call = sleep_call(url, session, id, ms);
        tokio::spawn(async move { messages(call.send().await.unwrap()).await })
    })
    .collect()
}

/// `compat/calls_in_flight.rs`: rmcp runs every request of a session at once; charly runs at
/// most `max_requests_per_session`, answers the next one's POST with 503, `Retry-After: 1`
/// and a JSON-RPC error carrying its id (chunked POSTs included), lets notifications through,
/// and runs requests again once those in flight have finished.
#[tokio::test]
async fn requests_past_the_per_session_cap() {
    let (bare, _) = BareHttp::start(None).await;
    let session = initialize(&bare.url).await;
    let calls = spawn_calls(&bare.url, &session, 1..5, 500);
    for call in calls {
        let messages = call.await.unwrap();
        let result = messages.iter().find(|m| m.get("result").is_some());
        assert!(result.is_some(), "rmcp runs all 4 at once: {messages:?}");
    }

    let charly = capped(None, Some(2)).await;
    let url = charly.url();
    let session = initialize(&url).await;
    let running = spawn_calls(&url, &session, 11..13, 1500);
    tokio::time::sleep(Duration::from_millis(400)).await;
    for (id, body) in [
        (
            13,
            json!({"jsonrpc": "2.0", "id": 13, "method": "tools/call",
                     "params": {"name": "sleep", "arguments": {"ms": 1}}}),
        ),
        (14, json!({"jsonrpc": "2.0", "id": 14, "method": "ping"})),
    ] {
        let refused = post(&url, &body.to_string()).header("mcp-session-id", &session).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::SERVICE_UNAVAILABLE, "charly, request {id}");
        assert_eq!(refused.headers()["retry-after"], "1", "charly, request {id}");
        let error: Value = refused.json().await.unwrap();
        assert_eq!((&error["id"], &error["error"]["code"]), (&json!(id), &json!(-32000)), "{error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.contains("2 requests in flight"), "charly names the cap: {message}");
    }
    // Chunked, without Content-Length: refused all the same.
    let chunked = raw_chunked_post(&charly, &session, r#"{"jsonrpc":"2.0","id":15,"method":"ping"}"#).await;
    assert!(chunked.starts_with("HTTP/1.1 503"), "charly, a chunked POST: {chunked}");
    // A notification passes: a client at the cap can still cancel.
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": 999}});
    let notified = post(&url, &cancel.to_string()).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(notified.status(), StatusCode::ACCEPTED, "charly, a notification at the cap");
    // The two calls in flight were not disturbed, and their slots are free again after them.
    for call in running {
        let messages = call.await.unwrap();
        let result = messages.iter().find_map(|m| m["result"]["content"][0]["text"].as_str());
        assert_eq!(result, Some("slept 1500 ms\n"), "charly: {messages:?}");
    }
    // A request stays in flight until its answer's body is dropped, just after the client
    // has read its end.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let after = sleep_call(&url, &session, 16, 1).send().await.unwrap();
    assert_eq!(after.status(), StatusCode::OK, "charly, after the calls in flight finished");
    let after = messages(after).await;
    assert!(after.iter().any(|m| m["id"] == 16 && m.get("result").is_some()), "{after:?}");
    charly.shutdown().await.unwrap();
}

/// The raw answer (status line, headers, body) to a chunked POST of `body` in `session`.
async fn raw_chunked_post(server: &ServerHandle, session: &str, body: &str) -> String {
    use tokio::io::AsyncWriteExt as _;
    let addr = server.local_addr();
    let mut tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    tokio::time::timeout(Duration::from_secs(5), tcp.read_to_string(&mut answer)).await.unwrap().unwrap();
    answer
}
