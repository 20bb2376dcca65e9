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
