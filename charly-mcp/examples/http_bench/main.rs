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
//!   `--rounds` times, the servers alternating, each round on freshly started server
//!   processes; the median round value is shown.
//! - idle RSS: `VmRSS` after `initialize` and 5 calls, then 1 s idle, for a stdio and an HTTP
//!   server process.
//! - with `--cli`, for information: one `echo7` call timed in-process with no transport
//!   (`bench_server --cli-call-cost`), the CLI path's own share of a call.
//!
//! Budgets (issue 3): cold start within 1.2x of bare; call throughput and CPU per call within
//! 10% of bare; tools/list no slower than 1.2x a ping on the same server; idle RSS within 1.2x.

mod servers;
mod session;

use std::process::Command;

use servers::{Bench, KINDS, cli_call_cost, clock_ticks, cold_start, start_http, stdio_idle_rss};
use session::{Figure, Op, http_idle_rss, measure};

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
            other => panic!("unknown argument {other}; see the doc comment of examples/http_bench/main.rs"),
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
        let mut http_rss = [0.0; 3];
        for (rss, kind) in http_rss.iter_mut().zip(KINDS) {
            *rss = http_idle_rss(&start_http(&bench, kind)).await;
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
            // Fresh processes each round: two processes of the same code can differ by 10%
            // or more for their whole life (memory layout), which pairing one process per
            // server across all rounds would carry into every round.
            let servers = KINDS.map(|kind| start_http(&bench, kind));
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
    if args.cli {
        row("CLI call in-process, no transport (info)", "us", cli_call_cost(&bench), None);
    }
    println!(
        "load average at end: {} | {} s per figure, {} rounds (median shown), {} cold starts each",
        load_average(),
        args.secs,
        args.rounds,
        args.cold
    );
}
