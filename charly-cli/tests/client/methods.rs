//! Every client method against server-everything@2025.12.18 on stdio, Streamable HTTP and
//! legacy SSE.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use charly::client::{self, ClientError, ProgressUpdate, TransportKind};
use charly_cli::probe;
use charly_cli::report::Report as _;

use crate::support::{Peer, TRANSPORTS, input, options};

const TIMEOUT: Duration = Duration::from_secs(30);

async fn all_methods(kind: TransportKind) {
    let peer = Peer::start(kind);
    let ep = &peer.endpoint;
    let opts = options(TIMEOUT);

    let pong = probe::ping(ep, &opts).await.unwrap();
    assert_eq!(pong.failure(), None, "{kind}: ping");
    assert_eq!(pong.to_string(), "ok\n", "{kind}: ping");

    let list = probe::list_tools(ep, &opts).await.unwrap();
    assert_eq!(list.failure(), None, "{kind}: list-tools");
    let tools = list.to_string();
    assert!(tools.lines().any(|l| l == "echo\tEchoes back the input"), "{kind}: list-tools:\n{tools}");
    assert!(tools.lines().any(|l| l.starts_with("longRunningOperation\t")), "{kind}: list-tools:\n{tools}");
    assert!(tools.lines().all(|l| l.split('\t').count() == 2), "{kind}: two columns:\n{tools}");

    // 100 resources, 10 a page: the client follows nextCursor through all 10 pages.
    let list = probe::list_resources(ep, &opts).await.unwrap();
    assert_eq!(list.failure(), None, "{kind}: list-resources");
    let resources = list.to_string();
    let lines: Vec<&str> = resources.lines().collect();
    assert_eq!(lines.len(), 100, "{kind}: list-resources:\n{resources}");
    assert_eq!(lines[0], "test://static/resource/1\tResource 1\ttext/plain");
    assert_eq!(lines[1], "test://static/resource/2\tResource 2\tapplication/octet-stream");
    assert_eq!(lines[99], "test://static/resource/100\tResource 100\tapplication/octet-stream");

    let list = probe::list_prompts(ep, &opts).await.unwrap();
    assert_eq!(list.failure(), None, "{kind}: list-prompts");
    let prompts = list.to_string();
    assert!(prompts.lines().any(|l| l == "simple_prompt\tA prompt without arguments"), "{kind}:\n{prompts}");

    let called = probe::call(ep, "echo", input(r#"{"message":"hi there"}"#), &opts).await.unwrap();
    assert_eq!(
        (called.failure().is_some(), called.to_string()),
        (false, "Echo: hi there\n".to_owned()),
        "{kind}: call echo"
    );

    let image = probe::call(ep, "getTinyImage", None, &opts).await.unwrap().to_string();
    let lines: Vec<&str> = image.lines().collect();
    assert_eq!(lines.len(), 3, "{kind}: getTinyImage:\n{image}");
    assert_eq!(lines[0], "This is a tiny image:");
    assert!(
        lines[1].starts_with("[image content: image/png, ") && lines[1].ends_with(" bytes]"),
        "{}",
        lines[1]
    );

    let contents = probe::read(ep, "test://static/resource/1", &opts).await.unwrap();
    assert_eq!(contents.to_string(), "Resource 1: This is a plaintext resource\n", "{kind}: read text");

    let contents = probe::read(ep, "test://static/resource/2", &opts).await.unwrap();
    let blob_len = "Resource 2: This is a base64 blob".len();
    assert_eq!(
        contents.to_string(),
        format!("[binary resource: test://static/resource/2, application/octet-stream, {blob_len} bytes]\n"),
        "{kind}: read blob"
    );

    // --json: the full result, every page merged.
    let list = probe::list_resources(ep, &opts).await.unwrap();
    let value = serde_json::to_value(&list).unwrap();
    assert_eq!(value["resources"].as_array().unwrap().len(), 100);
    assert_eq!(value["resources"][0]["mimeType"], "text/plain");

    let called = probe::call(ep, "add", input(r#"{"a":2,"b":3}"#), &opts).await.unwrap();
    let value = serde_json::to_value(&called).unwrap();
    assert_eq!(value["content"][0]["text"], "The sum of 2 and 3 is 5.", "{kind}: call --json");

    // A JSON-RPC error (unknown resource) is an error, not output.
    let err = probe::read(ep, "test://nope", &opts).await.unwrap_err();
    assert!(matches!(err, ClientError::Server { operation: "resources/read", .. }), "{kind}: {err}");
    assert!(err.to_string().contains("Unknown resource: test://nope"), "{kind}: {err}");
}

#[tokio::test]
async fn every_method_over_stdio() {
    all_methods(TransportKind::Stdio).await;
}

#[tokio::test]
async fn every_method_over_streamable_http() {
    all_methods(TransportKind::StreamableHttp).await;
}

#[tokio::test]
async fn every_method_over_legacy_sse() {
    all_methods(TransportKind::Sse).await;
}

#[tokio::test]
async fn progress_from_the_long_running_tool() {
    for kind in TRANSPORTS {
        let peer = Peer::start(kind);
        let seen: Arc<Mutex<Vec<ProgressUpdate>>> = Arc::default();
        let sink = seen.clone();
        let mut opts = options(TIMEOUT);
        opts.progress = Some(Arc::new(move |u: &ProgressUpdate| sink.lock().unwrap().push(u.clone())));
        let called =
            probe::call(&peer.endpoint, "longRunningOperation", input(r#"{"duration":1,"steps":4}"#), &opts)
                .await
                .unwrap();
        assert_eq!(called.failure(), None);
        assert_eq!(called.to_string(), "Long running operation completed. Duration: 1 seconds, Steps: 4.\n");
        let seen = seen.lock().unwrap();
        let steps: Vec<(f64, Option<f64>)> = seen.iter().map(|u| (u.progress, u.total)).collect();
        assert_eq!(steps, [(1.0, Some(4.0)), (2.0, Some(4.0)), (3.0, Some(4.0)), (4.0, Some(4.0))], "{kind}");
    }
}

#[tokio::test]
async fn a_slow_call_times_out_and_the_session_survives() {
    for kind in TRANSPORTS {
        let peer = Peer::start(kind);
        // Connect with room to start Node; then 700 ms per request.
        let opts = options(TIMEOUT);
        let mut client = client::connect(&peer.endpoint, &opts).await.unwrap();
        client.set_timeout(Duration::from_millis(700));
        let args = serde_json::json!({"duration": 5, "steps": 5});
        let started = std::time::Instant::now();
        let err = client.call_tool("longRunningOperation", args.as_object().cloned()).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(4), "{kind}: waited {:?}", started.elapsed());
        assert!(matches!(err, ClientError::Timeout { operation: "tools/call", .. }), "{kind}: {err}");
        assert_eq!(err.to_string(), "tools/call timed out after 700ms");
        // The request was cancelled, not the session: the next request works.
        client.ping().await.unwrap();
        client.close().await;
    }
}

#[tokio::test]
async fn unreachable_endpoints_fail_with_the_url() {
    let opts = options(Duration::from_secs(5));
    for kind in [TransportKind::StreamableHttp, TransportKind::Sse] {
        // A port nothing listens on: bind then drop.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let ep = charly::client::Endpoint::url(&format!("http://127.0.0.1:{port}/mcp"), kind).unwrap();
        let err = probe::ping(&ep, &opts).await.unwrap_err();
        assert!(matches!(err, ClientError::Connect { .. }), "{kind}: {err}");
        assert!(
            err.to_string().starts_with(&format!("cannot connect to http://127.0.0.1:{port}/mcp")),
            "{err}"
        );
    }
}

/// Accepts one HTTP request on 127.0.0.1, answers 401 and returns the request head.
async fn capture_one_request() -> (u16, tokio::task::JoinHandle<String>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut head = Vec::new();
        let mut buf = [0u8; 4096];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            let n = socket.read(&mut buf).await.unwrap();
            if n == 0 {
                break;
            }
            head.extend_from_slice(&buf[..n]);
        }
        let body = "no entry";
        let reply = format!(
            "HTTP/1.1 401 Unauthorized\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(reply.as_bytes()).await.unwrap();
        String::from_utf8_lossy(&head).to_lowercase()
    });
    (port, task)
}

#[tokio::test]
async fn headers_reach_the_server_verbatim() {
    for kind in [TransportKind::StreamableHttp, TransportKind::Sse] {
        let (port, request) = capture_one_request().await;
        let ep = charly::client::Endpoint::url(&format!("http://127.0.0.1:{port}/mcp"), kind)
            .unwrap()
            .with_headers([
                ("Authorization".to_owned(), "Basic dTpw".to_owned()),
                ("X-Tenant".to_owned(), "blue".to_owned()),
            ]);
        let err = probe::ping(&ep, &options(Duration::from_secs(5))).await.unwrap_err();
        assert!(matches!(err, ClientError::Connect { .. }), "{kind}: {err}");
        let head = request.await.unwrap();
        assert!(head.contains("\r\nauthorization: basic dtpw\r\n"), "{kind}:\n{head}");
        assert!(head.contains("\r\nx-tenant: blue\r\n"), "{kind}:\n{head}");
        if kind == TransportKind::Sse {
            assert!(head.starts_with("get /mcp "), "{head}");
            assert!(err.to_string().contains("HTTP 401: no entry"), "{err}");
        } else {
            assert!(head.starts_with("post /mcp "), "{head}");
        }
    }
}

/// The way a synchronous CLI calls a method: on its own current-thread runtime (as
/// `Ctx::block` does), the report's text to stdout.
#[test]
fn a_synchronous_caller_uses_its_own_runtime() {
    let peer = Peer::start(TransportKind::Stdio);
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let list = runtime.block_on(probe::list_prompts(&peer.endpoint, &options(TIMEOUT))).unwrap();
    assert_eq!(list.failure(), None);
    assert!(list.to_string().contains("simple_prompt\t"));
}
