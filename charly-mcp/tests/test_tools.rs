//! tools/list pagination and every tools/call outcome, with a real rmcp client in memory.

mod common;

use charly_mcp::server::rmcp::ServiceError;
use charly_mcp::server::rmcp::model::{ErrorCode, PaginatedRequestParams};
use charly_mcp::server::{Server, ToolNameStyle};
use common::{call, connect, options, server, text};
use serde_json::json;

const ALL_TOOLS: [&str; 13] = [
    "echo", "sleep", "fail", "boom", "even", "remove", "box.list", "box.show", "progress", "meta", "child",
    "logs", "run-id",
];

#[tokio::test]
async fn pagination_walks_every_page_and_the_last_has_no_cursor() {
    let server = Server::new(options().page_size(3));
    let pair = connect(&server).await;
    let mut names = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let page = pair
            .client
            .list_tools(Some(PaginatedRequestParams::default().with_cursor(cursor.clone())))
            .await
            .unwrap();
        pages += 1;
        assert!(page.tools.len() <= 3, "page {pages} has {} tools", page.tools.len());
        names.extend(page.tools.iter().map(|t| t.name.to_string()));
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 5); // 13 tools, 3 a page
    assert_eq!(names, ALL_TOOLS);
}

#[tokio::test]
async fn a_bad_cursor_is_invalid_params() {
    let pair = connect(&Server::new(options().page_size(3))).await;
    let err = pair
        .client
        .list_tools(Some(PaginatedRequestParams::default().with_cursor(Some("not-a-cursor".into()))))
        .await
        .unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("invalid cursor"), "{}", err.message);
}

#[tokio::test]
async fn listed_tools_carry_schema_and_all_four_annotations() {
    let pair = connect(&server()).await;
    let tools = pair.client.list_all_tools().await.unwrap();
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.input_schema["additionalProperties"], json!(false));
    assert_eq!(echo.input_schema["required"], json!(["text"]));
    let remove = serde_json::to_value(tools.iter().find(|t| t.name == "remove").unwrap()).unwrap();
    assert_eq!(
        remove["annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false})
    );
}

#[tokio::test]
async fn cli_leaves_run_in_process_and_return_their_output() {
    let pair = connect(&server()).await;
    let result = call(&pair.client, "echo", json!({"text": "-not-a-flag", "times": 2})).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), "-not-a-flag\n-not-a-flag\n");
    let result = call(&pair.client, "box.show", json!({"name": "web"})).await.unwrap();
    assert_eq!(text(&result), "box web\n");
}

#[tokio::test]
async fn underscored_names_are_published_and_both_spellings_route() {
    let server = Server::new(options().tool_names(ToolNameStyle::Underscored));
    let pair = connect(&server).await;
    let names: Vec<String> =
        pair.client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert!(names.contains(&"box_list".to_owned()) && !names.contains(&"box.list".to_owned()), "{names:?}");
    for name in ["box_list", "box.list"] {
        let result = call(&pair.client, name, json!({})).await.unwrap();
        assert_eq!(text(&result), "web\ndb\n", "{name}");
    }
}

/// Asserts `result` is an error result whose text contains every one of `needles`.
fn assert_error(result: &charly_mcp::server::rmcp::model::CallToolResult, needles: &[&str]) {
    assert_eq!(result.is_error, Some(true), "not an error: {result:?}");
    let text = text(result);
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} not in {text:?}");
    }
}

#[tokio::test]
async fn every_failure_is_an_error_result_naming_tool_and_argument() {
    let pair = connect(&server()).await;
    let c = &pair.client;
    // Argument validation (a CLI leaf's argv rebuild), before anything runs.
    assert_error(&call(c, "echo", json!({})).await.unwrap(), &["echo", "missing required argument `text`"]);
    assert_error(
        &call(c, "echo", json!({"text": "a", "loud": true})).await.unwrap(),
        &["echo", "unknown argument `loud`", "allowed: "],
    );
    assert_error(
        &call(c, "echo", json!({"text": 5})).await.unwrap(),
        &["echo", "argument `text`: expected a string, got a number"],
    );
    assert_error(
        &call(c, "echo", json!({"text": "a", "times": 300})).await.unwrap(),
        &["echo", "argument `times`", "300 is out of range"],
    );
    // clap's own value parser: clap's message, in the caller's terms (the tool, the JSON
    // key), without the usage lines of a command line the caller never typed.
    let even = call(c, "even", json!({"n": "3"})).await.unwrap();
    assert_error(&even, &["tool `even`: invalid value '3' for `n`: 3 is not an even number"]);
    assert!(!text(&even).contains("Usage") && !text(&even).contains("--"), "{}", text(&even));
    assert_eq!(text(&call(c, "even", json!({"n": "4"})).await.unwrap()), "even 4\n");
    // The command's error, after the output it wrote.
    let result = call(c, "fail", json!({})).await.unwrap();
    assert_error(&result, &["about to fail", "it failed on purpose"]);
    // A panic.
    assert_error(&call(c, "boom", json!({})).await.unwrap(), &["boom", "panicked", "boom went the tool"]);
    // The session survives all of it.
    assert_eq!(text(&call(c, "echo", json!({"text": "still here"})).await.unwrap()), "still here\n");
}

/// Hand-written tools are validated against their own schema (with `jsonschema`) before
/// their code runs; a failure names the tool and the JSON pointer of the bad value.
#[tokio::test]
async fn hand_written_tools_are_validated_against_their_schema_first() {
    use charly_mcp::Annotations;
    use charly_mcp::server::{ServerOptions, Tool, ToolOutput};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let runs = Arc::new(AtomicUsize::new(0));
    let counter = runs.clone();
    let tool = Tool::new(
        "square",
        "Square a positive integer",
        json!({
            "type": "object",
            "properties": {"n": {"type": "integer", "minimum": 1}},
            "required": ["n"],
            "additionalProperties": false
        }),
        Annotations::default(),
        move |args, _| {
            counter.fetch_add(1, Ordering::SeqCst);
            async move { Ok(ToolOutput::text((args["n"].as_i64().unwrap().pow(2)).to_string())) }
        },
    );
    let pair = connect(&Server::new(ServerOptions::new("hand", "0").tool(tool))).await;
    let c = &pair.client;
    assert_error(&call(c, "square", json!({"n": 0})).await.unwrap(), &["square", "/n", "minimum of 1"]);
    assert_error(&call(c, "square", json!({"n": "3"})).await.unwrap(), &["square", "/n", "integer"]);
    assert_error(&call(c, "square", json!({})).await.unwrap(), &["square", "\"n\" is a required property"]);
    assert_error(&call(c, "square", json!({"n": 2, "m": 1})).await.unwrap(), &["square", "m"]);
    assert_eq!(runs.load(Ordering::SeqCst), 0, "the tool ran on invalid arguments");
    assert_eq!(text(&call(c, "square", json!({"n": 3})).await.unwrap()), "9");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

/// MCP requires a tool's `inputSchema` to be an object schema, and a client that reads
/// `tools/list` may refuse the whole list over one that is not (the Python SDK does): a
/// hand-written tool whose schema lacks `"type": "object"` is refused when it is made.
#[test]
#[should_panic(expected = "the input schema of tool `no_type` must have `\"type\": \"object\"` at its root \
                           (MCP tool arguments are an object), got no `type`")]
fn a_hand_written_schema_without_type_object_is_refused() {
    use charly_mcp::server::{Tool, ToolOutput};
    Tool::new("no_type", "x", json!({}), Default::default(), |_, _| async { Ok(ToolOutput::text("")) });
}

#[test]
#[should_panic(expected = "the input schema of tool `text` must have `\"type\": \"object\"` at its root \
                           (MCP tool arguments are an object), got `\"type\": \"string\"`")]
fn a_hand_written_schema_of_another_type_is_refused() {
    use charly_mcp::server::{Tool, ToolOutput};
    Tool::new("text", "x", json!({"type": "string"}), Default::default(), |_, _| async {
        Ok(ToolOutput::text(""))
    });
}

/// `additionalProperties: false` with no `properties` refuses every key: the error names
/// them (jsonschema alone says "False schema does not allow 1", naming none), as it does when
/// `properties` is there; a property that is itself named `additionalProperties` is not taken
/// for the keyword.
#[tokio::test]
async fn an_unexpected_key_is_named_when_the_schema_has_no_properties() {
    use charly_mcp::server::{ServerOptions, Tool, ToolOutput};
    let closed = Tool::new(
        "whoami",
        "No arguments at all",
        json!({"type": "object", "additionalProperties": false}),
        Default::default(),
        |_, _| async { Ok(ToolOutput::text("me")) },
    );
    let nested = Tool::new(
        "nested",
        "An object argument that takes no keys, and a property called additionalProperties",
        json!({"type": "object",
               "properties": {"opts": {"type": "object", "additionalProperties": false},
                              "additionalProperties": false}}),
        Default::default(),
        |_, _| async { Ok(ToolOutput::text("ok")) },
    );
    let pair = connect(&Server::new(ServerOptions::new("closed", "0").tool(closed).tool(nested))).await;
    let c = &pair.client;
    assert_eq!(
        text(&call(c, "whoami", json!({"extra": 1})).await.unwrap()),
        "invalid arguments for tool `whoami`: Additional properties are not allowed ('extra' was unexpected)"
    );
    assert_error(
        &call(c, "whoami", json!({"b": 1, "a": 2})).await.unwrap(),
        &["whoami", "Additional properties are not allowed ('b', 'a' were unexpected)"],
    );
    assert_error(
        &call(c, "nested", json!({"opts": {"deep": true}})).await.unwrap(),
        &["`/opts`: Additional properties are not allowed ('deep' was unexpected)"],
    );
    // The property named `additionalProperties`, whose schema is `false`: any value is refused.
    let odd = call(c, "nested", json!({"additionalProperties": 1})).await.unwrap();
    assert_error(&odd, &["`/additionalProperties`: False schema does not allow 1"]);
    assert_eq!(text(&call(c, "whoami", json!({})).await.unwrap()), "me");
}

#[tokio::test]
async fn only_an_unknown_tool_is_a_json_rpc_error() {
    let pair = connect(&server()).await;
    let err = call(&pair.client, "nope", json!({})).await.unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
    assert_eq!(err.code, ErrorCode::INVALID_PARAMS);
    assert!(err.message.contains("unknown tool `nope`"), "{}", err.message);
}

#[tokio::test]
async fn read_only_neither_lists_nor_calls_destructive_tools() {
    let server = Server::new(options().read_only(true));
    assert!(server.tool("remove").is_none());
    let pair = connect(&server).await;
    let names: Vec<String> =
        pair.client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert!(!names.contains(&"remove".to_owned()), "{names:?}");
    assert_eq!(names.len(), ALL_TOOLS.len() - 1);
    // A read-only build (the `read-only` feature) has no destructive tools at all: the same
    // catalog as `Catalog::read_only()`. The read-only server answers as that server does, in
    // every field, so nothing tells a client that the tool exists.
    let build = Server::new(
        charly_mcp::server::ServerOptions::new("fixture", "0.0.1")
            .tools(charly_mcp::server::cli_tools(
                &<common::Cli as charly_mcp::McpTool>::catalog().read_only(),
                charly_mcp::server::CliRunner::blocking("fx", common::run_cli),
            ))
            .read_only(true),
    );
    let built = connect(&build).await;
    for (name, arguments) in [("remove", json!({"what": "everything"})), ("nonesuch", json!({}))] {
        let err = call(&pair.client, name, arguments.clone()).await.unwrap_err();
        let ServiceError::McpError(err) = err else { panic!("expected a JSON-RPC error, got {err:?}") };
        let ServiceError::McpError(expected) = call(&built.client, name, arguments).await.unwrap_err() else {
            panic!("the read-only build answers with a JSON-RPC error too")
        };
        assert_eq!(err, expected, "{name}");
        assert_eq!(err.message, format!("unknown tool `{name}`: tools/list names the tools this server has"));
        assert!(
            !err.message.contains("read-only") && !err.message.contains("destructive"),
            "{}",
            err.message
        );
    }
}

#[tokio::test]
async fn meta_merges_client_then_constructor_later_wins() {
    let mut meta = serde_json::Map::new();
    meta.insert("user".into(), json!("server-set"));
    meta.insert("server".into(), json!(true));
    let pair = connect(&Server::new(options().meta(meta))).await;
    let mut params = charly_mcp::server::rmcp::model::CallToolRequestParams::new("meta");
    let mut client_meta = charly_mcp::server::rmcp::model::RequestMetaObject::new();
    client_meta.insert("user".into(), json!("client-claimed"));
    client_meta.insert("trace".into(), json!("t-1"));
    params.meta = Some(client_meta);
    let result = pair.client.call_tool(params).await.unwrap();
    let meta: serde_json::Value = serde_json::from_str(&text(&result)).unwrap();
    assert_eq!(meta["user"], "server-set");
    assert_eq!(meta["server"], true);
    assert_eq!(meta["trace"], "t-1");
}

#[tokio::test]
async fn every_call_gets_a_fresh_run_id() {
    let pair = connect(&server()).await;
    let a = text(&call(&pair.client, "run-id", json!({})).await.unwrap());
    let b = text(&call(&pair.client, "run-id", json!({})).await.unwrap());
    assert_eq!(a.len(), 36, "{a}");
    assert_ne!(a, b);
}

#[tokio::test]
async fn async_cli_runners_are_awaited() {
    use charly_mcp::McpTool as _;
    use charly_mcp::server::{CliRunner, ServerOptions, cli_tools};
    use clap::Parser as _;
    use std::io::Write as _;

    let runner = CliRunner::future("fx", |argv, cx| async move {
        let cli = common::Cli::try_parse_from(argv)?;
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        writeln!(cx.out(), "async ran {:?}", cli.cmd)?;
        Ok(())
    });
    let server =
        Server::new(ServerOptions::new("async", "0").tools(cli_tools(&common::Cli::catalog(), runner)));
    let pair = connect(&server).await;
    let result = call(&pair.client, "box.show", json!({"name": "w"})).await.unwrap();
    assert_eq!(text(&result), "async ran Box(Show { name: \"w\" })\n");
    let result = call(&pair.client, "even", json!({"n": "5"})).await.unwrap();
    assert_error(&result, &["5 is not an even number"]);
}

/// `CliParser` parses like `try_parse_from` (values, clap's errors and their text) while
/// building the command once, also when many threads parse at the same time.
#[test]
fn cli_parser_matches_try_parse_from() {
    use charly_mcp::server::CliParser;
    use clap::Parser as _;

    let parser = CliParser::<common::Cli>::new();
    let argvs: [&[&str]; 6] = [
        &["fx", "echo", "--times=3", "--", "-x"],
        &["fx", "box", "show", "--", "web"],
        &["fx", "even", "--n=3"],
        &["fx", "echo", "--times=300", "--", "a"],
        &["fx", "nope"],
        &["fx", "box"],
    ];
    for argv in argvs {
        let ours =
            parser.parse(argv).map(|cli| format!("{:?}", cli.cmd)).map_err(|e| (e.kind(), e.to_string()));
        let clap = common::Cli::try_parse_from(argv)
            .map(|cli| format!("{:?}", cli.cmd))
            .map_err(|e| (e.kind(), e.to_string()));
        assert_eq!(ours, clap, "{argv:?}");
    }
    std::thread::scope(|scope| {
        for i in 0..8 {
            let parser = &parser;
            scope.spawn(move || {
                for j in 0..50 {
                    let text = format!("{i}-{j}");
                    let cli = parser.parse(["fx", "echo", "--", &text]).unwrap();
                    assert_eq!(format!("{:?}", cli.cmd), format!("Echo {{ text: {text:?}, times: 1 }}"));
                }
            });
        }
    });
}

/// Values a client sent come back in errors at most 80 characters long, with their length
/// (`charly_mcp::quote`): an unknown tool's name, an unknown argument key, a value clap's
/// value parser refuses, a value a hand-written tool's schema refuses.
#[tokio::test]
async fn long_values_come_back_shortened_in_errors() {
    use charly_mcp::Annotations;
    use charly_mcp::server::{Tool, ToolOutput};

    let long = "7".repeat(100_000);
    let shown = format!("{}… (100000 characters)", "7".repeat(80));
    let square = Tool::new(
        "square",
        "Square an integer",
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}),
        Annotations::default(),
        |_, _| async { Ok(ToolOutput::text("never")) },
    );
    let pair = connect(&Server::new(common::options().tool(square))).await;
    let c = &pair.client;
    let err = call(c, &long, json!({})).await.unwrap_err();
    let ServiceError::McpError(err) = err else { panic!("{err:?}") };
    assert!(err.message.len() < 300 && err.message.contains(&shown), "{}", err.message);
    for (tool, args) in [
        ("echo", json!({"text": "hi", long.clone(): 1})),
        ("even", json!({"n": long})),
        ("square", json!({"n": long})),
    ] {
        let result = call(c, tool, args).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{tool}");
        let message = text(&result);
        assert!(
            message.len() < 500 && message.contains(&shown),
            "{tool}: {} bytes: {}",
            message.len(),
            &message[..200]
        );
    }
}
