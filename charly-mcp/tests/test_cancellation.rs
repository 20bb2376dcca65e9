//! `notifications/cancelled` stops a call and the child process it started.

mod common;

use std::time::{Duration, Instant};

use charly_mcp::server::rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use charly_mcp::server::rmcp::service::PeerRequestOptions;
use common::{call, connect, server, text};
use serde_json::json;

/// Whether process `pid` is gone (no /proc entry) or a zombie waiting to be reaped.
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_kills_its_child_process() {
    let pair = connect(&server()).await;
    let dir = std::env::temp_dir().join(format!("charly-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pidfile = dir.join("child.pid");
    let _ = std::fs::remove_file(&pidfile);
    let mut args = serde_json::Map::new();
    args.insert("pidfile".into(), json!(pidfile.to_str().unwrap()));
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("child").with_arguments(args),
    ));
    let handle =
        pair.client.peer().send_cancellable_request(request, PeerRequestOptions::no_options()).await.unwrap();

    let started = Instant::now();
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile).ok().and_then(|s| s.trim().parse::<u32>().ok()) {
            break pid;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the child never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(!is_dead(pid), "the child died before the cancel");

    handle.cancel(Some("test cancels".into())).await.unwrap();
    let cancelled = Instant::now();
    while !is_dead(pid) {
        assert!(cancelled.elapsed() < Duration::from_secs(5), "child {pid} still alive 5 s after the cancel");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The session goes on.
    assert_eq!(text(&call(&pair.client, "echo", json!({"text": "after"})).await.unwrap()), "after\n");
    let _ = std::fs::remove_dir_all(&dir);
}

// ===== over Streamable HTTP =====

/// A temporary directory of this test process, for pid files.
fn pid_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("charly-cancel-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The pid `pidfile` holds once the `child` tool has written it (at most 10 s).
async fn pid_in(pidfile: &std::path::Path) -> u32 {
    let started = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(pidfile).ok().and_then(|s| s.trim().parse::<u32>().ok()) {
            return pid;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "the child never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Starts a `tools/call` of `child` (request id `id`) in `session`; returns its POST's open
/// response (an SSE stream) and the pid of the child.
async fn start_child(
    url: &str,
    session: &str,
    id: u32,
    pidfile: &std::path::Path,
) -> (reqwest::Response, u32) {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "child", "arguments": {"pidfile": pidfile}}});
    let response =
        common::http::post(url, &body.to_string()).header("mcp-session-id", session).send().await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
    (response, pid_in(pidfile).await)
}

/// Whether `/proc/<pid>` is gone: the process exited and was reaped (not even a zombie).
fn is_reaped(pid: u32) -> bool {
    !std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// `ServerHandle::shutdown` returns only once the calls in flight were cancelled and the
/// children they started are gone (reaped), within 5 s, and the port binds again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_returns_once_cancelled_calls_reaped_their_children() {
    let dir = pid_dir("shutdown");
    let handle = common::http::start(common::http::loopback()).await;
    let (url, addr) = (handle.url(), handle.local_addr());
    let session = common::http::initialize(&url).await;
    let mut calls = Vec::new();
    for n in 0..3 {
        calls.push(start_child(&url, &session, 10 + n, &dir.join(format!("{n}.pid"))).await);
    }
    let pids: Vec<u32> = calls.iter().map(|(_, pid)| *pid).collect();
    assert!(pids.iter().all(|&pid| !is_dead(pid)), "a child died before the shutdown");
    let began = Instant::now();
    handle.shutdown().await.unwrap();
    let took = began.elapsed();
    let alive: Vec<u32> = pids.iter().copied().filter(|&pid| !is_reaped(pid)).collect();
    assert!(
        alive.is_empty(),
        "children {alive:?} of {pids:?} not reaped when shutdown returned after {took:?}"
    );
    assert!(took < Duration::from_secs(5), "shutdown took {took:?}");
    let again = tokio::net::TcpListener::bind(addr).await;
    assert!(again.is_ok(), "port {addr} still bound after shutdown: {again:?}");
    drop(calls);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Opens a session that negotiates protocol `version`; returns its id.
async fn initialize_as(url: &str, version: &str) -> String {
    let init = common::http::INIT.replace("2025-06-18", version);
    let response = common::http::post(url, &init).send().await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let answer = common::http::messages(response).await;
    assert_eq!(answer.last().unwrap()["result"]["protocolVersion"], version, "{answer:?}");
    let initialized = common::http::post(url, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert!(initialized.status().is_success());
    session
}

/// How long until `pid` is dead (gone or a zombie), polled every 20 ms; `None` past `limit`.
async fn dies_within(pid: u32, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while !is_dead(pid) {
        if start.elapsed() > limit {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Some(start.elapsed())
}

/// `compat/client_gone.rs`: a client that drops a `tools/call`'s POST (its connection closes)
/// cancels the call, as `notifications/cancelled` would: its child process is killed. A
/// 2025-11-25 session's stream starts with a priming event whose id lets the client resume, so
/// the call waits `HttpOptions::disconnect_grace` (5 s by default) first; a 2025-06-18
/// session's stream has sent no event id yet and cannot be resumed, so its call stops at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_post_cancels_its_call_and_reaps_its_child() {
    let dir = pid_dir("gone");
    let handle = common::http::start(common::http::loopback()).await;
    let url = handle.url();
    for (version, grace) in
        [("2025-06-18", Duration::ZERO), ("2025-11-25", charly_mcp::server::DEFAULT_DISCONNECT_GRACE)]
    {
        let session = initialize_as(&url, version).await;
        let (response, pid) = start_child(&url, &session, 7, &dir.join(format!("{version}.pid"))).await;
        drop(response);
        if !grace.is_zero() {
            tokio::time::sleep(grace - Duration::from_millis(500)).await;
            assert!(!is_dead(pid), "{version}: child {pid} killed before the grace was over");
        }
        let died = dies_within(pid, Duration::from_secs(3)).await;
        assert!(
            died.is_some(),
            "{version}: child {pid} still alive {grace:?} + 3 s after its client went away"
        );
        // The session goes on, and the id is free again.
        let (response, pid) = start_child(&url, &session, 7, &dir.join(format!("{version}-2.pid"))).await;
        drop(response);
        assert!(dies_within(pid, grace + Duration::from_secs(3)).await.is_some(), "{version}: second child");
    }
    handle.shutdown().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `compat/client_gone.rs`: a client that resumes a dropped stream within the grace
/// (`GET` with `Last-Event-ID`, spec 2025-11-25, "Resumability and Redelivery") keeps the
/// call running past it; when it drops the resumed stream too, the call is cancelled after
/// another grace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_stream_keeps_its_call_until_it_drops_too() {
    let grace = Duration::from_millis(800);
    let dir = pid_dir("resume");
    let handle = common::http::start(common::http::loopback().disconnect_grace(grace)).await;
    let url = handle.url();
    let session = initialize_as(&url, "2025-11-25").await;
    let (mut response, pid) = start_child(&url, &session, 3, &dir.join("child.pid")).await;
    let priming = response.chunk().await.unwrap().expect("a priming event");
    let priming = String::from_utf8_lossy(&priming).into_owned();
    let event_id = priming.lines().find_map(|l| l.strip_prefix("id: ")).expect("an event id").to_owned();
    drop(response);
    let resumed = reqwest::Client::new()
        .get(&url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .header("last-event-id", &event_id)
        .send()
        .await
        .unwrap();
    assert_eq!(resumed.status(), reqwest::StatusCode::OK, "resuming {event_id}");
    tokio::time::sleep(grace * 3).await;
    assert!(!is_dead(pid), "child {pid} killed though its stream was resumed");
    drop(resumed);
    let died = dies_within(pid, grace + Duration::from_secs(3)).await;
    assert!(died.is_some(), "child {pid} still alive after the resumed stream dropped");
    handle.shutdown().await.unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
