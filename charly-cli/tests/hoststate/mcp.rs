//! `charly mcp serve` in a test home, for the leaves called as tools.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Stdio as Pipe};
use std::time::{Duration, Instant};

use crate::util::Home;

/// A server for the home's project directory on a free 127.0.0.1 port, with the home's
/// environment; killed on drop.
pub(crate) struct Server {
    child: Child,
    /// `http://127.0.0.1:<port>/mcp`.
    pub(crate) url: String,
}

impl Server {
    pub(crate) fn start(home: &Home) -> Server {
        Server::start_with(home, &[])
    }

    /// [`Server::start`] with more `mcp serve` arguments.
    pub(crate) fn start_with(home: &Home, args: &[&str]) -> Server {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = home
            .charly()
            .arg("-C")
            .arg(home.proj())
            .args(["mcp", "serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(args)
            .stdout(Pipe::null())
            .stderr(Pipe::null())
            .spawn()
            .expect("start charly mcp serve");
        let mut server = Server { child, url: format!("http://127.0.0.1:{port}/mcp") };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(server.child.try_wait().unwrap().is_none(), "charly mcp serve exited");
            assert!(Instant::now() < deadline, "charly mcp serve did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `charly mcp serve --stdio` for the home, its stderr captured: JSON-RPC one line at a time.
pub(crate) struct Stdio {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl Stdio {
    /// Started with `env` on top of the home's environment, and initialized.
    pub(crate) fn start(home: &Home, env: &[(&str, &str)]) -> Stdio {
        let mut cmd = home.charly();
        cmd.arg("-C").arg(home.proj()).args(["mcp", "serve", "--stdio"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .stdin(Pipe::piped())
            .stdout(Pipe::piped())
            .stderr(Pipe::piped())
            .spawn()
            .expect("start charly mcp serve --stdio");
        let stdin = child.stdin.take();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut server = Stdio { child, stdin, stdout };
        server.request(
            0,
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "hoststate", "version": "0"}}),
        );
        server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &serde_json::Value) {
        use std::io::Write as _;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and waits for its response.
    pub(crate) fn request(&mut self, id: u64, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::BufRead as _;
        self.send(&serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// `tools/call`; the result.
    pub(crate) fn call(&mut self, id: u64, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
        let response =
            self.request(id, "tools/call", serde_json::json!({"name": tool, "arguments": arguments}));
        response["result"].clone()
    }

    /// Closes stdin, waits for the server to stop; its stderr.
    pub(crate) fn finish(mut self) -> String {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    }
}
