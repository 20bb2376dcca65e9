//! The issue's end-to-end case, for real: a Debian box (the mmdebstrap image
//! `scripts/runtimes.sh` builds) whose candy runs this test's own `charly mcp serve` under
//! supervisord (the binary bind-mounted from the host: same glibc) and declares it as its
//! `mcp_provide`. `config setup --bind project=<dir>` binds another project into it, `start`
//! runs it, and `check live --filter mcp` passes: `ping`, `list-tools` (exactly the catalog
//! the host's charly lists), `call version`, and `call box.list.boxes` listing the boxes of the
//! bound project. Then `stop` and `remove --purge`, after which nothing of the deployment is
//! left: no container, volume, podman secret, unit file or deploy entry.

use std::path::Path;
use std::process::Command;

use crate::config::{remove_secrets, secrets};
use crate::util::{Box, CHARLY, DEBIAN, container_exists, free_port};

/// The box's name (its container is `charly-test-e2e`).
const NAME: &str = "test-e2e";

/// The candy: the server as a supervisord program, its port, where the project and the
/// binary are mounted, the server it provides, and the deploy checks of `mcp:` steps.
/// `CATALOG` and `VERSION` are replaced by the test.
const CANDY: &str = r#"
mcp:
  candy: {description: "charly's own MCP server, run by supervisord"}
mcp-svc:
  service:
    - {name: charly, command: "/opt/charly/charly -C /project mcp serve --listen 0.0.0.0:18765 --no-default-repo"}
mcp-port:
  port: [18765]
mcp-volume:
  volume: [{name: project, path: /project}, {name: bin, path: /opt/charly}]
mcp-env:
  env: [HOME=/root]
mcp-provide:
  mcp_provide:
    - {name: charly, url: "http://{{.ContainerName}}:18765/mcp", transport: http}
mcp-ping:
  check: the server in the container answers ping
  mcp: ping
  context: [deploy]
  eventually: 60s
  retry_interval: 250ms
  stdout: "ok\n"
mcp-tools:
  check: it lists the full catalog
  mcp: list-tools
  context: [deploy]
  stdout: CATALOG
mcp-version:
  check: call version
  mcp: call
  tool: version
  context: [deploy]
  stdout: {contains: VERSION}
mcp-boxes:
  check: call box.list.boxes lists the bound project's boxes
  mcp: call
  tool: box.list.boxes
  context: [deploy]
  stdout: "alpha\nbeta\n"
"#;

/// What the host's own charly lists as its tools (`check mcp list-tools` against
/// `charly mcp serve --stdio`, named in a `.mcp.json`).
fn host_catalog(b: &Box, dir: &Path) -> String {
    let json =
        serde_json::json!({"mcpServers": {"host": {"command": CHARLY, "args": ["mcp", "serve", "--stdio"]}}});
    let file = dir.join("host.mcp.json");
    std::fs::write(&file, json.to_string()).unwrap();
    let run =
        b.run(&["check", "mcp", "list-tools", "--server", "host", "--mcp-json", file.to_str().unwrap()]);
    run.status(0).stdout.clone()
}

/// The bound project: two boxes on any base (nothing is built from it).
fn other_project(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("charly.yml"),
        "project:\n  version: 1\nalpha:\n  box:\n    base: localhost/charly-busybox:latest\nbeta:\n  box:\n    base: localhost/charly-busybox:latest\n",
    )
    .unwrap();
}

fn podman_lines(args: &[&str]) -> Vec<String> {
    let out = Command::new("podman").args(args).output().unwrap();
    assert!(out.status.success(), "podman {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| !l.is_empty()).map(str::to_owned).collect()
}

/// Everything podman, the unit directory and the deploy file hold of the deployment.
pub(super) fn leftovers(home: &Path, container: &str) -> Vec<String> {
    let mut left = Vec::new();
    let filter = format!("name=^{container}$");
    left.extend(podman_lines(&["ps", "-a", "--filter", &filter, "--format", "{{.Names}}"]));
    left.extend(
        podman_lines(&["volume", "ls", "--format", "{{.Name}}"])
            .into_iter()
            .filter(|v| v.starts_with(&format!("{container}-"))),
    );
    left.extend(secrets(container));
    let units = home.join(".config/containers/systemd");
    if let Ok(dir) = std::fs::read_dir(&units) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with(container) {
                left.push(e.path().display().to_string());
            }
        }
    }
    let deploy = std::fs::read_to_string(home.join(".config/charly/charly.yml")).unwrap_or_default();
    let parsed: serde_json::Value = yaml_serde::from_str(&deploy).unwrap_or_default();
    let key = container.strip_prefix("charly-").unwrap();
    if parsed.get("deploy").and_then(|d| d.get(key)).is_some() {
        left.push(format!("deploy entry {key}:\n{deploy}"));
    }
    left
}

#[test]
fn charly_serves_itself_from_a_box_and_check_live_proves_it() {
    let b = Box::with_base(NAME, DEBIAN);
    let container = format!("charly-{NAME}");
    remove_secrets(&container);
    b.cleanup().volumes(&[&format!("{container}-bin"), &format!("{container}-project")]);
    let scratch = b.proj().parent().unwrap().to_owned();
    let home = scratch.join("home");
    // A secret too, so `remove --purge` has a podman secret to take away.
    std::fs::create_dir_all(home.join(".config/charly")).unwrap();
    std::fs::write(
        home.join(".config/charly/config.yml"),
        "secret_backend: config\nvnc_passwords:\n  charly/secret/TOKEN: e2e\n",
    )
    .unwrap();

    let catalog = host_catalog(&b, &scratch);
    let tools = catalog.lines().count();
    assert!(tools > 90, "the host lists only {tools} tools:\n{catalog}");
    let version = format!("charly {}", env!("CARGO_PKG_VERSION"));
    let candy = CANDY
        .replace("CATALOG", &serde_json::to_string(&catalog).unwrap())
        .replace("VERSION", &serde_json::to_string(&version).unwrap());
    b.candy(NAME, "mcp", &candy);
    b.run(&["box", "validate"]).status(0);
    b.run(&["box", "build", NAME]).status(0);

    // The binary this test runs, in a directory of its own (the bind is of a directory).
    let bin = scratch.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(CHARLY, bin.join("charly")).unwrap();
    let project = scratch.join("other");
    other_project(&project);
    let port = free_port();
    let publish = format!("{port}:18765");
    let bind_project = format!("project={}", project.display());
    let bind_bin = format!("bin={}", bin.display());
    let setup = b
        .run(&[
            "config",
            "setup",
            NAME,
            "--bind",
            &bind_project,
            "--bind",
            &bind_bin,
            "-p",
            &publish,
            "--secret",
            "TOKEN",
            "--run-mode",
            "direct",
            "--json",
        ])
        .status(0)
        .json();
    assert_eq!(setup["secrets"][0]["podman"], format!("{container}-TOKEN"), "{setup}");

    let started = b.run(&["start", NAME, "--json"]).status(0).json();
    assert_eq!(
        started["command"],
        serde_json::json!(["supervisord", "-n", "-c", "/etc/charly/supervisord.conf"])
    );
    let run = b.run(&["check", "live", NAME, "--filter", "mcp", "--json"]);
    let report = run.json();
    let results = report["results"].as_array().unwrap();
    let verdicts: Vec<(String, String)> = results
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_owned(), r["verdict"].as_str().unwrap().to_owned()))
        .collect();
    let want: Vec<(String, String)> = ["mcp-ping", "mcp-tools", "mcp-version", "mcp-boxes"]
        .iter()
        .map(|n| (n.to_string(), "pass".to_owned()))
        .collect();
    let logs = b.run(&["logs", NAME]).stdout.clone();
    assert_eq!(verdicts, want, "{}\ncontainer logs:\n{logs}", run.dump());
    run.status(0);
    let boxes = results.iter().find(|r| r["name"] == "mcp-boxes").unwrap();
    assert!(boxes["stdout"].as_str().unwrap().contains("alpha"), "{}", run.dump());

    b.run(&["stop", NAME]).status(0);
    assert!(container_exists(&container));
    let removed = b.run(&["remove", NAME, "--purge", "--json"]).status(0).json();
    assert_eq!(removed["entry_removed"], true, "{removed}");
    assert_eq!(removed["secrets"], serde_json::json!([format!("{container}-TOKEN")]), "{removed}");
    let left = leftovers(&home, &container);
    assert!(left.is_empty(), "left after remove --purge: {left:#?}");
    // The bound directories are the host's: they stay as they were.
    assert!(project.join("charly.yml").is_file() && bin.join("charly").is_file());
}
