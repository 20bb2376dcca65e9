//! A private `dbus-daemon --session` on a socket in a temporary directory, and a small
//! notification daemon (zbus, on its own thread) that owns org.freedesktop.Notifications and
//! records every Notify it gets, and `org.charly.Shapes` (arrays and dicts in its signatures)
//! ([`Server`], which can serve any bus, a box container's too). Both stop when the [`Bus`]
//! drops.

use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One Notify call: app name, summary, body, timeout.
pub(crate) type Recorded = (String, String, String, i32);

struct Notifications {
    got: Arc<Mutex<Vec<Recorded>>>,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Notifications {
    #[allow(clippy::too_many_arguments)]
    fn notify(
        &self,
        app: String,
        _replaces: u32,
        _icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        _hints: std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
        timeout: i32,
    ) -> u32 {
        let mut got = self.got.lock().unwrap();
        got.push((app, summary, body, timeout));
        got.len() as u32
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        ("charly-test-notifyd".into(), "charly".into(), "0.1".into(), "1.2".into())
    }
}

/// `org.charly.Shapes` at `/org/charly/Shapes`: methods whose signatures need arrays and dicts,
/// answering with what they got, so the test sees the values arrive typed.
struct Shapes;

#[zbus::interface(name = "org.charly.Shapes")]
impl Shapes {
    /// `as` -> the items joined with `+`.
    fn join(&self, items: Vec<String>) -> String {
        items.join("+")
    }

    /// `au` -> their sum.
    /// Answers after `ms` milliseconds (a call in flight when the bus goes away).
    async fn slow(&self, ms: u32) -> u32 {
        tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
        ms
    }

    fn sum(&self, items: Vec<u32>) -> u64 {
        items.iter().map(|&n| u64::from(n)).sum()
    }

    /// `a{ss}` -> `k=v` pairs, sorted, joined with `;`.
    fn pairs(&self, map: std::collections::HashMap<String, String>) -> String {
        let mut pairs: Vec<String> = map.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
        pairs.sort();
        pairs.join(";")
    }

    /// No arguments -> one value of each kind (`yxbdsoaua{sv}(su)`), for the JSON of a reply.
    #[allow(clippy::type_complexity)]
    fn sample(
        &self,
    ) -> (
        u8,
        i64,
        bool,
        f64,
        String,
        zbus::zvariant::OwnedObjectPath,
        Vec<u32>,
        std::collections::HashMap<String, zbus::zvariant::OwnedValue>,
        (String, u32),
    ) {
        let dict = [
            ("n".to_owned(), zbus::zvariant::OwnedValue::from(7u32)),
            ("s".to_owned(), zbus::zvariant::OwnedValue::try_from(zbus::zvariant::Value::from("x")).unwrap()),
        ]
        .into();
        let path = zbus::zvariant::OwnedObjectPath::try_from("/org/charly/Shapes").unwrap();
        (255, -3, true, 2.5, "text".into(), path, vec![1, 2], dict, ("pair".into(), 9))
    }

    /// `a{ub}` -> how many keys are true, and `ad` -> the largest.
    fn tally(&self, flags: std::collections::HashMap<u32, bool>, weights: Vec<f64>) -> (u32, f64) {
        let on = flags.values().filter(|&&b| b).count() as u32;
        (on, weights.into_iter().fold(f64::MIN, f64::max))
    }
}

/// The notification daemon (and `org.charly.Shapes`) on the bus at `address`, on its own
/// thread; stops when dropped.
pub(crate) struct Server {
    pub(crate) got: Arc<Mutex<Vec<Recorded>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Connects to `address` (any zbus address: a host socket, or a container's through
    /// `/proc/<pid>/root`), owns the names and serves them.
    pub(crate) fn serve(address: &str) -> Server {
        let got = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let (address, recorded) = (address.to_owned(), got.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            rt.block_on(async move {
                let conn = zbus::connection::Builder::address(address.as_str())
                    .unwrap()
                    .name("org.freedesktop.Notifications")
                    .unwrap()
                    .serve_at("/org/freedesktop/Notifications", Notifications { got: recorded })
                    .unwrap()
                    .name("org.charly.Shapes")
                    .unwrap()
                    .serve_at("/org/charly/Shapes", Shapes)
                    .unwrap()
                    .build()
                    .await
                    .unwrap();
                ready_tx.send(()).unwrap();
                let _ = rx.await;
                drop(conn);
            });
        });
        ready_rx.recv_timeout(Duration::from_secs(10)).expect("the notification daemon starts");
        Server { got, stop: Some(tx), thread: Some(thread) }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The bus, its address and what the notification daemon got.
pub(crate) struct Bus {
    daemon: Child,
    _dir: tempfile::TempDir,
    pub(crate) address: String,
    pub(crate) got: Arc<Mutex<Vec<Recorded>>>,
    server: Option<Server>,
}

impl Bus {
    /// A bus with the notification daemon on it (`notifications`), or without.
    pub(crate) fn new(notifications: bool) -> Bus {
        let dir = tempfile::tempdir().unwrap();
        let address = format!("unix:path={}", dir.path().join("bus").display());
        let daemon = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--nopidfile"])
            .arg(format!("--address={address}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon runs (scripts/runtimes.sh installs dbus)");
        let started = Instant::now();
        while !dir.path().join("bus").exists() {
            assert!(started.elapsed() < Duration::from_secs(10), "dbus-daemon made no socket");
            std::thread::sleep(Duration::from_millis(20));
        }
        let server = notifications.then(|| Server::serve(&address));
        let got = server.as_ref().map_or_else(Default::default, |s| s.got.clone());
        Bus { daemon, _dir: dir, address, got, server }
    }

    /// Kills the dbus-daemon now (SIGKILL).
    pub(crate) fn kill_daemon(&self) {
        let _ = Command::new("kill").args(["-KILL", &self.daemon.id().to_string()]).status();
    }

    /// `charly check dbus <args...>` with this bus as the session bus.
    pub(crate) fn charly(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_charly"))
            .args(["check", "dbus"])
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .env_remove("CHARLY_PROJECT_DIR")
            .output()
            .unwrap()
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        drop(self.server.take());
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}
