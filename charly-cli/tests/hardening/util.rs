//! The harness: a project with a directory that flips to a symlink leading out, and the real
//! `charly mcp serve` over stdio (JSON lines on pipes) or Streamable HTTP on a free 127.0.0.1
//! port, stopped by pid when the test ends.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use charly_cli::project::Project;
use serde_json::{Value, json};

/// The binary under test.
pub(crate) const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// What the flipping directory's file holds inside the project.
pub(crate) const INSIDE: &str = "inside\n";
/// What the same file holds in the directory outside the project that the symlink leads to.
pub(crate) const OUTSIDE: &str = "OUTSIDE-SECRET\n";

/// A sample project whose `<dir>/<file>` holds [`INSIDE`], a symlink `spare` at the root to a
/// directory outside the root whose `<file>` holds [`OUTSIDE`], and that outside directory.
pub(crate) struct Flippable {
    /// The project's directory.
    pub(crate) dir: tempfile::TempDir,
    /// The directory outside the root.
    pub(crate) outside: tempfile::TempDir,
    /// The project.
    pub(crate) project: Project,
    /// The directory that flips, relative to the root.
    flips: PathBuf,
    /// The file in it.
    file: String,
}

impl Flippable {
    pub(crate) fn new(dir: &str, file: &str) -> Flippable {
        let root = tempfile::tempdir().unwrap();
        charly_cli::project::write_sample(root.path()).unwrap();
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
        std::fs::write(root.path().join(dir).join(file), INSIDE).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join(file), OUTSIDE).unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("spare")).unwrap();
        let project = Project::at(root.path());
        Flippable { dir: root, outside, project, flips: dir.into(), file: file.into() }
    }

    pub(crate) fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Starts a thread that exchanges the flipping directory and `spare`
    /// (`renameat2(RENAME_EXCHANGE)`, atomic) `flips` times, sleeping `pause` after each, then
    /// sets the returned flag. The directory is a real one after an even number of flips and the
    /// symlink leading out after an odd one.
    pub(crate) fn flip(
        &self,
        flips: usize,
        pause: Duration,
    ) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
        let done = Arc::new(AtomicBool::new(false));
        let root = std::fs::File::open(self.root()).unwrap();
        let (flag, at) = (Arc::clone(&done), self.flips.clone());
        let handle = std::thread::spawn(move || {
            for i in 0..flips {
                rustix::fs::renameat_with(&root, &at, &root, "spare", rustix::fs::RenameFlags::EXCHANGE)
                    .unwrap_or_else(|e| panic!("flip {i}: {e}"));
                if !pause.is_zero() {
                    std::thread::sleep(pause);
                } else if i % 61 == 0 {
                    // Let the others run, as often after an even count as after an odd one.
                    std::thread::yield_now();
                }
            }
            flag.store(true, Ordering::SeqCst);
        });
        (done, handle)
    }

    /// Files outside the root other than the flipping file: writes that escaped.
    pub(crate) fn escaped_writes(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.outside.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().is_none_or(|n| *n != *self.file))
            .collect()
    }

    /// Asserts that nothing outside changed and nothing was added there.
    #[track_caller]
    pub(crate) fn assert_outside_untouched(&self) {
        assert!(
            self.escaped_writes().is_empty(),
            "writes landed outside the root: {:?}",
            self.escaped_writes()
        );
        assert_eq!(std::fs::read_to_string(self.outside.path().join(&self.file)).unwrap(), OUTSIDE);
    }
}

/// `charly -C <root>` with the caller's `CHARLY_*` variables removed and HOME in `home`.
pub(crate) fn charly(root: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(CHARLY);
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("CHARLY_") {
            cmd.env_remove(&key);
        }
    }
    cmd.env("HOME", home)
        .env("CHARLY_REPO_CACHE", home.join("repos"))
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .arg("-C")
        .arg(root);
    cmd
}

/// Stops a child by its pid: SIGTERM, then SIGKILL after 5 s; reaps it. A child already reaped
/// is left alone (its pid may belong to another process by now).
fn stop(child: &mut Child) {
    if !matches!(child.try_wait(), Ok(None)) {
        return;
    }
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// `charly mcp serve` over Streamable HTTP on a free 127.0.0.1 port; stopped on drop.
pub(crate) struct HttpServer {
    child: Child,
    _home: tempfile::TempDir,
    /// `http://127.0.0.1:<port>/mcp`.
    pub(crate) url: String,
}

impl HttpServer {
    pub(crate) fn start(root: &Path) -> HttpServer {
        HttpServer::start_with(root, &[])
    }

    /// The same with more `charly mcp serve` flags (`--read-only`).
    pub(crate) fn start_with(root: &Path, flags: &[&str]) -> HttpServer {
        let home = tempfile::tempdir().unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = charly(root, home.path())
            .args(["mcp", "serve", "--listen", &format!("127.0.0.1:{port}")])
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file(home.path()))
            .spawn()
            .expect("start charly mcp serve");
        let mut server = HttpServer { child, _home: home, url: format!("http://127.0.0.1:{port}/mcp") };
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            assert!(server.child.try_wait().unwrap().is_none(), "charly mcp serve exited");
            assert!(Instant::now() < deadline, "nothing listening on {addr} after 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    /// What the server wrote to stderr so far (its log).
    pub(crate) fn log(&self) -> String {
        read_log(self._home.path())
    }
}

/// The file a server's stderr goes to, in its home.
fn log_file(home: &Path) -> std::fs::File {
    std::fs::File::create(home.join("stderr.log")).unwrap()
}

/// What a server whose home is `home` wrote to stderr so far.
fn read_log(home: &Path) -> String {
    String::from_utf8_lossy(&std::fs::read(home.join("stderr.log")).unwrap_or_default()).into_owned()
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        stop(&mut self.child);
    }
}

/// `charly mcp serve --stdio`, spoken to in JSON lines; stopped on drop.
pub(crate) struct StdioServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    _home: tempfile::TempDir,
}

impl StdioServer {
    /// Starts the server and completes the MCP handshake.
    pub(crate) fn start(root: &Path) -> StdioServer {
        StdioServer::start_with(root, &[])
    }

    /// The same with more `charly mcp serve` flags (`--read-only`).
    pub(crate) fn start_with(root: &Path, flags: &[&str]) -> StdioServer {
        let mut server = StdioServer::spawn(root, flags);
        server.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "hardening", "version": "0"}}}));
        server.response(0, Duration::from_secs(30));
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    /// Starts the server with `flags`, without the handshake.
    pub(crate) fn spawn(root: &Path, flags: &[&str]) -> StdioServer {
        let home = tempfile::tempdir().unwrap();
        let mut child = charly(root, home.path())
            .args(["mcp", "serve", "--stdio"])
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(log_file(home.path()))
            .spawn()
            .expect("start charly mcp serve --stdio");
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(value) = serde_json::from_str(&line)
                    && tx.send(value).is_err()
                {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        StdioServer { child, stdin, lines, _home: home }
    }

    /// What the server wrote to stderr so far (its log).
    pub(crate) fn log(&self) -> String {
        read_log(self._home.path())
    }

    /// The server's pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends one JSON-RPC message.
    pub(crate) fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        let mut line = serde_json::to_vec(message).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).unwrap();
        stdin.flush().unwrap();
    }

    /// Sends `bytes` and a newline, as they are.
    pub(crate) fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Every message the server writes until `quiet` passes without one.
    pub(crate) fn messages(&mut self, quiet: Duration) -> Vec<Value> {
        let mut messages = Vec::new();
        while let Ok(message) = self.lines.recv_timeout(quiet) {
            messages.push(message);
        }
        messages
    }

    /// Sends `tools/call` of `tool` with `arguments` as request `id`.
    pub(crate) fn call(&mut self, id: u64, tool: &str, arguments: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
    }

    /// The response to request `id`, within `timeout` (notifications and other responses are
    /// skipped); panics on timeout.
    pub(crate) fn response(&mut self, id: u64, timeout: Duration) -> Value {
        self.try_response(id, timeout)
            .unwrap_or_else(|| panic!("no response to request {id} within {timeout:?}"))
    }

    /// The response to request `id`, or `None` when none came within `timeout`.
    pub(crate) fn try_response(&mut self, id: u64, timeout: Duration) -> Option<Value> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.checked_duration_since(Instant::now())?;
            match self.lines.recv_timeout(left) {
                Ok(message) if message["id"] == json!(id) => return Some(message),
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }

    /// Kills the server with SIGKILL (by pid) and reaps it.
    pub(crate) fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        self.stdin.take();
        stop(&mut self.child);
    }
}

/// A tool result's text blocks, joined.
pub(crate) fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}
