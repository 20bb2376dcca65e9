//! A bounded load driver for stateless Streamable HTTP endpoints: `tools/call` of one tool
//! from `--workers` concurrent clients for `--secs` seconds against each `--url` in turn,
//! `--rounds` times (the URLs alternating, so a machine's changing load falls on all of them),
//! printing calls/s and p50/p99 latency per URL and round, then the median round per URL. Used by `scripts/bench-nginx.sh` (replicas
//! of `charly mcp serve --stateless` behind nginx, next to one replica alone).
//!
//! Each worker has its own connection pool and sends raw JSON-RPC POSTs without a session
//! (stateless servers need none), so the driver's own cost stays small; a call counts only
//! when its answer holds a `result` without `"isError":true`. Every loop is bounded: `--secs`
//! per URL and at most 200,000 calls per worker. Loopback URLs only.
//!
//! ```sh
//! cargo run --release -p charly-mcp --example lb_bench -- \
//!     --url http://127.0.0.1:8080/mcp --url http://127.0.0.1:18765/mcp --secs 5 --workers 8
//! ```

use std::time::{Duration, Instant};

const MAX_PER_WORKER: usize = 200_000;
const PROTOCOL: &str = "2025-11-25";

struct Args {
    urls: Vec<String>,
    secs: f64,
    workers: usize,
    tool: String,
    warmup: usize,
    rounds: usize,
}

fn args() -> Args {
    let mut args =
        Args { urls: Vec::new(), secs: 5.0, workers: 8, tool: "version".to_owned(), warmup: 50, rounds: 3 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => args.urls.push(value()),
            "--secs" => args.secs = value().parse().expect("--secs: a number of seconds"),
            "--workers" => args.workers = value().parse().expect("--workers: a count"),
            "--tool" => args.tool = value(),
            "--warmup" => args.warmup = value().parse().expect("--warmup: calls per worker"),
            "--rounds" => args.rounds = value().parse().expect("--rounds: a count"),
            other => panic!(
                "unknown flag {other} (--url URL... --secs S --workers N --rounds N --tool NAME --warmup N)"
            ),
        }
    }
    assert!(!args.urls.is_empty(), "give at least one --url");
    for url in &args.urls {
        let host = url.strip_prefix("http://").and_then(|rest| rest.split(['/', ':']).next());
        assert!(matches!(host, Some("127.0.0.1" | "localhost")), "{url}: loopback URLs only");
    }
    args
}

/// One `tools/call`: its round trip, from sending to holding the whole body.
async fn call(http: &reqwest::Client, url: &str, body: &str) -> Duration {
    let start = Instant::now();
    let response = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", PROTOCOL)
        .body(body.to_owned())
        .send()
        .await
        .expect("POST");
    let status = response.status();
    let bytes = response.bytes().await.expect("response body");
    let elapsed = start.elapsed();
    let found = |needle: &[u8]| memchr::memmem::find(&bytes, needle).is_some();
    assert!(
        status.is_success() && found(br#""result""#) && !found(br#""isError":true"#),
        "{url}: {status} {}",
        String::from_utf8_lossy(&bytes)
    );
    elapsed
}

async fn measure(url: &str, args: &Args) -> (f64, f64, f64, usize) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{}","arguments":{{}}}}}}"#,
        args.tool
    );
    charly_mcp::client::install_tls_provider();
    let clients: Vec<reqwest::Client> = (0..args.workers)
        .map(|_| reqwest::Client::builder().no_proxy().tcp_nodelay(true).build().expect("reqwest client"))
        .collect();
    futures::future::join_all(clients.iter().map(|http| async {
        for _ in 0..args.warmup {
            call(http, url, &body).await;
        }
    }))
    .await;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(args.secs);
    let per_worker = futures::future::join_all(clients.iter().map(|http| async {
        let mut latencies = Vec::with_capacity(16_384);
        while Instant::now() < deadline && latencies.len() < MAX_PER_WORKER {
            latencies.push(call(http, url, &body).await.as_secs_f64());
        }
        latencies
    }))
    .await;
    let elapsed = start.elapsed().as_secs_f64();
    let mut all: Vec<f64> = per_worker.into_iter().flatten().collect();
    all.sort_by(f64::total_cmp);
    let n = all.len();
    assert!(n > 0, "{url}: no call finished");
    (n as f64 / elapsed, all[n / 2], all[(n * 99 / 100).min(n - 1)], n)
}

#[tokio::main]
async fn main() {
    let args = args();
    let load = || {
        let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
        text.split(' ').take(3).collect::<Vec<_>>().join(" ")
    };
    println!(
        "tools/call {:?}, {} workers, {} s per URL and round, {} rounds, load average {}",
        args.tool,
        args.workers,
        args.secs,
        args.rounds,
        load()
    );
    println!("{:<6} {:<32} {:>9} {:>8} {:>8} {:>8}", "round", "url", "calls/s", "p50 ms", "p99 ms", "calls");
    let mut figures: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); args.urls.len()];
    for round in 1..=args.rounds.max(1) {
        for (url, figures) in args.urls.iter().zip(&mut figures) {
            let (rate, p50, p99, n) = measure(url, &args).await;
            println!("{round:<6} {url:<32} {rate:>9.0} {:>8.2} {:>8.2} {n:>8}", p50 * 1e3, p99 * 1e3);
            figures.push((rate, p50, p99));
        }
    }
    println!("median round (by calls/s), load average {}:", load());
    for (url, mut figures) in args.urls.iter().zip(figures) {
        figures.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (rate, p50, p99) = figures[figures.len() / 2];
        println!("{:<6} {url:<32} {rate:>9.0} {:>8.2} {:>8.2}", "median", p50 * 1e3, p99 * 1e3);
    }
}
