//! Fault figures (issue 18): a client gone mid-call, and SIGTERM with calls in flight, against
//! a charly server in a child process whose tool `child` runs `sleep 30` through
//! `CallContext::run_command` (the child process dies with the call).
//!
//! 1. Client gone: a session's `tools/call` of `child` starts its `sleep`; the driver drops
//!    the POST's connection and prints how long until the `sleep` is gone (no `/proc` entry,
//!    or a zombie), in a 2025-06-18 session (at once) and a 2025-11-25 one (after the 5 s
//!    `HttpOptions::disconnect_grace` the client has to resume the stream).
//! 2. SIGTERM: 4 calls of `child` in flight, SIGTERM to the server, which exits as soon as
//!    `ServerHandle::shutdown` returns. Prints how long the shutdown took and until the server
//!    process exits, whether each call got an answer, whether the `sleep`s are gone, and
//!    whether the port binds again.
//!
//! Bounded: every wait stops after 10 s. 127.0.0.1, port 0; the server also stops when the
//! driver's stdin pipe to it closes.
//!
//! ```sh
//! cargo run --release -p charly-mcp --example faults
//! ```

use std::io::BufRead as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use charly_mcp::Annotations;
use charly_mcp::server::{HttpOptions, Server, ServerOptions, Tool, ToolOutput};
use serde_json::json;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"faults","version":"0"}}}"#;
const LIMIT: Duration = Duration::from_secs(10);

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if std::env::args().nth(1).as_deref() == Some("--serve") {
        runtime.block_on(serve());
        // At once: `ServerHandle::shutdown` returned once the cancelled calls had reaped
        // their children, so exiting here (no runtime teardown, no waiting for the blocking
        // stdin reader) leaves no child behind.
        std::process::exit(0);
    } else {
        runtime.block_on(drive());
    }
}

/// The child: a charly server with the `child` tool; its URL on stdout; stops on SIGTERM or
/// when stdin closes (`ServerHandle::shutdown`: sessions closed, calls cancelled, 5 s grace).
async fn serve() {
    let schema =
        json!({"type": "object", "properties": {"pidfile": {"type": "string"}}, "required": ["pidfile"]});
    let child = Tool::new("child", "Runs sleep 30", schema, Annotations::default(), |args, cx| async move {
        let pidfile = args["pidfile"].as_str().unwrap_or_default().to_owned();
        let mut command = tokio::process::Command::new("sh");
        command.arg("-c").arg(format!("echo $$ > {pidfile}; exec sleep 30"));
        let output = cx.run_command(&mut command).await?;
        Ok(ToolOutput::text(format!("child exited: {}", output.status)))
    });
    let server = Server::new(ServerOptions::new("faults", "0").tool(child));
    let handle = server.serve_http(HttpOptions::default().listen(([127, 0, 0, 1], 0).into())).await.unwrap();
    println!("{}", handle.url());
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::task::spawn_blocking(|| std::io::stdin().lines().count()) => {}
    }
    let began = Instant::now();
    handle.shutdown().await.unwrap();
    println!("ServerHandle::shutdown returned after {}", show(Some(began.elapsed())));
}

/// Whether process `pid` is gone (no /proc entry) or a zombie.
fn is_dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// How long until `done()` holds, polled every 10 ms; `None` past [`LIMIT`].
async fn until(mut done: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while !done() {
        if start.elapsed() > LIMIT {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Some(start.elapsed())
}

fn show(d: Option<Duration>) -> String {
    d.map_or_else(
        || format!("not within {} s", LIMIT.as_secs()),
        |d| format!("{:.0} ms", d.as_secs_f64() * 1e3),
    )
}

struct Child {
    process: std::process::Child,
    url: String,
    /// The rest of its stdout.
    out: std::io::BufReader<std::process::ChildStdout>,
}

fn start() -> Child {
    let mut process = Command::new(std::env::current_exe().unwrap())
        .arg("--serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut url = String::new();
    let mut out = std::io::BufReader::new(process.stdout.take().unwrap());
    out.read_line(&mut url).unwrap();
    Child { process, url: url.trim().to_owned(), out }
}

fn post(client: &reqwest::Client, url: &str, body: String) -> reqwest::RequestBuilder {
    client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
}

async fn session(client: &reqwest::Client, url: &str, version: &str) -> String {
    let init = INIT.replace("2025-11-25", version);
    let response = post(client, url, init).header("mcp-protocol-version", version).send().await.unwrap();
    let id = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let _ = response.bytes().await;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned();
    post(client, url, initialized).header("mcp-session-id", &id).send().await.unwrap();
    id
}

/// Starts a `child` call (id `id`) writing its pid to `pidfile`; the task yields the body.
fn call(
    client: &reqwest::Client,
    url: &str,
    session: &str,
    id: u32,
    pidfile: &Path,
) -> tokio::task::JoinHandle<String> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                      "params": {"name": "child", "arguments": {"pidfile": pidfile}}});
    let request = post(client, url, body.to_string()).header("mcp-session-id", session);
    tokio::spawn(async move {
        match request.send().await {
            Ok(response) => response.text().await.unwrap_or_else(|e| format!("(body: {e})")),
            Err(e) => format!("(request: {e})"),
        }
    })
}

async fn pid_in(pidfile: &Path) -> u32 {
    until(|| std::fs::read_to_string(pidfile).is_ok_and(|s| s.trim().parse::<u32>().is_ok()))
        .await
        .expect("the child starts");
    std::fs::read_to_string(pidfile).unwrap().trim().parse().unwrap()
}

async fn drive() {
    let dir = std::env::temp_dir().join(format!("charly-faults-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    charly_mcp::client::install_tls_provider();
    let client = reqwest::Client::new();

    // 1. A client gone mid-call, in a session of each protocol version: a 2025-11-25 stream
    //    starts with a priming event whose id lets the client resume it, so the call waits
    //    `HttpOptions::disconnect_grace` (5 s) for that first; an older session's stream has
    //    sent no event id yet, and its call is cancelled at once.
    let mut server = start();
    for version in ["2025-06-18", "2025-11-25"] {
        let id = session(&client, &server.url, version).await;
        let pidfile = dir.join(format!("gone-{version}.pid"));
        let task = call(&client, &server.url, &id, 2, &pidfile);
        let pid = pid_in(&pidfile).await;
        task.abort(); // drops the POST's connection
        let _ = task.await;
        println!(
            "client gone mid-call ({version} session): sleep {pid} gone after {} (from the dropped connection)",
            show(until(|| is_dead(pid)).await)
        );
    }
    drop(server.process.stdin.take());
    let _ = server.process.wait();

    // 2. SIGTERM with 4 calls in flight.
    let mut server = start();
    let addr: std::net::SocketAddr =
        server.url.trim_start_matches("http://").trim_end_matches("/mcp").parse().unwrap();
    let id = session(&client, &server.url, "2025-11-25").await;
    let mut tasks = Vec::new();
    let mut pids = Vec::new();
    for n in 0..4 {
        let pidfile = dir.join(format!("term{n}.pid"));
        tasks.push(call(&client, &server.url, &id, 10 + n, &pidfile));
        pids.push(pid_in(&pidfile).await);
    }
    let status = Command::new("kill").args(["-TERM", &server.process.id().to_string()]).status().unwrap();
    assert!(status.success());
    let exited = until(|| server.process.try_wait().ok().flatten().is_some()).await;
    println!("SIGTERM with 4 calls in flight: server exited after {}", show(exited));
    let mut said = String::new();
    let _ = server.out.read_line(&mut said);
    println!("  server: {}", said.trim());
    let children = until(|| pids.iter().all(|&p| is_dead(p))).await;
    println!("  the 4 sleeps gone after {} (from the exit)", show(children));
    for task in tasks {
        let body = tokio::time::timeout(LIMIT, task).await.map(|b| b.unwrap_or_default());
        let body = body.unwrap_or_else(|_| "(no answer)".to_owned());
        let shown: String = body.chars().take(160).collect();
        println!("  answer: {}", shown.replace('\n', " "));
    }
    match std::net::TcpListener::bind(addr) {
        Ok(_) => println!("  port {} binds again: yes", addr.port()),
        Err(e) => println!("  port {} binds again: no ({e})", addr.port()),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
