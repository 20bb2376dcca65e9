//! `charly check mcp lint` against real servers on 127.0.0.1: one hand-written server per rule
//! that breaks exactly that rule (charly's `Tool::new` where it can publish the fault, a raw
//! rmcp server over an in-memory pipe where charly's server refuses to: over-long and
//! duplicate names, missing annotations), server-everything, and charly's own server.

#[path = "../client/support.rs"]
#[allow(dead_code)]
mod support;

use std::collections::BTreeSet;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use charly::Annotations;
use charly::client::{self, ConnectOptions, Endpoint, TransportKind};
use charly::server::rmcp::model::{
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as WireTool,
};
use charly::server::rmcp::service::RequestContext;
use charly::server::rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt as _};
use charly::server::{HttpOptions, Server, ServerHandle, ServerOptions, Tool, ToolNameStyle, ToolOutput};
use charly_cli::lint::{self, LintReport};
use charly_cli::report::Report as _;
use serde_json::{Value, json};

/// The binary under test.
const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// Every annotation stated: what a tool needs to break no rule.
const STATED: Annotations = Annotations {
    read_only_hint: true,
    destructive_hint: false,
    idempotent_hint: true,
    open_world_hint: false,
};

/// A hand-written tool with `schema` as its input schema.
fn tool(name: &str, description: &str, schema: Value) -> Tool {
    Tool::new(name, description, schema, STATED, |_args, _cx| async { Ok(ToolOutput::text("ok")) })
}

/// A tool that breaks no rule.
fn clean(name: &str) -> Tool {
    tool(name, "Does one thing", json!({"type": "object", "properties": {"x": {"type": "string"}}}))
}

/// `tools` served over Streamable HTTP on a free 127.0.0.1 port, named as given to every
/// client (`ToolNameStyle::Dotted`, as most servers do: the default `Auto` would give the
/// Claude, OpenAI and Copilot clients lint initializes as `_`-joined names).
async fn serve(tools: Vec<Tool>) -> ServerHandle {
    let options = ServerOptions::new("lint-test", "1.0.0").tools(tools).tool_names(ToolNameStyle::Dotted);
    let http = HttpOptions::default().listen("127.0.0.1:0".parse().unwrap());
    Server::new(options).serve_http(http).await.expect("serve on 127.0.0.1")
}

fn options() -> ConnectOptions {
    ConnectOptions { timeout: Duration::from_secs(20), ..Default::default() }
}

/// Lints the server at `handle`.
async fn lint_http(handle: &ServerHandle) -> LintReport {
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    lint::lint(&endpoint, &options()).await.expect("lint")
}

/// The ids of the rules the report says were broken.
fn broken(report: &LintReport) -> BTreeSet<&str> {
    report.violations.iter().map(|v| v.rule.as_str()).collect()
}

/// The hosts that fail.
fn failing(report: &LintReport) -> Vec<&str> {
    report.hosts.iter().filter(|h| !h.ok).map(|h| h.host.as_str()).collect()
}

/// A server of a clean tool and `bad`; the report names exactly `rule`, for `bad`.
#[track_caller]
fn breaks_exactly(rule: &str, bad: Tool, hosts: &[&str]) -> LintReport {
    let name = bad.name().to_owned();
    let report = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let handle = serve(vec![clean("fine"), bad]).await;
        let report = lint_http(&handle).await;
        handle.shutdown().await.unwrap();
        report
    });
    assert_eq!(broken(&report), BTreeSet::from([rule]), "{report}");
    assert!(report.violations.iter().all(|v| v.tool == name), "{report}");
    assert_eq!(failing(&report), hosts, "{report}");
    report
}

#[test]
fn a_clean_server_passes_every_host() {
    let report = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let handle = serve(vec![clean("one"), clean("two")]).await;
        let report = lint_http(&handle).await;
        handle.shutdown().await.unwrap();
        report
    });
    assert!(report.violations.is_empty(), "{report}");
    assert_eq!(report.server.as_deref(), Some("lint-test"));
    assert_eq!(report.failure(), None);
}

#[test]
fn name_pattern() {
    let report = breaks_exactly("name-pattern", clean("files.read"), &["claude", "openai", "copilot"]);
    assert_eq!(report.violations[0].at, "name");
}

#[test]
fn schema_keyword() {
    let schema = json!({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": {}});
    let report = breaks_exactly("schema-keyword", tool("with_dialect", "d", schema), &["gemini"]);
    assert_eq!(report.violations[0].at, "inputSchema/$schema");
}

#[test]
fn schema_dialect() {
    // `$schema` is itself Gemini's `schema-keyword`: the dialect rule is shown on an output
    // schema, where only Ajv reads it.
    let output =
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}});
    let bad = clean("draft7_output").with_output_schema(Arc::new(output.as_object().unwrap().clone()));
    let report = breaks_exactly("schema-dialect", bad, &["ajv"]);
    assert_eq!(report.violations[0].at, "outputSchema/$schema");
}

#[test]
fn schema_ref() {
    let schema = json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}, "$defs": {"P": {"type": "string"}}});
    let report = breaks_exactly("schema-ref", tool("with_ref", "d", schema), &["gemini"]);
    let at: Vec<&str> = report.violations.iter().map(|v| v.at.as_str()).collect();
    assert_eq!(at, ["inputSchema/$defs", "inputSchema/properties/p/$ref"]);
}

#[test]
fn schema_ref_unresolved() {
    // In an output schema (Gemini reads only input schemas): a `$ref` to nothing.
    let output = json!({"type": "object", "properties": {"p": {"$ref": "#/$defs/Missing"}}});
    let bad = clean("dangling").with_output_schema(Arc::new(output.as_object().unwrap().clone()));
    let report = breaks_exactly("schema-ref-unresolved", bad, &["ajv"]);
    assert_eq!(report.violations[0].at, "outputSchema/properties/p/$ref");
}

#[test]
fn schema_type_array() {
    let schema = json!({"type": "object", "properties": {"p": {"type": ["string", "null"]}}});
    breaks_exactly("schema-type-array", tool("nullable", "d", schema), &["gemini"]);
}

#[test]
fn schema_array_items() {
    let schema = json!({"type": "object", "properties": {"list": {"type": "array"}}});
    let report =
        breaks_exactly("schema-array-items", tool("bare_array", "d", schema), &["gemini", "copilot"]);
    assert_eq!(report.violations[0].at, "inputSchema/properties/list");
}

#[test]
fn schema_format() {
    let schema = json!({"type": "object", "properties": {"port": {"type": "integer", "format": "uint16"}}});
    breaks_exactly("schema-format", tool("rust_port", "d", schema), &["ajv"]);
}

#[test]
fn schema_object_properties() {
    breaks_exactly("schema-object-properties", tool("no_args", "d", json!({"type": "object"})), &["copilot"]);
}

#[test]
fn schema_enum_values() {
    let schema = json!({"type": "object", "properties": {"level": {"enum": [1, "high"]}}});
    let report = breaks_exactly("schema-enum-values", tool("mixed_enum", "d", schema), &["gemini"]);
    assert_eq!(report.violations[0].message, "enum values of type integer, string");
}

/// A server speaking JSON-RPC by hand (newline-delimited, as on stdio): `initialize` and
/// `tools/list` answered with `tools` exactly, as a server on another SDK would send them.
/// (rmcp's server side, charly's included, leaves a non-object `outputSchema` out of
/// `tools/list` for clients of protocols before 2026-07-28, which this client is.)
async fn lint_hand_rolled(tools: Vec<Value>) -> LintReport {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let (client_io, server_io) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let (read, mut write) = tokio::io::split(server_io);
        let mut lines = BufReader::new(read).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let request: Value = serde_json::from_str(&line).unwrap();
            let Some(id) = request.get("id").cloned() else { continue };
            let result = match request["method"].as_str() {
                Some("initialize") => json!({
                    "protocolVersion": request["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hand-rolled", "version": "1"}
                }),
                Some("tools/list") => json!({"tools": tools}),
                // A server before 2026-07-28: `server/discover` is an unknown method, and the
                // client falls back to `initialize` on the same stream.
                Some("server/discover") => {
                    let error = json!({"code": -32601, "message": "method not found"});
                    let reply = json!({"jsonrpc": "2.0", "id": id, "error": error});
                    write.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
                    continue;
                }
                _ => json!({}),
            };
            let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
            write.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        }
    });
    let client = client::connect_transport(client_io, &options(), "in-memory").await.unwrap();
    let report = lint::lint_on(&client).await.unwrap();
    client.close().await;
    report
}

#[tokio::test]
async fn output_schema_root() {
    let mut bad = wire_clean("list_out");
    bad["outputSchema"] = json!({"type": "array", "items": {"type": "string"}});
    let report = lint_hand_rolled(vec![wire_clean("fine"), bad]).await;
    assert_eq!(broken(&report), BTreeSet::from(["output-schema-root"]), "{report}");
    assert_eq!(failing(&report), ["ajv"]);
    assert_eq!(report.violations[0].message, "the root has type \"array\", not \"object\"");
}

/// A tool without `inputSchema`, one whose schema is `true` and one whose root is a string
/// schema: each is an `input-schema-root` violation for every host (the listing does not fail),
/// and a tool that breaks another part of the shape (`annotations` a string) is `tool-shape`.
#[tokio::test]
async fn input_schema_root() {
    let mut missing = wire_clean("no_schema");
    missing.as_object_mut().unwrap().remove("inputSchema");
    let mut boolean = wire_clean("true_schema");
    boolean["inputSchema"] = json!(true);
    let mut string = wire_clean("string_root");
    string["inputSchema"] = json!({"type": "string"});
    let mut untyped = wire_clean("untyped_root");
    untyped["inputSchema"] = json!({"properties": {}});
    let report = lint_hand_rolled(vec![wire_clean("fine"), missing, boolean, string, untyped]).await;
    assert_eq!(report.tools, 5, "{report}");
    assert_eq!(broken(&report), BTreeSet::from(["input-schema-root"]), "{report}");
    assert_eq!(failing(&report), ["claude", "openai", "gemini", "copilot", "ajv"], "{report}");
    let found: Vec<(&str, &str, &str)> =
        report.violations.iter().map(|v| (v.tool.as_str(), v.at.as_str(), v.message.as_str())).collect();
    assert_eq!(
        found,
        [
            ("string_root", "inputSchema/type", "the root has type \"string\", not \"object\""),
            (
                "untyped_root",
                "inputSchema/type",
                "the root has no `type`; it must be \"object\" (at least {\"type\": \"object\"})"
            ),
            (
                "no_schema",
                "inputSchema",
                "no `inputSchema`: every tool needs one, at least {\"type\": \"object\"}"
            ),
            ("true_schema", "inputSchema", "the `inputSchema` is boolean (true), not a schema object"),
        ],
        "{report}"
    );

    let mut odd = wire_clean("odd_annotations");
    odd["annotations"] = json!("read-only");
    let report = lint_hand_rolled(vec![wire_clean("fine"), odd]).await;
    assert_eq!(broken(&report), BTreeSet::from(["tool-shape"]), "{report}");
    assert_eq!(report.violations[0].tool, "odd_annotations");
    assert!(report.violations[0].message.starts_with("not an MCP tool: "), "{report}");
}

/// The binary against a stdio server (a Python script named in `.mcp.json`) whose one tool has
/// no `inputSchema`: a violation in the table and in `--json`, exit status 1 (it was 2, the
/// listing failing to parse).
#[test]
fn the_binary_reports_a_tool_without_input_schema_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method = msg.get("method")
    if method == "initialize":
        result = {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}},
                  "serverInfo": {"name": "schemaless", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "bare", "description": "No schema",
                  "annotations": {"readOnlyHint": True, "destructiveHint": False,
                                  "idempotentHint": True, "openWorldHint": False}}]}
    else:
        reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "method not found"}}
        print(json.dumps(reply), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"#;
    std::fs::write(dir.path().join("server.py"), script).unwrap();
    let mcp_json = json!({"mcpServers": {"schemaless": {
        "command": "python3", "args": [dir.path().join("server.py")]
    }}});
    std::fs::write(dir.path().join(".mcp.json"), mcp_json.to_string()).unwrap();
    let lint = |json: bool| {
        let mut cmd = Command::new(CHARLY);
        cmd.arg("-C").arg(dir.path()).args(["check", "mcp", "lint", "--server", "schemaless"]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let out = lint(false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("schemaless: 1 tools\n"), "{stdout}");
    assert!(stdout.contains("error input-schema-root bare inputSchema: no `inputSchema`"), "{stdout}");
    let out = lint(true);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["violations"][0]["rule"], "input-schema-root", "{report}");
    assert_eq!(report["violations"][0]["tool"], "bare", "{report}");
    assert!(report["hosts"].as_array().unwrap().iter().all(|h| h["ok"] == false), "{report}");
}

#[test]
fn missing_description() {
    // A warning: every host is still ok, and the report records no failure.
    let report = breaks_exactly(
        "missing-description",
        tool("mute", "", json!({"type": "object", "properties": {}})),
        &[],
    );
    assert_eq!(report.failure(), None);
    assert_eq!(report.hosts[0].warnings, 1);
}

// ===== the rules charly's own server will not publish a fault for =====

/// A raw rmcp server listing `tools` as given.
#[derive(Clone)]
struct RawServer {
    tools: Vec<WireTool>,
}

impl ServerHandler for RawServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    #[allow(clippy::field_reassign_with_default, reason = "ListToolsResult is non_exhaustive")]
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let mut result = ListToolsResult::default();
        result.tools = self.tools.clone();
        Ok(result)
    }
}

fn wire(value: Value) -> WireTool {
    serde_json::from_value(value).unwrap()
}

fn wire_clean(name: &str) -> Value {
    json!({
        "name": name, "description": "Does one thing",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}
    })
}

/// Lints `tools` served by [`RawServer`] over an in-memory pipe.
async fn lint_raw(tools: Vec<WireTool>) -> LintReport {
    let (client_io, server_io) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let server = RawServer { tools }.serve(server_io).await.expect("server starts");
        let _ = server.waiting().await;
    });
    let client = client::connect_transport(client_io, &options(), "in-memory").await.unwrap();
    let report = lint::lint_on(&client).await.unwrap();
    client.close().await;
    report
}

#[tokio::test]
async fn name_length() {
    let long = "a".repeat(65);
    let report = lint_raw(vec![wire(wire_clean("fine")), wire(wire_clean(&long))]).await;
    assert_eq!(broken(&report), BTreeSet::from(["name-length"]), "{report}");
    assert_eq!(failing(&report), ["claude", "openai", "gemini"]);
    assert_eq!(report.violations[0].message, "65 characters, at most 64 are allowed");
}

#[tokio::test]
async fn duplicate_name() {
    let report = lint_raw(vec![wire(wire_clean("twice")), wire(wire_clean("twice"))]).await;
    assert_eq!(broken(&report), BTreeSet::from(["duplicate-name"]), "{report}");
    assert_eq!(failing(&report), ["claude", "openai", "gemini", "copilot", "ajv"]);
}

#[tokio::test]
async fn missing_annotations() {
    let mut bare = wire_clean("bare");
    bare.as_object_mut().unwrap().remove("annotations");
    let mut half = wire_clean("half");
    half["annotations"] = json!({"readOnlyHint": true});
    let report = lint_raw(vec![wire(wire_clean("fine")), wire(bare), wire(half)]).await;
    assert_eq!(broken(&report), BTreeSet::from(["missing-annotations"]), "{report}");
    let messages: Vec<&str> = report.violations.iter().map(|v| v.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "no readOnlyHint, destructiveHint, idempotentHint, openWorldHint",
            "no destructiveHint, idempotentHint, openWorldHint"
        ]
    );
    assert_eq!(report.failure(), None, "a warning only");
}

// ===== the binary, the plan method, real servers =====

#[test]
fn the_binary_prints_the_table_and_exits_1_on_a_violation() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let handle = rt.block_on(serve(vec![clean("fine"), clean("files.read")]));
    let out = Command::new(CHARLY).args(["check", "mcp", "lint", "--url", &handle.url()]).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_eq!(
        stdout,
        "lint-test: 2 tools\n\
         host     result errors warnings  rules\n\
         claude   FAIL        1        0  name-pattern\n\
         openai   FAIL        1        0  name-pattern\n\
         gemini   ok          0        0  -\n\
         copilot  FAIL        1        0  name-pattern\n\
         ajv      ok          0        0  -\n\
         error name-pattern files.read name: '.' is not allowed (^[a-zA-Z0-9_-]{1,64}$); e.g. \"files_read\" (claude, openai, copilot)\n"
    );
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        "charly: hosts refuse tools: claude, openai, copilot\n"
    );
    // The same as a plan step: `mcp: lint`, its failure exit status 1.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("plan.yml"),
        "linted:\n  check: every host takes the tools\n  mcp: lint\n  context: [deploy]\n  exit_status: 1\n  stdout: {contains: 'copilot  FAIL'}\n",
    )
    .unwrap();
    let out = Command::new(CHARLY)
        .args(["-C", dir.path().to_str().unwrap(), "check", "run", "plan.yml", "--url", &handle.url()])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with("PASS linted: every host takes the tools"), "{stdout}");
    rt.block_on(handle.shutdown()).unwrap();
}

/// server-everything 2025.12.18 (pinned in scripts/peers.sh), over Streamable HTTP: its 12
/// tools are zod schemas turned into JSON Schema with a draft-07 `$schema` on every input
/// schema (and on the one output schema), which Gemini refuses (`$schema` at all) and Ajv's
/// 2020-12 validator too (the dialect); none states its annotations.
#[test]
fn server_everything() {
    let server = support::NodeServer::start(TransportKind::StreamableHttp);
    let report =
        tokio::runtime::Runtime::new().unwrap().block_on(lint::lint(&server.endpoint(), &options())).unwrap();
    let count =
        |rule: &str, at: &str| report.violations.iter().filter(|v| v.rule == rule && v.at == at).count();
    assert_eq!(report.server.as_deref(), Some("example-servers/everything"));
    assert_eq!(report.tools, 12, "{report}");
    assert_eq!(
        broken(&report),
        BTreeSet::from(["missing-annotations", "schema-dialect", "schema-keyword"]),
        "{report}"
    );
    assert_eq!(count("schema-keyword", "inputSchema/$schema"), 12, "{report}");
    assert_eq!(count("schema-dialect", "inputSchema/$schema"), 12, "{report}");
    assert_eq!(count("schema-dialect", "outputSchema/$schema"), 1, "{report}");
    assert_eq!(count("missing-annotations", "annotations"), 12, "{report}");
    assert_eq!(failing(&report), ["gemini", "ajv"], "{report}");
}

/// charly's own server, as `charly mcp serve` builds it (`--tool-names auto`): `check mcp
/// lint` initializes as each host's client (`claude-code`, `codex-mcp-client`,
/// `github-copilot-developer`, `charly`), and every host passes, the Claude, OpenAI and Copilot
/// rows on the `_`-joined names their clients get. Initialized as `claude-code` for every host
/// (`--client-name claude-code`) it passes too. With `--tool-names dotted` the same lint
/// fails exactly the name rule, for Claude, OpenAI and Copilot, once per dotted tool.
#[test]
fn charly_own_server_passes_every_host_under_auto() {
    let project = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(project.path()).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lint_with = |style: ToolNameStyle, client: Option<&str>| {
        rt.block_on(async {
            let server = charly_cli::serve::server_with(project.path(), false, style).unwrap();
            let handle = server
                .serve_http(HttpOptions::default().listen("127.0.0.1:0".parse().unwrap()))
                .await
                .unwrap();
            let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
            let options = ConnectOptions { client_name: client.map(str::to_owned), ..options() };
            let report = lint::lint(&endpoint, &options).await.unwrap();
            handle.shutdown().await.unwrap();
            report
        })
    };
    for client in [None, Some("claude-code")] {
        let report = lint_with(ToolNameStyle::Auto, client);
        assert!(report.tools > 30, "{report}");
        assert_eq!(report.failure(), None, "{client:?}: {report}");
        assert!(report.violations.is_empty(), "{client:?}: {report}");
    }
    let report = lint_with(ToolNameStyle::Dotted, None);
    let dotted = report.violations.iter().filter(|v| v.tool.contains('.')).count();
    assert!(dotted > 30, "{report}");
    assert_eq!(broken(&report), BTreeSet::from(["name-pattern"]), "{report}");
    assert_eq!(report.violations.len(), dotted, "{report}");
    assert!(report.violations.iter().all(|v| v.hosts == ["claude", "openai", "copilot"]), "{report}");
    assert_eq!(failing(&report), ["claude", "openai", "copilot"], "{report}");

    // The same from the command line, against a real `charly mcp serve`.
    for (tool_names, code) in [("auto", Some(0)), ("dotted", Some(1))] {
        let serve = ServeProcess::start(project.path(), tool_names);
        let out = Command::new(CHARLY)
            .args(["check", "mcp", "lint", "--json", "--url", &serve.url])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            code,
            "--tool-names {tool_names}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ok =
            json["hosts"].as_array().unwrap().iter().map(|h| h["ok"].as_bool().unwrap()).collect::<Vec<_>>();
        let want = if tool_names == "auto" { [true; 5] } else { [false, false, true, false, true] };
        assert_eq!(ok, want, "--tool-names {tool_names}: {json}");
        // The plan verb lints the same way: once per host's client, so auto passes.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("plan.yml"),
            "lint-charly:\n  check: every host takes charly's tools\n  mcp: lint\n  context: [deploy]\n",
        )
        .unwrap();
        let out = Command::new(CHARLY)
            .args(["-C", dir.path().to_str().unwrap(), "check", "run", "plan.yml", "--url", &serve.url])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), code, "plan step, --tool-names {tool_names}: {stdout}");
        let verdict = if tool_names == "auto" { "PASS lint-charly" } else { "FAIL lint-charly" };
        assert!(stdout.starts_with(verdict), "plan step, --tool-names {tool_names}: {stdout}");
    }
}

/// A real `charly -C <project> mcp serve --tool-names <names>` on a free 127.0.0.1 port,
/// killed when dropped.
struct ServeProcess {
    child: std::process::Child,
    url: String,
}

impl ServeProcess {
    fn start(project: &std::path::Path, tool_names: &str) -> ServeProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(CHARLY)
            .arg("-C")
            .arg(project)
            .args(["mcp", "serve", "--listen", &format!("127.0.0.1:{port}"), "--tool-names", tool_names])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start charly mcp serve");
        let mut serve = ServeProcess { child, url: format!("http://127.0.0.1:{port}/mcp") };
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(serve.child.try_wait().unwrap().is_none(), "charly mcp serve exited");
            assert!(std::time::Instant::now() < deadline, "charly mcp serve did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        serve
    }
}

impl Drop for ServeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
