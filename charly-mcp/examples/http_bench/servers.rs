//! The server processes the driver measures: spawning `bench_server`, pinned, and what is
//! read from `/proc` about them.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

const SERVER_CORE: &str = "1";
pub(crate) const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
pub(crate) const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
pub(crate) const ECHO_PARAMS: &str = r#"{"name":"echo7","arguments":{"text":"hello"}}"#;

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Charly,
    /// The bare server doing the same work as charly ([`Bench::same_work`]).
    SameWork,
    /// The bare server checking nothing.
    Bare,
}

/// `bench_server --cli-call-cost` on the server core: one in-process CLI call's cost in µs for
/// charly, bare + clap and bare, in column order.
pub(crate) fn cli_call_cost(bench: &Bench) -> [f64; 3] {
    let out =
        bench.server().arg("--cli-call-cost").stderr(Stdio::inherit()).output().expect("bench_server runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let ns: Vec<f64> = text.split_whitespace().filter_map(|n| n.parse().ok()).collect();
    assert!(ns.len() == 3, "bench_server --cli-call-cost printed {text:?}");
    [ns[0] / 1e3, ns[1] / 1e3, ns[2] / 1e3]
}

/// The servers in column order: charly, bare doing the same work, bare checking nothing.
pub(crate) const KINDS: [Kind; 3] = [Kind::Charly, Kind::SameWork, Kind::Bare];

pub(crate) struct Bench {
    pub(crate) server: std::path::PathBuf,
    pub(crate) pin: bool,
    /// The charly server serves CLI leaves (`--charly-cli`) rather than hand-written tools.
    pub(crate) cli: bool,
}

impl Bench {
    /// `bench_server`, under `taskset` on the server core when pinned.
    fn server(&self) -> Command {
        if self.pin {
            let mut cmd = Command::new("taskset");
            cmd.args(["-c", SERVER_CORE]).arg(&self.server);
            cmd
        } else {
            Command::new(&self.server)
        }
    }

    pub(crate) fn command(&self, kind: Kind, mode: &[&str]) -> Command {
        let mut cmd = self.server();
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
pub(crate) struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Proc {
    pub(crate) fn pid(&self) -> u32 {
        self.child.id() // `taskset` execs the server, so this is the server's pid
    }

    pub(crate) fn line(&mut self) -> String {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read server stdout");
        assert!(!line.is_empty(), "the server closed stdout");
        line
    }

    pub(crate) fn send(&mut self, line: &str) {
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

pub(crate) fn spawn(bench: &Bench, kind: Kind, mode: &[&str]) -> Proc {
    let mut child = bench.command(kind, mode).spawn().expect("spawn bench_server");
    let stdin = child.stdin.take();
    let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
    Proc { child, stdin, stdout }
}

/// Spawn to `initialize` response, in seconds.
pub(crate) fn cold_start(bench: &Bench, kind: Kind) -> f64 {
    let start = Instant::now();
    let mut proc = spawn(bench, kind, &["--stdio"]);
    proc.send(INITIALIZE);
    let line = proc.line();
    let elapsed = start.elapsed().as_secs_f64();
    assert!(line.contains(r#""result""#), "initialize failed: {line}");
    elapsed
}

pub(crate) fn rss_kib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/<pid>/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS line");
    line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("VmRSS value")
}

/// utime + stime of a process, in seconds.
pub(crate) fn cpu_secs(pid: u32, ticks_per_sec: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read /proc/<pid>/stat");
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    ticks as f64 / ticks_per_sec
}

pub(crate) fn clock_ticks() -> f64 {
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
pub(crate) fn stdio_idle_rss(bench: &Bench, kind: Kind) -> (f64, f64) {
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
pub(crate) struct HttpServer {
    pub(crate) proc: Proc,
    pub(crate) addr: SocketAddr,
}

pub(crate) fn start_http(bench: &Bench, kind: Kind) -> HttpServer {
    let mut proc = spawn(bench, kind, &["--listen", "127.0.0.1:0"]);
    let addr = proc.line().trim().parse().expect("bench_server prints its address");
    HttpServer { proc, addr }
}
