//! The client defects a new-user trial of MCP 2026-07-28 found (issue 12), one test each,
//! against real servers on 127.0.0.1: charly's own server (the framework, served over
//! Streamable HTTP), server-everything (a server of 2025-11-25 and before), and, for answers
//! no real server gives (`"protocolVersion": "banana"`), a scripted stdio peer that logs what
//! it was sent.

#![allow(deprecated)] // Sampling and roots are deprecated by SEP-2577, still part of 2026-07-28.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use charly::Annotations;
use charly::client::{self, Answers, ClientError, Endpoint, Protocol, StdioCommand, TransportKind};
use charly::server::rmcp::model::{CreateMessageRequestParams, SamplingMessage};
use charly::server::{
    HttpOptions, Server, ServerHandle, ServerOptions, TaskSupport, Tool, ToolError, ToolOutput,
};
use charly_cli::probe;
use serde_json::json;

use crate::support::{NodeServer, options, stdio_endpoint};

fn tool<F, Fut>(name: &str, call: F) -> Tool
where
    F: Fn(charly::server::rmcp::model::JsonObject, charly::server::CallContext) -> Fut
        + Send
        + Sync
        + 'static,
    Fut: Future<Output = Result<ToolOutput, ToolError>> + Send + 'static,
{
    let schema = json!({"type": "object", "properties": {}});
    Tool::new(name, name, schema, Annotations::default(), call)
}

/// Whether `flag` is set within `limit` (polled every 20 ms).
async fn set_within(flag: &AtomicBool, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while !flag.load(Ordering::SeqCst) && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    flag.load(Ordering::SeqCst)
}

/// Sets its flag when dropped: the work it guards was stopped.
struct Stopped(Arc<AtomicBool>);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// charly's server with tools that ask for a model sample and for roots, one that reports the
/// client's declared capabilities, one that runs only as a task, and one (a task) that runs
/// until it is cancelled, setting `cancelled`.
async fn serve(started: Arc<AtomicBool>, cancelled: Arc<AtomicBool>) -> ServerHandle {
    let sample = tool("sample", |_, cx| async move {
        let params =
            CreateMessageRequestParams::new(vec![SamplingMessage::user_text("Capital of France?")], 50);
        let answer = cx.input("capital").create_message(params).await?;
        Ok(ToolOutput::text(serde_json::to_value(&answer.message.content).unwrap()["text"].to_string()))
    });
    let roots = tool("roots", |_, cx| async move {
        let roots = cx.input("where").list_roots().await?;
        Ok(ToolOutput::text(roots.roots.iter().map(|r| r.uri.as_str()).collect::<Vec<_>>().join(",")))
    });
    let caps = tool("caps", |_, cx| async move {
        let caps = cx.client_capabilities();
        Ok(ToolOutput::text(format!("sampling {}, roots {}", caps.sampling.is_some(), caps.roots.is_some())))
    });
    let only_task = tool("only_task", |_, _| async { Ok(ToolOutput::text("done")) })
        .with_task_support(TaskSupport::Required);
    let hold = tool("hold", move |_, cx| {
        let (started, cancelled) = (started.clone(), cancelled.clone());
        async move {
            started.store(true, Ordering::SeqCst);
            // The server drops a cancelled task's work (or the work sees its token): either
            // way it ends before its minute.
            let stopped = Stopped(cancelled);
            tokio::select! {
                () = tokio::time::sleep(Duration::from_secs(60)) => {
                    std::mem::forget(stopped);
                    Ok(ToolOutput::text("held 60 s"))
                }
                () = cx.cancelled() => Err(ToolError::Cancelled),
            }
        }
    })
    .with_task_support(TaskSupport::Required);
    let options = ServerOptions::new("charly-trial", "0.1.0")
        .tool(sample)
        .tool(roots)
        .tool(caps)
        .tool(only_task)
        .tool(hold);
    let mut http = HttpOptions::default();
    http.listen = "127.0.0.1:0".parse().unwrap();
    Server::new(options).serve_http(http).await.unwrap()
}

async fn charly_server() -> (ServerHandle, Endpoint) {
    let handle = serve(Arc::default(), Arc::default()).await;
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    (handle, endpoint)
}

/// 1. A server that asks for a sample or roots the client has no answer for: the error names
/// the flag that answers and what was asked, on 2026-07-28 (-32021, as the client declares
/// `sampling`/`roots` only with answers) and before (a server-to-client request).
#[tokio::test]
async fn an_unanswerable_question_names_the_flag_that_answers_it() {
    let (handle, endpoint) = charly_server().await;
    let opts = options(Duration::from_secs(10));
    let error = probe::call(&endpoint, "sample", None, &opts).await.unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ClientError::Server { code: -32021, .. }), "{error:?}");
    assert!(text.contains("give --sample TEXT"), "{text}");
    assert!(text.contains(r#"[data: {"requiredCapabilities":{"sampling":{}}}]"#), "{text}");
    let text = probe::call(&endpoint, "roots", None, &opts).await.unwrap_err().to_string();
    assert!(text.contains("give --root URI") && text.contains(r#""roots":{}"#), "{text}");

    // Declared only with an answer, and then answered.
    let called = probe::call(&endpoint, "caps", None, &opts).await.unwrap();
    assert_eq!(called.to_string(), "sampling false, roots false\n");
    let mut answered = opts.clone();
    let mut answers = Answers::default();
    answers.sample = Some("Paris".into());
    answers.roots = vec!["file:///w".into()];
    answered.answers = answers;
    let called = probe::call(&endpoint, "caps", None, &answered).await.unwrap();
    assert_eq!(called.to_string(), "sampling true, roots true\n");
    assert_eq!(probe::call(&endpoint, "sample", None, &answered).await.unwrap().to_string(), "\"Paris\"\n");
    assert_eq!(probe::call(&endpoint, "roots", None, &answered).await.unwrap().to_string(), "file:///w\n");
    handle.shutdown().await.unwrap();

    // 2025-11-25: server-everything sends sampling/createMessage whatever the client declared.
    let error =
        probe::call(&stdio_endpoint(), "sampleLLM", crate::support::input(r#"{"prompt": "hi"}"#), &opts)
            .await
            .unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ClientError::InputRequired { .. }), "{error:?}");
    assert!(text.contains(r#"sampling/createMessage: the server asks a model "#), "{text}");
    assert!(text.contains("hi") && text.contains("answer with --sample TEXT"), "{text}");
}

/// A stdio peer that answers `initialize` with `protocolVersion` `$VERSION` (or an error when
/// `$VERSION` is `error`), any other request with -32601, and logs each method to `$LOG`.
const SCRIPTED_PEER: &str = r#"
import json, os, sys
log = open(os.environ["LOG"], "a")
for line in sys.stdin:
    msg = json.loads(line)
    log.write(msg.get("method", "(response)") + "\n"); log.flush()
    if "id" not in msg or "method" not in msg:
        continue
    if msg["method"] == "initialize" and os.environ["VERSION"] != "error":
        result = {"protocolVersion": os.environ["VERSION"], "capabilities": {},
                  "serverInfo": {"name": "scripted", "version": "0"}}
        reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    else:
        reply = {"jsonrpc": "2.0", "id": msg["id"],
                 "error": {"code": -32601, "message": "Method not found"}}
    sys.stdout.write(json.dumps(reply) + "\n"); sys.stdout.flush()
"#;

fn scripted(dir: &std::path::Path, version: &str) -> (Endpoint, std::path::PathBuf) {
    let script = dir.join("peer.py");
    std::fs::write(&script, SCRIPTED_PEER).unwrap();
    let log = dir.join(format!("{version}.log"));
    let command = StdioCommand {
        command: "python3".into(),
        args: vec![script.display().to_string()],
        env: vec![("LOG".into(), log.display().to_string()), ("VERSION".into(), version.into())],
        cwd: None,
    };
    (Endpoint::stdio(command), log)
}

/// 2 and 7. `initialize` answered with a revision that was not offered is refused, naming the
/// offer and the answer, and no 2026-07-28 request follows on that session; a fallback that
/// fails says why `server/discover` failed first.
#[tokio::test]
async fn an_initialize_answer_outside_the_offer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(Duration::from_secs(10));
    for (version, protocol) in [("banana", Protocol::Latest), ("2026-07-28", Protocol::Initialize)] {
        opts.protocol = protocol;
        let (endpoint, log) = scripted(dir.path(), version);
        let error = probe::ping(&endpoint, &opts).await.unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains(&format!(
                "the server answered initialize with protocolVersion {version:?}, which charly did not offer: \
                 it offered 2025-11-25 and accepts 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 in answer"
            )),
            "{text}"
        );
        let methods = std::fs::read_to_string(&log).unwrap();
        let expected = match protocol {
            Protocol::Latest => "server/discover\ninitialize\n",
            _ => "initialize\n",
        };
        assert!(
            methods.starts_with(expected) && !methods[expected.len()..].contains("server/discover"),
            "{methods}"
        );
        if version == "2026-07-28" {
            assert!(text.contains("2026-07-28 has no initialize"), "{text}");
        }
    }
    opts.protocol = Protocol::Latest;
    let (endpoint, _) = scripted(dir.path(), "error");
    let text = probe::ping(&endpoint, &opts).await.unwrap_err().to_string();
    assert!(
        text.contains(
            "server/discover failed first: the server refused the handshake: error -32601: Method not found"
        ),
        "{text}"
    );
}

/// 3. `--transport sse` with `--protocol 2026-07-28`: refused before dialling.
#[tokio::test]
async fn legacy_sse_with_2026_07_28_is_refused() {
    let sse = NodeServer::start(TransportKind::Sse);
    let mut opts = options(Duration::from_secs(10));
    opts.protocol = Protocol::Stateless;
    let error = client::connect(&sse.endpoint(), &opts).await.unwrap_err();
    assert!(matches!(error, ClientError::InvalidInput(_)), "{error:?}");
    assert!(error.to_string().contains("MCP 2026-07-28 has no HTTP+SSE transport"), "{error}");
    opts.protocol = Protocol::Latest;
    assert_eq!(
        probe::ping(&sse.endpoint(), &opts).await.unwrap().protocol_version.as_deref(),
        Some("2025-11-25")
    );
}

/// 4 (library). An interrupt while the client follows a task cancels it on the server.
#[tokio::test]
async fn an_interrupt_cancels_the_followed_task_on_the_server() {
    let (started, cancelled) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let handle = serve(started.clone(), cancelled.clone()).await;
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    let token = tokio_util::sync::CancellationToken::new();
    let mut opts = options(Duration::from_secs(30));
    opts.interrupt = Some(token.clone());
    let call = tokio::spawn(async move { probe::call(&endpoint, "hold", None, &opts).await });
    assert!(set_within(&started, Duration::from_secs(5)).await, "the task never started");
    token.cancel();
    let error = tokio::time::timeout(Duration::from_secs(5), call).await.unwrap().unwrap().unwrap_err();
    let text = error.to_string();
    assert!(matches!(error, ClientError::Interrupted { .. }), "{error:?}");
    assert!(text.contains("cancelled on the server (tasks/cancel)"), "{text}");
    assert!(set_within(&cancelled, Duration::from_secs(2)).await, "the server's task was not cancelled");
    handle.shutdown().await.unwrap();
}

/// 5. A wrong path whose server answers with an HTML page: the error summarises the page.
#[tokio::test]
async fn an_html_page_is_summarised_not_dumped() {
    let http = NodeServer::start(TransportKind::StreamableHttp);
    let wrong =
        Endpoint::url(&format!("http://127.0.0.1:{}/wrong", http.port), TransportKind::StreamableHttp)
            .unwrap();
    let mut opts = options(Duration::from_secs(10));
    for protocol in [Protocol::Stateless, Protocol::Latest, Protocol::Initialize] {
        opts.protocol = protocol;
        let text = probe::ping(&wrong, &opts).await.unwrap_err().to_string();
        assert!(text.contains("404 Not Found"), "{text}");
        assert!(text.contains("(an HTML page: Error Cannot POST /wrong)"), "{text}");
        assert!(!text.contains('<') && !text.contains('\n'), "{text}");
    }
}

/// 6 and 7. Revision mismatches say why and what to do, keeping the server's data; a
/// fallback says why `server/discover` failed.
#[tokio::test]
async fn revision_mismatches_say_why_and_what_to_do() {
    let http = NodeServer::start(TransportKind::StreamableHttp);
    let mut opts = options(Duration::from_secs(10));
    opts.protocol = Protocol::Stateless;
    let text = probe::ping(&http.endpoint(), &opts).await.unwrap_err().to_string();
    assert!(
        text.contains("it does not speak MCP 2026-07-28, which --protocol 2026-07-28 requires"),
        "{text}"
    );
    assert!(text.contains("use --protocol latest"), "{text}");

    opts.protocol = Protocol::Latest;
    let pong = probe::ping(&http.endpoint(), &opts).await.unwrap();
    assert_eq!(pong.protocol_version.as_deref(), Some("2025-11-25"));
    let fallback = pong.fallback.unwrap_or_default();
    assert!(fallback.starts_with("server/discover failed with error -32000: "), "{fallback}");

    let (handle, endpoint) = charly_server().await;
    assert_eq!(probe::ping(&endpoint, &opts).await.unwrap().fallback, None);
    opts.protocol = Protocol::Initialize;
    let error = probe::call(&endpoint, "only_task", None, &opts).await.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("the tool runs only as a task (extension io.modelcontextprotocol/tasks)"),
        "{text}"
    );
    assert!(text.contains("leave out --protocol 2025-11-25"), "{text}");
    assert!(
        text.contains(
            r#"[data: {"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}]"#
        ),
        "{text}"
    );
    handle.shutdown().await.unwrap();
}

/// 4 (process). Ctrl-C (SIGINT) to `charly check mcp call` while the server holds the call's
/// task open: the task is cancelled on the server before charly exits (status 130).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_during_a_task_cancels_it_on_the_server() {
    let (started, cancelled) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let handle = serve(started.clone(), cancelled.clone()).await;
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(["check", "mcp", "call", "--url", &handle.url(), "--tool", "hold"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    assert!(set_within(&started, Duration::from_secs(10)).await, "the task never started");
    let pid = child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output()).await.unwrap().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("tools/call: interrupted; task ") && stderr.contains("cancelled on the server"),
        "{stderr}"
    );
    assert!(set_within(&cancelled, Duration::from_secs(2)).await, "the server's task was not cancelled");
    handle.shutdown().await.unwrap();
}

/// The second trial: Ctrl-C (SIGINT) to `charly check mcp ping` or `list-tools` while a
/// server accepts the connection and never answers ends charly at once with status 130 (it
/// waited for its whole `--timeout`, or, with SIGINT ignored as in a background job, died only
/// to SIGTERM).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_while_a_server_never_answers_ends_a_ping_at_once() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            open.push(socket);
        }
    });
    for probe in ["ping", "list-tools"] {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_charly"))
            .args(["check", "mcp", probe, "--url", &url, "--timeout", "60s"])
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(800)).await;
        assert!(child.try_wait().unwrap().is_none(), "{probe} ended before the interrupt");
        let pid = child.id().unwrap().to_string();
        assert!(std::process::Command::new("kill").args(["-INT", &pid]).status().unwrap().success());
        let out = tokio::time::timeout(Duration::from_secs(3), child.wait_with_output())
            .await
            .unwrap_or_else(|_| panic!("{probe} still runs 3 s after SIGINT"))
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{probe}: {stderr}");
        assert!(stderr.contains("interrupted (Ctrl-C)"), "{probe}: {stderr}");
    }
    held.abort();
}
