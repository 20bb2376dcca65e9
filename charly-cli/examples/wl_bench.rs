//! Load driver: `check.wl.type` of 100 characters and `check.wl.screenshot` of a 1920×1080
//! output as MCP tool calls, against the same tools run bare with `podman exec` (issue 16's
//! budget: the tool call at most 1.3x the bare run).
//!
//! A container `charly-wl-bench` of localhost/charly-wayland (labelled as box `wl-bench`'s, as
//! `charly start` labels its containers) runs sway headless as uid 1000 at 1920×1080 with a
//! foot window; charly's own server (in process, Streamable HTTP on 127.0.0.1, one session)
//! serves the tools.
//!
//! - **tool call**: `tools/call check.wl.type {target: wl-bench, text}` /
//!   `check.wl.screenshot {target: wl-bench}` (the PNG comes back as image content).
//! - **bare**: `podman exec --user 1000:1000 --env ... charly-wl-bench wtype -s 50 -- TEXT` /
//!   `... grim -`: the same argv charly runs, without charly around it.
//!
//! Usage: `cargo run -p charly-cli --example wl_bench [--release]` (N=30 by default). Prints
//! median / p90 / mean in ms per path and the ratios; removes the container at the end.

use std::process::Command;
use std::time::{Duration, Instant};

use charly::client::{ConnectOptions, Endpoint, TransportKind, connect};
use charly::server::{HttpOptions, ToolNameStyle};
use serde_json::json;

const CONTAINER: &str = "charly-wl-bench";
const SWAY: &str = "mkdir -p /run/user/1000 /tmp/wl && chown 1000:1000 /run/user/1000 /tmp/wl && chmod 700 /run/user/1000 \
&& printf 'output HEADLESS-1 resolution 1920x1080\\n' > /tmp/sway.conf && exec setpriv --reuid 1000 --regid 1000 \
--clear-groups env HOME=/tmp/wl XDG_RUNTIME_DIR=/run/user/1000 WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 \
WLR_RENDERER=pixman sway -c /tmp/sway.conf";

fn stats(name: &str, mut ms: Vec<f64>) -> f64 {
    ms.sort_by(f64::total_cmp);
    let median = ms[ms.len() / 2];
    let p90 = ms[(ms.len() * 9).div_ceil(10) - 1];
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    println!(
        "{name:<26} median {median:>8.2} ms   p90 {p90:>8.2} ms   mean {mean:>8.2} ms   (n={})",
        ms.len()
    );
    median
}

fn podman(args: &[&str]) -> std::process::Output {
    Command::new("podman").args(args).output().expect("podman runs")
}

fn main() {
    let n: usize = std::env::var("N").ok().and_then(|v| v.parse().ok()).unwrap_or(30);
    let _ = podman(&["rm", "-f", "-t", "0", CONTAINER]);
    let run = podman(&[
        "run",
        "-d",
        "--name",
        CONTAINER,
        "--label",
        "ai.opencharly.box=wl-bench",
        "--label",
        "ai.opencharly.run={}",
        "localhost/charly-wayland:latest",
        "sh",
        "-c",
        SWAY,
    ]);
    assert!(run.status.success(), "podman run: {}", String::from_utf8_lossy(&run.stderr));
    let env = [
        "--user",
        "1000:1000",
        "--env",
        "XDG_RUNTIME_DIR=/run/user/1000",
        "--env",
        "WAYLAND_DISPLAY=wayland-1",
        "--env",
        "HOME=/tmp/wl",
    ];
    let exec = |argv: &[&str]| {
        let mut args = vec!["exec"];
        args.extend(env);
        args.push(CONTAINER);
        args.extend(argv);
        podman(&args)
    };
    let started = Instant::now();
    while !exec(&["test", "-S", "/run/user/1000/wayland-1"]).status.success() {
        assert!(started.elapsed() < Duration::from_secs(30), "sway did not start in the container");
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut detached = vec!["exec", "-d"];
    detached.extend(env);
    detached.extend([CONTAINER, "foot", "-a", "bench", "cat"]);
    podman(&detached);
    std::thread::sleep(Duration::from_secs(1));
    let text: String = "abcdefghij".repeat(10);

    let project = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(project.path()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (tool_type, tool_shot) = rt.block_on(async {
        let server = charly_cli::serve::server_with(project.path(), false, ToolNameStyle::Dotted).unwrap();
        let handle =
            server.serve_http(HttpOptions::default().listen("127.0.0.1:0".parse().unwrap())).await.unwrap();
        let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
        let client = connect(&endpoint, &ConnectOptions::default()).await.unwrap();
        let mut times = (Vec::new(), Vec::new());
        for i in 0..n + 1 {
            let t = Instant::now();
            let r = client
                .call_tool("check.wl.type", json!({"target": "wl-bench", "text": text}).as_object().cloned())
                .await
                .unwrap();
            assert_ne!(r.is_error, Some(true), "{r:?}");
            if i > 0 {
                times.0.push(t.elapsed().as_secs_f64() * 1e3);
            }
            let t = Instant::now();
            let r = client
                .call_tool("check.wl.screenshot", json!({"target": "wl-bench"}).as_object().cloned())
                .await
                .unwrap();
            assert_ne!(r.is_error, Some(true), "{r:?}");
            if i > 0 {
                times.1.push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        client.close().await;
        handle.shutdown().await.unwrap();
        times
    });
    let (mut bare_type, mut bare_shot) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let t = Instant::now();
        assert!(exec(&["wtype", "-s", "50", "--", &text]).status.success());
        bare_type.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let out = exec(&["grim", "-"]);
        assert!(out.status.success() && out.stdout.starts_with(b"\x89PNG"));
        bare_shot.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let _ = podman(&["rm", "-f", "-t", "0", CONTAINER]);
    let a = stats("check.wl.type tool call", tool_type);
    let b = stats("bare podman exec wtype", bare_type);
    println!("ratio (type)               {:.3}x", a / b);
    let c = stats("check.wl.screenshot call", tool_shot);
    let d = stats("bare podman exec grim", bare_shot);
    println!("ratio (screenshot)         {:.3}x", c / d);
}
