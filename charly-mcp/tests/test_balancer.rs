//! charly's client through a real nginx (the repository's `deploy/nginx/charly.conf.template`)
//! in front of three stateful replicas whose session ids name them
//! (`HttpOptions::session_id_prefix`): when the replica holding the client's session stops,
//! the client's next request gets 404 from a backup replica, and the client (rmcp's
//! transport, `reinit_on_expired_session`, on by default) starts a new session once and
//! retries, so the call succeeds.
//!
//! nginx runs from a temporary prefix on a free loopback port and is stopped by pid.

mod common;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use charly_mcp::client::{ConnectOptions, Endpoint, Protocol, TransportKind, connect};
use common::http::loopback;

const TEMPLATE: &str = include_str!("../../deploy/nginx/charly.conf.template");

/// nginx, stopped (SIGTERM to its pid, then reaped) on drop.
struct Nginx {
    child: Child,
    /// nginx's prefix (config, logs, temp files), removed on drop.
    prefix: PathBuf,
    addr: SocketAddr,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM: nginx's fast shutdown; `Child::kill` would send SIGKILL and leave workers.
        let _ = Command::new("kill").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.prefix);
    }
}

impl Nginx {
    fn access_log(&self) -> String {
        std::fs::read_to_string(self.prefix.join("logs/access.log")).unwrap_or_default()
    }
}

fn nginx_bin() -> PathBuf {
    ["/usr/sbin/nginx", "/usr/bin/nginx"].iter().map(PathBuf::from).find(|p| p.exists()).unwrap_or_else(
        || panic!("nginx is missing: run scripts/runtimes.sh as root (apt-get install nginx)"),
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start_nginx(replicas: &[SocketAddr]) -> Nginx {
    let prefix =
        std::env::temp_dir().join(format!("charly-test-nginx-{}-{}", std::process::id(), free_port()));
    for dir in ["logs", "tmp"] {
        std::fs::create_dir_all(prefix.join(dir)).unwrap();
    }
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
    let mut conf = TEMPLATE.replace("@LISTEN@", &addr.to_string());
    for (i, replica) in replicas.iter().enumerate() {
        conf = conf.replace(&format!("@REPLICA_{i}@"), &replica.to_string());
    }
    let conf_path = prefix.join("charly.conf");
    std::fs::write(&conf_path, conf).unwrap();
    let child = Command::new(nginx_bin())
        .arg("-p")
        .arg(&prefix)
        .arg("-c")
        .arg(&conf_path)
        .args(["-g", "daemon off;"])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start nginx");
    let nginx = Nginx { child, prefix, addr };
    wait_for(nginx.addr, &nginx.prefix);
    nginx
}

fn wait_for(addr: SocketAddr, prefix: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(addr).is_err() {
        let log = std::fs::read_to_string(prefix.join("logs/error.log")).unwrap_or_default();
        assert!(Instant::now() < deadline, "nginx does not listen on {addr}: {log}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The session ids in nginx's access log, in order, and how many POSTs carried none (each
/// an `initialize`).
fn sessions_in(log: &str) -> (Vec<String>, usize) {
    let mut ids = Vec::new();
    let mut without = 0;
    for line in log.lines().filter(|l| l.contains("\"POST /mcp")) {
        match line.rsplit_once("session=").map(|(_, id)| id.trim()) {
            Some("-") | Some("") | None => without += 1,
            Some(id) if !ids.iter().any(|known| known == id) => ids.push(id.to_owned()),
            Some(_) => {}
        }
    }
    (ids, without)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_starts_a_new_session_once_when_its_replica_stops() {
    let mut replicas = Vec::new();
    for i in 0..3 {
        let options = loopback().session_id_prefix(format!("charly-{i}"));
        replicas.push(Some(common::server().serve_http(options).await.unwrap()));
    }
    let addrs: Vec<SocketAddr> = replicas.iter().flatten().map(|h| h.local_addr()).collect();
    let nginx = start_nginx(&addrs);
    let url = format!("http://{}/mcp", nginx.addr);
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();
    // Sessions are what this test is about: a 2025-11-25 client (a 2026-07-28 one has none).
    let options = ConnectOptions { protocol: Protocol::Initialize, ..ConnectOptions::default() };
    let client = connect(&endpoint, &options).await.unwrap();
    assert!(client.list_tools().await.unwrap().iter().any(|t| t.name == "echo"));

    let (ids, initializes) = sessions_in(&nginx.access_log());
    assert_eq!((ids.len(), initializes), (1, 1), "{}", nginx.access_log());
    let replica: usize =
        ids[0].strip_prefix("charly-").and_then(|r| r.split('.').next()).unwrap().parse().unwrap();
    replicas[replica].take().unwrap().shutdown().await.unwrap();

    let mut args = serde_json::Map::new();
    args.insert("text".into(), "after the replica stopped".into());
    let result = client.call_tool("echo", Some(args)).await.expect("the call after re-initializing");
    assert_eq!(common::text(&result), "after the replica stopped\n");

    let log = nginx.access_log();
    let (ids, initializes) = sessions_in(&log);
    assert_eq!(initializes, 2, "one new initialize: {log}");
    assert_eq!(ids.len(), 2, "{log}");
    assert!(
        !ids[1].starts_with(&format!("charly-{replica}.")),
        "the new session is on a live replica: {log}"
    );
    // The old session's request was answered 404 (by a backup replica), never 502.
    let old = log.lines().filter(|l| l.ends_with(&format!("session={}", ids[0])));
    assert!(old.clone().any(|l| l.contains("\" 404 ")), "{log}");
    assert!(!log.contains("\" 502 ") && !log.contains("\" 504 "), "{log}");

    client.close().await;
    for handle in replicas.into_iter().flatten() {
        handle.shutdown().await.unwrap();
    }
}
