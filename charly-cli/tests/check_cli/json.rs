//! `--json` of every catalog leaf parses as its report type's JSON: one row per leaf (at least),
//! each run for real in a sample project, its stdout validated against the leaf's
//! `outputSchema` from [`Cli::catalog`]. A leaf without a row fails the test, so every new
//! family adds its rows here. For a handful of rows, the text without `--json` and the JSON
//! with it are both compared with the report of the same command run in-process
//! ([`commands::run`]): the terminal's two outputs describe one report.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use charly::McpTool;
use charly_cli::cli::Cli;
use charly_cli::{Ctx, commands};
use clap::Parser as _;
use serde_json::Value;

use crate::util::{Run, Server, TestDir};

/// A plan whose one step pings the server given with `--url`.
const PLAN: &str =
    "pinged:\n  check: the server answers ping\n  mcp: ping\n  context: [deploy]\n  stdout: \"ok\\n\"\n";

/// A plan with a problem: an unknown method.
const BAD_PLAN: &str = "pinged:\n  check: the server answers\n  mcp: pong\n  context: [deploy]\n";

/// A project with problems: a box without a base that names a missing candy.
const BROKEN: &str = "project:\n  version: 1\nweb:\n  box:\n    candy: [ghost]\n";

/// Where a row runs.
#[derive(Clone, Copy, Debug)]
enum Dir {
    /// The sample project (with plan files, a `.mcp.json` and a server on it).
    Sample,
    /// [`BROKEN`].
    Broken,
}

/// One run of one leaf.
struct Row {
    /// The catalog name (`box.list.boxes`).
    leaf: &'static str,
    dir: Dir,
    /// The arguments, without `--json`.
    argv: Vec<String>,
    /// The exit status: 0, or 1 for a report that records a failure.
    status: i32,
    /// A directory put first on PATH (a `podman` stand-in).
    path: Option<PathBuf>,
    /// Variables for the run.
    env: Vec<(String, String)>,
}

fn row(leaf: &'static str, argv: &[&str]) -> Row {
    Row {
        leaf,
        dir: Dir::Sample,
        argv: argv.iter().map(|a| a.to_string()).collect(),
        status: 0,
        path: None,
        env: Vec::new(),
    }
}

impl Row {
    fn status(mut self, status: i32) -> Row {
        self.status = status;
        self
    }

    fn dir(mut self, dir: Dir) -> Row {
        self.dir = dir;
        self
    }

    fn path(mut self, dir: &Path) -> Row {
        self.path = Some(dir.to_owned());
        self
    }

    fn env(mut self, vars: &[(&str, &str)]) -> Row {
        self.env.extend(vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        self
    }
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A local git repository holding the sample project (as tests/project/repo.rs makes one).
fn origin() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "--quiet"]);
    for (relative, contents) in charly_cli::project::SAMPLE_FILES {
        let path = dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "--quiet", "-m", "sample"]);
    dir
}

/// A directory holding an executable `podman` script.
fn podman(script: &str) -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("podman");
    std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// A stand-in for `podman` answering the two inspect calls of a box endpoint as podman does
/// for a running `charly-hello` whose image provides the `hello` server on container port
/// 18765, published on the port of `server` (a `charly mcp serve` of the test).
fn podman_for_running_hello(server: &Server) -> tempfile::TempDir {
    let port = server.url.trim_start_matches("http://127.0.0.1:").split('/').next().unwrap();
    let container = serde_json::json!([{
        "Name": "charly-hello",
        "State": {"Running": true, "Status": "running"},
        "ImageName": "ghcr.io/example/hello:latest",
        // What `charly start` labels it with (`check live` refuses a container of the box's
        // name without them).
        "Config": {"Labels": {"ai.opencharly.box": "hello", "ai.opencharly.run": "{}"}},
        "NetworkSettings": {"Ports": {"18765/tcp": [{"HostIp": "127.0.0.1", "HostPort": port}]}},
    }]);
    let label = r#"[{"name":"hello","url":"http://{{.ContainerName}}:18765/mcp","transport":"http"}]"#;
    let image = serde_json::json!([{"Labels": {"ai.opencharly.mcp_provide": label}}]);
    podman(&format!(
        "case \"$1\" in\n\
         inspect) cat <<'EOF'\n{container}\nEOF\n;;\n\
         image) cat <<'EOF'\n{image}\nEOF\n;;\n\
         *) echo \"podman stand-in: unexpected $*\" >&2; exit 125;;\n\
         esac\n"
    ))
}

/// A stand-in for `podman` with one local image whose `ai.opencharly.check` label holds a
/// `matching:` check, and a `pull` that prints an image id.
fn podman_with_labelled_image() -> tempfile::TempDir {
    let checks = r#"{"box":[{"id":"m","check":"a literal","matching":"hello","contains":"ell"}]}"#;
    let image =
        serde_json::json!([{"Id": "sha256:0123456789abcdef", "Labels": {"ai.opencharly.check": checks}}]);
    podman(&format!(
        "case \"$1\" in\n\
         image) cat <<'EOF'\n{image}\nEOF\n;;\n\
         pull) echo 0123456789abcdef0011;;\n\
         tag) ;;\n\
         *) echo \"podman stand-in: unexpected $*\" >&2; exit 125;;\n\
         esac\n"
    ))
}

/// The busybox base image `scripts/runtimes.sh` builds.
const BUSYBOX: &str = "localhost/charly-busybox:latest";

/// Podman's containers, volumes and images of a test, removed by name before and after it.
struct Podman {
    containers: Vec<String>,
    volumes: Vec<String>,
    images: Vec<String>,
}

impl Podman {
    /// Fails (never passes early) without podman and the base image.
    fn require_and_clean(containers: &[&str], volumes: &[&str], images: &[&str]) -> Podman {
        let exists = Command::new("podman").args(["image", "exists", BUSYBOX]).status();
        assert!(
            exists.is_ok_and(|s| s.success()),
            "podman with {BUSYBOX} is needed: run scripts/runtimes.sh as root"
        );
        let owned = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
        let p = Podman { containers: owned(containers), volumes: owned(volumes), images: owned(images) };
        p.clean();
        p
    }

    fn clean(&self) {
        for (args, names) in [
            (&["rm", "--force", "--time", "0"][..], &self.containers),
            (&["volume", "rm", "--force"][..], &self.volumes),
            (&["rmi", "--force"][..], &self.images),
        ] {
            let _ = Command::new("podman").args(args).args(names).output();
        }
        // Earlier builds and the build cache of the rows' box.
        let prune = ["image", "prune", "--force", "--filter", "label=ai.opencharly.box=test-json"];
        let _ = Command::new("podman").args(prune).output();
    }
}

impl Drop for Podman {
    fn drop(&mut self) {
        self.clean();
    }
}

/// PATH with `dir` first.
fn path_with(dir: &Path) -> OsString {
    let mut dirs = vec![dir.to_owned()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap()
}

fn run_row(t: &TestDir, row: &Row, json: bool) -> Run {
    let mut args: Vec<&str> = row.argv.iter().map(String::as_str).collect();
    if json {
        args.push("--json");
    }
    let mut cmd = t.charly();
    cmd.args(&args);
    if let Some(dir) = &row.path {
        cmd.env("PATH", path_with(dir));
    }
    for (key, value) in &row.env {
        cmd.env(key, value);
    }
    Run::of(&mut cmd, &args)
}

/// The errors of `json` against the leaf's `outputSchema`, with where they are.
fn schema_errors(leaf: &str, json: &Value) -> Vec<String> {
    let catalog = Cli::catalog();
    let tool = catalog.get(leaf).unwrap_or_else(|| panic!("{leaf} is not in the catalog"));
    let schema = tool.output_schema().unwrap_or_else(|| panic!("{leaf} has no outputSchema"));
    let schema = Value::Object((**schema).clone());
    let validator = jsonschema::draft202012::new(&schema)
        .unwrap_or_else(|e| panic!("{leaf}: the outputSchema does not compile: {e}"));
    validator.iter_errors(json).map(|e| format!("at {:?}: {e}", e.instance_path().to_string())).collect()
}

#[test]
fn json_of_every_leaf_parses_as_its_report_type() {
    let t = TestDir::sample();
    t.write("plan.yml", PLAN);
    t.write("bad-plan.yml", BAD_PLAN);
    let broken = TestDir::new();
    broken.write("charly.yml", BROKEN);
    let server = t.serve();
    let url = server.url.as_str();
    t.write(".mcp.json", &serde_json::json!({"mcpServers": {"self": {"url": url}}}).to_string());
    let origin = origin();
    let origin = origin.path().to_str().unwrap();
    // Real podman (scripts/runtimes.sh installs it) builds and runs box `test-json` on the
    // local busybox image; whatever the rows leave is removed by name when the test ends.
    let _podman = Podman::require_and_clean(
        &["charly-test-json"],
        &["charly-test-json-data"],
        &["ghcr.io/example/test-json:latest"],
    );
    // A running box is the deploy issue's too: until then podman's two inspect calls are
    // answered for a `charly-hello` container whose server is this test's `charly mcp serve`.
    let live_podman = podman_for_running_hello(&server);
    let labelled = podman_with_labelled_image();
    let host = HostState::new();
    let (missing, bad_plan) = (r#"{"path": "missing.yml"}"#, r#"{"target": "bad-plan.yml"}"#);
    let call_missing = ["check", "mcp", "call", "--tool", "box.cat", "--input", missing, "--url", url];
    let call_failing =
        ["check", "mcp", "call", "--tool", "check.validate", "--input", bad_plan, "--url", url];
    let read = ["check", "mcp", "read", "--uri", "charly://project/charly.yml", "--url", url];

    let rows = [
        row("version", &["version"]),
        row("doctor", &["doctor"]),
        row("doctor", &["doctor"]).dir(Dir::Broken),
        row("box.new.project", &["box", "new", "project", "sub"]),
        row("box.new.box", &["box", "new", "box", "web", "--base", "quay.io/fedora/fedora:43"]),
        row("box.new.candy", &["box", "new", "candy", "tools"]),
        row("box.set", &["box", "set", "web.box.description", "a web box"]),
        // The same value again: a report of no change.
        row("box.set", &["box", "set", "web.box.description", "a web box"]),
        row("box.add-candy", &["box", "add-candy", "web", "tools"]),
        row("box.rm-candy", &["box", "rm-candy", "web", "tools"]),
        row("box.add-candy", &["box", "add-candy", "web", "tools"]),
        row("box.write", &["box", "write", "box/README.md", "--content", "# hello\n"]),
        row("box.cat", &["box", "cat", "charly.yml"]),
        row("box.fetch", &["box", "fetch", origin]),
        row("box.fetch", &["box", "fetch", origin]),
        row("box.refresh", &["box", "refresh", origin]),
        row("box.validate", &["box", "validate"]),
        row("box.validate", &["box", "validate"]).dir(Dir::Broken).status(1),
        row("box.inspect", &["box", "inspect", "hello"]),
        row("box.inspect", &["box", "inspect", "web"]),
        row("box.list.boxes", &["box", "list", "boxes"]),
        row("box.list.candies", &["box", "list", "candies"]),
        row("box.list.checks", &["box", "list", "checks"]),
        row("box.list.aliases", &["box", "list", "aliases"]),
        row("box.list.routes", &["box", "list", "routes"]),
        row("box.list.services", &["box", "list", "services"]),
        row("box.list.targets", &["box", "list", "targets"]),
        row("box.list.volumes", &["box", "list", "volumes"]),
        row("box.generate", &["box", "generate", "hello"]),
        row("box.new.box", &["box", "new", "box", "test-json", "--base", BUSYBOX]),
        row("box.build", &["box", "build", "test-json"]),
        // The plan, then the merge (one busybox layer and the build's: or nothing to merge).
        row("box.merge", &["box", "merge", "test-json", "--dry-run"]),
        row("box.merge", &["box", "merge", "test-json", "--max-mb", "1000"]),
        row("start", &["start", "test-json", "--volume", "data:/data", "--env", "A=1"]),
        row("status", &["status"]),
        row("status", &["status", "test-json"]),
        row("logs", &["logs", "test-json"]),
        row("cmd", &["cmd", "test-json", "echo $A"]),
        row("cmd", &["cmd", "test-json", "exit 3"]).status(3),
        // The busybox box declares no services: each service leaf is a clean refusal
        // (tests/deploy/service.rs runs them for real on a Debian box).
        row("service.status", &["service", "status", "test-json"]).status(2),
        row("service.start", &["service", "start", "test-json", "web"]).status(2),
        row("service.stop", &["service", "stop", "test-json", "web"]).status(2),
        row("service.restart", &["service", "restart", "test-json", "web"]).status(2),
        row("shell", &["shell", "test-json", "--command", "ls /data"]),
        row("update", &["update", "test-json"]),
        row("stop", &["stop", "test-json", "--timeout", "2"]),
        // Stopped: a disposable container of the image.
        row("shell", &["shell", "test-json", "--command", "echo disposable"]),
        row("remove", &["remove", "test-json", "--purge"]),
        row("remove", &["remove", "test-json"]),
        row("status", &["status", "test-json"]),
        row("candy.set", &["candy", "set", "tools", "tools.candy.description", "tools for web"]),
        row("candy.add-rpm", &["candy", "add-rpm", "tools", "curl", "jq"]),
        row("candy.add-deb", &["candy", "add-deb", "tools", "curl"]),
        row("candy.add-pac", &["candy", "add-pac", "tools", "curl"]),
        row("candy.add-aur", &["candy", "add-aur", "tools", "yay"]),
        row("check.mcp.ping", &["check", "mcp", "ping", "--url", url]),
        row("check.mcp.ping", &["check", "mcp", "ping", "--server", "self"]),
        row("check.mcp.ping", &["check", "mcp", "ping", "hello"]).path(live_podman.path()),
        row("check.mcp.servers", &["check", "mcp", "servers"]),
        row("check.mcp.servers", &["check", "mcp", "servers", "hello"]).path(live_podman.path()),
        row("check.mcp.list-tools", &["check", "mcp", "list-tools", "--url", url]),
        row("check.mcp.list-resources", &["check", "mcp", "list-resources", "--url", url]),
        row("check.mcp.list-prompts", &["check", "mcp", "list-prompts", "--url", url]),
        // `charly mcp serve` serves no skills: both say the server does not declare them.
        row("check.mcp.list-skills", &["check", "mcp", "list-skills", "--url", url]).status(2),
        row(
            "check.mcp.read-skill",
            &["check", "mcp", "read-skill", "--uri", "skill://x/SKILL.md", "--url", url],
        )
        .status(2),
        row("check.mcp.call", &["check", "mcp", "call", "--tool", "version", "--url", url]),
        row("check.mcp.call", &["check", "mcp", "call", "--tool", "box.list.checks", "--url", url]),
        // A tool that errors (no structured content) and one whose report records a failure
        // (structured content all the same): both exit 1.
        row("check.mcp.call", &call_missing).status(1),
        row("check.mcp.call", &call_failing).status(1),
        row("check.mcp.read", &read),
        // charly's own server gives `_` names to the clients that reject dots (`--tool-names
        // auto`): linted as each host's client, every host passes; linted as a client it gives
        // dotted names to, Claude's, OpenAI's and Copilot's name rule fails.
        row("check.mcp.lint", &["check", "mcp", "lint", "--url", url]),
        row("check.mcp.lint", &["check", "mcp", "lint", "--client-name", "cursor-vscode", "--url", url])
            .status(1),
        // Nothing cached for the server: said so, exit 0.
        row("check.mcp.logout", &["check", "mcp", "logout", "--url", url]),
        row("mcp.install", &["mcp", "install", "cursor", "--print"]),
        row("mcp.install", &["mcp", "install", "cursor"]),
        row("mcp.install", &["mcp", "install", "cursor"]),
        row(
            "mcp.install",
            &[
                "mcp",
                "install",
                "codex",
                "--scope",
                "project",
                "--url",
                url,
                "--token-env",
                "CHARLY_TEST_TOKEN",
            ],
        ),
        row("mcp.uninstall", &["mcp", "uninstall", "cursor", "--print"]),
        row("mcp.uninstall", &["mcp", "uninstall", "cursor"]),
        row("mcp.uninstall", &["mcp", "uninstall", "cursor"]),
        row("check.run", &["check", "run", "plan.yml", "--url", url]),
        row("check.run", &["check", "run", "plan.yml", "--url", url, "--junit", "junit.xml"]),
        // No server for the plan's mcp: step: a failed check.
        row("check.run", &["check", "run", "plan.yml"]).status(1),
        row("check.run", &["check", "run", "plan.yml", "--context", "build"]),
        row("check.live", &["check", "live", "hello"]).path(live_podman.path()),
        row("check.box", &["check", "box", "hello"]),
        // The label's one check needs no container; the pull comes from a local archive.
        row("box.test", &["box", "test", "ghcr.io/example/hello:latest"]).path(labelled.path()),
        row("box.pull", &["box", "pull", "hello", "--from", "oci-archive:/tmp/base.tar"])
            .path(labelled.path()),
        row("check.validate", &["check", "validate", "plan.yml"]),
        row("check.validate", &["check", "validate", "hello"]),
        row("check.validate", &["check", "validate", "bad-plan.yml"]).status(1),
    ];
    let cdp = crate::cdp_lab::Lab::new();
    let bus = crate::dbus_bus::Bus::new(true);
    let vnc = crate::vnc_lab::Lab::x11vnc(320, 240, None);
    let tmux = TmuxLab::new();
    let wl = crate::wl_lab::Lab::new();
    let rows: Vec<Row> = rows
        .into_iter()
        .chain(host_rows(&t, &host))
        .chain(cdp_rows(&cdp))
        .chain(dbus_rows(&bus))
        .chain(vnc_rows(&vnc))
        .chain(tmux_rows(&tmux))
        .chain(vm_rows())
        .chain(wl_rows(&wl))
        .collect();

    // Every leaf has a row, and every row names a leaf (a read-only build has fewer leaves).
    let catalog = Cli::catalog();
    let leaves: BTreeSet<&str> = catalog.tools().iter().map(|tool| tool.name()).collect();
    let covered: BTreeSet<&str> = rows.iter().map(|row| row.leaf).collect();
    let missing: Vec<&&str> = leaves.difference(&covered).collect();
    assert!(missing.is_empty(), "catalog leaves without a row here (add one for each): {missing:?}");
    let unknown: Vec<&&str> = covered.difference(&leaves).collect();
    // (A read-only build leaves the destructive leaves out of the catalog, not out of the
    // command line: their rows run, for the rows after them, but have no schema to meet.)
    if !cfg!(feature = "read-only") {
        assert!(unknown.is_empty(), "rows for no leaf of the catalog: {unknown:?}");
    }
    assert!(rows.iter().any(|row| row.status == 1), "no row records a failure");

    let mut failures = Vec::new();
    for row in &rows {
        let dir = match row.dir {
            Dir::Sample => &t,
            Dir::Broken => &broken,
        };
        let run = run_row(dir, row, true);
        run.status(row.status);
        if row.status == 2 {
            // A leaf that runs on a terminal only: as a tool (no terminal) it is an error that
            // says so, with nothing on stdout.
            assert!(run.stderr.starts_with("charly: ") && run.stdout.is_empty(), "{}", run.dump());
            continue;
        }
        // A failure: 1, or a command's own status (`cmd`).
        if row.status != 0 {
            assert!(run.stderr.starts_with("charly: ") && run.stderr.ends_with('\n'), "{}", run.dump());
        } else {
            // Only warnings (a leaf that prints secrets says so).
            assert!(run.stderr.lines().all(|l| l.starts_with("charly: warning: ")), "{}", run.dump());
        }
        let json = run.json();
        assert!(json.is_object(), "{}: the JSON root is not an object\n{}", row.leaf, run.dump());
        assert!(run.stdout.ends_with("}\n"), "{}", run.dump());
        if !leaves.contains(row.leaf) {
            continue;
        }
        let errors = schema_errors(row.leaf, &json);
        if !errors.is_empty() {
            failures.push(format!("{} ({}): {errors:#?}\n{json:#}", row.leaf, run.args));
        }
    }
    assert!(failures.is_empty(), "JSON that is not its leaf's outputSchema:\n{}", failures.join("\n\n"));
    // The rows ran in the served project, one after the other: their edits are there.
    assert!(t.read("charly.yml").contains("web:"));
    assert!(!server.log().contains("panicked"), "{}", server.log());
}

/// A private tmux server for the `tmux.*` and `record.*` rows: `-L` socket in its own
/// `TMUX_TMPDIR` (`TMUX` emptied, so a test run inside tmux never reaches that server),
/// recordings in its own `XDG_RUNTIME_DIR`; the server is killed at drop.
struct TmuxLab {
    dir: tempfile::TempDir,
    socket: String,
}

impl TmuxLab {
    fn new() -> TmuxLab {
        let dir = tempfile::Builder::new().prefix("test-tm-rows-").tempdir().unwrap();
        for sub in ["tmux", "run"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let run = dir.path().join("run");
        std::fs::set_permissions(&run, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        TmuxLab { dir, socket: format!("test-tm-rows-{}", std::process::id()) }
    }

    fn env(&self) -> Vec<(String, String)> {
        let at = |sub: &str| self.dir.path().join(sub).display().to_string();
        vec![
            ("TMUX".into(), String::new()),
            ("TMUX_TMPDIR".into(), at("tmux")),
            ("XDG_RUNTIME_DIR".into(), at("run")),
            ("SHELL".into(), "/bin/sh".into()),
        ]
    }
}

impl Drop for TmuxLab {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .env("TMUX_TMPDIR", self.dir.path().join("tmux"))
            .env_remove("TMUX")
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// The `tmux.*` and `record.*` rows on this machine, on [`TmuxLab`]'s server.
fn tmux_rows(lab: &TmuxLab) -> Vec<Row> {
    let env = lab.env();
    let on = |leaf: &'static str, args: &[&str]| {
        let (family, verb) = leaf.split_once('.').unwrap();
        let mut argv = vec![family, verb, ".", "-L", &lab.socket];
        argv.extend_from_slice(args);
        let mut row = row(leaf, &argv);
        row.env.extend(env.iter().cloned());
        row
    };
    vec![
        on("tmux.list", &[]),
        on("tmux.run", &["-s", "rows", "sleep", "600"]),
        on("tmux.shell", &["-s", "sh"]),
        on("tmux.attach", &["-s", "sh"]),
        on("tmux.send", &["-s", "rows", "--literal", "x;"]),
        on("tmux.cmd", &["-s", "sh", "true"]),
        on("tmux.capture", &["-s", "rows", "-n", "5"]),
        on("tmux.list", &[]),
        on("record.start", &["-n", "rows"]),
        on("record.list", &[]),
        on("record.cmd", &["-n", "rows", "echo rows"]),
        on("record.stop", &["-n", "rows", "-o", "rows.cast"]),
        on("tmux.kill", &["-s", "rows"]),
        on("tmux.kill", &["-s", "sh"]),
    ]
}

/// The `check.vnc.*` rows, against Xvfb + x11vnc on loopback (no password); `passwd` stores
/// into the KeePass file the host rows made.
fn vnc_rows(lab: &crate::vnc_lab::Lab) -> Vec<Row> {
    let addr = format!("--vnc-addr={}", lab.addr);
    let on = |leaf: &'static str, args: &[&str]| {
        let mut argv = vec!["check", "vnc"];
        argv.extend_from_slice(args);
        argv.push(&addr);
        row(leaf, &argv)
    };
    vec![
        on("check.vnc.status", &["status", "."]),
        on("check.vnc.screenshot", &["screenshot", ".", "vnc.png"]),
        on("check.vnc.click", &["click", ".", "10", "10"]),
        on("check.vnc.mouse", &["mouse", ".", "20", "20"]),
        on("check.vnc.type", &["type", ".", "hi"]),
        on("check.vnc.key", &["key", ".", "Return"]),
        on("check.vnc.rfb", &["rfb", ".", "fbupdate-request"]),
        row("check.vnc.passwd", &["check", "vnc", "passwd", "hello", "--generate"])
            .env(&[("CHARLY_KDBX_PASSWORD", "rows-pw")]),
    ]
}

/// The `check.dbus.*` rows, on a private bus with a notification daemon.
fn dbus_rows(bus: &crate::dbus_bus::Bus) -> Vec<Row> {
    let env = [("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())];
    let (d, p) = ("org.freedesktop.DBus", "/org/freedesktop/DBus");
    vec![
        row("check.dbus.list", &["check", "dbus", "list", "."]).env(&env),
        row(
            "check.dbus.call",
            &[
                "check",
                "dbus",
                "call",
                ".",
                d,
                p,
                "org.freedesktop.DBus.GetNameOwner",
                "string:org.freedesktop.DBus",
            ],
        )
        .env(&env),
        row("check.dbus.introspect", &["check", "dbus", "introspect", ".", d, p]).env(&env),
        row("check.dbus.notify", &["check", "dbus", "notify", ".", "title", "body"]).env(&env),
    ]
}

/// The `check.cdp.*` rows, against the lab's Chromium: a form tab, a Selkies-like tab, and a
/// tab to close.
fn cdp_rows(lab: &crate::cdp_lab::Lab) -> Vec<Row> {
    let (url, form, spa, spare) = (lab.cdp_url(), lab.open("/form"), lab.open("/spa"), lab.open("/done"));
    let page = lab.page("/done");
    let on = |leaf: &'static str, args: &[&str]| {
        let mut argv = vec!["check", "cdp"];
        argv.extend_from_slice(args);
        argv.extend(["--cdp-url", url.as_str()]);
        row(leaf, &argv)
    };
    let (f, s) = (form.as_str(), spa.as_str());
    vec![
        on("check.cdp.status", &["status", "."]),
        on("check.cdp.list", &["list", "."]),
        on("check.cdp.open", &["open", ".", &page]),
        on("check.cdp.url", &["url", ".", f]),
        on("check.cdp.text", &["text", ".", f]),
        on("check.cdp.html", &["html", ".", f]),
        on("check.cdp.eval", &["eval", ".", f, "({a: 1})"]),
        on("check.cdp.wait", &["wait", ".", f, "#go"]),
        on("check.cdp.type", &["type", ".", f, "#name", "x"]),
        on("check.cdp.coords", &["coords", ".", f, "#go"]),
        on("check.cdp.axtree", &["axtree", ".", f, "Go"]),
        on("check.cdp.raw", &["raw", ".", f, "Runtime.evaluate", r#"{"expression": "1"}"#]),
        on("check.cdp.screenshot", &["screenshot", ".", f, "shot.png"]),
        on("check.cdp.click", &["click", ".", f, "#name"]),
        on("check.cdp.spa.status", &["spa", "status", ".", s]),
        on("check.cdp.spa.click", &["spa", "click", ".", s, "10", "10"]),
        on("check.cdp.spa.mouse", &["spa", "mouse", ".", s, "20", "20"]),
        on("check.cdp.spa.type", &["spa", "type", ".", s, "ab"]),
        on("check.cdp.spa.key", &["spa", "key", ".", s, "enter"]),
        on("check.cdp.spa.key-combo", &["spa", "key-combo", ".", s, "ctrl+a"]),
        on("check.cdp.close", &["close", ".", &spare]),
        // Nothing listens there: a status that records the failure.
        row("check.cdp.status", &["check", "cdp", "status", ".", "--cdp-url", "http://127.0.0.1:9"])
            .status(1),
    ]
}

/// The `check.wl.*` rows on this machine (`.`), on the lab's sway: the foot window is clicked,
/// typed into, focused, toggled and closed last; the xev window is read with xprop, closed by
/// sway's kill; the overlay rows start charly-overlay (it exits with sway).
fn wl_rows(lab: &crate::wl_lab::Lab) -> Vec<Row> {
    use crate::wl_lab::{FOOT, XEV};
    let on = |leaf: &'static str, args: &[&str]| {
        let mut argv = vec!["check", "wl"];
        argv.extend_from_slice(args);
        let mut row = row(leaf, &argv);
        row.env.extend(lab.env.iter().cloned());
        row
    };
    let (x, y, w, h) = lab.foot;
    let (cx, cy) = ((x + w / 2).to_string(), (y + h / 2).to_string());
    let (cx, cy) = (cx.as_str(), cy.as_str());
    let (x2, y2) = ((x + w / 2 + 40).to_string(), (y + h / 2 + 20).to_string());
    let overlay = |leaf: &'static str, args: &[&str]| on(leaf, args).path(&lab.overlay);
    vec![
        on("check.wl.status", &["status", "."]),
        on("check.wl.windows", &["windows", "."]),
        on("check.wl.toplevel", &["toplevel", "."]),
        on("check.wl.geometry", &["geometry", ".", FOOT]),
        on("check.wl.sway.tree", &["sway", "tree", "."]),
        on("check.wl.sway.workspaces", &["sway", "workspaces", "."]),
        on("check.wl.sway.outputs", &["sway", "outputs", "."]),
        on("check.wl.screenshot", &["screenshot", ".", "wl.png", "--region", "0,0 64x48"]),
        on("check.wl.xprop", &["xprop", ".", XEV]),
        on("check.wl.atspi", &["atspi", ".", "tree"]),
        on("check.wl.focus", &["focus", ".", FOOT]),
        on("check.wl.mouse", &["mouse", ".", cx, cy]),
        on("check.wl.click", &["click", ".", cx, cy]),
        on("check.wl.double-click", &["double-click", ".", cx, cy]),
        on("check.wl.scroll", &["scroll", ".", cx, cy, "down", "--amount", "1"]),
        on("check.wl.drag", &["drag", ".", cx, cy, &x2, &y2, "--duration", "50"]),
        on("check.wl.type", &["type", ".", "rows $(x)"]),
        on("check.wl.key", &["key", ".", "Return"]),
        on("check.wl.key-combo", &["key-combo", ".", "ctrl+a"]),
        on("check.wl.clipboard", &["clipboard", ".", "set", "rows"]),
        on("check.wl.clipboard", &["clipboard", ".", "get"]),
        on("check.wl.clipboard", &["clipboard", ".", "clear"]),
        on("check.wl.fullscreen", &["fullscreen", ".", FOOT]),
        on("check.wl.fullscreen", &["fullscreen", ".", FOOT]),
        on("check.wl.minimize", &["minimize", ".", FOOT]),
        on("check.wl.minimize", &["minimize", ".", FOOT]),
        on("check.wl.sway.msg", &["sway", "msg", ".", "[app_id=\"rows-foot\"] focus"]),
        on("check.wl.sway.focus", &["sway", "focus", ".", "app_id=rows-foot"]),
        on("check.wl.sway.floating", &["sway", "floating", "."]),
        on("check.wl.sway.resize", &["sway", "resize", ".", "width", "10px"]),
        on("check.wl.sway.floating", &["sway", "floating", "."]),
        on("check.wl.sway.layout", &["sway", "layout", ".", "tabbed"]),
        on("check.wl.sway.move", &["sway", "move", ".", "workspace", "2"]),
        on("check.wl.sway.workspace", &["sway", "workspace", ".", "2"]),
        on("check.wl.resolution", &["resolution", ".", "1920x1080"]),
        on("check.wl.sway.reload", &["sway", "reload", "."]),
        on("check.wl.exec", &["exec", ".", "true"]),
        overlay("check.wl.overlay.status", &["overlay", "status", "."]),
        overlay(
            "check.wl.overlay.show",
            &["overlay", "show", ".", "--type", "text", "--text", "rows", "--name", "r"],
        ),
        overlay("check.wl.overlay.list", &["overlay", "list", "."]),
        overlay("check.wl.overlay.hide", &["overlay", "hide", ".", "--all"]),
        overlay("check.wl.overlay.status", &["overlay", "status", "."]),
        // The foot window (focused, on workspace 2) closed by name, then xev by sway's kill.
        on("check.wl.close", &["close", ".", FOOT]),
        on("check.wl.sway.focus", &["sway", "focus", ".", &format!("title={XEV}")]),
        on("check.wl.sway.kill", &["sway", "kill", "."]),
    ]
}

/// What the host-state rows need: a GnuPG home with a key, a KeePass password, a `podman`
/// stand-in that knows the sample's image (with an alias label), an alias directory and a
/// udev root, all in one temporary directory.
struct HostState {
    dir: tempfile::TempDir,
    podman: tempfile::TempDir,
}

impl HostState {
    fn new() -> HostState {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let gnupg = dir.path().join("gnupg");
        std::fs::create_dir_all(&gnupg).unwrap();
        std::fs::set_permissions(&gnupg, std::fs::Permissions::from_mode(0o700)).unwrap();
        let gpg = |args: &[&str]| {
            let status = Command::new("gpg")
                .args(["--batch", "--pinentry-mode", "loopback", "--passphrase", ""])
                .args(args)
                .env("GNUPGHOME", &gnupg)
                .stderr(std::process::Stdio::null())
                .status()
                .expect("gpg is installed (scripts/runtimes.sh)");
            assert!(status.success(), "gpg {args:?}");
        };
        gpg(&["--quick-gen-key", "Rows <rows@example.invalid>", "ed25519", "sign,cert", "never"]);
        let out = Command::new("gpg")
            .args(["--batch", "--with-colons", "--list-keys", "rows@example.invalid"])
            .env("GNUPGHOME", &gnupg)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let fpr = text.lines().find_map(|l| l.strip_prefix("fpr:")).unwrap().trim_matches(':').to_owned();
        gpg(&["--quick-add-key", &fpr, "cv25519", "encr", "never"]);
        let label = r#"[{\"name\":\"hls\",\"command\":\"ls\"}]"#;
        let podman = podman(&format!(
            "case \"$1 $2\" in\n\
             'image exists') exit 0;;\n\
             'image inspect') echo '[{{\"Labels\": {{\"ai.opencharly.alias\": \"{label}\"}}}}]';;\n\
             *) echo \"podman stand-in: unexpected $*\" >&2; exit 125;;\n\
             esac\n"
        ));
        HostState { dir, podman }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_string_lossy().into_owned()
    }
}

/// The `vm.*` rows: `list` for real; the others on the sample's box, whose image is not built
/// here, each an error naming what is missing (tests/vm runs every leaf against real qemu and
/// checks its JSON against these schemas there).
fn vm_rows() -> Vec<Row> {
    vec![
        row("vm.list", &["vm", "list", "--all"]),
        row("vm.build", &["vm", "build", "hello"]).status(2),
        row("vm.create", &["vm", "create", "hello"]).status(2),
        row("vm.start", &["vm", "start", "hello"]).status(2),
        row("vm.stop", &["vm", "stop", "hello"]).status(2),
        row("vm.destroy", &["vm", "destroy", "hello"]).status(2),
        row("vm.console", &["vm", "console", "hello"]).status(2),
        row("vm.ssh", &["vm", "ssh", "hello", "--command", "true"]).status(2),
    ]
}

/// One row (at least) per host-state leaf: settings, secrets, secrets gpg, alias, udev, deploy.
fn host_rows(t: &TestDir, host: &HostState) -> Vec<Row> {
    t.write(".env", "API_TOKEN=tok\n");
    t.write(
        "deploy-in.yml",
        "# for deploy import\ndeploy:\n  web/2: {image: web, port: [\"8081:80\"], env: [A=1]}\n  api: {}\n",
    );
    let kdbx = [("CHARLY_KDBX_PASSWORD", "rows-pw")];
    let gnupg = host.path("gnupg");
    let gpg = [("GNUPGHOME", gnupg.as_str())];
    let (keys, dest, root) = (host.path("keys"), host.path("bin"), host.path("root"));
    let (keys, dest, root) = (keys.as_str(), dest.as_str(), root.as_str());
    let r = "rows@example.invalid";
    vec![
        row("settings.path", &["settings", "path"]),
        row("settings.get", &["settings", "get", "bind_address"]),
        row("settings.set", &["settings", "set", "run_mode", "direct"]),
        row("settings.get", &["settings", "get", "run_mode"]),
        row("settings.list", &["settings", "list"]),
        row("settings.reset", &["settings", "reset", "run_mode"]),
        row("settings.get", &["settings", "get", "secret_backend"]),
        row("settings.set", &["settings", "set", "vnc.password.web", "vnc-pw"]),
        row("settings.get", &["settings", "get", "vnc.password.web"]),
        row("settings.migrate-secrets", &["settings", "migrate-secrets", "--dry-run"]),
        row("secrets.path", &["secrets", "path"]),
        row("secrets.init", &["secrets", "init"]).env(&kdbx),
        row("secrets.set", &["secrets", "set", "charly/secret", "k", "v"]).env(&kdbx),
        row("secrets.get", &["secrets", "get", "charly/secret", "k"]).env(&kdbx),
        row("secrets.list", &["secrets", "list"]).env(&kdbx),
        row("secrets.export", &["secrets", "export", "--format", "json"]).env(&kdbx),
        row("secrets.import", &["secrets", "import", "--dry-run"]).env(&kdbx),
        row("secrets.import", &["secrets", "import"]).env(&kdbx),
        row("secrets.delete", &["secrets", "delete", "charly/secret", "k"]).env(&kdbx),
        row("settings.reset", &["settings", "reset"]),
        row("secrets.gpg.encrypt", &["secrets", "gpg", "encrypt", "-r", r]).env(&gpg),
        row("secrets.gpg.show", &["secrets", "gpg", "show"]).env(&gpg),
        row("secrets.gpg.env", &["secrets", "gpg", "env"]).env(&gpg),
        row("secrets.gpg.decrypt", &["secrets", "gpg", "decrypt", "-o", "plain.env"]).env(&gpg),
        row("secrets.gpg.set", &["secrets", "gpg", "set", "K2", "v2"]).env(&gpg),
        row("secrets.gpg.unset", &["secrets", "gpg", "unset", "K2"]).env(&gpg),
        row("secrets.gpg.add-recipient", &["secrets", "gpg", "add-recipient", r]).env(&gpg),
        row("secrets.gpg.recipients", &["secrets", "gpg", "recipients"]).env(&gpg),
        row("secrets.gpg.edit", &["secrets", "gpg", "edit"]).env(&gpg).status(2),
        row("secrets.gpg.export-key", &["secrets", "gpg", "export-key", keys]).env(&gpg),
        row("secrets.gpg.import-key", &["secrets", "gpg", "import-key", keys]).env(&gpg),
        row("secrets.gpg.setup", &["secrets", "gpg", "setup", "--passphrase", "", "--skip-secret-service"])
            .env(&gpg),
        row("secrets.gpg.doctor", &["secrets", "gpg", "doctor"]).env(&gpg),
        row("alias.add", &["alias", "add", "h1", "hello", "--dest", dest]).path(host.podman.path()),
        row("alias.install", &["alias", "install", "hello", "--dest", dest]).path(host.podman.path()),
        row("alias.list", &["alias", "list", "--dest", dest]),
        row("alias.remove", &["alias", "remove", "h1", "--dest", dest]),
        row("alias.uninstall", &["alias", "uninstall", "hello", "--dest", dest]),
        row("udev.generate", &["udev", "generate", "--root", root]),
        row("udev.install", &["udev", "install", "--root", root]),
        row("udev.status", &["udev", "status", "--root", root]),
        row("udev.remove", &["udev", "remove", "--root", root]),
        row("deploy.path", &["deploy", "path"]),
        row("deploy.show", &["deploy", "show"]),
        row("deploy.import", &["deploy", "import", "deploy-in.yml"]),
        row("deploy.show", &["deploy", "show", "web", "-i", "2"]),
        row("config.setup", &["config", "setup", "hello", "-i", "2", "-p", "18766:18765", "-e", "A=1"]),
        row("config.status", &["config", "status", "hello", "-i", "2"]),
        // No encrypted volume in this entry: each says so and names the setup that adds one.
        row("config.mount", &["config", "mount", "hello", "-i", "2"]).status(2),
        row("config.unmount", &["config", "unmount", "hello", "-i", "2"]).status(2),
        row("config.passwd", &["config", "passwd", "hello", "-i", "2", "--new-passphrase", "x"]).status(2),
        row("deploy.export", &["deploy", "export"]),
        row("deploy.export", &["deploy", "export", "web/2", "-o", "deploy-out.yml"]),
        row("deploy.status", &["deploy", "status"]),
        row("config.remove", &["config", "remove", "hello", "-i", "2"]),
        row("deploy.reset", &["deploy", "reset", "web", "-i", "2"]),
        row("deploy.reset", &["deploy", "reset"]),
    ]
}

/// The report of `argv` run in-process against `root`, as the binary would run it.
fn in_process(root: &Path, argv: &[&str]) -> charly_cli::report::Reply {
    let cli = Cli::try_parse_from(std::iter::once("charly").chain(argv.iter().copied()))
        .unwrap_or_else(|e| panic!("{argv:?} does not parse: {e}"));
    let ctx = Ctx::terminal(root.to_owned());
    let reply = commands::run(&cli, &ctx);
    ctx.finish();
    reply.unwrap_or_else(|e| panic!("{argv:?}: {e}"))
}

/// The binary's text and JSON of `argv` are the Display text and the JSON of one report.
#[track_caller]
fn same_report(t: &TestDir, argv: &[&str], status: i32) {
    let reply = in_process(&t.proj(), argv);
    let text = t.run(argv);
    text.status(status).stdout(&reply.text);
    let mut with_json: Vec<&str> = argv.to_vec();
    with_json.push("--json");
    let json = t.run(&with_json);
    json.status(status).stdout(&reply.json_text());
    assert_eq!(text.stderr, json.stderr, "the two runs fail alike\n{}\n{}", text.dump(), json.dump());
    assert_eq!(reply.failure.is_some(), status == 1);
}

#[test]
fn text_and_json_are_one_report() {
    let t = TestDir::sample();
    t.write("plan.yml", PLAN);
    t.write("bad-plan.yml", BAD_PLAN);
    let server = t.serve();
    t.write(".mcp.json", &serde_json::json!({"mcpServers": {"self": {"url": server.url}}}).to_string());
    for argv in [
        &["version"][..],
        &["doctor"],
        &["box", "list", "boxes"],
        &["box", "list", "candies"],
        &["box", "list", "checks"],
        &["box", "validate"],
        &["box", "inspect", "hello"],
        &["box", "cat", "candy/hello-svc/charly.yml"],
        &["check", "validate", "plan.yml"],
        &["check", "validate", "hello"],
        &["check", "mcp", "servers"],
        &["check", "mcp", "list-tools", "--server", "self"],
        &["check", "mcp", "read", "--uri", "charly://project/charly.yml", "--server", "self"],
        &["check", "mcp", "call", "--tool", "box.list.boxes", "--server", "self"],
    ] {
        same_report(&t, argv, 0);
    }
    same_report(&t, &["check", "validate", "bad-plan.yml"], 1);
    let bad_plan = r#"{"target": "bad-plan.yml"}"#;
    same_report(
        &t,
        &["check", "mcp", "call", "--tool", "check.validate", "--input", bad_plan, "--server", "self"],
        1,
    );
    let broken = TestDir::new();
    broken.write("charly.yml", BROKEN);
    same_report(&broken, &["box", "validate"], 1);
    same_report(&broken, &["doctor"], 0);

    // An edit: three identical projects, one for each run.
    let edit = ["box", "set", "hello.box.description", "a box"];
    let (a, b, c) = (TestDir::sample(), TestDir::sample(), TestDir::sample());
    let reply = in_process(&a.proj(), &edit);
    assert!(reply.text.starts_with("set hello.box.description"), "{}", reply.text);
    b.run(&edit).status(0).stdout(&reply.text);
    let mut with_json = edit.to_vec();
    with_json.push("--json");
    c.run(&with_json).status(0).stdout(&reply.json_text());
    assert_eq!(a.read("charly.yml"), b.read("charly.yml"));
    assert_eq!(b.read("charly.yml"), c.read("charly.yml"));
}
