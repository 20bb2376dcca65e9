//! Calls in one session run in parallel: no global lock, no shared stdout.

mod common;

use std::time::{Duration, Instant};

use common::{call, connect, server, text};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sleeping_calls_in_one_session_overlap() {
    let pair = connect(&server()).await;
    let started = Instant::now();
    let calls = (0..20).map(|_| call(&pair.client, "sleep", json!({"ms": 200})));
    let results = futures::future::join_all(calls).await;
    let elapsed = started.elapsed();
    for result in results {
        assert_eq!(text(&result.unwrap()), "slept 200 ms\n");
    }
    // Serially this is 20 x 200 ms = 4 s; in parallel a little over 200 ms.
    assert!(elapsed < Duration::from_millis(1500), "20 calls took {elapsed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_outputs_never_mix() {
    let pair = connect(&server()).await;
    let calls =
        (0..20).map(|i| call(&pair.client, "echo", json!({"text": format!("call-{i}"), "times": 50})));
    let results = futures::future::join_all(calls).await;
    for (i, result) in results.into_iter().enumerate() {
        assert_eq!(text(&result.unwrap()), format!("call-{i}\n").repeat(50));
    }
}
