//! Findings of issue 14's second fresh-user trial, each a clear error naming the box, the
//! field and the fix instead of something dropped silently or a raw podman error at start:
//! env-file lines, the deploy entry's env file, network and mount paths, a device the host
//! lacks, a bind of a file, a box name with capitals; `status` hints with the instance; each
//! stderr line of `charly mcp serve` written at once.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::config::Host;
use crate::util::{Box, container_exists, free_port};

#[test]
fn env_file_lines_are_checked_and_entry_values_fail_before_podman() {
    let name = "test-dx-entry";
    let h = Host::new(name, &[]);
    h.b.run(&["box", "build", name]).status(0);
    let container = format!("charly-{name}");
    let bad = h.home().join("bad.env");
    std::fs::write(&bad, "GOOD=1\nBADLINE\nexport X=2\n").unwrap();
    let bad_arg = bad.display().to_string();
    h.b.run(&["config", "setup", name, "--env-file", &bad_arg]).status(2).stderr_has(&[
        &format!("--env-file {bad_arg}: line 2: `BADLINE`: an env line is KEY=VALUE"),
        "line 3: `export X=2`: podman reads no `export`; write `X=2`",
        "nothing was changed",
    ]);
    assert!(h.deploy().is_none());
    // A good file recorded, then deleted: start names the entry's field, not podman's error.
    let good = h.home().join("good.env");
    std::fs::write(&good, "GOOD=1\n").unwrap();
    h.b.run(&["config", "setup", name, "--env-file", good.to_str().unwrap()]).status(0);
    std::fs::remove_file(&good).unwrap();
    let r = h.b.run(&["start", name]);
    r.status(2).stderr_has(&[&format!("deploy entry {name}: env_file"), "cannot read it", "--env-file FILE"]);
    assert!(!r.stderr.contains("podman run"), "{}", r.dump());
    assert!(!container_exists(&container));
    h.b.run(&["config", "remove", name]).status(0);

    // A network podman does not have: refused by setup, and by start for a hand-written entry.
    h.b.run(&["config", "setup", name, "--network", "test-dx-nosuchnet"])
        .status(2)
        .stderr_has(&["--network test-dx-nosuchnet: podman has no such network", "podman network create"]);
    let deploy = h.config().join("charly.yml");
    std::fs::write(&deploy, format!("deploy:\n  {name}:\n    network: test-dx-nosuchnet\n")).unwrap();
    let r = h.b.run(&["start", name]);
    r.status(2).stderr_has(&[&format!(
        "deploy entry {name}: network \"test-dx-nosuchnet\": podman has no such network"
    )]);
    assert!(!container_exists(&container));

    // Two volumes at one path: refused by setup, and by start for a hand-written entry.
    std::fs::remove_file(&deploy).unwrap();
    h.b.run(&["config", "setup", name, "-v", "a:/data", "-v", "b:/data"])
        .status(2)
        .stderr_has(&["volume b: /data is where volume a is mounted: one volume per container path"]);
    std::fs::write(
        &deploy,
        format!("deploy:\n  {name}:\n    volume: [{{name: a, path: /data}}, {{name: b, path: /data}}]\n"),
    )
    .unwrap();
    let r = h.b.run(&["start", name]);
    r.status(2).stderr_has(&[&format!(
        "box {name}: volume charly-{name}-b \"/data\": volume charly-{name}-a is mounted there too"
    )]);
    assert!(!container_exists(&container));
    std::fs::remove_file(&deploy).unwrap();

    // A bind of a file: said so, not "create it with mkdir -p".
    h.b.run(&["config", "setup", name, "-v", "www:/www", "--bind", "www=/etc/hostname"])
        .status(2)
        .stderr_has(&["/etc/hostname is a file, not a directory; bind a directory"]);
}

#[test]
fn a_device_the_host_lacks_and_a_name_with_capitals_are_refused_before_podman() {
    let name = "test-dx-dev";
    let b = Box::new(name);
    b.candy(name, "dv", "dv:\n  candy: {}\ndv-sec:\n  security: {devices: [/dev/test-dx-nonexistent]}\n");
    b.run(&["box", "build", name]).status(0);
    let r = b.run(&["start", name]);
    r.status(2).stderr_has(&[
        &format!("box {name}: security.devices \"/dev/test-dx-nonexistent\": /dev/test-dx-nonexistent does not exist on this host"),
        "nothing was started",
    ]);
    assert!(!container_exists(&format!("charly-{name}")));
    // A hand-written box name with capitals: validate says so, and nothing builds or is set up.
    let project = b.proj().join("charly.yml");
    let text = std::fs::read_to_string(&project).unwrap();
    std::fs::write(&project, format!("{text}test-dx-UP:\n  box:\n    base: {}\n", super::util::BUSYBOX))
        .unwrap();
    let validate = b.run(&["box", "validate"]);
    let said = format!("{}{}", validate.stdout, validate.stderr);
    assert!(said.contains("`test-dx-UP` is not a valid box name"), "{}", validate.dump());
    for args in [["box", "build", "test-dx-UP"], ["config", "setup", "test-dx-UP"]] {
        b.run(&args)
            .status(2)
            .stderr_has(&["`test-dx-UP` is not a valid box name: use 1 to 63 lowercase letters"]);
    }
    assert!(!b.proj().parent().unwrap().join("home/.config/charly/charly.yml").exists());
}

#[test]
fn status_hints_name_the_instance_and_a_taken_name() {
    let name = "test-dx-st";
    let b = Box::built(name);
    b.cleanup().containers(&[&format!("charly-{name}-x")]);
    let r = b.run(&["status", name, "-i", "p2"]);
    assert_eq!(
        r.status(0).stdout,
        format!("box {name} -i p2 has no container (start it with `charly start {name} -i p2`)\n")
    );
    // Box test-dx-st-x's container name is box test-dx-st instance x's.
    let project = b.proj().join("charly.yml");
    let text = std::fs::read_to_string(&project).unwrap();
    std::fs::write(&project, format!("{text}{name}-x:\n  box:\n    base: {}\n", super::util::BUSYBOX))
        .unwrap();
    b.run(&["start", name, "-i", "x"]).status(0);
    let r = b.run(&["status", &format!("{name}-x")]);
    r.status(0);
    assert!(
        r.stdout.starts_with(&format!("box {name}-x has no container: container charly-{name}-x")),
        "{}",
        r.dump()
    );
    assert!(r.stdout.contains(&format!("box {name} instance x")), "{}", r.dump());
}

#[test]
fn each_stderr_line_of_mcp_serve_is_one_write() {
    let b = Box::new("test-dx-write");
    let trace = b.proj().join("strace.txt");
    let port = free_port().to_string();
    let listen = format!("0.0.0.0:{port}");
    let mut serve = Command::new("strace");
    serve
        .args(["-f", "-s", "4096", "-e", "trace=write", "-e", "signal=none", "-o"])
        .arg(&trace)
        .arg(super::util::CHARLY)
        .args(["-C", b.proj().to_str().unwrap(), "mcp", "serve", "--listen", &listen])
        .env("HOME", b.proj().parent().unwrap().join("home"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // Its own process group: killing strace alone would leave charly serving on 0.0.0.0.
    std::os::unix::process::CommandExt::process_group(&mut serve, 0);
    let mut child = serve.spawn().expect("strace runs (scripts/runtimes.sh installs it)");
    let stop = Stop(format!("-{}", child.id()));
    // Until it serves: the line announcing it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let writes = loop {
        let text = std::fs::read_to_string(&trace).unwrap_or_default();
        if text.contains("charly: serving") {
            break text;
        }
        assert!(Instant::now() < deadline, "charly mcp serve never said it serves:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    };
    drop(stop);
    let _ = child.wait();
    // Each of its lines on fd 2 is a whole line in one write: the warning about listening
    // beyond loopback without a token, and the serving line.
    let lines: Vec<&str> = writes.lines().filter(|l| l.contains(" write(2, ")).collect();
    for needle in ["charly: warning: listening on", "charly: serving"] {
        let line = lines
            .iter()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no write of {needle:?}:\n{writes}"));
        assert!(line.contains("\\n\", "), "{needle:?} was not written with its newline at once:\n{writes}");
    }
    assert!(
        !lines.iter().any(|l| l.contains("write(2, \"charly: \", 8)")),
        "a line written in pieces:\n{writes}"
    );
}

/// Kills a process group (`kill -KILL -- -PGID`) when dropped, also when the test panics.
struct Stop(String);

impl Drop for Stop {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-KILL", "--", &self.0]).status();
    }
}

#[test]
fn small_things_of_the_trial() {
    let name = "test-dx-low";
    let h = Host::new(name, &[]);
    // A host port another entry records: refused with a remap, not found only when the
    // second container starts.
    let port = free_port();
    let p = format!("{port}:80");
    h.b.run(&["config", "setup", name, "-i", "c0", "-p", &p]).status(0);
    let r = h.b.run(&["config", "setup", name, "-i", "c1", "-p", &p]);
    r.status(2).stderr_has(&[&format!("host port {port} is deploy entry {name}/c0's too"), "remap it: `-p "]);
    // Encrypted volumes of a deployment without an entry: said once, without "box: box:".
    let r = h.b.run(&["config", "mount", name, "-i", "none"]);
    r.status(2).stderr_has(&[&format!("box {name}/none: encrypted volumes: it has no deploy entry")]);
    // An empty instance is refused, not taken for the box's own container.
    h.b.run(&["config", "status", name, "-i", ""]).status(2).stderr_has(&["instance \"\": it is empty"]);
    // Without $HOME the deploy file is the user's (from /etc/passwd), not /.config/...
    let home = Command::new("sh").args(["-c", "getent passwd \"$(id -u)\" | cut -d: -f6"]).output().unwrap();
    let home = String::from_utf8_lossy(&home.stdout).trim().to_owned();
    let mut cmd = h.b.charly();
    cmd.env_remove("HOME").env_remove("XDG_CONFIG_HOME").args(["deploy", "path"]);
    let out = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(said.contains(&format!("{home}/.config/charly/charly.yml")), "{said}");
    // check live --junit into a directory that is not there yet: made, the report kept.
    h.b.run(&["box", "build", name]).status(0);
    h.b.run(&["start", name]).status(0);
    let run = h.b.run(&["check", "live", name, "--junit", "out/j.xml"]);
    run.status(0);
    assert!(h.b.proj().join("out/j.xml").is_file(), "{}", run.dump());
}
