//! Benchmark figures for the charly MCP server next to bare rmcp 3.11 servers (issue 3,
//! "Benchmarks"). Prints figures and whether each budget is met; it is not a timed test and
//! asserts nothing about speed.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-bench cargo build --release -p charly-mcp --example http_bench --example bench_server
//! /work/target-bench/release/examples/http_bench [--secs 2] [--rounds 3] [--cold 30] [--no-pin] [--cli]
//! ```
//!
//! Every server is `bench_server` (same directory as this binary) with the same 200-tool echo
//! catalog, started as a separate process pinned to core 1 (`taskset -c 1`); this driver
//! re-executes itself pinned to core 0, so each side has one core. Everything listens on
//! 127.0.0.1 port 0 and every server exits when its stdin (held by this driver) closes.
//! Three servers run side by side:
//!
//! - charly: the catalog as hand-written tools, or with `--cli` as the CLI leaves of a derived
//!   clap tree;
//! - the bare rmcp server doing the same work, which the budgets are measured against: it
//!   validates each call's arguments with `jsonschema` (`--bare-validating`), or with `--cli`
//!   builds the leaf's argv by hand and parses it with clap (`--bare-clap`);
//! - the bare rmcp server answering from the JSON arguments without checking them
//!   (`--bare`), for information.
//!
//! Figures:
//!
//! - stdio cold start: spawn the server, write `initialize`, time until the response line
//!   (`--cold` runs per server, interleaved; median and p90).
//! - Streamable HTTP: `tools/call` of `echo7` with 1 and with 16 concurrent sessions, `ping`,
//!   and `tools/list` (first page, 100 of 200 tools), each for `--secs` seconds (at most
//!   100,000 requests per session): requests per second, p50/p99 latency, and the server's
//!   CPU time per request (utime+stime from `/proc/<pid>/stat`). The driver speaks raw
//!   JSON-RPC over `reqwest` (no SDK client), so its own cost stays small. Each figure runs
//!   `--rounds` times, the servers alternating; the median round value is shown.
//! - idle RSS: `VmRSS` after `initialize` and 5 calls, then 1 s idle, for a stdio and an HTTP
//!   server process.
//!
//! Budgets (issue 3): cold start within 1.2x of bare; call throughput and CPU per call within
//! 10% of bare; tools/list no slower than 1.2x a ping on the same server; idle RSS within 1.2x.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

const PROTOCOL: &str = "2025-06-18";
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const ECHO_PARAMS: &str = r#"{"name":"echo7","arguments":{"text":"hello"}}"#;
const MAX_PER_SESSION: usize = 100_000;
const SERVER_CORE: &str = "1";
const DRIVER_CORE: &str = "0";

struct Args {
    secs: f64,
    rounds: usize,
    cold: usize,
    pin: bool,
    cli: bool,
}

fn parse_args() -> Args {
    let mut args = Args { secs: 2.0, rounds: 3, cold: 30, pin: true, cli: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{arg} takes a value"));
        match arg.as_str() {
            "--secs" => args.secs = value().parse().expect("--secs takes seconds"),
            "--rounds" => args.rounds = value().parse().expect("--rounds takes a count"),
            "--cold" => args.cold = value().parse().expect("--cold takes a count"),
            "--no-pin" => args.pin = false,
            "--cli" => args.cli = true,
            other => panic!("unknown argument {other}; see the doc comment of http_bench.rs"),
        }
    }
    args.secs = args.secs.clamp(0.1, 60.0);
    args.rounds = args.rounds.clamp(1, 20);
    args.cold = args.cold.clamp(1, 500);
    args
}

/// Re-executes this driver under `taskset -c 0` unless it already runs pinned.
fn pin_self(args: &Args) {
    if !args.pin || std::env::var_os("CHARLY_BENCH_PINNED").is_some() {
        return;
    }
    use std::os::unix::process::CommandExt as _;
    let exe = std::env::current_exe().expect("current_exe");
    let err = Command::new("taskset")
        .args(["-c", DRIVER_CORE])
        .arg(exe)
        .args(std::env::args_os().skip(1))
        .env("CHARLY_BENCH_PINNED", "1")
        .exec();
    panic!("cannot re-execute under taskset (pass --no-pin to run unpinned): {err}");
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Charly,
    /// The bare server doing the same work as charly ([`Bench::same_work`]).
    SameWork,
    /// The bare server checking nothing.
    Bare,
}

/// The servers in column order: charly, bare doing the same work, bare checking nothing.
const KINDS: [Kind; 3] = [Kind::Charly, Kind::SameWork, Kind::Bare];

struct Bench {
    server: std::path::PathBuf,
    pin: bool,
    /// The charly server serves CLI leaves (`--charly-cli`) rather than hand-written tools.
    cli: bool,
}

impl Bench {
    fn command(&self, kind: Kind, mode: &[&str]) -> Command {
        let mut cmd = if self.pin {
            let mut cmd = Command::new("taskset");
            cmd.args(["-c", SERVER_CORE]).arg(&self.server);
            cmd
        } else {
            Command::new(&self.server)
        };
        let flag = match (kind, self.cli) {
            (Kind::Charly, false) => "--charly",
            (Kind::Charly, true) => "--charly-cli",
            (Kind::SameWork, false) => "--bare-validating",
            (Kind::SameWork, true) => "--bare-clap",
            (Kind::Bare, _) => "--bare",
        };
        cmd.arg(flag).args(mode).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        cmd
    }
}

/// A server process; closing its stdin (on drop) makes it exit.
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Proc {
    fn pid(&self) -> u32 {
        self.child.id() // `taskset` execs the server, so this is the server's pid
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read server stdout");
        assert!(!line.is_empty(), "the server closed stdout");
        line
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).and_then(|()| stdin.write_all(b"\n")).expect("write server stdin");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(bench: &Bench, kind: Kind, mode: &[&str]) -> Proc {
    let mut child = bench.command(kind, mode).spawn().expect("spawn bench_server");
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    Proc { child, stdin, stdout }
}

/// Spawn to `initialize` response, in seconds.
fn cold_start(bench: &Bench, kind: Kind) -> f64 {
    let start = Instant::now();
    let mut proc = spawn(bench, kind, &["--stdio"]);
    proc.send(INITIALIZE);
    let line = proc.line();
    let elapsed = start.elapsed().as_secs_f64();
    assert!(line.contains(r#""result""#), "initialize failed: {line}");
    elapsed
}

fn rss_kib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/<pid>/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("VmRSS value")
}

/// utime + stime of a process, in seconds.
fn cpu_secs(pid: u32, ticks_per_sec: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/<pid>/stat");
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / ticks_per_sec
}

fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

/// Idle RSS of a stdio server in KiB: after initialize and 1 s idle, then after 5 calls and
/// 1 s idle.
fn stdio_idle_rss(bench: &Bench, kind: Kind) -> (f64, f64) {
    let mut proc = spawn(bench, kind, &["--stdio"]);
    proc.send(INITIALIZE);
    proc.line();
    proc.send(INITIALIZED);
    std::thread::sleep(Duration::from_secs(1));
    let before_calls = rss_kib(proc.pid());
    for id in 1..=5 {
        proc.send(&format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{ECHO_PARAMS}}}"#));
        let line = proc.line();
        assert!(line.contains("hello"), "echo failed: {line}");
    }
    std::thread::sleep(Duration::from_secs(1));
    (before_calls, rss_kib(proc.pid()))
}

/// An HTTP server process and its address.
struct HttpServer {
    proc: Proc,
    addr: SocketAddr,
}

fn start_http(bench: &Bench, kind: Kind) -> HttpServer {
    let mut proc = spawn(bench, kind, &["--listen", "127.0.0.1:0"]);
    let addr = proc.line().trim().parse().expect("bench_server prints its address");
    HttpServer { proc, addr }
}

/// One MCP session over Streamable HTTP, raw JSON-RPC.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    next: u64,
}

impl Session {
    async fn open(addr: SocketAddr) -> Session {
        let http = reqwest::Client::builder().no_proxy().tcp_nodelay(true).build().expect("reqwest client");
        let url = format!("http://{addr}/mcp");
        let response = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(INITIALIZE)
            .send()
            .await
            .expect("initialize");
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("mcp-session-id header")
            .to_owned();
        let body = response.text().await.expect("initialize body");
        assert!(body.contains(r#""result""#), "initialize failed: {body}");
        let session = Session { http, url, id, next: 1 };
        let status = session.post(INITIALIZED.to_owned()).await.status();
        assert!(status.is_success(), "notifications/initialized: {status}");
        session
    }

    async fn post(&self, body: String) -> reqwest::Response {
        self.http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", PROTOCOL)
            .body(body)
            .send()
            .await
            .expect("POST")
    }

    /// Sends a request and returns the whole response body (an SSE stream ending after the result).
    async fn request(&mut self, method: &str, params: &str) -> bytes::Bytes {
        let id = self.next;
        self.next += 1;
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let response = self.post(body).await;
        assert!(response.status().is_success(), "{method}: {}", response.status());
        response.bytes().await.expect("response body")
    }

    async fn close(self) {
        let _ = self.http.delete(&self.url).header("mcp-session-id", &self.id).send().await;
    }
}

fn memfind(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Echo,
    Ping,
    List,
}

impl Op {
    /// One request: returns the round trip, from sending it to holding the whole body. The
    /// body is checked after the clock stops, so the driver's own scan is not counted.
    async fn once(self, session: &mut Session) -> Duration {
        let (method, params) = match self {
            Op::Echo => ("tools/call", ECHO_PARAMS),
            Op::Ping => ("ping", "{}"),
            Op::List => ("tools/list", "{}"),
        };
        let start = Instant::now();
        let body = session.request(method, params).await;
        let elapsed = start.elapsed();
        assert!(memfind(&body, br#""result""#), "{method} failed: {}", String::from_utf8_lossy(&body));
        match self {
            Op::Echo => assert!(memfind(&body, b"hello") && !memfind(&body, br#""isError":true"#)),
            Op::Ping => {}
            Op::List => assert!(memfind(&body, b"echo99") && memfind(&body, b"nextCursor")),
        }
        elapsed
    }
}

/// One measurement: requests/s, p50 and p99 latency (s), server CPU per request (s).
#[derive(Clone, Copy, Default)]
struct Figure {
    rate: f64,
    p50: f64,
    p99: f64,
    cpu: f64,
}

async fn measure(server: &HttpServer, op: Op, sessions: usize, secs: f64, ticks: f64) -> Figure {
    let mut open = Vec::new();
    for _ in 0..sessions {
        open.push(Session::open(server.addr).await);
    }
    futures::future::join_all(open.iter_mut().map(|s| async move {
        for _ in 0..50 {
            op.once(s).await; // warm up
        }
    }))
    .await;
    let pid = server.proc.pid();
    let cpu0 = cpu_secs(pid, ticks);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let per_session = futures::future::join_all(open.iter_mut().map(|s| async move {
        let mut latencies = Vec::with_capacity(16_384);
        while Instant::now() < deadline && latencies.len() < MAX_PER_SESSION {
            latencies.push(op.once(s).await.as_secs_f64());
        }
        latencies
    }))
    .await;
    let elapsed = start.elapsed().as_secs_f64();
    let cpu1 = cpu_secs(pid, ticks);
    for session in open {
        session.close().await;
    }
    let mut all: Vec<f64> = per_session.into_iter().flatten().collect();
    all.sort_by(f64::total_cmp);
    let n = all.len();
    Figure {
        rate: n as f64 / elapsed,
        p50: all[n / 2],
        p99: all[(n * 99 / 100).min(n - 1)],
        cpu: (cpu1 - cpu0) / n as f64,
    }
}

/// Idle RSS of an HTTP server after one session's initialize and 5 calls, then 1 s idle, in KiB.
async fn http_idle_rss(server: &HttpServer) -> f64 {
    let mut session = Session::open(server.addr).await;
    for _ in 0..5 {
        Op::Echo.once(&mut session).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = rss_kib(server.proc.pid());
    session.close().await;
    rss
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn percentile(mut values: Vec<f64>, p: usize) -> f64 {
    values.sort_by(f64::total_cmp);
    values[(values.len() * p / 100).min(values.len() - 1)]
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A printed row: charly, bare doing the same work, bare checking nothing; charly's ratio to
/// each; and the budget verdict (against the same-work server) when there is one.
fn row(label: &str, unit: &str, [charly, same, bare]: [f64; 3], budget: Option<(&str, bool)>) {
    let verdict = match budget {
        Some((text, ok)) => format!("{text:<14} {}", if ok { "met" } else { "MISSED" }),
        None => String::new(),
    };
    println!(
        "{label:<46} {charly:>9.1} {same:>9.1} {bare:>9.1} {unit:<6} {:>6.2} {:>6.2}  {verdict}",
        charly / same,
        charly / bare
    );
}

fn main() {
    let args = parse_args();
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let pinned = std::env::var_os("CHARLY_BENCH_PINNED").is_some();
    let pin = args.pin && (pinned || (cores >= 2 && Command::new("taskset").arg("-V").output().is_ok()));
    if pin {
        pin_self(&args);
    }
    let exe = std::env::current_exe().expect("current_exe");
    let server = exe.with_file_name("bench_server");
    assert!(
        server.exists(),
        "{} is missing: build it with `cargo build --release -p charly-mcp --example bench_server`",
        server.display()
    );
    let bench = Bench { server, pin, cli: args.cli };
    let ticks = clock_ticks();
    let same = if args.cli { "bare + clap" } else { "bare + jsonschema" };
    println!(
        "charly ({}) vs bare rmcp 3.11 doing the same work ({same}) and bare checking nothing | load average at start: {} | {}",
        if args.cli { "CLI leaves, derive + clap, in-process" } else { "hand-written tools, jsonschema" },
        load_average(),
        if pin { "driver on core 0, each server on core 1" } else { "unpinned" }
    );
    println!(
        "{:<46} {:>9} {:>9} {:>9} {:<6} {:>6} {:>6}  budget (vs same work)",
        "figure", "charly", "same", "bare", "unit", "/same", "/bare"
    );

    // stdio cold start, interleaved, after one warm-up run each (page cache).
    let mut cold = [Vec::new(), Vec::new(), Vec::new()];
    for kind in KINDS {
        cold_start(&bench, kind);
    }
    for _ in 0..args.cold {
        for (i, kind) in KINDS.into_iter().enumerate() {
            cold[i].push(cold_start(&bench, kind));
        }
    }
    let p50 = cold.clone().map(|c| median(c) * 1e3);
    row("stdio cold start to initialize, p50", "ms", p50, Some(("<= 1.2x", p50[0] <= 1.2 * p50[1])));
    row("stdio cold start to initialize, p90", "ms", cold.map(|c| percentile(c, 90) * 1e3), None);

    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    runtime.block_on(async {
        let servers = KINDS.map(|kind| start_http(&bench, kind));
        let mut http_rss = [0.0; 3];
        for (rss, server) in http_rss.iter_mut().zip(&servers) {
            *rss = http_idle_rss(server).await;
        }

        let figures = [
            ("tools/call echo, 1 session", Op::Echo, 1),
            ("tools/call echo, 16 sessions", Op::Echo, 16),
            ("ping, 1 session", Op::Ping, 1),
            ("tools/list (100 of 200), 1 session", Op::List, 1),
        ];
        // results[figure][server] = one Figure per round
        let mut results = vec![[Vec::new(), Vec::new(), Vec::new()]; figures.len()];
        for _ in 0..args.rounds {
            for (i, &(_, op, sessions)) in figures.iter().enumerate() {
                for (k, server) in servers.iter().enumerate() {
                    results[i][k].push(measure(server, op, sessions, args.secs, ticks).await);
                }
            }
        }
        let med = |runs: &[Vec<Figure>; 3], f: fn(&Figure) -> f64, scale: f64| {
            [0, 1, 2].map(|k| median(runs[k].iter().map(f).collect()) * scale)
        };
        let mut p50 = [[0.0; 3]; 4];
        for (i, &(label, op, _)) in figures.iter().enumerate() {
            let runs = &results[i];
            let (rate, cpu) = (med(runs, |f| f.rate, 1.0), med(runs, |f| f.cpu, 1e6));
            p50[i] = med(runs, |f| f.p50, 1e6);
            let budget = |ok| (op == Op::Echo).then_some(("within 10%", ok));
            row(&format!("{label}: req/s"), "req/s", rate, budget(rate[0] >= 0.9 * rate[1]));
            row(&format!("{label}: p50"), "us", p50[i], None);
            row(&format!("{label}: p99"), "us", med(runs, |f| f.p99, 1e6), None);
            row(&format!("{label}: server CPU/req"), "us", cpu, budget(cpu[0] <= 1.1 * cpu[1]));
        }
        let list = [0, 1, 2].map(|k| p50[3][k] / p50[2][k]);
        println!(
            "{:<46} {:>9.2} {:>9.2} {:>9.2} {:<6} {:>6} {:>6}  {:<14} {}",
            "tools/list p50 / ping p50 (same server)",
            list[0],
            list[1],
            list[2],
            "x",
            "",
            "",
            "<= 1.2x ping",
            if list[0] <= 1.2 { "met" } else { "MISSED" }
        );
        let stdio = KINDS.map(|kind| stdio_idle_rss(&bench, kind));
        row("idle RSS, stdio, before any call (info)", "MiB", stdio.map(|r| r.0 / 1024.0), None);
        for (label, rss) in
            [("idle RSS, stdio server", stdio.map(|r| r.1)), ("idle RSS, HTTP server", http_rss)]
        {
            let rss = rss.map(|r| r / 1024.0);
            row(label, "MiB", rss, Some(("<= 1.2x", rss[0] <= 1.2 * rss[1])));
        }
    });
    println!(
        "load average at end: {} | {} s per figure, {} rounds (median shown), {} cold starts each",
        load_average(),
        args.secs,
        args.rounds,
        args.cold
    );
}
