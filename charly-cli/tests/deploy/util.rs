//! The harness: a temporary project per test with one box on the local busybox image, the
//! `charly` binary with a cleaned environment, and a [`Cleanup`] that removes, by name, the
//! containers, volumes and images the test made (also when it fails).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// The base image `scripts/runtimes.sh` builds (no registry is reachable).
pub(crate) const BUSYBOX: &str = "localhost/charly-busybox:latest";

/// The Debian base image with supervisor that `scripts/runtimes.sh` builds with mmdebstrap.
pub(crate) const DEBIAN: &str = "localhost/charly-debian:latest";

/// Fails (never passes early) when podman or `image` (one `scripts/runtimes.sh` builds) is missing, with the fix.
pub(crate) fn require_image(image: &str) {
    let hint = "run scripts/runtimes.sh as root (it installs podman + runc and builds the busybox and Debian images)";
    let out = Command::new("podman").args(["image", "exists", image]).output();
    match out {
        Err(e) => panic!("podman cannot run ({e}): {hint}"),
        Ok(o) if !o.status.success() => panic!("podman has no {image}: {hint}"),
        Ok(_) => {}
    }
}

/// A test's project: `proj/` with box `<name>` (`test-<what>`, whose container is
/// `charly-test-<what>`) (base: the busybox image), `home/` as HOME.
pub(crate) struct Box {
    dir: tempfile::TempDir,
    cleanup: Cleanup,
}

impl Box {
    /// A project with box `name`, not built.
    pub(crate) fn new(name: &str) -> Box {
        Box::with_base(name, BUSYBOX)
    }

    /// A project with box `name` on base image `base` (one `scripts/runtimes.sh` builds), not built.
    pub(crate) fn with_base(name: &str, base: &str) -> Box {
        require_image(base);
        let dir = tempfile::tempdir().expect("tempdir");
        for sub in ["home", "proj"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let b = Box { dir, cleanup: Cleanup::default() };
        b.cleanup.containers(&[&format!("charly-{name}")]);
        b.cleanup.images(&[&format!("localhost/{name}:latest")]);
        b.cleanup.boxes.borrow_mut().push(name.to_owned());
        // Left over from an earlier, killed run.
        b.cleanup.run();
        b.run(&["box", "new", "project", "."]).status(0);
        b.run(&["box", "new", "box", name, "--base", base]).status(0);
        b
    }

    /// Writes `candy/<candy>/charly.yml` with `text` and adds the candy to box `name`.
    pub(crate) fn candy(&self, name: &str, candy: &str, text: &str) {
        let dir = self.proj().join("candy").join(candy);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("charly.yml"), text).unwrap();
        self.run(&["box", "add-candy", name, candy]).status(0);
    }

    /// A project with box `name`, built.
    pub(crate) fn built(name: &str) -> Box {
        let b = Box::new(name);
        b.run(&["box", "build", name]).status(0);
        b
    }

    /// What to remove at the end.
    pub(crate) fn cleanup(&self) -> &Cleanup {
        &self.cleanup
    }

    /// The project directory.
    pub(crate) fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    /// `charly` in the project with a cleaned environment.
    pub(crate) fn charly(&self) -> Command {
        let mut cmd = Command::new(CHARLY);
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("CHARLY_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("HOME", self.dir.path().join("home"))
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .current_dir(self.proj())
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `charly <args>`.
    pub(crate) fn run(&self, args: &[&str]) -> Run {
        let mut cmd = self.charly();
        cmd.args(args);
        Run::of(&mut cmd, args)
    }
}

/// Names to remove at drop: containers (`rm -f -t 0`), then volumes, then images.
#[derive(Default)]
pub(crate) struct Cleanup {
    containers: std::cell::RefCell<Vec<String>>,
    volumes: std::cell::RefCell<Vec<String>>,
    images: std::cell::RefCell<Vec<String>>,
    /// Boxes whose dangling images (earlier builds, build cache) are pruned by label.
    boxes: std::cell::RefCell<Vec<String>>,
}

impl Cleanup {
    pub(crate) fn containers(&self, names: &[&str]) {
        self.containers.borrow_mut().extend(names.iter().map(|n| n.to_string()));
    }

    pub(crate) fn volumes(&self, names: &[&str]) {
        self.volumes.borrow_mut().extend(names.iter().map(|n| n.to_string()));
    }

    pub(crate) fn images(&self, names: &[&str]) {
        self.images.borrow_mut().extend(names.iter().map(|n| n.to_string()));
    }

    fn run(&self) {
        let podman = |args: &[&str], names: &[String]| {
            if !names.is_empty() {
                let _ = Command::new("podman")
                    .args(args)
                    .args(names)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        };
        podman(&["rm", "--force", "--time", "0"], &self.containers.borrow());
        podman(&["volume", "rm", "--force"], &self.volumes.borrow());
        podman(&["rmi", "--force"], &self.images.borrow());
        for b in self.boxes.borrow().iter() {
            let filter = format!("label=ai.opencharly.box={b}");
            podman(&["image", "prune", "--force", "--filter"], &[filter]);
        }
    }
}

impl Drop for Box {
    fn drop(&mut self) {
        self.cleanup.run();
    }
}

/// A free TCP port on 127.0.0.1 (bound and released).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `GET /` on 127.0.0.1:`port`, retried for a few seconds while the server starts.
pub(crate) fn http_get(port: u16) -> String {
    use std::io::{Read as _, Write as _};
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) {
            let _ = s.write_all(b"GET / HTTP/1.0\r\n\r\n");
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            if !text.is_empty() {
                return text;
            }
        }
        assert!(Instant::now() < deadline, "nothing answers on 127.0.0.1:{port}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The host port of the remap a port conflict suggests: the `HOST` of the first
/// `<flag> HOST:<container>` in `stderr` (`flag`: `-p ` or `--port `). It must be what the code
/// promises (`engine::ports::remap`): another port than the one in use, after it; not
/// blindly `taken + 1`, which another test may hold by then.
#[track_caller]
pub(crate) fn suggested_remap(stderr: &str, flag: &str, taken: u16, container: u16) -> u16 {
    let suffix = format!(":{container}");
    let remap = stderr
        .match_indices(flag)
        .filter_map(|(at, _)| stderr[at + flag.len()..].split_once(&suffix))
        .find_map(|(host, _)| host.parse::<u16>().ok())
        .unwrap_or_else(|| panic!("no `{flag}HOST{suffix}` remap in:\n{stderr}"));
    assert!(remap > taken, "the remap {remap} is not a port after the one in use ({taken}):\n{stderr}");
    remap
}

/// `podman <args>`, a call that must succeed: its stdout. Run again (up to three times) while
/// it fails with a "not known": the image store changing under its image lookup, before it
/// did anything, as the parallel tests' cleanups remove their images (charly's engine does
/// the same for its reads).
pub(crate) fn podman(args: &[&str]) -> String {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let out = Command::new("podman").args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            return String::from_utf8_lossy(&out.stdout).into_owned();
        }
        assert!(attempt < 3 && stderr.contains("not known"), "podman {args:?}: {stderr}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `podman <args>`'s stdout ([`podman`]) written to `file` beside the box's project, for
/// a cleanup script to read.
#[allow(dead_code, reason = "the desktop, wayland and tmux boxes' cleanup watchers use it")]
pub(crate) fn record(b: &Box, file: &str, args: &[&str]) {
    std::fs::write(b.proj().parent().unwrap().join(file), podman(args)).unwrap();
}

/// Whether podman knows a container of this name.
pub(crate) fn container_exists(name: &str) -> bool {
    Command::new("podman").args(["container", "exists", name]).status().unwrap().success()
}

/// Whether podman knows a volume of this name.
pub(crate) fn volume_exists(name: &str) -> bool {
    Command::new("podman").args(["volume", "exists", name]).status().unwrap().success()
}

/// A finished `charly` run.
pub(crate) struct Run {
    pub(crate) args: String,
    pub(crate) code: Option<i32>,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) took: Duration,
}

impl Run {
    pub(crate) fn of(cmd: &mut Command, args: &[&str]) -> Run {
        let started = Instant::now();
        let out: Output = cmd.output().expect("run charly");
        Run::from_output(out, args.join(" "), started.elapsed())
    }

    pub(crate) fn from_output(out: Output, args: String, took: Duration) -> Run {
        Run {
            args,
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            took,
        }
    }

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

    /// Asserts that stderr contains each of `parts`.
    #[track_caller]
    pub(crate) fn stderr_has(&self, parts: &[&str]) -> &Run {
        for part in parts {
            assert!(self.stderr.contains(part), "stderr lacks {part:?}\n{}", self.dump());
        }
        self
    }

    /// stdout as JSON.
    #[track_caller]
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.dump()))
    }
}
