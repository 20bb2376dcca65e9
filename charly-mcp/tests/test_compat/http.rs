//! The Streamable HTTP cases.

use super::*;

/// `compat/accept.rs`: rmcp answers 406 to a POST whose `Accept` is `*/*` or missing, though
/// both accept anything (RFC 9110, section 12.5.1); charly serves it.
#[tokio::test]
async fn wildcard_or_missing_accept() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    for accept in [Some("*/*"), None] {
        let send = |url: &str| {
            let request = ({
                charly_mcp::client::install_tls_provider();
                reqwest::Client::new()
            })
            .post(url)
            .header("content-type", "application/json");
            let request = match accept {
                Some(accept) => request.header("accept", accept),
                None => request,
            };
            request.body(INIT).send()
        };
        assert_eq!(send(&bare.url).await.unwrap().status(), StatusCode::NOT_ACCEPTABLE, "rmcp, {accept:?}");
        assert_eq!(send(&charly.url()).await.unwrap().status(), StatusCode::OK, "charly, {accept:?}");
    }
    charly.shutdown().await.unwrap();
}

/// `compat/unreadable_body.rs`: rmcp answers a body that is not JSON, or not JSON-RPC, with 415
/// and a plain-text reason starting `fail to deserialize request body` (charly reads that
/// text); charly answers 400 with a JSON-RPC error, -32700 or -32600 (spec 2025-11-25,
/// "Sending Messages to the Server"; JSON-RPC 2.0, section 5.1).
#[tokio::test]
async fn unreadable_bodies() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    for (body, reason, code) in [
        (r#"{"jsonrpc":"2.0","id":2,"#, "fail to deserialize request body ", -32700),
        (r#"{"hello":1}"#, "fail to deserialize request body unrecognized JSON-RPC message", -32600),
    ] {
        let rmcp = post(&bare.url, body).send().await.unwrap();
        assert_eq!(rmcp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "rmcp, {body}");
        let text = rmcp.text().await.unwrap();
        assert!(text.starts_with(reason), "rmcp, {body}: {text}");
        let ours = post(&charly.url(), body).send().await.unwrap();
        assert_eq!(ours.status(), StatusCode::BAD_REQUEST, "charly, {body}");
        let error: Value = ours.json().await.unwrap();
        assert_eq!(error["error"]["code"], code, "charly, {body}: {error}");
        assert_eq!(error.get("id"), Some(&Value::Null), "charly, {body}: an unread id is null: {error}");
    }
    // In a session the body is read before rmcp, so the error carries the id it names.
    let session = initialize(&charly.url()).await;
    for (body, code, id) in [
        (r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","para"#, -32700, 2),
        (r#"{"id":3,"hello":1}"#, -32600, 3),
    ] {
        let ours = post(&charly.url(), body).header("mcp-session-id", &session).send().await.unwrap();
        assert_eq!(ours.status(), StatusCode::BAD_REQUEST, "charly, {body}");
        let error: Value = ours.json().await.unwrap();
        assert_eq!(
            (&error["error"]["code"], &error["id"]),
            (&json!(code), &json!(id)),
            "charly, {body}: {error}"
        );
    }
    charly.shutdown().await.unwrap();
}

/// `compat/too_large.rs`: rmcp answers a body over its limit (4 MiB, charly's too) with 413
/// and the plain text `Payload Too Large: request body exceeds 4194304 bytes`; charly answers
/// the same 413 with a JSON-RPC error, `"id": null` (the body was not read) and -32600, with
/// `Content-Length` (rmcp's check) and without it (a chunked body charly reads itself), before
/// a session and in one.
#[tokio::test]
async fn bodies_over_the_limit() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"wait","arguments":{{"x":"{}"}}}}}}"#,
        "x".repeat(5 << 20)
    );
    let rmcp = post(&bare.url, &big).send().await.unwrap();
    assert_eq!(rmcp.status(), StatusCode::PAYLOAD_TOO_LARGE, "rmcp");
    assert_eq!(rmcp.text().await.unwrap(), "Payload Too Large: request body exceeds 4194304 bytes", "rmcp");
    let session = initialize(&charly.url()).await;
    let chunked = || {
        let chunks: Vec<Result<String, std::io::Error>> = vec![Ok(big.clone())];
        reqwest::Body::wrap_stream(futures::stream::iter(chunks))
    };
    for (label, request) in [
        ("no session", post(&charly.url(), &big)),
        ("session", post(&charly.url(), &big).header("mcp-session-id", &session)),
        ("session, chunked", post(&charly.url(), "").header("mcp-session-id", &session).body(chunked())),
    ] {
        let ours = request.send().await.unwrap();
        assert_eq!(ours.status(), StatusCode::PAYLOAD_TOO_LARGE, "charly, {label}");
        assert_eq!(ours.headers()["content-type"], "application/json", "charly, {label}");
        let error: Value = ours.json().await.unwrap();
        assert_eq!(
            error,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message":
                "invalid request: the body is larger than 4 MiB (4194304 bytes), the most one message may be"}}),
            "charly, {label}"
        );
    }
    charly.shutdown().await.unwrap();
}

/// `compat/delete.rs`: rmcp answers 202 to a DELETE of any session id, live or never issued;
/// charly answers 200 for a live session (the Python SDK takes only 200 and 204 as success)
/// and 404 for an unknown one, as a POST to it gets (spec 2025-11-25, "Session Management").
#[tokio::test]
async fn delete_status() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let session = initialize(&bare.url).await;
    assert_eq!(
        delete(&bare.url, &session).send().await.unwrap().status(),
        StatusCode::ACCEPTED,
        "rmcp, live"
    );
    let unknown = delete(&bare.url, "never-a-session").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::ACCEPTED, "rmcp, unknown");
    let session = initialize(&charly.url()).await;
    assert_eq!(
        delete(&charly.url(), &session).send().await.unwrap().status(),
        StatusCode::OK,
        "charly, live"
    );
    let unknown = delete(&charly.url(), "never-a-session").send().await.unwrap();
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND, "charly, unknown");
    charly.shutdown().await.unwrap();
}

/// `compat/ended_session.rs`: a session idles out under a slow `resources/read` (neither
/// server counts a running read as use). While the read is still finishing, the session's
/// worker has ended but the session is still in rmcp's map, and rmcp answers its requests
/// with 500; charly answers 404, on which clients start a new session (spec 2025-11-25,
/// "Session Management").
#[tokio::test]
async fn an_ended_session_whose_last_request_is_finishing() {
    let (bare, _) = BareHttp::start(Some(IDLE)).await;
    let (charly, _) = charly(Some(IDLE)).await;
    let read =
        json!({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "test://slow"}});
    let mut reads = Vec::new();
    let mut sessions = Vec::new();
    for url in [bare.url.clone(), charly.url()] {
        let session = initialize(&url).await;
        reads.push(tokio::spawn(post(&url, &read.to_string()).header("mcp-session-id", &session).send()));
        sessions.push((url, session));
    }
    tokio::time::sleep(IDLE * 2).await;
    let rmcp = ping(&sessions[0].0, &sessions[0].1).send().await.unwrap();
    assert_eq!(rmcp.status(), StatusCode::INTERNAL_SERVER_ERROR, "rmcp");
    let ours = ping(&sessions[1].0, &sessions[1].1).send().await.unwrap();
    assert_eq!(ours.status(), StatusCode::NOT_FOUND, "charly");
    for read in reads {
        read.abort();
    }
    charly.shutdown().await.unwrap();
}

/// `compat/keep_alive.rs`, tool calls: rmcp closes a session that gets no request for its
/// idle timeout, also while one of its tool calls runs: the call's result is lost and the
/// session is gone. charly keeps a session with a call in flight.
#[tokio::test]
async fn a_running_call_keeps_its_session() {
    let (bare, _) = BareHttp::start(Some(IDLE)).await;
    let (charly, _) = charly(Some(IDLE)).await;
    let session = initialize(&bare.url).await;
    let answer = call(&bare.url, &session, "sleep", json!({"ms": 2500})).send().await.unwrap();
    let answer = messages(answer).await;
    assert!(answer.iter().all(|m| m.get("result").is_none()), "rmcp answered: {answer:?}");
    // Gone: 500 while the call still runs in the ended session (`an_ended_session_...`), 404 after.
    let status = ping(&bare.url, &session).send().await.unwrap().status();
    assert!([StatusCode::INTERNAL_SERVER_ERROR, StatusCode::NOT_FOUND].contains(&status), "rmcp: {status}");

    let session = initialize(&charly.url()).await;
    let answer = call(&charly.url(), &session, "sleep", json!({"ms": 2500})).send().await.unwrap();
    let answer = messages(answer).await;
    let text = &answer.last().unwrap_or_else(|| panic!("charly: no answer"))["result"]["content"][0]["text"];
    assert_eq!(text, "slept 2500 ms\n", "charly: {answer:?}");
    assert_eq!(ping(&charly.url(), &session).send().await.unwrap().status(), StatusCode::OK, "charly");
    charly.shutdown().await.unwrap();
}

/// `compat/keep_alive.rs`, the GET stream: rmcp closes a session whose client waits on its
/// GET stream (for resource updates, say) and sends nothing else; charly keeps it while the
/// stream is open.
#[tokio::test]
async fn an_open_get_stream_keeps_its_session() {
    let (bare, _) = BareHttp::start(Some(IDLE)).await;
    let (charly, _) = charly(Some(IDLE)).await;
    let mut open = Vec::new();
    for url in [bare.url.clone(), charly.url()] {
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
        assert_eq!(stream.status(), StatusCode::OK, "{url}");
        open.push((url, session, stream));
    }
    tokio::time::sleep(IDLE * 5 / 2).await;
    let rmcp = ping(&open[0].0, &open[0].1).send().await.unwrap();
    assert_eq!(rmcp.status(), StatusCode::NOT_FOUND, "rmcp");
    let ours = ping(&open[1].0, &open[1].1).send().await.unwrap();
    assert_eq!(ours.status(), StatusCode::OK, "charly");
    drop(open);
    charly.shutdown().await.unwrap();
}

/// `compat/session_end.rs`, DELETE: rmcp ends a deleted session without cancelling the tool
/// calls still running in it (its transport closes only after a drain of about 5 s); charly
/// stops them at once (their cancellation token cancelled, child processes killed).
#[tokio::test]
async fn deleting_a_session_cancels_its_running_call() {
    let (bare, mut bare_events) = BareHttp::start(None).await;
    let (charly, mut charly_events) = charly(None).await;
    for (url, events, expected) in
        [(bare.url.clone(), &mut bare_events, false), (charly.url(), &mut charly_events, true)]
    {
        let session = initialize(&url).await;
        let running = tokio::spawn(call(&url, &session, "wait", json!({})).send());
        started(events).await;
        assert!(delete(&url, &session).send().await.unwrap().status().is_success(), "{url}");
        let stopped = stops(events, Duration::from_secs(1)).await;
        assert_eq!(stopped, expected, "{url}: the call stopped within 1 s of the DELETE");
        running.abort();
    }
    charly.shutdown().await.unwrap();
}

/// `compat/malformed.rs`: rmcp reads a request whose params do not fit its method as a custom
/// request, which its default handler answers with -32601 "method not found" and the bare
/// method name; charly answers -32602 (invalid params) with serde's reason (JSON-RPC 2.0,
/// section 5.1).
#[tokio::test]
async fn params_that_do_not_fit_their_method() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let request = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {}}).to_string();
    let mut answers = Vec::new();
    for url in [bare.url.clone(), charly.url()] {
        let session = initialize(&url).await;
        let response = post(&url, &request).header("mcp-session-id", &session).send().await.unwrap();
        answers.push(messages(response).await.pop().unwrap());
    }
    assert_eq!(answers[0]["error"]["code"], -32601, "rmcp: {}", answers[0]);
    assert_eq!(answers[0]["error"]["message"], "tools/call", "rmcp: {}", answers[0]);
    assert_eq!(answers[1]["error"]["code"], -32602, "charly: {}", answers[1]);
    let message = answers[1]["error"]["message"].as_str().unwrap();
    assert!(message.contains("missing field `name`"), "charly: {message}");
    charly.shutdown().await.unwrap();
}

/// `compat/list_cache.rs`: rmcp serialises every `tools/list` page anew and frames it as an SSE
/// event; charly answers a plain `tools/list` of a live session from pages serialised once,
/// as `application/json` (spec 2025-11-25, "Sending Messages to the Server", lets a server
/// answer a POST with either). The JSON-RPC answer is the one rmcp gives on charly's own
/// server (a body over 512 bytes, padded here with spaces, is never read by the cache).
#[tokio::test]
async fn tools_list_from_pages_serialised_once() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let list = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#;
    let session = initialize(&bare.url).await;
    let rmcp = post(&bare.url, list).header("mcp-session-id", &session).send().await.unwrap();
    assert!(content_type(&rmcp).starts_with("text/event-stream"), "rmcp: {}", content_type(&rmcp));

    let url = charly.url();
    let session = initialize(&url).await;
    let cached = post(&url, list).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(content_type(&cached), "application/json", "charly");
    let padded = format!("{list}{}", " ".repeat(600));
    let uncached = post(&url, &padded).header("mcp-session-id", &session).send().await.unwrap();
    assert!(content_type(&uncached).starts_with("text/event-stream"), "charly through rmcp");
    assert_eq!(messages(cached).await, messages(uncached).await);
    charly.shutdown().await.unwrap();
}

/// `compat/request_ids_http.rs`: the same over Streamable HTTP, in one session. rmcp answers
/// the ping (`{}`, id 5) and the call's POST never gets its result; charly refuses the ping's
/// POST with -32600 naming the id and the call's POST carries the call's result.
#[tokio::test]
async fn a_reused_request_id_gets_its_own_error_over_http() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let mut seen = Vec::new();
    for (url, tool) in [
        (bare.url.clone(), json!({"name": "sleep", "arguments": {"ms": 300}})),
        (charly.url(), json!({"name": "sleep", "arguments": {"ms": 300}})),
    ] {
        let session = initialize(&url).await;
        let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": tool}).to_string();
        let first = {
            let (url, session) = (url.clone(), session.clone());
            tokio::spawn(async move {
                let response = post(&url, &call).header("mcp-session-id", &session).send().await.unwrap();
                tokio::time::timeout(Duration::from_secs(3), messages(response)).await.ok()
            })
        };
        tokio::time::sleep(Duration::from_millis(100)).await;
        let ping = post(&url, r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#)
            .header("mcp-session-id", &session)
            .send()
            .await
            .unwrap();
        let ping = messages(ping).await;
        seen.push((ping, first.await.unwrap()));
    }
    let (ping, call) = &seen[0];
    assert_eq!(ping.last().unwrap()["result"], json!({}), "rmcp answers the ping: {ping:?}");
    assert!(call.is_none(), "rmcp: the 300 ms call's POST is still unanswered after 3 s: {call:?}");

    let (ping, call) = &seen[1];
    assert_eq!(ping.len(), 1, "charly: {ping:?}");
    assert_eq!((&ping[0]["id"], &ping[0]["error"]["code"]), (&json!(5), &json!(-32600)), "charly: {ping:?}");
    let call = call.as_ref().expect("charly: the call's POST is answered");
    let result = call.iter().find(|m| m["id"] == 5).expect("charly: the call's result");
    assert_eq!(result["result"]["content"][0]["text"], "slept 300 ms\n", "charly: {call:?}");
    charly.shutdown().await.unwrap();
}

/// The first event of an SSE body, as text (up to its blank line).
fn first_event(body: &str) -> &str {
    body.split("\n\n").next().unwrap_or_default()
}

/// Whether an SSE event is a priming event: empty `data`, a `retry` field.
fn is_priming(event: &str) -> bool {
    event.lines().any(|l| l.trim_end() == "data:") && event.lines().any(|l| l.starts_with("retry:"))
}

/// `initialize` of protocol `version`; the session id and the response body.
async fn initialize_at(url: &str, version: &str) -> (String, String) {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
    let response = post(url, &init.to_string()).send().await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let body = response.text().await.unwrap();
    let done = post(url, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", version)
        .send()
        .await
        .unwrap();
    assert!(done.status().is_success());
    (session, body)
}

/// `compat/priming.rs`: rmcp starts every SSE stream of a session with a priming event (empty
/// `data`, `retry`), whatever version the session negotiated; charly sends it only to
/// sessions of 2025-11-25 or later (SEP-1699; older clients reject the event,
/// typescript-sdk#1233): on the `initialize` answer and on every later stream (a request that
/// names no `MCP-Protocol-Version` too, as the 0.1.16 suite's SSE scenario sends).
#[tokio::test]
async fn priming_event_only_from_2025_11_25() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let sleep =
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":0}}}"#;
    for (url, version, primed) in [
        (bare.url.clone(), "2025-06-18", true),
        (charly.url(), "2025-06-18", false),
        (charly.url(), "2025-03-26", false),
        (charly.url(), "2025-11-25", true),
    ] {
        let who = format!("{} {version}", if url == bare.url { "rmcp" } else { "charly" });
        let (session, init) = initialize_at(&url, version).await;
        assert_eq!(is_priming(first_event(&init)), primed, "{who}, initialize: {init}");
        assert!(init.contains(&format!(r#""protocolVersion":"{version}""#)), "{who}: {init}");
        let call = post(&url, sleep).header("mcp-session-id", &session).send().await.unwrap();
        let body = call.text().await.unwrap();
        assert_eq!(is_priming(first_event(&body)), primed, "{who}, tools/call: {body}");
        assert!(body.contains("slept 0 ms"), "{who}: {body}");
    }
    charly.shutdown().await.unwrap();
}

/// A 2026-07-28 request: the per-request `_meta` and headers the revision requires.
fn request_2026(url: &str, method: &str, mut params: Value) -> reqwest::RequestBuilder {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}});
    let body = json!({"jsonrpc": "2.0", "id": 8, "method": method, "params": params});
    post(url, &body.to_string()).header("mcp-protocol-version", "2026-07-28").header("mcp-method", method)
}

/// `compat/malformed.rs`, 2026-07-28: rmcp hands a 2026-07-28 `logging/setLevel` to the
/// handler, which serves it for its older sessions; that revision removed the method
/// (SEP-2575), and charly answers -32601 with HTTP 404, as rmcp does for `ping`. charly's own
/// correction of params that do not fit (-32602) steps aside for the removed methods too.
#[tokio::test]
async fn methods_removed_in_2026_07_28() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let set_level = |url: &str| request_2026(url, "logging/setLevel", json!({"level": "info"})).send();
    let rmcp = set_level(&bare.url).await.unwrap();
    assert_eq!(rmcp.status(), StatusCode::OK, "rmcp");
    assert!(messages(rmcp).await[0]["result"].is_object(), "rmcp serves it");
    let ours = set_level(&charly.url()).await.unwrap();
    assert_eq!(ours.status(), StatusCode::NOT_FOUND, "charly");
    assert_eq!(messages(ours).await[0]["error"]["code"], -32601, "charly");
    for (method, params) in [
        ("initialize", json!({})),
        ("resources/subscribe", json!({})),
        ("resources/unsubscribe", json!({})),
        ("ping", json!({})),
    ] {
        let response = request_2026(&charly.url(), method, params).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND, "charly, {method}");
        assert_eq!(messages(response).await[0]["error"]["code"], -32601, "charly, {method}");
    }
    charly.shutdown().await.unwrap();
}

/// `compat/long_header.rs`: rmcp answers a 2026-07-28 request whose `Mcp-Name` header does not
/// match its body with -32020 quoting the header whole; charly cuts the message to 300
/// characters (code, status and id unchanged).
#[tokio::test]
async fn a_huge_mismatched_header_is_not_echoed_whole() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let huge = "n".repeat(5000);
    let call = |url: &str| {
        request_2026(url, "tools/call", json!({"name": "echo", "arguments": {}}))
            .header("mcp-name", &huge)
            .send()
    };
    let rmcp = call(&bare.url).await.unwrap();
    assert_eq!(rmcp.status(), StatusCode::BAD_REQUEST, "rmcp");
    let rmcp: Value = rmcp.json().await.unwrap();
    assert_eq!(rmcp["error"]["code"], -32020, "rmcp: {rmcp}");
    assert!(rmcp["error"]["message"].as_str().unwrap().contains(&huge), "rmcp quotes it whole");
    let ours = call(&charly.url()).await.unwrap();
    assert_eq!(ours.status(), StatusCode::BAD_REQUEST, "charly");
    let ours: Value = ours.json().await.unwrap();
    assert_eq!((&ours["error"]["code"], &ours["id"]), (&json!(-32020), &json!(8)), "charly: {ours}");
    let message = ours["error"]["message"].as_str().unwrap();
    assert!(message.chars().count() < 340 && message.ends_with("characters in all)"), "charly: {message}");
    charly.shutdown().await.unwrap();
}

/// `compat/list_params.rs`, HTTP: `tools/list` with a cursor that is a number, in a session.
/// rmcp reads the params as none and answers the first page; charly answers -32602.
#[tokio::test]
async fn a_cursor_that_is_not_a_string() {
    let (bare, _) = BareHttp::start(None).await;
    let (charly, _) = charly(None).await;
    let request =
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"cursor": 5}}).to_string();
    let mut answers = Vec::new();
    for url in [bare.url.clone(), charly.url()] {
        let session = initialize(&url).await;
        let response = post(&url, &request).header("mcp-session-id", &session).send().await.unwrap();
        answers.push(messages(response).await.pop().unwrap());
    }
    assert!(answers[0]["result"]["tools"].is_array(), "rmcp: {}", answers[0]);
    assert_eq!(
        (&answers[1]["id"], &answers[1]["error"]["code"]),
        (&json!(5), &json!(-32602)),
        "charly: {}",
        answers[1]
    );
    charly.shutdown().await.unwrap();
}
