//! What a tool call returns beyond text: output schemas in `tools/list`, `structuredContent`,
//! image blocks and `isError` with structured content, for CLI leaves (whose runners return
//! `Result<R: Into<ToolOutput>, ToolError>`) and hand-written tools, with a real rmcp client in
//! memory.

mod common;

use std::fmt;
use std::io::Write as _;
use std::sync::Arc;

use charly_macros::McpTool;
use charly_mcp::schema::output_schema;
use charly_mcp::server::rmcp::model::CallToolResult;
use charly_mcp::server::{CliRunner, Server, ServerOptions, Tool, ToolError, ToolOutput, cli_tools};
use charly_mcp::{Annotations, McpTool as _};
use clap::{Parser, Subcommand};
use common::{call, connect};
use serde_json::{Value, json};

/// A report: a word count.
#[derive(serde::Serialize, schemars::JsonSchema, Debug)]
struct Count {
    /// How many words
    words: usize,
}

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} words", self.words)
    }
}

#[derive(Parser, McpTool, Debug)]
#[command(name = "rp")]
#[mcp_tool(crate = "charly_mcp")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
enum Cmd {
    /// Count the words of a text
    #[mcp_tool(output = Count)]
    Count {
        /// The text
        text: String,
    },
    /// Write a line, then report the count
    #[mcp_tool(output = Count)]
    Chatty {
        /// The text
        text: String,
    },
    /// Take a screenshot
    Shot,
    /// Report a count, but as a failure
    #[mcp_tool(output = Count)]
    Failing,
    /// Write a line and return nothing, as runners did before reports
    Plain,
    /// Write nothing and return nothing
    Silent,
    /// Report a count, but of another shape than it declares
    #[mcp_tool(output = Count)]
    Wrong,
    /// Declare a count, but return plain text
    #[mcp_tool(output = Count)]
    Textonly,
}

/// Another report than `Count`, with `words` as text.
#[derive(serde::Serialize)]
struct Spelled {
    words: &'static str,
}

impl fmt::Display for Spelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} words", self.words)
    }
}

/// One transparent pixel, as MCP carries images.
const PIXEL: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

fn words(text: &str) -> Count {
    Count { words: text.split_whitespace().count() }
}

fn run(argv: Vec<String>, cx: &charly_mcp::server::CallContext) -> Result<ToolOutput, ToolError> {
    let cli = Cli::try_parse_from(argv)?;
    let mut out = cx.out();
    Ok(match cli.cmd {
        Cmd::Count { text } => ToolOutput::report(&words(&text))?,
        Cmd::Chatty { text } => {
            writeln!(out, "counting")?;
            ToolOutput::report(&words(&text))?
        }
        Cmd::Shot => ToolOutput::text("the screen").with_image(PIXEL.to_owned(), "image/png"),
        Cmd::Failing => ToolOutput::report(&Count { words: 0 })?.with_error(true),
        Cmd::Plain => {
            writeln!(out, "plain")?;
            ().into()
        }
        Cmd::Silent => ().into(),
        Cmd::Wrong => ToolOutput::report(&Spelled { words: "three" })?,
        Cmd::Textonly => {
            writeln!(out, "just text")?;
            ().into()
        }
    })
}

/// A hand-written tool declaring its own output schema.
fn stats_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    Tool::new(
        "stats",
        "Structured statistics",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
        Annotations { read_only_hint: true, ..Default::default() },
        |_args, _cx| async move { Ok(ToolOutput::structured("n is 7", json!({"n": 7}))) },
    )
    .with_output_schema(Arc::new(schema.as_object().unwrap().clone()))
}

/// A hand-written tool that returns what `mode` asks for, whatever its output schema says.
fn out_tool() -> Tool {
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    Tool::new(
        "out",
        "Structured output, right or wrong",
        json!({"type": "object", "properties": {"mode": {"type": "string"}}, "required": ["mode"]}),
        Annotations { read_only_hint: true, ..Default::default() },
        |args, _cx| async move {
            Ok(match args["mode"].as_str().unwrap_or_default() {
                "good" => ToolOutput::structured("n is 1", json!({"n": 1})),
                "bad" => ToolOutput::structured("n is wrong", json!({"n": "not a number"})),
                "failed" => ToolOutput::structured("it failed", json!({"why": "no n"})).with_error(true),
                _ => ToolOutput::text("no structured content"),
            })
        },
    )
    .with_output_schema(Arc::new(schema.as_object().unwrap().clone()))
}

fn server() -> Server {
    let options = ServerOptions::new("reports", "0.0.1")
        .tools(cli_tools(&Cli::catalog(), CliRunner::blocking("rp", run)))
        .tool(stats_tool())
        .tool(out_tool());
    Server::new(options)
}

fn content(result: &CallToolResult) -> Value {
    serde_json::to_value(&result.content).unwrap()
}

#[tokio::test]
async fn output_schemas_are_listed_for_leaves_and_tools_that_declare_them() {
    let pair = connect(&server()).await;
    let tools = pair.client.list_all_tools().await.unwrap();
    let output = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no tool {name}"));
        tool.output_schema.as_ref().map(|s| Value::Object((**s).clone()))
    };
    let count = Value::Object((*output_schema::<Count>()).clone());
    assert_eq!(
        count,
        json!({"type": "object", "properties": {"words": {"type": "integer", "description": "How many words",
                                                          "minimum": 0}},
               "required": ["words"]})
    );
    for leaf in ["count", "chatty", "failing"] {
        assert_eq!(output(leaf).as_ref(), Some(&count), "{leaf}");
    }
    for leaf in ["shot", "plain", "silent"] {
        assert_eq!(output(leaf), None, "{leaf}");
    }
    assert_eq!(output("stats").unwrap()["required"], json!(["n"]));
    // What `tools/list` sends: the schema under `outputSchema`, and nothing for the others.
    let plain = serde_json::to_value(tools.iter().find(|t| t.name == "plain").unwrap()).unwrap();
    assert!(plain.get("outputSchema").is_none(), "{plain}");
}

#[tokio::test]
async fn a_report_is_text_plus_structured_content() {
    let pair = connect(&server()).await;
    let result = call(&pair.client, "count", json!({"text": "one two three"})).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(content(&result), json!([{"type": "text", "text": "3 words"}]));
    assert_eq!(result.structured_content, Some(json!({"words": 3})));

    // What the command wrote comes first, then the report's text.
    let result = call(&pair.client, "chatty", json!({"text": "a b"})).await.unwrap();
    assert_eq!(
        content(&result),
        json!([{"type": "text", "text": "counting\n"}, {"type": "text", "text": "2 words"}])
    );
    assert_eq!(result.structured_content, Some(json!({"words": 2})));

    let result = call(&pair.client, "stats", json!({})).await.unwrap();
    assert_eq!(content(&result), json!([{"type": "text", "text": "n is 7"}]));
    assert_eq!(result.structured_content, Some(json!({"n": 7})));
}

#[tokio::test]
async fn images_follow_the_text() {
    let pair = connect(&server()).await;
    let result = call(&pair.client, "shot", json!({})).await.unwrap();
    assert_eq!(
        content(&result),
        json!([{"type": "text", "text": "the screen"},
               {"type": "image", "data": PIXEL, "mimeType": "image/png"}])
    );
    assert_eq!(result.structured_content, None);
}

#[tokio::test]
async fn an_error_result_keeps_its_structured_content() {
    let pair = connect(&server()).await;
    let result = call(&pair.client, "failing", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(content(&result), json!([{"type": "text", "text": "0 words"}]));
    assert_eq!(result.structured_content, Some(json!({"words": 0})));
}

/// A hand-written tool's successful result is checked against its own output schema: one the
/// schema refuses, or one without structured content, is not sent (clients check it and raise:
/// the Python SDK's "Invalid structured content returned by tool") but becomes an error result
/// that names the tool, says whose bug it is and what was wrong. Error results pass unchecked.
#[tokio::test]
async fn a_hand_written_tool_breaking_its_output_schema_is_an_error_result() {
    let pair = connect(&server()).await;
    let c = &pair.client;
    let good = call(c, "out", json!({"mode": "good"})).await.unwrap();
    assert_eq!((good.is_error, good.structured_content), (Some(false), Some(json!({"n": 1}))));

    let bad = call(c, "out", json!({"mode": "bad"})).await.unwrap();
    assert_eq!((bad.is_error, &bad.structured_content), (Some(true), &None), "{bad:?}");
    assert_eq!(
        common::text(&bad),
        "tool `out` broke its own output schema (a bug in the tool, not in the call's arguments): its \
         `structuredContent` does not match: `/n`: \"not a number\" is not of type \"integer\""
    );

    let none = call(c, "out", json!({"mode": "none"})).await.unwrap();
    assert_eq!(none.is_error, Some(true));
    assert!(common::text(&none).starts_with("tool `out` broke its own output schema"), "{none:?}");
    assert!(common::text(&none).contains("it returned no `structuredContent`"), "{none:?}");

    let failed = call(c, "out", json!({"mode": "failed"})).await.unwrap();
    assert_eq!((failed.is_error, &failed.structured_content), (Some(true), &Some(json!({"why": "no n"}))));
    assert_eq!(content(&failed), json!([{"type": "text", "text": "it failed"}]));
}

/// A CLI leaf's successful result is checked against its `#[mcp_tool(output = ...)]` schema as
/// a hand-written tool's is: nothing ties a runner's report to the declared type, and a runner
/// may return text. A report of another shape, or text alone, becomes an error result naming
/// the leaf; a report of the declared type passes unchanged.
#[tokio::test]
async fn a_cli_leaf_breaking_its_output_schema_is_an_error_result() {
    let pair = connect(&server()).await;
    let c = &pair.client;
    let wrong = call(c, "wrong", json!({})).await.unwrap();
    assert_eq!((wrong.is_error, &wrong.structured_content), (Some(true), &None), "{wrong:?}");
    assert_eq!(
        common::text(&wrong),
        "tool `wrong` broke its own output schema (a bug in the tool, not in the call's arguments): its \
         `structuredContent` does not match: `/words`: \"three\" is not of type \"integer\""
    );

    let text = call(c, "textonly", json!({})).await.unwrap();
    assert_eq!((text.is_error, &text.structured_content), (Some(true), &None), "{text:?}");
    assert!(common::text(&text).starts_with("tool `textonly` broke its own output schema"), "{text:?}");
    assert!(common::text(&text).contains("it returned no `structuredContent`"), "{text:?}");

    // Twice: the second call uses the validator the first compiled.
    for _ in 0..2 {
        let good = call(c, "count", json!({"text": "one two"})).await.unwrap();
        assert_eq!((good.is_error, &good.structured_content), (Some(false), &Some(json!({"words": 2}))));
        assert_eq!(content(&good), json!([{"type": "text", "text": "2 words"}]));
    }
}

/// A runner returning `()` gets what runners got before they could return more: exactly one
/// text block with what the command wrote, empty or not, and no structured content.
#[tokio::test]
async fn unit_runners_return_one_text_block_as_before() {
    let pair = connect(&server()).await;
    let result = call(&pair.client, "plain", json!({})).await.unwrap();
    assert_eq!(content(&result), json!([{"type": "text", "text": "plain\n"}]));
    assert_eq!((result.is_error, result.structured_content), (Some(false), None));
    let result = call(&pair.client, "silent", json!({})).await.unwrap();
    assert_eq!(content(&result), json!([{"type": "text", "text": ""}]));
}

/// An async runner may return a report too; and one returning `Ok(())` still compiles.
#[tokio::test]
async fn async_runners_return_any_output() {
    let reporting =
        CliRunner::future("rp", |argv, _cx| async move { ToolOutput::report(&Count { words: argv.len() }) });
    let unit = CliRunner::future("rp", |_argv, cx: charly_mcp::server::CallContext| async move {
        writeln!(cx.out(), "done")?;
        Ok(())
    });
    let catalog = Cli::catalog();
    let options = ServerOptions::new("reports", "0.0.1").tools(cli_tools(&catalog, reporting));
    let pair = connect(&Server::new(options)).await;
    let result = call(&pair.client, "count", json!({"text": "x"})).await.unwrap();
    // The argv `rp count -- x` has four items.
    assert_eq!(result.structured_content, Some(json!({"words": 4})));
    let options = ServerOptions::new("reports", "0.0.1").tools(cli_tools(&catalog, unit));
    let pair = connect(&Server::new(options)).await;
    let result = call(&pair.client, "plain", json!({})).await.unwrap();
    assert_eq!(content(&result), json!([{"type": "text", "text": "done\n"}]));
}

/// A report whose `Serialize` fails is a `ToolError` naming the report type.
#[test]
fn a_report_that_does_not_serialise_names_its_type() {
    struct Broken;
    impl serde::Serialize for Broken {
        fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
            Err(serde::ser::Error::custom("no JSON for this"))
        }
    }
    impl fmt::Display for Broken {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("broken")
        }
    }
    let err = ToolOutput::report(&Broken).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the report `test_tool_output::a_report_that_does_not_serialise_names_its_type::Broken` could not \
         be serialised as JSON: no JSON for this"
    );
}

#[test]
fn outputs_build_up_and_read_back() {
    let output = ToolOutput::structured("t", json!({"a": 1})).with_image(PIXEL.to_owned(), "image/png");
    assert_eq!(output.blocks().len(), 2);
    assert_eq!(output.structured_content(), Some(&json!({"a": 1})));
    assert!(!output.is_error());
    let output = output.with_error(true);
    assert!(output.is_error());
    assert_eq!(output.clone().with_error(false).into_result().is_error, Some(false));
    let empty = ToolOutput::from(());
    assert!(empty.blocks().is_empty() && empty.structured_content().is_none() && !empty.is_error());
}
