//! Test support: the pinned `@modelcontextprotocol/server-everything@2025.12.18` peer,
//! started on 127.0.0.1 (stdio, Streamable HTTP, legacy SSE) and killed on drop.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use charly::client::{ChildStderr, ConnectOptions, Endpoint, StdioCommand, TransportKind};
use charly::server::rmcp::model::JsonObject;

pub(crate) const EVERYTHING_VERSION: &str = "2025.12.18";

/// `CHARLY_PEERS`, or `<repo>/.peers`.
pub(crate) fn peers_dir() -> PathBuf {
    match std::env::var_os("CHARLY_PEERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(".peers"),
    }
}

/// server-everything's entry point; panics with the fix when it is not installed.
pub(crate) fn everything_entry() -> PathBuf {
    everything_entry_in(&peers_dir())
}

/// server-everything's entry point under `peers`; panics saying to run scripts/peers.sh.
pub(crate) fn everything_entry_in(peers: &Path) -> PathBuf {
    let pkg = peers.join("node/node_modules/@modelcontextprotocol/server-everything");
    let manifest = std::fs::read_to_string(pkg.join("package.json")).unwrap_or_else(|_| {
        panic!(
            "server-everything is not installed in {}: run `bash scripts/peers.sh` first \
             (or set CHARLY_PEERS to a directory it filled)",
            peers.display()
        )
    });
    assert!(
        manifest.contains(&format!("\"version\": \"{EVERYTHING_VERSION}\"")),
        "server-everything in {} is not version {EVERYTHING_VERSION}: run `bash scripts/peers.sh`",
        pkg.display()
    );
    pkg.join("dist/index.js")
}

#[test]
fn a_missing_peer_says_how_to_install_it() {
    let empty = std::env::temp_dir().join(format!("charly-no-peers-{}", std::process::id()));
    let panic = std::panic::catch_unwind(|| everything_entry_in(&empty)).unwrap_err();
    let message = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("run `bash scripts/peers.sh` first"), "{message}");
}

/// The Node that runs server-everything: `CHARLY_NODE`, else `node` on PATH.
pub(crate) fn node() -> String {
    std::env::var("CHARLY_NODE").unwrap_or_else(|_| "node".to_owned())
}

fn force_loopback() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/force-loopback.cjs")
}

/// A stdio endpoint that starts server-everything as a child (the client kills it).
pub(crate) fn stdio_endpoint() -> Endpoint {
    Endpoint::stdio(StdioCommand {
        command: node(),
        args: vec![everything_entry().display().to_string(), "stdio".into()],
        env: vec![("NODE_OPTIONS".into(), format!("--require {}", force_loopback().display()))],
        cwd: None,
    })
}

/// A server-everything HTTP server (`streamableHttp` or `sse`) on a free loopback port.
#[derive(Debug)]
pub(crate) struct NodeServer {
    child: Child,
    pub(crate) port: u16,
    pub(crate) kind: TransportKind,
}

impl NodeServer {
    pub(crate) fn start(kind: TransportKind) -> NodeServer {
        let entry = everything_entry();
        let mode = match kind {
            TransportKind::StreamableHttp => "streamableHttp",
            TransportKind::Sse => "sse",
            other => panic!("not an HTTP transport: {other}"),
        };
        let port = free_port();
        let child = Command::new(node())
            .arg(&entry)
            .arg(mode)
            .env("PORT", port.to_string())
            .env("NODE_OPTIONS", format!("--require {}", force_loopback().display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {} {}: {e}", node(), entry.display()));
        let server = NodeServer { child, port, kind };
        server.wait_ready();
        server
    }

    fn wait_ready(&self) {
        let addr = SocketAddr::from(([127, 0, 0, 1], self.port));
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("server-everything ({}) did not listen on {addr} within 20s", self.kind);
    }

    /// `http://127.0.0.1:<port>/mcp` or `/sse`.
    pub(crate) fn url(&self) -> String {
        let path = if self.kind == TransportKind::Sse { "sse" } else { "mcp" };
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    pub(crate) fn endpoint(&self) -> Endpoint {
        Endpoint::url(&self.url(), self.kind).unwrap()
    }
}

impl Drop for NodeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().unwrap().port()
}

/// A running peer for one transport: the HTTP server is kept alive as long as this is.
pub(crate) struct Peer {
    pub(crate) endpoint: Endpoint,
    _server: Option<NodeServer>,
}

impl Peer {
    pub(crate) fn start(kind: TransportKind) -> Peer {
        match kind {
            TransportKind::Stdio => Peer { endpoint: stdio_endpoint(), _server: None },
            _ => {
                let server = NodeServer::start(kind);
                Peer { endpoint: server.endpoint(), _server: Some(server) }
            }
        }
    }
}

pub(crate) const TRANSPORTS: [TransportKind; 3] =
    [TransportKind::Stdio, TransportKind::StreamableHttp, TransportKind::Sse];

/// Options with a quiet stdio child and the given timeout.
pub(crate) fn options(timeout: Duration) -> ConnectOptions {
    ConnectOptions { timeout, child_stderr: ChildStderr::Discard, ..Default::default() }
}

/// `--input JSON` as `charly check mcp call` parses it.
pub(crate) fn input(json: &str) -> Option<JsonObject> {
    charly_cli::probe::parse_input(Some(json)).expect("a JSON object")
}
