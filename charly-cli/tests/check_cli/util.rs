//! The harness: a temporary directory per test, the `charly` binary with a cleaned
//! environment, `charly mcp serve` on a free 127.0.0.1 port (killed on drop), a TCP
//! "black hole" that accepts and never answers, and what the JUnit tests read from XML.

use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// A test's directory: `home/` (HOME), `cache/repos` (CHARLY_REPO_CACHE) and `proj/`, the
/// project every command runs in. Removed on drop.
pub(crate) struct TestDir {
    dir: tempfile::TempDir,
}

impl TestDir {
    /// An empty project directory (no charly.yml).
    pub(crate) fn new() -> TestDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["home", "cache/repos", "proj"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        TestDir { dir }
    }

    /// The sample project (box `hello`, candy `hello-svc`), written by the library.
    pub(crate) fn sample() -> TestDir {
        let t = TestDir::new();
        charly_cli::project::write_sample(&t.proj()).expect("write the sample project");
        t
    }

    /// The project directory.
    pub(crate) fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    /// Writes `contents` to `relative` (under the project), creating directories.
    pub(crate) fn write(&self, relative: &str, contents: &str) {
        let path = self.proj().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    /// Reads a project file.
    pub(crate) fn read(&self, relative: &str) -> String {
        std::fs::read_to_string(self.proj().join(relative))
            .unwrap_or_else(|e| panic!("reading {relative}: {e}"))
    }

    /// `charly` in the project directory with a cleaned environment: no `CHARLY_*`
    /// variable from the caller, HOME and the repository cache inside the test directory,
    /// logs off, no colours.
    pub(crate) fn charly(&self) -> Command {
        let mut cmd = Command::new(CHARLY);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("CHARLY_") {
                cmd.env_remove(&key);
            }
        }
        // No caller's session bus, config or GnuPG home: the host-state leaves stay inside
        // the test's HOME.
        for key in ["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"] {
            cmd.env_remove(key);
        }
        cmd.env("GNUPGHOME", self.dir.path().join("home/.gnupg")).env("CHARLY_KDBX_CACHE", "false");
        cmd.env("HOME", self.dir.path().join("home"))
            .env("CHARLY_REPO_CACHE", self.dir.path().join("cache/repos"))
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .env_remove("RUST_BACKTRACE")
            .current_dir(self.proj())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `charly <args>` to completion.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.charly();
        cmd.args(args);
        Run::of(&mut cmd, args)
    }

    /// Starts `charly -C proj mcp serve` on a free 127.0.0.1 port.
    pub(crate) fn serve(&self) -> Server {
        Server::start(self, &[])
    }

    /// [`TestDir::serve`] with more `mcp serve` arguments.
    pub(crate) fn serve_with(&self, args: &[&str]) -> Server {
        Server::start(self, args)
    }

    /// The path of a file for a server's stderr.
    fn log_path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

/// A finished `charly` run.
pub(crate) struct Run {
    /// The command line, for failure messages.
    pub(crate) args: String,
    /// Exit status; `None` when killed by a signal.
    pub(crate) code: Option<i32>,
    /// stdout, as text.
    pub(crate) stdout: String,
    /// stderr, as text.
    pub(crate) stderr: String,
    /// Wall time.
    pub(crate) took: Duration,
}

impl Run {
    /// Runs `cmd` (whose arguments are `args`) to completion.
    pub(crate) fn of(cmd: &mut Command, args: &[&str]) -> Run {
        let started = Instant::now();
        let out: Output = cmd.output().expect("run charly");
        Run {
            args: args.join(" "),
            code: out.status.code(),
            stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
            took: started.elapsed(),
        }
    }

    /// Everything about the run, for a failure message.
    pub(crate) fn dump(&self) -> String {
        format!(
            "charly {}\nexit status: {:?} ({:?})\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args, self.code, self.took, self.stdout, self.stderr
        )
    }

    /// Asserts the exit status, and that nothing panicked.
    #[track_caller]
    pub(crate) fn status(&self, code: i32) -> &Run {
        assert_eq!(self.code, Some(code), "unexpected exit status\n{}", self.dump());
        assert!(!self.stderr.contains("panicked"), "a panic\n{}", self.dump());
        self
    }

    /// Asserts stdout, exactly.
    #[track_caller]
    pub(crate) fn stdout(&self, expected: &str) -> &Run {
        assert_eq!(self.stdout, expected, "unexpected stdout\n{}", self.dump());
        self
    }

    /// Asserts stderr, exactly.
    #[track_caller]
    pub(crate) fn stderr(&self, expected: &str) -> &Run {
        assert_eq!(self.stderr, expected, "unexpected stderr\n{}", self.dump());
        self
    }

    /// stdout with each check's wall time (`(8ms)`, `(1.001s, 3 attempts)`) replaced by
    /// `(T)` / `(T, 3 attempts)`, so report lines compare exactly.
    pub(crate) fn report(&self) -> String {
        let mut text = String::new();
        for line in self.stdout.lines() {
            writeln!(text, "{}", mask_duration(line)).unwrap();
        }
        text
    }

    /// stdout parsed as JSON.
    #[track_caller]
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.dump()))
    }
}

/// `PASS name: text (8ms)` → `PASS name: text (T)`; other lines unchanged.
fn mask_duration(line: &str) -> String {
    if !(line.starts_with("PASS ") || line.starts_with("FAIL ")) || !line.ends_with(')') {
        return line.to_owned();
    }
    let Some(open) = line.rfind(" (") else { return line.to_owned() };
    let inner = &line[open + 2..line.len() - 1];
    let (took, rest) = inner.split_once(", ").map_or((inner, None), |(a, b)| (a, Some(b)));
    let is_duration = took
        .strip_suffix("ms")
        .or_else(|| took.strip_suffix('s'))
        .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if !is_duration {
        return line.to_owned();
    }
    match rest {
        Some(rest) => format!("{} (T, {rest})", &line[..open]),
        None => format!("{} (T)", &line[..open]),
    }
}

/// A port on 127.0.0.1 that nothing listens on (bound, then released).
pub(crate) fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `charly mcp serve` over Streamable HTTP on 127.0.0.1; killed (and reaped) on drop.
pub(crate) struct Server {
    child: Child,
    log: PathBuf,
    /// `http://127.0.0.1:<port>/mcp`.
    pub(crate) url: String,
}

impl Server {
    fn start(dir: &TestDir, args: &[&str]) -> Server {
        // The port is free when chosen; another process could take it before the server
        // binds, so a server that exits early is retried on a fresh port.
        let mut last = String::new();
        for attempt in 0..3 {
            let port = closed_port();
            let log = dir.log_path(&format!("serve-{port}-{attempt}.log"));
            let child = dir
                .charly()
                .args(["-C"])
                .arg(dir.proj())
                .args(["mcp", "serve", "--listen", &format!("127.0.0.1:{port}")])
                .args(args)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).unwrap())
                .spawn()
                .expect("start charly mcp serve");
            let mut server = Server { child, log, url: format!("http://127.0.0.1:{port}/mcp") };
            match server.wait_for(port) {
                Ok(()) => return server,
                Err(why) => last = why,
            }
        }
        panic!("charly mcp serve did not start: {last}");
    }

    fn wait_for(&mut self, port: u16) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(format!("exited with {status}: {}", self.log()));
            }
            if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok() {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!("nothing listening on {addr} after 30s: {}", self.log()));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the server wrote to stderr so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    /// SIGTERM first, so the server stops as it would under a service manager and removes
    /// its sample project directory; SIGKILL if it has not exited within 5 s.
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP listener on 127.0.0.1 that accepts connections and never answers: every MCP
/// request to it waits until the client gives up. It keeps the head (request line and
/// headers) of each HTTP request it gets. Stopped on drop.
pub(crate) struct BlackHole {
    /// `http://127.0.0.1:<port>/mcp`.
    pub(crate) url: String,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    heads: Arc<Mutex<Vec<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BlackHole {
    /// Starts listening.
    pub(crate) fn start() -> BlackHole {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let (flag, seen) = (stop.clone(), heads.clone());
        let thread = std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(stream) = stream {
                    let seen = seen.clone();
                    let reader = stream.try_clone().unwrap();
                    std::thread::spawn(move || {
                        if let Some(head) = read_head(reader) {
                            seen.lock().unwrap().push(head);
                        }
                    });
                    held.push(stream);
                }
            }
        });
        BlackHole { url: format!("http://{addr}/mcp"), addr, stop, heads, thread: Some(thread) }
    }

    /// The heads of the HTTP requests received so far.
    pub(crate) fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// Reads up to the blank line that ends an HTTP request head.
fn read_head(mut stream: TcpStream) -> Option<String> {
    use std::io::Read as _;
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    Some(String::from_utf8_lossy(&head).into_owned())
}

impl Drop for BlackHole {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads a child's whole stdout pipe.
pub(crate) fn read_all(mut pipe: impl std::io::Read) -> Vec<u8> {
    let mut buf = Vec::new();
    pipe.read_to_end(&mut buf).unwrap();
    buf
}

/// What the JUnit tests read from an XML element (a `roxmltree` node).
pub(crate) trait Xml<'a> {
    /// The value of attribute `name`; panics, naming the element, when it is missing.
    fn attr(&self, name: &str) -> &'a str;
    /// The child elements called `name`.
    fn all(self, name: &'a str) -> impl Iterator<Item = roxmltree::Node<'a, 'a>>;
}

impl<'a> Xml<'a> for roxmltree::Node<'a, 'a> {
    #[track_caller]
    fn attr(&self, name: &str) -> &'a str {
        self.attribute(name).unwrap_or_else(|| panic!("<{}> has no attribute {name}", self.tag_name().name()))
    }

    fn all(self, name: &'a str) -> impl Iterator<Item = roxmltree::Node<'a, 'a>> {
        self.children().filter(move |c| c.has_tag_name(name))
    }
}

#[test]
fn durations_are_masked_only_on_report_lines() {
    assert_eq!(mask_duration("PASS a: b (8ms)"), "PASS a: b (T)");
    assert_eq!(mask_duration("FAIL a: b (1.001s, 3 attempts)"), "FAIL a: b (T, 3 attempts)");
    assert_eq!(mask_duration("PASS a: b (note)"), "PASS a: b (note)");
    assert_eq!(mask_duration("SKIP a: x (8ms)"), "SKIP a: x (8ms)");
}
