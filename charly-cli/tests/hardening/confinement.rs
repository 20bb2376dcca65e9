use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use charly::client::{ConnectOptions, Endpoint, TransportKind};
use serde_json::{Value, json};

use crate::util::{Flippable, HttpServer, INSIDE, OUTSIDE};

/// How many times the in-process flipper swaps `d` with the symlink leading out (no pause).
const FLIPS: usize = 20_000;
/// Concurrent readers (and as many writers).
const READERS: usize = 8;

/// 8 threads `box.cat d/x` and 8 `box.write d/w<i>` while another flips `d` between a directory
/// and a symlink to a directory outside the root: a read returns the inside file or an error,
/// never the outside one, and no write lands outside.
#[test]
fn cat_and_write_stay_inside_while_a_directory_flips_to_a_symlink() {
    let f = Arc::new(Flippable::new("d", "x"));
    let (done, flipper) = f.flip(FLIPS, Duration::ZERO);
    let workers: Vec<_> = (0..READERS * 2)
        .map(|i| {
            let (f, done) = (Arc::clone(&f), Arc::clone(&done));
            std::thread::spawn(move || {
                let (mut inside, mut refused) = (0usize, 0usize);
                while !done.load(Ordering::SeqCst) {
                    let ok = if i < READERS {
                        f.project.cat(Path::new("d/x")).map(|text| {
                            assert_ne!(text.content, OUTSIDE, "box.cat read the file outside the root");
                            assert_eq!(text.content, INSIDE);
                        })
                    } else {
                        f.project.write(Path::new(&format!("d/w{i}")), "written\n").map(drop)
                    };
                    if ok.is_ok() { inside += 1 } else { refused += 1 }
                }
                (inside, refused)
            })
        })
        .collect();
    flipper.join().unwrap();
    let (mut inside, mut refused) = (0, 0);
    for w in workers {
        let (i, r) = w.join().unwrap();
        inside += i;
        refused += r;
    }
    f.assert_outside_untouched();
    // Both states were seen, or the race was not run at all.
    assert!(inside > 0 && refused > 0, "inside {inside}, refused {refused}");
    eprintln!("in-process: {FLIPS} flips: {inside} calls inside, {refused} refused");
}

/// The same over MCP: 8 sessions of `charly mcp serve` (Streamable HTTP) each `box.cat`,
/// `box.write` and `resources/read` a candy whose directory flips to a symlink leading out.
#[test]
fn sessions_of_charly_mcp_serve_stay_inside_while_a_directory_flips() {
    let f = Arc::new(Flippable::new("candy/flip", "charly.yml"));
    let server = HttpServer::start(f.root());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (inside, refused) = runtime.block_on(async {
        let endpoint = Endpoint::url(&server.url, TransportKind::StreamableHttp).unwrap();
        let options = ConnectOptions { timeout: Duration::from_secs(30), ..ConnectOptions::default() };
        let mut sessions = Vec::new();
        for _ in 0..READERS {
            sessions.push(charly::client::connect(&endpoint, &options).await.expect("connect"));
        }
        // Paced, so the sessions see both states many times (about 2 s in all).
        let (done, flipper) = f.flip(4_000, Duration::from_micros(300));
        let tasks: Vec<_> = sessions
            .into_iter()
            .enumerate()
            .map(|(i, client)| {
                let done = Arc::clone(&done);
                tokio::spawn(async move {
                    let (mut inside, mut refused) = (0usize, 0usize);
                    let cat = json!({"path": "candy/flip/charly.yml"}).as_object().cloned();
                    let write = json!({"path": format!("candy/flip/w{i}"), "content": "written\n"})
                        .as_object()
                        .cloned();
                    while !done.load(Ordering::SeqCst) {
                        let result = client.call_tool("box.cat", cat.clone()).await.expect("box.cat answers");
                        let result = serde_json::to_value(&result).unwrap();
                        assert!(
                            !result.to_string().contains(OUTSIDE.trim()),
                            "box.cat over MCP read outside: {result}"
                        );
                        if result["isError"] == Value::Bool(true) {
                            refused += 1;
                        } else {
                            assert_eq!(result["structuredContent"]["content"], INSIDE, "{result}");
                            inside += 1;
                        }
                        let result =
                            client.call_tool("box.write", write.clone()).await.expect("box.write answers");
                        if result.is_error == Some(true) {
                            refused += 1
                        } else {
                            inside += 1
                        }
                        match client.read_resource("charly://project/candy/flip/charly.yml").await {
                            Ok(read) => {
                                let read = serde_json::to_value(&read).unwrap();
                                assert!(
                                    !read.to_string().contains(OUTSIDE.trim()),
                                    "a resource read outside: {read}"
                                );
                                assert_eq!(read["contents"][0]["text"], INSIDE, "{read}");
                                inside += 1;
                            }
                            Err(_) => refused += 1,
                        }
                    }
                    client.close().await;
                    (inside, refused)
                })
            })
            .collect();
        let mut totals = (0, 0);
        for task in tasks {
            let (i, r) = task.await.unwrap();
            totals = (totals.0 + i, totals.1 + r);
        }
        flipper.join().unwrap();
        totals
    });
    drop(server);
    f.assert_outside_untouched();
    assert!(inside > 0 && refused > 0, "inside {inside}, refused {refused}");
    eprintln!("over MCP: 4000 flips: {inside} calls inside, {refused} refused");
}
