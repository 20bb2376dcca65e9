//! `claude mcp list`, `gemini mcp list` and `codex mcp list` (pinned in scripts/hosts.sh, none
//! logged in) reading the files `charly mcp install` wrote, with HOME in a temporary directory.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{CHARLY, Env, Run};

/// `.peers/hosts/node_modules/.bin/<name>` (scripts/hosts.sh; `CHARLY_PEERS` moves `.peers`).
fn host_cli(name: &str) -> PathBuf {
    let peers = std::env::var_os("CHARLY_PEERS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../.peers"));
    let bin = peers.join("hosts/node_modules/.bin").join(name);
    assert!(bin.exists(), "{} is not installed: run `bash scripts/hosts.sh` first", bin.display());
    bin
}

#[test]
fn claude_mcp_list_sees_charly_and_connects() {
    let env = Env::new();
    env.charly(&["mcp", "install", "claude-code", "--scope", "user"]).ok();
    env.charly(&["mcp", "install", "claude-code", "--name", "charly-project"]).ok();
    let run = Run::of(env.command(host_cli("claude")).args(["mcp", "list"]).output().unwrap()).ok();
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
        let run = Run::of(env.command(host_cli("gemini")).args(["mcp", "list"]).output().unwrap()).ok();
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
    let run = Run::of(env.command(host_cli("codex")).args(["mcp", "list", "--json"]).output().unwrap()).ok();
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
