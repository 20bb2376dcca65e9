//! The harness: a temporary HOME (so the VMs live in its `.local/share/charly/vm`) and project
//! per test, with box `test-vm-<what>` on the VM base image `scripts/runtimes.sh` builds, the
//! `charly` binary with a cleaned environment, and a cleanup that kills any qemu started from
//! the test's directory and removes the box's image (also when the test fails).

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub(crate) const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// The VM base image `scripts/runtimes.sh` builds: bookworm with the cloud kernel, systemd,
/// udev, D-Bus, dhcpcd and openssh-server.
pub(crate) const VM_BASE: &str = "localhost/charly-vm-debian:latest";

/// The busybox image (no kernel).
pub(crate) const BUSYBOX: &str = "localhost/charly-busybox:latest";

/// Fails (never passes early) when this machine cannot run the tests, with the fix.
fn require() {
    let hint = "run scripts/runtimes.sh as root (it installs podman, qemu-system-x86 from bookworm-backports and \
                builds localhost/charly-vm-debian)";
    for image in [VM_BASE, BUSYBOX] {
        let out = Command::new("podman").args(["image", "exists", image]).output();
        assert!(out.is_ok_and(|o| o.status.success()), "podman has no {image}: {hint}");
    }
    let qemu = Command::new("qemu-system-x86_64").arg("--version").output();
    assert!(qemu.is_ok_and(|o| o.status.success()), "qemu-system-x86_64 does not run: {hint}");
    use std::os::unix::fs::MetadataExt as _;
    assert_eq!(
        std::fs::metadata("/proc/self").unwrap().uid(),
        0,
        "vm build writes the image's files with their owners: these tests run as root"
    );
}

/// A test's HOME and project, with box `name` on `base`, built.
pub(crate) struct Lab {
    dir: tempfile::TempDir,
    pub(crate) name: String,
}

impl Lab {
    /// Box `name` on the VM base image, built (a Containerfile of FROM and labels: seconds).
    pub(crate) fn new(name: &str) -> Lab {
        Lab::with(name, VM_BASE, "")
    }

    /// Box `name` on `base`, with candy `extra` (YAML of a candy file, when not empty), built.
    pub(crate) fn with(name: &str, base: &str, extra: &str) -> Lab {
        require();
        let dir = tempfile::Builder::new().prefix("test-vm-").tempdir().expect("tempdir");
        for sub in ["home", "proj"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        let lab = Lab { dir, name: name.to_owned() };
        lab.run(&["box", "new", "project", "."]).status(0);
        lab.run(&["box", "new", "box", name, "--base", base]).status(0);
        if !extra.is_empty() {
            let candy = lab.proj().join("candy/extra");
            std::fs::create_dir_all(&candy).unwrap();
            std::fs::write(candy.join("charly.yml"), extra).unwrap();
            lab.run(&["box", "add-candy", name, "extra"]).status(0);
        }
        lab.run(&["box", "build", name]).status(0);
        lab
    }

    /// The project directory.
    pub(crate) fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    /// Where charly keeps this test's VMs.
    pub(crate) fn vms(&self) -> PathBuf {
        self.dir.path().join("home/.local/share/charly/vm")
    }

    /// The VM directory of the box (no instance).
    pub(crate) fn vm_dir(&self) -> PathBuf {
        self.vms().join(format!("charly-{}", self.name))
    }

    /// `charly` in the project with a cleaned environment.
    pub(crate) fn charly(&self) -> Command {
        self.command(CHARLY)
    }

    /// `charly <args>` on a terminal: under `script` (a pty), each `(wait_for, send)` step
    /// waiting up to 60 s for its text in the output before it types; the whole output once
    /// the run ends (within 60 s of the last step).
    pub(crate) fn on_terminal(&self, args: &[&str], steps: &[(&str, &str)]) -> String {
        let (status, out) = self.terminal(args, steps);
        assert!(status.success(), "charly {args:?} on a terminal: {status}\n{out}");
        out
    }

    /// [`Lab::on_terminal`], whatever the exit status: the status and the output.
    pub(crate) fn terminal(
        &self,
        args: &[&str],
        steps: &[(&str, &str)],
    ) -> (std::process::ExitStatus, String) {
        use std::io::{Read as _, Write as _};
        let line: Vec<String> =
            std::iter::once(CHARLY).chain(args.iter().copied()).map(|a| format!("'{a}'")).collect();
        let mut cmd = self.command("script");
        cmd.args(["-q", "-e", "-c", &line.join(" "), "/dev/null"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut child = cmd.spawn().expect("run script");
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let reader = {
            let seen = seen.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stdout.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    seen.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            })
        };
        for (wait_for, send) in steps {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !seen.lock().unwrap().contains(wait_for) {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("no {wait_for:?} on the terminal of charly {args:?}:\n{}", seen.lock().unwrap());
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            stdin.write_all(send.as_bytes()).unwrap();
            stdin.flush().unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("charly {args:?} did not end on its terminal:\n{}", seen.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        drop(stdin);
        reader.join().unwrap();
        let out = seen.lock().unwrap().clone();
        (status, out)
    }

    /// `program` in the project with charly's cleaned environment.
    /// `program` with the lab's HOME, no `CHARLY_*`/`XDG_*` variables, in the project.
    pub(crate) fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        for (key, _) in std::env::vars_os() {
            let key_text = key.to_string_lossy();
            if key_text.starts_with("CHARLY_") || key_text.starts_with("XDG_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("HOME", self.dir.path().join("home"))
            .env("NO_COLOR", "1")
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

    /// The pids of the qemu processes started from this test's directory.
    pub(crate) fn qemus(&self) -> Vec<u32> {
        let mine = self.dir.path().to_string_lossy().into_owned();
        let mut pids = Vec::new();
        for e in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|p| p.parse::<u32>().ok()) else { continue };
            let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else { continue };
            let cmdline = String::from_utf8_lossy(&cmdline);
            let program = cmdline.split('\0').next().unwrap_or_default();
            if program.rsplit('/').next().is_some_and(|p| p.starts_with("qemu-system"))
                && cmdline.contains(&mine)
            {
                pids.push(pid);
            }
        }
        pids
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for pid in self.qemus() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
        let _ = Command::new("podman")
            .args(["rmi", "--force", &format!("localhost/{}:latest", self.name)])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let filter = format!("label=ai.opencharly.box={}", self.name);
        let _ = Command::new("podman")
            .args(["image", "prune", "--force", "--filter", &filter])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A free TCP port on 127.0.0.1 (bound and released).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
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
        Run {
            args: args.join(" "),
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            took: started.elapsed(),
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

    /// stdout as JSON, which must meet the outputSchema of the catalog leaf its arguments name
    /// (`vm build ...` → `vm.build`).
    #[track_caller]
    pub(crate) fn json(&self) -> serde_json::Value {
        use charly::McpTool as _;
        let json: serde_json::Value = serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", self.dump()));
        let words: Vec<&str> = self.args.split_whitespace().take(2).collect();
        let leaf = words.join(".");
        let catalog = charly_cli::cli::Cli::catalog();
        if let Some(schema) = catalog.get(&leaf).and_then(|t| t.output_schema()) {
            let schema = serde_json::Value::Object((**schema).clone());
            let validator = jsonschema::draft202012::new(&schema).expect("the outputSchema compiles");
            let errors: Vec<String> = validator.iter_errors(&json).map(|e| e.to_string()).collect();
            assert!(
                errors.is_empty(),
                "{leaf}: JSON that is not its outputSchema: {errors:?}\n{}",
                self.dump()
            );
        }
        json
    }
}
