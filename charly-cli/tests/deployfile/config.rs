//! `config setup`, parallel writers, the leaves as MCP tools, `deploy status` against podman.

use std::process::{Command, Stdio};

use super::{CHARLY, HAND, Home, mode, run};

/// A project with one box, `web`.
const PROJECT: &str = "project:\n  version: 1\nweb:\n  box:\n    base: quay.io/fedora/fedora:43\n";

#[test]
fn config_setup_writes_a_deploy_entry_for_a_box_and_keeps_the_rest_of_the_file() {
    let h = Home::new();
    h.write_proj("charly.yml", PROJECT);
    // A fresh host: the file is made, mode 0600.
    let json = h.run(&["config", "setup", "web", "-p", "8080:80", "-e", "A=1", "--json"]).ok().json();
    assert_eq!(json["key"], "web");
    assert_eq!(json["changed"], true);
    // The run mode is recorded too (direct here: no systemd as PID 1), so a later setup keeps it.
    assert_eq!(
        json["entry"],
        serde_json::json!({"image": "web", "port": ["8080:80"], "env": ["A=1"], "run_mode": "direct"})
    );
    assert_eq!(mode(&h.deploy()), 0o600);
    // A hand-edited file: env merges by key, the comments and other entries stay.
    h.write(HAND);
    let env = h.write_proj("web.env", "B=2\n");
    let args = ["config", "setup", "web", "-i", "2", "-e", "B=3", "--env-file", "web.env", "--json"];
    let json = h.run(&args).ok().json();
    assert_eq!(json["entry"]["port"], serde_json::json!(["8081:80"]), "ports not given stay");
    assert_eq!(json["entry"]["env"], serde_json::json!(["B=3"]));
    assert_eq!(json["entry"]["env_file"], env.display().to_string());
    let text = h.read().unwrap();
    assert!(text.starts_with("# This host's deployments (edited by hand).\n"), "{text}");
    assert!(text.contains("  # the notebook\n") && text.contains("# published on 127.0.0.1"), "{text}");
    // The same again: nothing changes.
    let json = h.run(&args).ok().json();
    assert_eq!(json["changed"], false);
    assert_eq!(h.read().unwrap(), text);
    let json = h.run(&["config", "setup", "jupyter", "-e", "X=1", "--json"]);
    // jupyter is in the deploy file but not a box of this project.
    let err = json.fails();
    assert!(err.stderr.contains("jupyter") && err.stderr.contains("web"), "{}", err.dump());
    // Bad input: nothing changes, the error names the argument (clap's own for --env and
    // --port, which are checked as they are parsed).
    for (args, says) in [
        (&["config", "setup", "nope"][..], "nope"),
        (&["config", "setup", "web", "-e", "NOEQUALS"], "--env"),
        (&["config", "setup", "web", "-p", "80:http"], "--port"),
        (&["config", "setup", "web", "--env-file", "missing.env"], "--env-file"),
        (&["config", "setup", "web", "-i", "a/b"], "instance"),
    ] {
        let err = h.run(args);
        assert!(err.status == 2 && err.stdout.is_empty() && err.stderr.contains(says), "{}", err.dump());
        assert_eq!(h.read().unwrap(), text, "{}", err.dump());
    }
}

/// Comments of a hand-edited file survive `config setup` editing its block lists item by item
/// (not rewritten as flow lists), and a file of comments only keeps them.
#[test]
fn config_setup_keeps_the_comments_of_block_lists_and_of_a_comment_only_file() {
    let h = Home::new();
    h.write_proj("charly.yml", PROJECT);
    h.write(
        "# top\ndeploy:\n  web:\n    image: web\n    env:\n      # first\n      - A=1   # one\n      - B=2\n    \
         port:\n      - \"8080:80\"  # published\n",
    );
    h.run(&["config", "setup", "web", "-e", "A=9", "-e", "C=3", "-p", "8080:80", "-p", "9090:90"]).ok();
    let text = h.read().unwrap();
    let env = "    env:\n      # first\n      - A=9   # one\n      - B=2\n      - C=3\n";
    assert!(text.contains(env), "{text}");
    assert!(text.contains("    port:\n      - \"8080:80\"  # published\n      - \"9090:90\"\n"), "{text}");
    // --clean drops items from the end; the first item's comments stay.
    h.run(&["config", "setup", "web", "--clean", "-e", "A=1"]).ok();
    let text = h.read().unwrap();
    assert!(text.contains("    env:\n      # first\n      - A=1   # one\n    port:"), "{text}");
    // A file holding only a comment: the comment stays on top of the new entry.
    h.write("# my deployments\n");
    let json = h.run(&["config", "setup", "web", "-e", "A=1", "--json"]).ok().json();
    assert_eq!(json["entry"]["env"], serde_json::json!(["A=1"]));
    let text = h.read().unwrap();
    assert!(text.starts_with("# my deployments\ndeploy:\n"), "{text}");
}

#[test]
fn parallel_writers_lose_no_entry() {
    let h = Home::new();
    h.write_proj("charly.yml", PROJECT);
    h.write(HAND);
    let children: Vec<_> = (0..8)
        .map(|i| {
            let instance = format!("p{i}");
            let port = format!("{}:80", 9000 + i);
            h.command(&["config", "setup", "web", "-i", &instance, "-p", &port])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let json = h.run(&["deploy", "show", "--json"]).ok().json();
    let deploy = json["content"]["deploy"].as_object().unwrap();
    for i in 0..8 {
        let entry = &deploy[&format!("web/p{i}")];
        assert_eq!(entry["port"][0], format!("{}:80", 9000 + i));
    }
    assert!(h.read().unwrap().starts_with("# This host's deployments"));
}

#[test]
fn a_symlinked_deploy_file_stays_a_link() {
    let h = Home::new();
    let real = h.path("home/dotfiles-charly.yml");
    std::fs::write(&real, HAND).unwrap();
    std::fs::create_dir_all(h.deploy().parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&real, h.deploy()).unwrap();
    h.run(&["deploy", "reset", "web", "-i", "2"]).ok();
    assert!(std::fs::symlink_metadata(h.deploy()).unwrap().file_type().is_symlink());
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(!text.contains("web/2") && text.contains("jupyter"), "{text}");
    assert_eq!(mode(&real), 0o600);
}

#[test]
fn as_a_tool_import_and_export_stay_inside_the_project() {
    let h = Home::new();
    h.write(HAND);
    let outside = h.path("home/outside.yml");
    std::fs::write(&outside, "deploy:\n  api: {image: api}\n").unwrap();
    let mcp =
        serde_json::json!({"mcpServers": {"self": {"command": CHARLY, "args": ["mcp", "serve", "--stdio"]}}});
    h.write_proj(".mcp.json", &mcp.to_string());
    h.write_proj("charly.yml", PROJECT);
    let call = |tool: &str, input: serde_json::Value| {
        let input = input.to_string();
        h.run(&["check", "mcp", "call", "--server", "self", "--tool", tool, "--input", &input])
    };
    let refused = call("deploy.import", serde_json::json!({"files": [outside.display().to_string()]}));
    assert_eq!(refused.status, 1, "{}", refused.dump());
    assert!(refused.stdout.contains("absolute paths are not allowed"), "{}", refused.dump());
    assert_eq!(h.read().unwrap(), HAND);
    let refused = call("deploy.export", serde_json::json!({"output": "../home/outside.yml"}));
    assert_eq!(refused.status, 1, "{}", refused.dump());
    assert!(refused.stdout.contains("refusing path"), "{}", refused.dump());
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "deploy:\n  api: {image: api}\n");
    // Inside the project, the same calls work.
    h.write_proj("in.yml", "deploy:\n  api: {image: api}\n");
    call("deploy.import", serde_json::json!({"files": ["in.yml"]})).ok();
    assert!(h.read().unwrap().contains("api"));
    let shown = call("deploy.show", serde_json::json!({"box": "api"})).ok();
    assert!(shown.stdout.contains("image: api"), "{}", shown.dump());
}

/// Removes a podman container by name when dropped.
struct Container(String);

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("podman").args(["rm", "--force", "--time", "0", &self.0]).output();
    }
}

#[test]
fn status_reads_the_container_states_from_real_podman() {
    const BUSYBOX: &str = "localhost/charly-busybox:latest";
    let exists = Command::new("podman").args(["image", "exists", BUSYBOX]).status();
    assert!(
        exists.is_ok_and(|s| s.success()),
        "podman with {BUSYBOX} is needed: run scripts/runtimes.sh as root"
    );
    let h = Home::new();
    let name = format!("dfstatus{}", std::process::id());
    let container = Container(format!("charly-{name}"));
    let label = format!("ai.opencharly.box={name}");
    let run = Command::new("podman")
        .args(["run", "-d", "--rm", "--name", &container.0, "--label", &label, BUSYBOX, "sleep", "60"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    h.write(&format!("deploy:\n  {name}: {{image: {name}}}\n  {name}/gone: {{}}\n"));
    let mut cmd = h.command(&["deploy", "status", "--json"]);
    cmd.env("PATH", std::env::var_os("PATH").unwrap_or_default());
    let json = run_cmd_json(&mut cmd);
    assert_eq!(json["podman"], true);
    let rows = json["rows"].as_array().unwrap();
    let row = |key: &str| rows.iter().find(|r| r["key"] == key).unwrap_or_else(|| panic!("{key}: {json}"));
    assert_eq!(row(&name)["state"], "running");
    assert_eq!(row(&name)["verdict"], "ok");
    assert_eq!(row(&format!("{name}/gone"))["verdict"], "not deployed");
    assert!(row(&format!("{name}/gone")).get("state").is_none());
}

fn run_cmd_json(cmd: &mut Command) -> serde_json::Value {
    run(cmd, &["deploy", "status", "--json"]).ok().json()
}
