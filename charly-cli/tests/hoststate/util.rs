//! The harness: a temporary home per test (HOME, XDG_CONFIG_HOME, GNUPGHOME, the project
//! directory), `charly` with a cleaned environment (no caller's `CHARLY_*`, no session bus,
//! no runtime dir: nothing reaches the developer's keyring), a private D-Bus session bus with
//! gnome-keyring-daemon on it, gpg keys, and the real programs the tests check against.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// The install hint of a missing runtime.
const HINT: &str = "install the test runtimes: sudo scripts/runtimes.sh";

/// The program `name` on PATH; a missing runtime fails the test with the install hint.
#[track_caller]
pub(crate) fn require(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` is not installed: {HINT}"))
}

/// A test's directory: `home/` (HOME), `cfg/` (XDG_CONFIG_HOME), `gnupg/` (GNUPGHOME, 0700)
/// and `proj/`, where commands run. Removed on drop.
pub(crate) struct Home {
    dir: tempfile::TempDir,
    env: Vec<(String, OsString)>,
}

impl Home {
    pub(crate) fn new() -> Home {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["home", "cfg", "gnupg", "proj"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::fs::set_permissions(dir.path().join("gnupg"), std::fs::Permissions::from_mode(0o700)).unwrap();
        Home { dir, env: Vec::new() }
    }

    /// The temporary directory.
    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The project directory.
    pub(crate) fn proj(&self) -> PathBuf {
        self.path().join("proj")
    }

    /// GNUPGHOME.
    pub(crate) fn gnupg(&self) -> PathBuf {
        self.path().join("gnupg")
    }

    /// config.yml.
    pub(crate) fn config_path(&self) -> PathBuf {
        self.path().join("cfg/charly/config.yml")
    }

    /// config.yml's text ("" when missing).
    pub(crate) fn config(&self) -> String {
        std::fs::read_to_string(self.config_path()).unwrap_or_default()
    }

    /// Writes config.yml.
    pub(crate) fn write_config(&self, text: &str) {
        std::fs::create_dir_all(self.config_path().parent().unwrap()).unwrap();
        std::fs::write(self.config_path(), text).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(self.config_path(), std::fs::Permissions::from_mode(0o600)).unwrap();
    }

    /// Sets a variable for every later command.
    pub(crate) fn set_env(&mut self, key: &str, value: impl Into<OsString>) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.into()));
    }

    /// The environment every command of this home gets.
    pub(crate) fn apply(&self, cmd: &mut Command) {
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("CHARLY_")
                || [
                    "DBUS_SESSION_BUS_ADDRESS",
                    "XDG_RUNTIME_DIR",
                    "XDG_DATA_HOME",
                    "VISUAL",
                    "EDITOR",
                    "GPG_AGENT_INFO",
                ]
                .contains(&key.as_ref())
            {
                cmd.env_remove(key.as_ref());
            }
        }
        cmd.env("HOME", self.path().join("home"))
            .env("XDG_CONFIG_HOME", self.path().join("cfg"))
            .env("GNUPGHOME", self.gnupg())
            // No test fills the user's kernel keyring: the cache test turns it on in its own
            // user namespace.
            .env("CHARLY_KDBX_CACHE", "false")
            .env("NO_COLOR", "1")
            .current_dir(self.proj())
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
    }

    /// `charly` with this home's environment.
    pub(crate) fn charly(&self) -> Command {
        let mut cmd = Command::new(CHARLY);
        self.apply(&mut cmd);
        cmd
    }

    /// Runs `charly <args>`.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.charly();
        cmd.args(args);
        Run::of(&mut cmd, &args.join(" "))
    }

    /// Runs another program with this home's environment.
    pub(crate) fn tool(&self, program: &str, args: &[&str], stdin: Option<&[u8]>) -> Run {
        let mut cmd = Command::new(require(program));
        self.apply(&mut cmd);
        cmd.args(args);
        if let Some(input) = stdin {
            use std::io::Write as _;
            cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
            let started = Instant::now();
            let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
            child.stdin.take().unwrap().write_all(input).unwrap();
            let out = child.wait_with_output().unwrap();
            return Run::from_output(format!("{program} {}", args.join(" ")), out, started);
        }
        Run::of(&mut cmd, &format!("{program} {}", args.join(" ")))
    }

    /// A gpg key `Name <email>` (ed25519 + cv25519, no passphrase) in this home's GNUPGHOME;
    /// its fingerprint.
    pub(crate) fn gpg_key(&self, email: &str) -> String {
        let uid = format!("Test {email} <{email}>");
        let generate = [
            "--batch",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-gen-key",
            &uid,
            "ed25519",
            "sign,cert",
            "never",
        ];
        self.tool("gpg", &generate, None).status(0);
        let list = self.tool("gpg", &["--batch", "--with-colons", "--list-keys", email], None);
        let fpr = list
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("fpr:"))
            .map(|l| l.trim_matches(':').to_owned())
            .unwrap();
        let sub = [
            "--batch",
            "--pinentry-mode",
            "loopback",
            "--passphrase",
            "",
            "--quick-add-key",
            &fpr,
            "cv25519",
            "encr",
            "never",
        ];
        self.tool("gpg", &sub, None).status(0);
        fpr
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        // The gpg-agent this home's GNUPGHOME started.
        let _ = Command::new("gpgconf")
            .args(["--kill", "gpg-agent"])
            .env("GNUPGHOME", self.gnupg())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A finished run.
pub(crate) struct Run {
    pub(crate) args: String,
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) took: Duration,
}

impl Run {
    pub(crate) fn of(cmd: &mut Command, args: &str) -> Run {
        let started = Instant::now();
        let out = cmd.output().expect("run the program");
        Run::from_output(args.to_owned(), out, started)
    }

    fn from_output(args: String, out: Output, started: Instant) -> Run {
        Run {
            args,
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            took: started.elapsed(),
        }
    }

    pub(crate) fn dump(&self) -> String {
        format!(
            "{}\nexit status: {:?} ({:?})\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args, self.code, self.took, self.stdout, self.stderr
        )
    }

    #[track_caller]
    pub(crate) fn status(&self, code: i32) -> &Run {
        assert_eq!(self.code, Some(code), "unexpected exit status\n{}", self.dump());
        assert!(!self.stderr.contains("panicked"), "a panic\n{}", self.dump());
        self
    }

    #[track_caller]
    pub(crate) fn stdout(&self, expected: &str) -> &Run {
        assert_eq!(self.stdout, expected, "unexpected stdout\n{}", self.dump());
        self
    }

    #[track_caller]
    pub(crate) fn stdout_has(&self, part: &str) -> &Run {
        assert!(self.stdout.contains(part), "stdout lacks {part:?}\n{}", self.dump());
        self
    }

    #[track_caller]
    pub(crate) fn stderr_has(&self, part: &str) -> &Run {
        assert!(self.stderr.contains(part), "stderr lacks {part:?}\n{}", self.dump());
        self
    }

    #[track_caller]
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.dump()))
    }
}

/// A private D-Bus session bus (`dbus-daemon --session` on a socket in a temporary directory),
/// optionally with gnome-keyring-daemon serving org.freedesktop.secrets on it (its `login`
/// collection, aliased `default`, created and unlocked with a password on stdin). Both are
/// killed by pid on drop.
pub(crate) struct Bus {
    daemon: Child,
    keyring: Option<Child>,
    /// DBUS_SESSION_BUS_ADDRESS.
    pub(crate) address: String,
    dir: tempfile::TempDir,
}

impl Bus {
    /// A bus with nothing on it. Its configuration has no service directories: nothing is
    /// started by D-Bus activation (the system's org.freedesktop.secrets.service would start a
    /// gnome-keyring-daemon in the caller's real HOME).
    pub(crate) fn start() -> Bus {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("bus");
        let config = dir.path().join("session.conf");
        let policy = "<policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
                      <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy>";
        std::fs::write(
            &config,
            format!(
                "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\" \
                 \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n\
                 <busconfig><type>session</type><listen>unix:path={}</listen><auth>EXTERNAL</auth>{policy}</busconfig>\n",
                socket.display()
            ),
        )
        .unwrap();
        let mut daemon = Command::new(require("dbus-daemon"))
            .args(["--nofork", "--nopidfile", "--print-address=1"])
            .arg(format!("--config-file={}", config.display()))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start dbus-daemon");
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(daemon.stdout.take().unwrap()), &mut line)
            .unwrap();
        Bus { daemon, keyring: None, address: line.trim().to_owned(), dir }
    }

    /// A bus with gnome-keyring-daemon on it, its login keyring unlocked with `password`.
    pub(crate) fn with_keyring(password: &str) -> Bus {
        use std::io::Write as _;
        let mut bus = Bus::start();
        let home = bus.dir.path().join("home");
        let run = bus.dir.path().join("run");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&run).unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        let mut child = Command::new(require("gnome-keyring-daemon"))
            .args(["--foreground", "--unlock", "--components=secrets"])
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("XDG_RUNTIME_DIR", &run)
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start gnome-keyring-daemon");
        child.stdin.take().unwrap().write_all(password.as_bytes()).unwrap();
        bus.keyring = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !bus.has_owner("org.freedesktop.secrets") || !bus.default_collection() {
            assert!(Instant::now() < deadline, "gnome-keyring-daemon did not come up on the private bus");
            std::thread::sleep(Duration::from_millis(50));
        }
        bus
    }

    fn send(&self, args: &[&str]) -> Output {
        Command::new(require("dbus-send"))
            .arg("--session")
            .arg("--print-reply")
            .args(args)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .unwrap()
    }

    fn has_owner(&self, name: &str) -> bool {
        let out = self.send(&[
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            "org.freedesktop.DBus.NameHasOwner",
            &format!("string:{name}"),
        ]);
        String::from_utf8_lossy(&out.stdout).contains("boolean true")
    }

    fn default_collection(&self) -> bool {
        let out = self.send(&[
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.ReadAlias",
            "string:default",
        ]);
        String::from_utf8_lossy(&out.stdout).contains("/collection/login")
    }

    /// Locks the login collection (Secret Service `Lock`, which needs no prompt).
    pub(crate) fn lock(&self) {
        let out = self.send(&[
            "--dest=org.freedesktop.secrets",
            "/org/freedesktop/secrets",
            "org.freedesktop.Secret.Service.Lock",
            "array:objpath:/org/freedesktop/secrets/collection/login",
        ]);
        assert!(out.status.success(), "Lock failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Stops (SIGSTOP) or continues (SIGCONT) the keyring daemon: a provider that owns the name
    /// and never answers.
    pub(crate) fn signal_keyring(&self, signal: &str) {
        let pid = self.keyring.as_ref().expect("a keyring").id().to_string();
        assert!(Command::new("kill").args([signal, &pid]).status().unwrap().success());
    }

    /// `secret-tool lookup service S username K` on this bus, or `None`.
    pub(crate) fn secret_tool_lookup(&self, service: &str, key: &str) -> Option<String> {
        self.secret_tool(&["service", service, "username", key])
    }

    /// `secret-tool lookup ATTRIBUTE VALUE ...` on this bus, or `None`.
    pub(crate) fn secret_tool(&self, attributes: &[&str]) -> Option<String> {
        let out = Command::new(require("secret-tool"))
            .arg("lookup")
            .args(attributes)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.address)
            .output()
            .unwrap();
        out.status.success().then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Bus {
    fn drop(&mut self) {
        if let Some(keyring) = &mut self.keyring {
            let pid = keyring.id().to_string();
            let _ = Command::new("kill").args(["-CONT", &pid]).status();
            let _ = keyring.kill();
            let _ = keyring.wait();
        }
        let _ = self.daemon.kill();
        let _ = self.daemon.wait();
    }
}

/// The udevadm with `verify` (254 or later): CHARLY_UDEVADM, else the bookworm-backports build
/// scripts/runtimes.sh extracts under .runtimes/udev.
#[track_caller]
pub(crate) fn udevadm() -> PathBuf {
    if let Some(path) = std::env::var_os("CHARLY_UDEVADM") {
        return PathBuf::from(path);
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.runtimes/udev/bin/udevadm");
    assert!(
        path.is_file(),
        "udevadm 254 (bookworm-backports) is not extracted at {}: {HINT}",
        path.display()
    );
    path
}

/// `udevadm verify` of one rules file (group names are not resolved: the test host need not
/// have a `render` group).
#[track_caller]
pub(crate) fn udevadm_verify(rules: &Path) -> Output {
    Command::new(udevadm())
        .args(["verify", "--resolve-names=never"])
        .arg(rules)
        .output()
        .expect("run udevadm verify")
}

/// The mode bits of a file.
pub(crate) fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode()
        & 0o7777
}
