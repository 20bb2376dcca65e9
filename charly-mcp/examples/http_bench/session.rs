//! One MCP session over Streamable HTTP, speaking raw JSON-RPC, and the timed loops run on it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::servers::{ECHO_PARAMS, HttpServer, INITIALIZE, INITIALIZED, cpu_secs, rss_kib};

pub(crate) const PROTOCOL: &str = "2025-06-18";
pub(crate) const MAX_PER_SESSION: usize = 100_000;

pub(crate) struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    next: u64,
}

impl Session {
    pub(crate) async fn open(addr: SocketAddr) -> Session {
        charly_mcp::client::install_tls_provider();
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

    pub(crate) async fn post(&self, body: String) -> reqwest::Response {
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
    pub(crate) async fn request(&mut self, method: &str, params: &str) -> bytes::Bytes {
        let id = self.next;
        self.next += 1;
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        let response = self.post(body).await;
        assert!(response.status().is_success(), "{method}: {}", response.status());
        response.bytes().await.expect("response body")
    }

    pub(crate) async fn close(self) {
        let _ = self.http.delete(&self.url).header("mcp-session-id", &self.id).send().await;
    }
}

pub(crate) fn memfind(hay: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(hay, needle).is_some()
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Echo,
    Ping,
    List,
}

impl Op {
    /// One request: returns the round trip, from sending it to holding the whole body. The
    /// body is checked after the clock stops, so the driver's own scan is not counted.
    pub(crate) async fn once(self, session: &mut Session) -> Duration {
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
pub(crate) struct Figure {
    pub(crate) rate: f64,
    pub(crate) p50: f64,
    pub(crate) p99: f64,
    pub(crate) cpu: f64,
}

pub(crate) async fn measure(server: &HttpServer, op: Op, sessions: usize, secs: f64, ticks: f64) -> Figure {
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
pub(crate) async fn http_idle_rss(server: &HttpServer) -> f64 {
    let mut session = Session::open(server.addr).await;
    for _ in 0..5 {
        Op::Echo.once(&mut session).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss = rss_kib(server.proc.pid());
    session.close().await;
    rss
}
