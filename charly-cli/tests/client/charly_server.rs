//! The client against charly's own server (`charly::server`, what `charly mcp serve`
//! runs) over Streamable HTTP on 127.0.0.1: the two halves of the crate must agree on the
//! wire.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use charly::Annotations;
use charly::client::{Endpoint, ProgressUpdate, TransportKind};
use charly::server::{HttpOptions, Server, ServerOptions, Tool, ToolError, ToolOutput};
use charly_cli::check::{self, Endpoints, Plan, RunOptions};
use charly_cli::probe;
use charly_cli::report::Report as _;
use serde_json::json;

use crate::support::{input, options};

fn tools() -> Vec<Tool> {
    let schema =
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "additionalProperties": false});
    let read_only = Annotations { read_only_hint: true, ..Default::default() };
    vec![
        Tool::new("echo", "Echo the text back\nSecond line.", schema, read_only, |args, _cx| async move {
            Ok(ToolOutput::text(args.get("text").and_then(|t| t.as_str()).unwrap_or_default()))
        }),
        Tool::new(
            "fail",
            "Always fails",
            json!({"type": "object", "properties": {}}),
            read_only,
            |_, _cx| async { Err(ToolError::Message("disk full".into())) },
        ),
        Tool::new(
            "steps",
            "Reports three steps",
            json!({"type": "object", "properties": {}}),
            read_only,
            |_, cx| async move {
                for step in 1..=3 {
                    cx.progress().report(f64::from(step), Some(3.0), Some(format!("step {step}"))).await;
                }
                Ok(ToolOutput::text("done"))
            },
        ),
    ]
}

#[tokio::test]
async fn every_method_against_charly_mcp_serve() {
    let mut server_options = ServerOptions::new("charly-test", "0.1.0");
    for tool in tools() {
        server_options = server_options.tool(tool);
    }
    let server = Server::new(server_options);
    let mut http = HttpOptions::default();
    http.listen = "127.0.0.1:0".parse().unwrap();
    let handle = server.serve_http(http).await.unwrap();
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    let opts = options(Duration::from_secs(10));

    assert_eq!(probe::ping(&endpoint, &opts).await.unwrap().to_string(), "ok\n");

    let tools = probe::list_tools(&endpoint, &opts).await.unwrap();
    assert_eq!(
        tools.to_string(),
        "echo\tEcho the text back\nfail\tAlways fails\nsteps\tReports three steps\n"
    );

    let called = probe::call(&endpoint, "echo", input(r#"{"text":"hi"}"#), &opts).await.unwrap();
    assert_eq!((called.failure().is_some(), called.to_string()), (false, "hi\n".to_owned()));

    let called = probe::call(&endpoint, "fail", None, &opts).await.unwrap();
    assert!(called.failure().is_some());
    assert!(called.to_string().contains("disk full"));

    // A bad argument is the server's isError result, not a dead session.
    let called = probe::call(&endpoint, "echo", input(r#"{"nope":1}"#), &opts).await.unwrap();
    assert!(called.failure().is_some(), "{called}");

    let seen: Arc<Mutex<Vec<ProgressUpdate>>> = Arc::default();
    let sink = seen.clone();
    let mut progress_opts = options(Duration::from_secs(10));
    progress_opts.progress = Some(Arc::new(move |u: &ProgressUpdate| sink.lock().unwrap().push(u.clone())));
    let called = probe::call(&endpoint, "steps", None, &progress_opts).await.unwrap();
    assert_eq!(called.to_string(), "done\n");
    let messages: Vec<Option<String>> = seen.lock().unwrap().iter().map(|u| u.message.clone()).collect();
    assert_eq!(messages, [Some("step 1".into()), Some("step 2".into()), Some("step 3".into())]);

    let plan = Plan::parse(
        "echo:\n  check: echo\n  mcp: call\n  tool: echo\n  input: {text: '41.5'}\n  context: [deploy]\n  stdout: {gt: 41, lt: 42}\n\
         fail:\n  check: isError\n  mcp: call\n  tool: fail\n  context: [deploy]\n  exit_status: 1\n  stdout: {contains: disk full}\n",
        "",
    );
    let report =
        check::run(&plan, &Endpoints::Resolved(vec![endpoint]), &RunOptions::default(), None).await.unwrap();
    assert_eq!(report.failure(), None, "{report}");
    handle.shutdown().await.unwrap();
}

/// `list-skills` and `read-skill` (the skills extension) against charly's own server: listed
/// without reading, read with every file shown, and the same from a check plan.
#[tokio::test]
async fn skills_are_listed_and_read() {
    use charly::server::Skill;
    let manifest = "---\nname: release-notes\ndescription: Write release notes\n---\n\nGroup by area.\n";
    let skill = Skill::new("release-notes")
        .file("SKILL.md", manifest)
        .file("references/STYLE.md", "Imperative mood.\n")
        .file("logo.png", vec![0x89, b'P', b'N', b'G', 0xff]);
    let server = Server::new(ServerOptions::new("charly-test", "0.1.0").skill(skill));
    let mut http = HttpOptions::default();
    http.listen = "127.0.0.1:0".parse().unwrap();
    let handle = server.serve_http(http).await.unwrap();
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    let opts = options(Duration::from_secs(10));

    let list = probe::list_skills(&endpoint, &opts).await.unwrap();
    assert_eq!(list.to_string(), "skill://release-notes/SKILL.md\trelease-notes\tWrite release notes\n");
    let files = probe::read_skill(&endpoint, "skill://release-notes/SKILL.md", &opts).await.unwrap();
    assert_eq!(
        files.to_string(),
        format!(
            "{manifest}==> skill://release-notes/logo.png <==\n\
             [binary skill file: skill://release-notes/logo.png, image/png, 5 bytes]\n\
             ==> skill://release-notes/references/STYLE.md <==\nImperative mood.\n"
        )
    );
    let json = serde_json::to_value(&files).unwrap();
    assert_eq!(json["files"][2]["size"], 17);
    let missing = probe::read_skill(&endpoint, "skill://nope/SKILL.md", &opts).await.unwrap_err();
    assert!(missing.to_string().contains("-32602"), "{missing}");
    handle.shutdown().await.unwrap();
}
