//! The client on MCP 2026-07-28 and before, against charly's own server over Streamable HTTP
//! on 127.0.0.1: it offers 2026-07-28 first and falls back; a tool's question (one
//! `CallContext::input` call on the server) is answered from `--elicit`-style answers on both
//! revisions (an input-required round on 2026-07-28, `elicitation/create` before) or fails
//! naming what was asked; tool schemas come back as the server sent them.

use std::time::Duration;

use charly::Annotations;
use charly::client::{self, Answers, ClientError, Endpoint, Protocol, TransportKind};
use charly::server::rmcp::model::ElicitRequestParams;
use charly::server::{HttpOptions, Server, ServerHandle, ServerOptions, Tool, ToolError, ToolOutput};
use charly_cli::check::{self, Endpoints, Plan, RunOptions};
use charly_cli::probe;
use charly_cli::report::Report as _;
use serde_json::{Value, json};

use crate::support::options;

/// A schema with `$ref`/`$defs` and 2020-12 keywords, which the client must not rewrite.
fn schema_2020_12() -> Value {
    json!({
        "type": "object",
        "$defs": {"count": {"type": "integer", "minimum": 0}},
        "properties": {
            "n": {"$ref": "#/$defs/count"},
            "tags": {"type": "array", "prefixItems": [{"type": "string"}], "items": false},
        },
        "unevaluatedProperties": false,
    })
}

async fn serve() -> ServerHandle {
    let greet = Tool::new(
        "greet",
        "Asks the user's name and greets them",
        json!({"type": "object", "properties": {}}),
        Annotations { read_only_hint: true, ..Default::default() },
        |_, cx| async move {
            let form: ElicitRequestParams = serde_json::from_value(json!({
                "mode": "form", "message": "What is your name?",
                "requestedSchema": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "greeting": {"type": "string", "default": "Hello"}},
                    "required": ["name"]}}))
            .map_err(ToolError::msg)?;
            let answer =
                serde_json::to_value(cx.input("user_name").elicit(form).await?).map_err(ToolError::msg)?;
            if answer["action"] != "accept" {
                return Err(ToolError::msg(format!("not answered: {}", answer["action"])));
            }
            let content = &answer["content"];
            Ok(ToolOutput::text(format!(
                "{}, {}!",
                content["greeting"].as_str().unwrap_or_default(),
                content["name"].as_str().unwrap_or_default()
            )))
        },
    );
    let shaped = Tool::new(
        "shaped",
        "Takes a 2020-12 schema",
        schema_2020_12(),
        Annotations::default(),
        |_, _| async { Ok(ToolOutput::text("ok")) },
    );
    let server = Server::new(ServerOptions::new("charly-test", "0.1.0").tool(greet).tool(shaped));
    let mut http = HttpOptions::default();
    http.listen = "127.0.0.1:0".parse().unwrap();
    server.serve_http(http).await.unwrap()
}

#[tokio::test]
async fn both_revisions_answer_a_question_from_the_given_answers() {
    let handle = serve().await;
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap();
    for (protocol, version) in [(Protocol::Latest, "2026-07-28"), (Protocol::Initialize, "2025-11-25")] {
        let mut opts = options(Duration::from_secs(10));
        opts.protocol = protocol;
        let session = client::connect(&endpoint, &opts).await.unwrap();
        assert_eq!(session.protocol_version().map(|v| v.to_string()).as_deref(), Some(version));
        session.close().await;

        opts.answers = Answers::default().elicit("name=Alice").unwrap();
        let called = probe::call(&endpoint, "greet", None, &opts).await.unwrap();
        assert_eq!((called.failure(), called.to_string()), (None, "Hello, Alice!\n".to_owned()), "{version}");

        // Nothing given for a required field: the error names the question and the flag.
        opts.answers = Answers::default();
        let error = probe::call(&endpoint, "greet", None, &opts).await.unwrap_err();
        assert!(matches!(error, ClientError::InputRequired { .. }), "{version}: {error:?}");
        let text = error.to_string();
        assert!(
            text.contains(r#""What is your name?" needs name (string): answer with --elicit name=VALUE"#),
            "{version}: {text}"
        );
        if version == "2026-07-28" {
            assert!(text.contains("(input `user_name`)"), "{text}");
        }

        // Schemas as the server sent them: `$ref`, `$defs` and 2020-12 keywords kept.
        let tools = probe::list_tools(&endpoint, &opts).await.unwrap();
        let json = serde_json::to_value(&tools).unwrap();
        let shaped = json["tools"].as_array().unwrap().iter().find(|t| t["name"] == "shaped").unwrap();
        assert_eq!(shaped["inputSchema"], schema_2020_12(), "{version}");
    }

    // A plan's `elicit:` answers the same question.
    let plan = Plan::parse(
        "greet:\n  check: greets by name\n  mcp: call\n  tool: greet\n  elicit: {name: Bob, greeting: Hi}\n  \
         context: [deploy]\n  stdout: 'Hi, Bob!'\n\
         unanswered:\n  check: fails naming the question\n  mcp: call\n  tool: greet\n  context: [deploy]\n  \
         exit_status: 2\n  stderr: {contains: '--elicit name=VALUE'}\n",
        "",
    );
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let report =
        check::run(&plan, &Endpoints::Resolved(vec![endpoint]), &RunOptions::default(), None).await.unwrap();
    assert_eq!(report.failure(), None, "{report}");
    handle.shutdown().await.unwrap();
}

#[test]
fn answers_only_apply_to_call_and_read() {
    let plan = Plan::parse(
        "p:\n  check: ping\n  mcp: ping\n  elicit: {name: x}\n  context: [deploy]\n\
         s:\n  check: bad sample\n  mcp: call\n  tool: t\n  sample: [1]\n  context: [deploy]\n",
        "",
    );
    let problems: Vec<String> = plan.problems.iter().map(ToString::to_string).collect();
    assert!(
        problems.iter().any(|p| p.contains("only apply to mcp: call and read, not ping")),
        "{problems:?}"
    );
    assert!(problems.iter().any(|p| p.contains("sample: expects the text")), "{problems:?}");
}
