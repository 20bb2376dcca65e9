//! Load figures for the two eras of MCP side by side (issue 12): `tools/call` throughput and
//! server RSS for 2026-07-28 stateless requests (no session: each POST carries its own `_meta`
//! and `Mcp-Method`/`Mcp-Name` headers) against 2025-11-25 stateful sessions (`initialize`,
//! then calls with `Mcp-Session-Id`). Prints figures; asserts nothing about speed.
//!
//! ```text
//! cargo build --release -p charly-mcp --example revision_load --example bench_server
//! target/release/examples/revision_load [--calls 20000] [--secs 10] [--clients 1,8] [--rounds 3]
//!     [--servers charly,charly-cli,bare,bare-validating,bare-clap] [--eras stateless,stateful]
//! ```
//!
//! The server is `bench_server --charly` from the same directory (200 hand-written echo tools,
//! arguments validated, TCP_NODELAY), or each of `--servers` (`bench_server --<name>`; the
//! servers alternate within each round), a fresh process per era, round and client count; for
//! the stateless era it runs with `--stateless` (bare rmcp: its stateless JSON mode), on
//! 127.0.0.1 port 0, exiting when its stdin (held here) closes. Each run: every client opens
//! (2025-11-25: its own session), 100 warm-up calls each, then calls of `echo7` until `--calls`
//! calls in all or `--secs` seconds (whichever comes first). Figures per run: calls per second,
//! p50/p99 latency, errors (any non-2xx or a response without a result), the server's `VmRSS`
//! idle (before any request), after warm-up and at the end, and its `VmHWM`. With `--rounds`
//! the median round (by calls/s) is shown. The driver speaks raw JSON-RPC over `reqwest`.

use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const ECHO: &str = r#""name":"echo7","arguments":{"text":"hello"}"#;
const META_2026: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"load","version":"0"},"io.modelcontextprotocol/clientCapabilities":{}}"#;
const WARM_UP: usize = 100;

#[derive(Clone, Copy, PartialEq)]
enum Era {
    /// 2026-07-28: no session, per-request `_meta` and headers.
    Stateless2026,
    /// 2025-11-25: an `initialize`d session per client.
    Stateful2025,
}

impl Era {
    fn label(self) -> &'static str {
        match self {
            Era::Stateless2026 => "2026-07-28 stateless",
            Era::Stateful2025 => "2025-11-25 stateful",
        }
    }
}

struct Args {
    servers: Vec<String>,
    eras: Vec<Era>,
    calls: usize,
    secs: f64,
    clients: Vec<usize>,
    rounds: usize,
}

fn parse_args() -> Args {
    let mut args = Args {
        servers: vec!["charly".to_owned()],
        eras: vec![Era::Stateless2026, Era::Stateful2025],
        calls: 20_000,
        secs: 10.0,
        clients: vec![1, 8],
        rounds: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} takes a value"));
        match arg.as_str() {
            "--calls" => args.calls = value().parse().expect("--calls takes a count"),
            "--secs" => args.secs = value().parse().expect("--secs takes seconds"),
            "--clients" => {
                args.clients =
                    value().split(',').map(|c| c.parse().expect("--clients takes 1,8,...")).collect();
            }
            "--servers" => args.servers = value().split(',').map(str::to_owned).collect(),
            "--eras" => {
                args.eras = value()
                    .split(',')
                    .map(|e| match e {
                        "stateless" => Era::Stateless2026,
                        "stateful" => Era::Stateful2025,
                        _ => panic!("--eras takes stateless,stateful"),
                    })
                    .collect();
            }
            "--rounds" => args.rounds = value().parse().expect("--rounds takes a count"),
            other => panic!("unknown argument {other}; see the doc comment of examples/revision_load.rs"),
        }
    }
    args.calls = args.calls.clamp(100, 1_000_000);
    args.secs = args.secs.clamp(0.5, 120.0);
    args.rounds = args.rounds.clamp(1, 9);
    args.clients.retain(|c| (1..=256).contains(c));
    args
}

/// A `bench_server --<which>` process on 127.0.0.1 port 0 (`--stateless` for the stateless
/// era); killed on drop.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(which: &str, era: Era) -> Server {
        let exe = std::env::current_exe().expect("this binary's path");
        let server = exe.with_file_name("bench_server");
        let mut child = Command::new(&server)
            .args([format!("--{which}").as_str(), "--listen", "127.0.0.1:0"])
            .args((era == Era::Stateless2026).then_some("--stateless"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("cannot start {}: {e} (build --example bench_server)", server.display())
            });
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("the address line");
        let addr = line.trim().parse().unwrap_or_else(|_| panic!("bench_server printed {line:?}"));
        Server { child, addr }
    }

    /// `VmRSS` and `VmHWM` in KiB.
    fn memory(&self) -> (u64, u64) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        (field("VmRSS:"), field("VmHWM:"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One client: its HTTP connection and, for 2025-11-25, its session.
struct Client {
    http: reqwest::Client,
    url: String,
    era: Era,
    session: Option<String>,
    next: u64,
}

impl Client {
    async fn open(addr: SocketAddr, era: Era) -> Client {
        charly_mcp::client::install_tls_provider();
        let http = reqwest::Client::builder().no_proxy().tcp_nodelay(true).build().expect("reqwest client");
        let mut client = Client { http, url: format!("http://{addr}/mcp"), era, session: None, next: 1 };
        if era == Era::Stateful2025 {
            let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"0"}}}"#;
            let response = client.post(init.to_owned(), None).await.expect("initialize");
            let id =
                response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_owned);
            let body = response.text().await.expect("initialize body");
            assert!(body.contains(r#""protocolVersion":"2025-11-25""#), "initialize: {body}");
            client.session = Some(id.expect("an Mcp-Session-Id"));
            let done = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            let status = client.post(done.to_owned(), None).await.expect("initialized").status();
            assert!(status.is_success(), "notifications/initialized: {status}");
        }
        client
    }

    async fn post(&self, body: String, name: Option<&str>) -> reqwest::Result<reqwest::Response> {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        match (self.era, &self.session) {
            (Era::Stateless2026, _) => {
                request =
                    request.header("mcp-protocol-version", "2026-07-28").header("mcp-method", "tools/call");
                if let Some(name) = name {
                    request = request.header("mcp-name", name);
                }
            }
            (Era::Stateful2025, Some(id)) => {
                request = request.header("mcp-session-id", id).header("mcp-protocol-version", "2025-11-25");
            }
            (Era::Stateful2025, None) => {}
        }
        request.body(body).send().await
    }

    /// One `tools/call` of `echo7`; whether it got a result.
    async fn call(&mut self) -> bool {
        let id = self.next;
        self.next += 1;
        let body = match self.era {
            Era::Stateless2026 => {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{ECHO},{META_2026}}}}}"#
                )
            }
            Era::Stateful2025 => {
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{ECHO}}}}}"#)
            }
        };
        let Ok(response) = self.post(body, Some("echo7")).await else { return false };
        if !response.status().is_success() {
            return false;
        }
        response.bytes().await.is_ok_and(|b| is_result(&b))
    }
}

/// Whether a response body holds a successful result (`isError` absent or false).
fn is_result(body: &[u8]) -> bool {
    let has = |needle: &[u8]| body.windows(needle.len()).any(|w| w == needle);
    has(br#""result":"#) && !has(br#""isError":true"#)
}

struct Run {
    calls: u64,
    errors: u64,
    secs: f64,
    p50_us: f64,
    p99_us: f64,
    idle_kib: u64,
    warm_kib: u64,
    end_kib: u64,
    hwm_kib: u64,
}

async fn run(which: &str, era: Era, clients: usize, args: &Args) -> Run {
    let server = Server::start(which, era);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (idle_kib, _) = server.memory();
    let mut opened = Vec::with_capacity(clients);
    for _ in 0..clients {
        opened.push(Client::open(server.addr, era).await);
    }
    let errors = Arc::new(AtomicU64::new(0));
    let mut warm = Vec::new();
    for mut client in opened {
        let errors = errors.clone();
        warm.push(tokio::spawn(async move {
            for _ in 0..WARM_UP {
                if !client.call().await {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            client
        }));
    }
    let mut warmed = Vec::with_capacity(clients);
    for task in warm {
        warmed.push(task.await.expect("warm-up task"));
    }
    let (warm_kib, _) = server.memory();
    let budget = Arc::new(AtomicU64::new(args.calls as u64));
    let deadline = Instant::now() + Duration::from_secs_f64(args.secs);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for mut client in warmed {
        let (budget, errors) = (budget.clone(), errors.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline
                && budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |b| b.checked_sub(1)).is_ok()
            {
                let t = Instant::now();
                if !client.call().await {
                    errors.fetch_add(1, Ordering::Relaxed);
                }
                latencies.push(t.elapsed().as_secs_f64() * 1e6);
            }
            latencies
        }));
    }
    let mut latencies = Vec::new();
    for task in tasks {
        latencies.extend(task.await.expect("load task"));
    }
    let secs = start.elapsed().as_secs_f64();
    let (end_kib, hwm_kib) = server.memory();
    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies.get(((latencies.len() as f64 - 1.0) * q) as usize).copied().unwrap_or(0.0);
    Run {
        calls: latencies.len() as u64,
        errors: errors.load(Ordering::Relaxed),
        secs,
        p50_us: at(0.5),
        p99_us: at(0.99),
        idle_kib,
        warm_kib,
        end_kib,
        hwm_kib,
    }
}

fn main() {
    let args = parse_args();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    println!(
        "charly-mcp revision_load: tools/call echo7, bench_server --{}, up to {} calls or {} s per run, median of {} round(s), load average {}\n",
        args.servers.join("/--"),
        args.calls,
        args.secs,
        args.rounds,
        std::fs::read_to_string("/proc/loadavg").unwrap_or_default().trim()
    );
    println!(
        "{:<22} {:<16} {:>7} {:>9} {:>9} {:>9} {:>7} {:>9} {:>9} {:>9} {:>9}",
        "era",
        "server",
        "clients",
        "calls/s",
        "p50 µs",
        "p99 µs",
        "errors",
        "idle KiB",
        "warm KiB",
        "end KiB",
        "peak KiB"
    );
    for &clients in &args.clients {
        for &era in &args.eras {
            // Rounds outside, servers inside: the servers alternate.
            let mut runs: Vec<Vec<Run>> = args.servers.iter().map(|_| Vec::new()).collect();
            for _ in 0..args.rounds {
                for (i, which) in args.servers.iter().enumerate() {
                    runs[i].push(runtime.block_on(run(which, era, clients, &args)));
                }
            }
            let mut medians = Vec::new();
            for (which, mut rounds) in args.servers.iter().zip(runs) {
                rounds.sort_by(|a, b| (a.calls as f64 / a.secs).total_cmp(&(b.calls as f64 / b.secs)));
                let errors: u64 = rounds.iter().map(|r| r.errors).sum();
                let r = &rounds[rounds.len() / 2];
                medians.push(r.calls as f64 / r.secs);
                println!(
                    "{:<22} {:<16} {:>7} {:>9.0} {:>9.0} {:>9.0} {:>7} {:>9} {:>9} {:>9} {:>9}",
                    era.label(),
                    which,
                    clients,
                    r.calls as f64 / r.secs,
                    r.p50_us,
                    r.p99_us,
                    errors,
                    r.idle_kib,
                    r.warm_kib,
                    r.end_kib,
                    r.hwm_kib
                );
            }
            for (which, rate) in args.servers.iter().zip(&medians).skip(1) {
                println!("  median calls/s {} / {which}: {:.2}x", args.servers[0], medians[0] / rate);
            }
        }
    }
}
