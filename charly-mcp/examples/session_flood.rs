//! A client that opens sessions and never closes them, against a charly server in a child
//! process: prints the server's `VmRSS` as the sessions pile up, how many `initialize`s got a
//! session (200) and how many the cap refused (503), then the RSS once the idle timeout has
//! closed them and whether a new session opens again.
//!
//! With `--delete` each client closes its session (`DELETE`) right after opening it: the RSS
//! of 10,000 sessions opened and closed, against the start (issue 18's load figure).
//!
//! Bounded: `--sessions` attempts (default 2,000) from `--workers` concurrent clients, then
//! one wait of the idle timeout. `--max-sessions 0` serves without a cap (rmcp's behaviour).
//!
//! ```sh
//! cargo run --release -p charly-mcp --example session_flood -- --max-sessions 256
//! cargo run --release -p charly-mcp --example session_flood -- --max-sessions 0
//! cargo run --release -p charly-mcp --example session_flood -- --sessions 10000 --delete
//! ```
//!
//! `--server CMD` floods another server instead, one that prints its URL (or its `ip:port`,
//! served at `/mcp`) as a stdout line and serves until stdin closes: `bench_server`'s bare
//! rmcp and charly servers, for the same figure side by side (their session cap and idle
//! timeout are their own; `--max-sessions` and `--idle-secs` then only set the wait).
//!
//! ```sh
//! session_flood --sessions 10000 --delete --server "target/release/examples/bench_server --bare --listen 127.0.0.1:0"
//! ```

use std::io::BufRead as _;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use charly_mcp::Annotations;
use charly_mcp::server::{HttpOptions, Server, ServerOptions, Tool, ToolOutput};
use clap::Parser;

#[derive(Parser, Debug)]
struct Args {
    /// Run the server (the child process) instead of the flood
    #[arg(long)]
    serve: bool,
    /// `initialize`s to send, none of their sessions ever deleted
    #[arg(long, default_value_t = 2000)]
    sessions: usize,
    /// Concurrent clients
    #[arg(long, default_value_t = 16)]
    workers: usize,
    /// The server's cap on open sessions (0: none)
    #[arg(long, default_value_t = 256)]
    max_sessions: usize,
    /// The server's session idle timeout, in seconds
    #[arg(long, default_value_t = 10)]
    idle_secs: u64,
    /// Close each session (`DELETE`) once it is open
    #[arg(long)]
    delete: bool,
    /// Run the server under this command (`heaptrack`, say; split at spaces); the RSS columns
    /// are then the command's process
    #[arg(long)]
    wrap: Option<String>,
    /// Flood this server command instead (split at spaces; see the module docs)
    #[arg(long, conflicts_with = "wrap")]
    server: Option<String>,
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

fn main() {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    if args.serve {
        runtime.block_on(serve(&args));
    } else {
        runtime.block_on(flood(&args));
    }
}

/// The child: a charly server with one tool, its URL on stdout, until stdin closes.
async fn serve(args: &Args) {
    let echo = Tool::new(
        "echo",
        "Echoes",
        serde_json::json!({"type": "object"}),
        Annotations::default(),
        |_, _| async { Ok(ToolOutput::text("echo")) },
    );
    let server = Server::new(ServerOptions::new("flood", "0").tool(echo));
    let options = HttpOptions::default()
        .listen(SocketAddr::from(([127, 0, 0, 1], 0)))
        .max_sessions((args.max_sessions > 0).then_some(args.max_sessions))
        .session_idle_timeout(Some(Duration::from_secs(args.idle_secs)));
    let handle = server.serve_http(options).await.unwrap();
    println!("{}", handle.url());
    let _ = tokio::task::spawn_blocking(|| std::io::stdin().lines().count()).await;
    handle.shutdown().await.unwrap();
}

/// `VmRSS`, `RssAnon` (heap, stacks) and `RssFile` (the binary's and libraries' pages) of
/// process `pid`, in MiB.
fn rss_mib(pid: u32) -> [f64; 3] {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    ["VmRSS:", "RssAnon:", "RssFile:"].map(|key| {
        let line = status.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace().nth(1).and_then(|v| v.parse::<f64>().ok()).unwrap() / 1024.0
    })
}

/// A table row: attempts, the three counts, then [`rss_mib`].
fn row(attempts: usize, counts: [usize; 3], rss: [f64; 3]) {
    let [ok, full, other] = counts;
    let [vm, anon, file] = rss;
    println!("{attempts:>9} {ok:>7} {full:>7} {other:>7} {vm:>9.1} {anon:>9.1} {file:>9.1}");
}

/// One `initialize` (and `notifications/initialized` when it opened a session, then a `DELETE`
/// of it with `delete`): the `initialize`'s status, or 0 when the `DELETE` did not get 200.
async fn open(client: &reqwest::Client, url: &str, delete: bool) -> u16 {
    let post = |body: &'static str| {
        client
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body)
    };
    let Ok(response) = post(INIT).send().await else { return 0 };
    let status = response.status().as_u16();
    let session = response.headers().get("mcp-session-id").cloned();
    let _ = response.bytes().await;
    if let Some(session) = session {
        let _ = post(INITIALIZED).header("mcp-session-id", &session).send().await;
        if delete {
            let deleted = client.delete(url).header("mcp-session-id", session).send().await;
            if !deleted.is_ok_and(|r| r.status().is_success()) {
                return 0;
            }
        }
    }
    status
}

async fn flood(args: &Args) {
    let exe = std::env::current_exe().unwrap();
    let words = |text: &str| text.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    let mut argv = match &args.wrap {
        Some(wrap) => words(wrap),
        None => Vec::new(),
    };
    match &args.server {
        Some(server) => argv.extend(words(server)),
        None => {
            argv.push(exe.to_string_lossy().into_owned());
            argv.extend(["--serve", "--max-sessions"].map(str::to_owned));
            argv.extend([
                args.max_sessions.to_string(),
                "--idle-secs".to_owned(),
                args.idle_secs.to_string(),
            ]);
        }
    }
    let (program, rest) = argv.split_first().expect("--server names a command");
    let mut child =
        Command::new(program).args(rest).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let pid = child.id();
    // The first line that is a URL or an address (a `--wrap` command may print lines of its
    // own first).
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let url = loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "the server printed no URL");
        if line.starts_with("http://") {
            break line.trim().to_owned();
        }
        if let Ok(addr) = line.trim().parse::<SocketAddr>() {
            break format!("http://{addr}/mcp");
        }
    };
    // Read on, so that the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
    let url: Arc<str> = url.into();
    charly_mcp::client::install_tls_provider();
    // Warm-up: one session, opened (and deleted, with `--delete`) as the flood's are, so the
    // start figure includes the code and the buffers of one such round. Its client (and its
    // one connection) lives to the end; the flood's clients share another, dropped (its
    // connections closed) when the flood is over.
    let warm = reqwest::Client::new();
    let _ = open(&warm, &url, args.delete).await;
    let client = reqwest::Client::new();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cap = match (&args.server, args.max_sessions) {
        (Some(_), _) => "the server's own".to_owned(),
        (None, 0) => "none".to_owned(),
        (None, cap) => cap.to_string(),
    };
    println!(
        "{} pid {pid}, session cap {cap}, idle timeout {} s, {} initializes from {} clients{}",
        args.server.as_deref().unwrap_or("charly server"),
        args.idle_secs,
        args.sessions,
        args.workers,
        if args.delete { ", each session deleted once open" } else { "" }
    );
    println!(
        "{:>9} {:>7} {:>7} {:>7} {:>9} {:>9} {:>9}",
        "attempts", "200", "503", "other", "RSS MiB", "anon MiB", "file MiB"
    );
    let start = rss_mib(pid);
    row(0, [0; 3], start);
    let next = Arc::new(AtomicUsize::new(0));
    let counts: Arc<[AtomicUsize; 3]> = Arc::new(Default::default());
    let started = Instant::now();
    let step = 250;
    let mut done = 0;
    while done < args.sessions {
        let until = (done + step).min(args.sessions);
        let workers: Vec<_> = (0..args.workers)
            .map(|_| {
                let (client, url, next, counts) = (client.clone(), url.clone(), next.clone(), counts.clone());
                let delete = args.delete;
                tokio::spawn(async move {
                    while next.fetch_add(1, Ordering::Relaxed) < until {
                        let slot = match open(&client, &url, delete).await {
                            200 => 0,
                            503 => 1,
                            _ => 2,
                        };
                        counts[slot].fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.await.unwrap();
        }
        next.store(until, Ordering::Relaxed);
        done = until;
        row(done, [0, 1, 2].map(|i| counts[i].load(Ordering::Relaxed)), rss_mib(pid));
    }
    println!("flood took {:.1} s", started.elapsed().as_secs_f64());
    drop(client);
    tokio::time::sleep(Duration::from_secs(args.idle_secs + 2)).await;
    let end = rss_mib(pid);
    let status = open(&warm, &url, false).await;
    println!(
        "after the idle timeout, the flood's connections closed ({} s + 2 s): RSS {:.1} MiB ({:.2}x the start; anon {:.2}x, file {:.2}x), a new initialize gets {status}",
        args.idle_secs,
        end[0],
        end[0] / start[0],
        end[1] / start[1],
        end[2] / start[2],
    );
    drop(child.stdin.take());
    let _ = child.wait();
}
