//! `charly mcp serve` in a test home, for the leaves called as tools.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Stdio};
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
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = home
            .charly()
            .arg("-C")
            .arg(home.proj())
            .args(["mcp", "serve", "--listen", &format!("127.0.0.1:{port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
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
