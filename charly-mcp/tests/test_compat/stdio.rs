//! The stdio cases, and what charly leaves to rmcp over an in-memory pipe.

use super::*;

// ===== what charly leaves to rmcp =====

/// How long after its client's end of an in-memory pipe is dropped a `wait` call, served over
/// the other end by `serve`, stops (`events` hears it); `None` if not within 10 s.
async fn stop_after_close<F, Fut>(
    serve: F,
    mut events: mpsc::UnboundedReceiver<&'static str>,
) -> Option<Duration>
where
    F: FnOnce(
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn(serve(read, write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait", "arguments": {}}});
    client_write.write_all(format!("{INIT}\n").as_bytes()).await.unwrap();
    let init = lines.next_line().await.unwrap().unwrap();
    assert!(init.contains(r#""result""#), "{init}");
    for line in [r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(), call.to_string()] {
        client_write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    }
    started(&mut events).await;
    drop((lines, client_write));
    let closed = std::time::Instant::now();
    let stopped = stops(&mut events, Duration::from_secs(10)).await;
    serving.abort();
    stopped.then(|| closed.elapsed())
}

/// [`stdio_answers`] of bare rmcp serving the same tools.
async fn bare_answers(lines: &[&[u8]], quiet: Duration) -> Vec<Value> {
    let (tx, _) = mpsc::unbounded_channel();
    let bare = Bare { events: tx };
    let serve = move |read, write| async move {
        let running = bare.serve((read, write)).await.unwrap();
        let _ = running.waiting().await;
    };
    stdio_answers(serve, lines, quiet).await
}

/// [`stdio_answers`] of charly's server.
async fn charly_answers(lines: &[&[u8]], quiet: Duration) -> Vec<Value> {
    let (server, _) = charly_server();
    let serve = move |read, write| async move {
        let running = server.serve_io(read, write).await.unwrap();
        let _ = running.waiting().await;
    };
    stdio_answers(serve, lines, quiet).await
}

/// Not a workaround: when a session's transport closes (stdin at its end; here an in-memory
/// pipe dropped), rmcp drains the requests still running for up to 5 s, so that a client that
/// closed its end early still gets its answers, and then cancels them. charly leaves this to
/// rmcp; both stop a running call after the drain, neither before.
#[tokio::test]
async fn a_closed_transport_stops_the_running_call_after_rmcps_drain() {
    let (tx, bare_events) = mpsc::unbounded_channel();
    let bare = Bare { events: tx };
    let (server, charly_events) = charly_server();
    let (rmcp, ours) = tokio::join!(
        stop_after_close(
            move |read, write| async move {
                let running = bare.serve((read, write)).await.unwrap();
                let _ = running.waiting().await;
            },
            bare_events,
        ),
        stop_after_close(
            move |read, write| async move {
                let running = server.serve_io(read, write).await.unwrap();
                let _ = running.waiting().await;
            },
            charly_events,
        ),
    );
    for (which, after) in [("rmcp", rmcp), ("charly", ours)] {
        let after = after.unwrap_or_else(|| panic!("{which}: the call never stopped"));
        assert!(
            (Duration::from_secs(4)..Duration::from_secs(7)).contains(&after),
            "{which}: stopped after {after:?}"
        );
    }
}

// ===== stdio =====

/// The messages a session served by `serve` over an in-memory pipe writes for `lines` (raw
/// bytes, each sent with a `\n`), after `initialize` and `notifications/initialized`: read
/// until `quiet` passes without one.
async fn stdio_answers<F, Fut>(serve: F, lines: &[&[u8]], quiet: Duration) -> Vec<Value>
where
    F: FnOnce(
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn(serve(read, write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut out = tokio::io::BufReader::new(client_read).lines();
    client_write.write_all(format!("{INIT}\n").as_bytes()).await.unwrap();
    let init = out.next_line().await.unwrap().unwrap();
    assert!(init.contains(r#""result""#), "{init}");
    let mut input = b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n".to_vec();
    for line in lines {
        input.extend_from_slice(line);
        input.push(b'\n');
    }
    client_write.write_all(&input).await.unwrap();
    let mut answers = Vec::new();
    while let Ok(Ok(Some(line))) = tokio::time::timeout(quiet, out.next_line()).await {
        answers.push(serde_json::from_str(&line).unwrap());
    }
    serving.abort();
    answers
}

/// The answers among `answers` with id `id`.
fn with_id<'a>(answers: &'a [Value], id: &Value) -> Vec<&'a Value> {
    answers.iter().filter(|a| &a["id"] == id).collect()
}

/// `compat/unreadable_line.rs`: over stdio rmcp drops a line that is not JSON (invalid UTF-8,
/// a truncated object) and answers JSON that is no message with -32600 and no id; charly
/// answers every one, -32700 or -32600, with the id where it can be read (JSON-RPC 2.0,
/// sections 5 and 5.1). The ping after them shows the session goes on.
#[tokio::test]
async fn unreadable_stdio_lines() {
    let lines: [&[u8]; 4] = [
        b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\"}}}",
        br#"{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"na"#,
        br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#,
        br#"{"jsonrpc":"2.0","id":100,"method":"ping"}"#,
    ];
    let quiet = Duration::from_millis(500);
    let rmcp = bare_answers(&lines, quiet).await;
    assert_eq!(rmcp.len(), 2, "rmcp: {rmcp:?}");
    assert_eq!(rmcp[0]["error"]["code"], -32600, "rmcp: {rmcp:?}");
    assert!(rmcp[0].get("id").is_none(), "rmcp: {rmcp:?}");
    assert_eq!(rmcp[1]["id"], 100, "rmcp: {rmcp:?}");

    let ours = charly_answers(&lines, quiet).await;
    assert_eq!(ours.len(), 4, "charly: {ours:?}");
    for (answer, (code, id, says)) in ours.iter().zip([
        (-32700, json!(7), "not UTF-8"),
        (-32700, json!("t"), "ends before"),
        (-32600, json!(9), "`jsonrpc` must be \"2.0\""),
    ]) {
        assert_eq!((&answer["error"]["code"], &answer["id"]), (&json!(code), &id), "charly: {answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(says), "charly: {answer}");
    }
    assert_eq!(ours[3]["id"], 100, "charly: {ours:?}");
}

/// `compat/request_ids.rs`, stdio: `ping` with id 5 sent while `tools/call` id 5 runs. rmcp
/// answers the ping and drops the call's result (one answer for two requests); charly
/// refuses the ping with -32600 naming the id and the call still gets its own result.
#[tokio::test]
async fn a_reused_request_id_gets_its_own_error_over_stdio() {
    let lines: [&[u8]; 2] = [
        br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":300}}}"#,
        br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#,
    ];
    let quiet = Duration::from_millis(1500);
    let rmcp = bare_answers(&lines, quiet).await;
    let rmcp = with_id(&rmcp, &json!(5));
    assert_eq!(rmcp.len(), 1, "rmcp answers one of the two: {rmcp:?}");
    assert_eq!(rmcp[0]["result"], json!({}), "rmcp: the ping's result; the call's is lost: {rmcp:?}");

    let ours = charly_answers(&lines, quiet).await;
    let ours = with_id(&ours, &json!(5));
    assert_eq!(ours.len(), 2, "charly: {ours:?}");
    assert_eq!(ours[0]["error"]["code"], -32600, "charly: the ping is refused first: {ours:?}");
    let message = ours[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("id 5 is already the id of a request in flight (`tools/call`)"), "{message}");
    assert_eq!(
        ours[1]["result"]["content"][0]["text"], "slept 300 ms\n",
        "charly: the call's own result: {ours:?}"
    );
}

/// `compat/request_ids.rs`, stdio: an id reused right after its request was cancelled, while
/// the cancelled call is still finishing. Each new request gets its own result, never the
/// cancelled `wait` call's `waited` (which rmcp drops), 20 times over.
#[tokio::test]
async fn an_id_reused_after_a_cancel_gets_its_own_result() {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for id in 0..20 {
        lines.push(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "wait", "arguments": {}}})
            .to_string()
            .into_bytes(),
        );
        lines.push(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": id}})
            .to_string()
            .into_bytes(),
        );
        lines.push(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                          "params": {"name": "echo", "arguments": {"text": format!("new {id}")}}})
            .to_string()
            .into_bytes(),
        );
    }
    let lines: Vec<&[u8]> = lines.iter().map(Vec::as_slice).collect();
    let (server, _) = charly_server();
    let ours = stdio_answers(
        move |read, write| async move {
            let running = server.serve_io(read, write).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        Duration::from_millis(1000),
    )
    .await;
    for id in 0..20 {
        let answers = with_id(&ours, &json!(id));
        assert_eq!(answers.len(), 1, "id {id}: {answers:?}");
        assert_eq!(answers[0]["result"]["content"][0]["text"], format!("new {id}\n"), "id {id}: {answers:?}");
    }
}

/// `compat/calls_in_flight.rs`, stdio: 10 `wait` calls sent at once, then a `ping`. rmcp runs
/// every one (10 start); charly, capped at 4, runs 4 and answers the other 6 and the ping at
/// once with -32000 `server busy` carrying their ids. Cancelling one frees its slot: the next
/// ping is answered. A cap of 0 is refused before serving.
#[tokio::test]
async fn requests_past_the_cap_over_stdio() {
    let mut lines: Vec<String> = (0..10)
        .map(|id| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "wait", "arguments": {}}})
                .to_string()
        })
        .collect();
    lines.push(r#"{"jsonrpc":"2.0","id":100,"method":"ping"}"#.to_owned());
    lines.push(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}"#.to_owned());
    lines.push(r#"{"jsonrpc":"2.0","id":101,"method":"ping"}"#.to_owned());
    let lines: Vec<&[u8]> = lines.iter().map(String::as_bytes).collect();
    let quiet = Duration::from_millis(700);
    let started = |events: &mut mpsc::UnboundedReceiver<&'static str>| {
        std::iter::from_fn(|| events.try_recv().ok()).filter(|e| *e == "started").count()
    };

    let (tx, mut bare_events) = mpsc::unbounded_channel();
    let bare = Bare { events: tx };
    let rmcp = stdio_answers(
        move |read, write| async move {
            let running = bare.serve((read, write)).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        quiet,
    )
    .await;
    assert_eq!(started(&mut bare_events), 10, "rmcp runs every call: {rmcp:?}");
    assert!(rmcp.iter().all(|a| a.get("error").is_none()), "rmcp refuses nothing: {rmcp:?}");

    let (server, mut events) = charly_server();
    let options = StdioOptions::default().max_requests_per_session(Some(4));
    let ours = stdio_answers(
        move |read, write| async move {
            let running = server.serve_io_with(read, write, options).await.unwrap();
            let _ = running.waiting().await;
        },
        &lines,
        quiet,
    )
    .await;
    assert_eq!(started(&mut events), 4, "charly: {ours:?}");
    for id in (4..10).chain([100]) {
        let answers = with_id(&ours, &json!(id));
        assert_eq!(answers.len(), 1, "id {id}: {ours:?}");
        let error = &answers[0]["error"];
        assert_eq!(error["code"], -32000, "id {id}: {error}");
        assert_eq!(error["data"]["maxInFlight"], 4, "id {id}: {error}");
        assert!(
            error["message"].as_str().unwrap().starts_with("server busy: 4 requests in flight"),
            "{error}"
        );
    }
    assert_eq!(
        with_id(&ours, &json!(101)),
        [&json!({"jsonrpc": "2.0", "id": 101, "result": {}})],
        "{ours:?}"
    );
    for id in 0..4 {
        assert!(with_id(&ours, &json!(id)).is_empty(), "id {id} still runs (or was cancelled): {ours:?}");
    }

    let (server, _) = charly_server();
    let (_client, server_io) = tokio::io::duplex(64);
    let (read, write) = tokio::io::split(server_io);
    let zero =
        server.serve_io_with(read, write, StdioOptions::default().max_requests_per_session(Some(0))).await;
    let Err(ServeError::Limit(why)) = zero else { panic!("a cap of 0 is served") };
    assert!(why.contains("is 0"), "{why}");
}

/// `compat/unreadable_line.rs` and `compat/stdio_transport.rs`: a line whose id cannot be
/// read. rmcp answers a batch with -32600 and no `id` member; charly with `"id": null`
/// (JSON-RPC 2.0, section 5), as its HTTP answers have it.
#[tokio::test]
async fn an_unreadable_id_is_null() {
    let lines: [&[u8]; 1] = [b"[1, 2]"];
    let quiet = Duration::from_millis(500);
    let rmcp = bare_answers(&lines, quiet).await;
    assert_eq!(rmcp.len(), 1, "rmcp: {rmcp:?}");
    assert!(rmcp[0].get("id").is_none(), "rmcp: {rmcp:?}");

    let ours = charly_answers(&lines, quiet).await;
    assert_eq!(ours.len(), 1, "charly: {ours:?}");
    assert_eq!(
        (&ours[0]["error"]["code"], ours[0].get("id")),
        (&json!(-32600), Some(&Value::Null)),
        "{ours:?}"
    );
}

/// `compat/list_params.rs`, stdio: `tools/list` with a cursor that is a number. rmcp reads
/// the params as none and answers the first page; charly answers -32602 naming the method.
#[tokio::test]
async fn a_cursor_that_is_not_a_string() {
    let lines: [&[u8]; 1] = [br#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":5}}"#];
    let quiet = Duration::from_millis(500);
    let rmcp = bare_answers(&lines, quiet).await;
    assert!(rmcp[0]["result"]["tools"].is_array(), "rmcp: {rmcp:?}");

    let ours = charly_answers(&lines, quiet).await;
    assert_eq!((&ours[0]["id"], &ours[0]["error"]["code"]), (&json!(3), &json!(-32602)), "charly: {ours:?}");
    let message = ours[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("invalid params for `tools/list`"), "charly: {message}");
}

/// The first message a session served by `serve` over an in-memory pipe writes for `line`,
/// sent first, before any `initialize`.
async fn first_answer<F, Fut>(serve: F, line: &str) -> Value
where
    F: FnOnce(
        tokio::io::ReadHalf<tokio::io::DuplexStream>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (client, server_io) = tokio::io::duplex(1 << 16);
    let (read, write) = tokio::io::split(server_io);
    let serving = tokio::spawn(serve(read, write));
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut out = tokio::io::BufReader::new(client_read).lines();
    client_write.write_all(format!("{line}\n").as_bytes()).await.unwrap();
    let answer =
        tokio::time::timeout(Duration::from_secs(5), out.next_line()).await.unwrap().unwrap().unwrap();
    serving.abort();
    serde_json::from_str(&answer).unwrap()
}

/// `compat/uninitialized.rs`: `tools/list` before `initialize`. rmcp refuses it for lacking
/// protocol 2026-07-28's `_meta`; charly says the session is not initialized.
#[tokio::test]
async fn a_request_before_initialize() {
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let (tx, _) = mpsc::unbounded_channel();
    let bare = Bare { events: tx };
    let rmcp = first_answer(
        move |read, write| async move {
            let _ = bare.serve((read, write)).await;
        },
        list,
    )
    .await;
    let message = rmcp["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("request _meta is missing"), "rmcp: {rmcp}");

    let (server, _) = charly_server();
    let ours = first_answer(
        move |read, write| async move {
            let _ = server.serve_io(read, write).await;
        },
        list,
    )
    .await;
    assert_eq!((&ours["id"], &ours["error"]["code"]), (&json!(1), &json!(-32602)), "charly: {ours}");
    let message = ours["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("the session is not initialized: send `initialize` first"),
        "charly: {message}"
    );
}
