//! The lab: real Debian Chromium headless on a free loopback port (`--remote-debugging-port=0`,
//! the port read from `DevToolsActivePort`), real pages served by axum on 127.0.0.1, and the
//! `charly` binary. Both stop when the [`Lab`] drops (Chromium's whole process group is
//! killed), also when a test fails.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use axum::Router;
use axum::response::Html;
use axum::routing::get;

/// The binary under test.
pub(crate) const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// A form, a link, and a page the link leads to.
const FORM: &str = r#"<!doctype html><html><head><title>Form</title></head><body>
<h1>Sign in</h1>
<form action="/done" method="get"><input id="name" name="name" value="old">
<button id="go" type="submit">Go</button></form>
<p><a id="link" href="/done?via=link">next page</a></p>
<script>window.keys = []; document.getElementById('name').addEventListener('keydown', e => keys.push(e.key));</script>
</body></html>"#;

const DONE: &str = r#"<!doctype html><html><head><title>Done</title></head><body>
<p id="msg"></p><script>document.getElementById('msg').textContent = 'query ' + location.search;</script>
</body></html>"#;

/// A custom element whose button lives in an open shadow root, and an invisible light-DOM
/// element with the same class before it (deepQuery must skip it).
const SHADOW: &str = r#"<!doctype html><html><head><title>Shadow</title></head><body>
<button class="inner" style="display:none">hidden twin</button>
<x-panel></x-panel>
<script>
window.clicks = 0;
customElements.define('x-panel', class extends HTMLElement {
  constructor() {
    super();
    const root = this.attachShadow({mode: 'open'});
    root.innerHTML = '<div style="padding:40px"><button class="inner" style="width:120px;height:40px">Inner</button></div>';
    root.querySelector('button').addEventListener('click', () => { window.clicks++; });
  }
});
</script></body></html>"#;

/// An element that appears 3 s after the page loads (long enough that a `wait` started by a
/// charly process on a loaded machine still finds it missing first).
const LATE: &str = r#"<!doctype html><html><head><title>Late</title></head><body>
<script>setTimeout(() => { const d = document.createElement('div'); d.id = 'late';
d.textContent = 'arrived'; document.body.appendChild(d); }, 3000);</script></body></html>"#;

/// A Selkies-like web desktop: `#videoCanvas` under a transparent `#overlayInput` (as Selkies
/// lays them out), recording every mouse and key event the document gets.
const SPA: &str = r#"<!doctype html><html><head><title>SPA</title>
<style>body{margin:0} #videoCanvas{position:absolute;left:0;top:0}</style></head><body>
<canvas id="videoCanvas" width="640" height="360"></canvas>
<input id="overlayInput" style="position:absolute;left:0;top:0;width:640px;height:360px;opacity:0;border:0;padding:0">
<script>
window.events = [];
for (const t of ['mousemove', 'mousedown', 'mouseup']) document.addEventListener(t, e =>
  events.push({t, x: e.clientX, y: e.clientY, b: e.button}));
for (const t of ['keydown', 'keyup']) document.addEventListener(t, e =>
  events.push({t, key: e.key, code: e.code, ctrl: e.ctrlKey, shift: e.shiftKey, alt: e.altKey, meta: e.metaKey}));
</script></body></html>"#;

/// Serves the pages on 127.0.0.1:0 from a thread of its own until dropped.
struct Pages {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Pages {
    fn start() -> Pages {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let app = Router::new()
                    .route("/form", get(|| async { Html(FORM) }))
                    .route("/done", get(|| async { Html(DONE) }))
                    .route("/shadow", get(|| async { Html(SHADOW) }))
                    .route("/late", get(|| async { Html(LATE) }))
                    .route("/spa", get(|| async { Html(SPA) }));
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = rx.await;
                    })
                    .await
                    .unwrap();
            });
        });
        let addr = addr_rx.recv_timeout(Duration::from_secs(10)).expect("the page server starts");
        Pages { url: format!("http://{addr}"), stop: Some(tx), thread: Some(thread) }
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A headless Chromium in its own process group.
struct Chromium {
    child: Child,
    _profile: tempfile::TempDir,
    port: u16,
}

impl Chromium {
    fn start() -> Chromium {
        let profile = tempfile::tempdir().unwrap();
        let mut command = Command::new("chromium");
        command
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--window-size=800,600",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let child = command.spawn().unwrap_or_else(|e| {
            panic!("chromium cannot run ({e}): run scripts/runtimes.sh as root (it installs chromium)")
        });
        let mut browser = Chromium { child, _profile: profile, port: 0 };
        browser.port = wait_for_port(browser._profile.path());
        browser
    }
}

/// The port Chromium wrote to `DevToolsActivePort` (its first line), within 120 s: a first
/// start on a fresh machine reads the whole browser from a cold disk (CI once took over 30 s
/// with two starting at once; `scripts/runtimes.sh` starts it once after installing it).
fn wait_for_port(profile: &Path) -> u16 {
    let file = profile.join("DevToolsActivePort");
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(120) {
        if let Some(port) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| t.lines().next().and_then(|l| l.trim().parse::<u16>().ok()))
        {
            return port;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("chromium wrote no {} within 120 s", file.display());
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.wait();
    }
}

/// What a `charly` run gave.
pub(crate) struct Ran {
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Ran {
    fn of(out: Output) -> Ran {
        Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts the exit status, showing both streams when it differs.
    pub(crate) fn status(self, code: i32) -> Ran {
        assert_eq!(self.code, Some(code), "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

/// A browser (none for tests that only reach boxes), the pages, and a working directory.
pub(crate) struct Lab {
    browser: Option<Chromium>,
    pages: Pages,
    pub(crate) dir: tempfile::TempDir,
}

impl Lab {
    pub(crate) fn new() -> Lab {
        let pages = Pages::start();
        let browser = Some(Chromium::start());
        Lab { browser, pages, dir: tempfile::tempdir().unwrap() }
    }

    /// A lab without a browser: for tests whose target is a box, where charly dials the
    /// container's published port and no browser on this machine is involved.
    pub(crate) fn without_browser() -> Lab {
        Lab { browser: None, pages: Pages::start(), dir: tempfile::tempdir().unwrap() }
    }

    /// The DevTools endpoint, `http://127.0.0.1:<port>`.
    pub(crate) fn cdp_url(&self) -> String {
        let browser = self.browser.as_ref().expect("this lab has a browser (Lab::new)");
        format!("http://127.0.0.1:{}", browser.port)
    }

    /// Kills the browser (its process group) now; the lab's pages stay.
    pub(crate) fn kill_browser(&self) {
        let browser = self.browser.as_ref().expect("this lab has a browser (Lab::new)");
        let group = format!("-{}", browser.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
    }

    /// A page's URL.
    pub(crate) fn page(&self, path: &str) -> String {
        format!("{}{path}", self.pages.url)
    }

    /// `charly check cdp <args...> --cdp-url <this browser>` in the lab's directory.
    pub(crate) fn cdp(&self, args: &[&str]) -> Ran {
        let mut all = vec!["check", "cdp"];
        all.extend_from_slice(args);
        let url = self.cdp_url();
        all.extend(["--cdp-url", url.as_str()]);
        self.charly(&all)
    }

    /// `charly <args...>` in the lab's directory, HOME in it.
    pub(crate) fn charly(&self, args: &[&str]) -> Ran {
        let out = Command::new(CHARLY)
            .args(args)
            .current_dir(self.dir.path())
            .env("HOME", self.dir.path())
            .env_remove("CHARLY_PROJECT_DIR")
            .output()
            .expect("charly runs");
        Ran::of(out)
    }

    /// Opens `path` in a new tab with `check.cdp.open` and waits until it has loaded; the tab id.
    pub(crate) fn open(&self, path: &str) -> String {
        let url = self.page(path);
        let ran = self.cdp(&["open", ".", &url]).status(0);
        let id = ran.stdout.rsplit("(tab ").next().unwrap().trim().trim_end_matches(')').to_owned();
        assert!(!id.is_empty() && !id.contains(' '), "{}", ran.stdout);
        let started = Instant::now();
        loop {
            // A new tab shows about:blank (complete) before it navigates.
            let state = self.cdp(&["eval", ".", &id, "document.readyState + ' ' + location.href"]);
            if state.code == Some(0) && state.stdout.trim() == format!("complete {url}") {
                return id;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "{url} did not load: {}", state.stderr);
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `eval` that must succeed: its stdout without the final newline.
    pub(crate) fn eval(&self, tab: &str, expression: &str) -> String {
        self.cdp(&["eval", ".", tab, expression]).status(0).stdout.trim_end_matches('\n').to_owned()
    }

    /// A path in the lab's directory.
    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}
