//! Load driver: `check.cdp.eval` as an MCP tool call versus a bare WebSocket client's
//! `Runtime.evaluate`, against the same headless Chromium (issue 15's budget: the tool call at
//! most 1.5x the bare client).
//!
//! - **tool call**: charly's own server (`charly mcp serve`'s tools, in process) on Streamable
//!   HTTP at 127.0.0.1, one MCP session kept open, `tools/call check.cdp.eval` N times. Each
//!   call does what the leaf does: `GET /json`, open the tab's WebSocket, `Runtime.evaluate`,
//!   close.
//! - **bare, per call**: tokio-tungstenite opens the tab's WebSocket, sends
//!   `Runtime.evaluate`, reads the answer, closes: the same work without charly around it.
//! - **floor**: `tools/call version`, what any charly tool call costs before it does work.
//! - **bare, one socket**: `Runtime.evaluate` on a socket kept open (the floor; a stateless
//!   tool call cannot reach it).
//!
//! Usage: `cargo run -p charly-cli --example cdp_eval [--release]` (N=200 by default, `N=500`
//! to change; `CHROMIUM=/path` for another browser). Prints median / p90 / mean in ms per
//! path and the ratios.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use charly::client::{ConnectOptions, Endpoint, TransportKind, connect};
use charly::server::{HttpOptions, ToolNameStyle};
use futures_util::{SinkExt as _, StreamExt as _};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

fn stats(name: &str, mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    let median = ms[ms.len() / 2];
    let p90 = ms[(ms.len() * 9).div_ceil(10) - 1];
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    println!(
        "{name:<28} median {median:>7.3} ms   p90 {p90:>7.3} ms   mean {mean:>7.3} ms   (n={})",
        ms.len()
    );
    median
}

async fn bare_eval(
    ws: &mut tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    id: u64,
) -> Value {
    let msg = json!({"id": id, "method": "Runtime.evaluate", "params": {"expression": "6 * 7", "returnByValue": true}});
    ws.send(Message::text(msg.to_string())).await.unwrap();
    loop {
        if let Some(Ok(Message::Text(t))) = ws.next().await {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["id"] == id {
                return v;
            }
        }
    }
}

fn main() {
    charly::client::install_tls_provider();
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(200);
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let profile = tempfile::tempdir().unwrap();
    let mut command = Command::new(&chromium);
    command
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command.spawn().expect("chromium runs (scripts/runtimes.sh installs it)");
    let port_file = profile.path().join("DevToolsActivePort");
    let started = Instant::now();
    let port: u16 = loop {
        if let Some(p) =
            std::fs::read_to_string(&port_file).ok().and_then(|t| t.lines().next()?.trim().parse().ok())
        {
            break p;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "chromium wrote no DevToolsActivePort");
        std::thread::sleep(Duration::from_millis(50));
    };
    let cdp_url = format!("http://127.0.0.1:{port}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let tabs: Vec<Value> = loop {
            if let Ok(r) = http.get(format!("{cdp_url}/json")).send().await {
                break r.json().await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let tab = tabs.iter().find(|t| t["type"] == "page").expect("a page tab");
        let (id, ws_url) = (
            tab["id"].as_str().unwrap().to_owned(),
            tab["webSocketDebuggerUrl"].as_str().unwrap().to_owned(),
        );

        let project = tempfile::tempdir().unwrap();
        charly_cli::project::write_sample(project.path()).unwrap();
        let server = charly_cli::serve::server_with(project.path(), false, ToolNameStyle::Dotted).unwrap();
        let handle =
            server.serve_http(HttpOptions::default().listen("127.0.0.1:0".parse().unwrap())).await.unwrap();
        let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
        let client = connect(&endpoint, &ConnectOptions::default()).await.unwrap();
        let args = json!({"target": ".", "tab": id, "cdp_url": cdp_url, "expression": "6 * 7"});

        // Warm-up of every path.
        for _ in 0..10 {
            let r = client.call_tool("check.cdp.eval", args.as_object().cloned()).await.unwrap();
            assert_eq!(r.structured_content.unwrap()["text"], "42");
            let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
            bare_eval(&mut ws, 1).await;
            ws.close(None).await.ok();
        }
        let mut tool = Vec::with_capacity(n);
        let mut per_call = Vec::with_capacity(n);
        let mut socket = Vec::with_capacity(n);
        let mut floor = Vec::with_capacity(n);
        let (mut kept, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
        // Interleaved, so drift in the browser or the machine hits every path alike.
        for i in 0..n {
            let t = Instant::now();
            let r = client.call_tool("check.cdp.eval", args.as_object().cloned()).await.unwrap();
            tool.push(t.elapsed().as_secs_f64() * 1e3);
            assert_ne!(r.is_error, Some(true));

            let t = Instant::now();
            let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
            let v = bare_eval(&mut ws, 1).await;
            ws.close(None).await.ok();
            per_call.push(t.elapsed().as_secs_f64() * 1e3);
            assert_eq!(v["result"]["result"]["value"], 42);

            let t = Instant::now();
            bare_eval(&mut kept, i as u64 + 10).await;
            socket.push(t.elapsed().as_secs_f64() * 1e3);

            let t = Instant::now();
            client.call_tool("version", None).await.unwrap();
            floor.push(t.elapsed().as_secs_f64() * 1e3);
        }
        println!("check.cdp.eval round trip, {n} runs each, Chromium at {cdp_url}");
        let t = stats("tool call (MCP over HTTP)", tool);
        let b = stats("bare WebSocket, per call", per_call);
        let s = stats("bare WebSocket, one socket", socket);
        let f = stats("tool call floor (version)", floor);
        println!("tool call minus its floor: {:.3} ms (the CDP work inside charly)", t - f);
        println!("ratio tool call / bare per call: {:.2}x (budget 1.5x)", t / b);
        println!("ratio tool call / bare one socket: {:.2}x", t / s);
        client.close().await;
        handle.shutdown().await.unwrap();
    });
    let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", child.id())]).status();
    let _ = child.wait();
}
