//! clap's errors for a CLI leaf's call, in the caller's terms: every argument named by the
//! JSON key the caller used, found through the leaf's argument specs (long and short names,
//! positional ids), never through the words of clap's command-line spelling; with a real rmcp
//! client in memory.

mod common;

use charly_macros::McpTool;
use charly_mcp::McpTool as _;
use charly_mcp::server::{CliParser, CliRunner, Server, ServerOptions, ToolError, cli_tools};
use clap::{Parser, Subcommand};
use common::{call, connect, text};
use serde_json::json;

#[derive(Parser, McpTool, Debug)]
#[command(name = "pk")]
#[mcp_tool(crate = "charly_mcp")]
struct Pk {
    #[command(subcommand)]
    cmd: PkCmd,
}

#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
enum PkCmd {
    /// Export the packages
    Export {
        /// File to write (`--output`: the field is `out_file`)
        #[arg(short = 'o', long = "output", conflicts_with = "stdout")]
        out_file: Option<String>,
        /// Format (`--output-format`: the field is `output`)
        #[arg(long = "output-format")]
        output: Option<String>,
        /// Write to stdout
        #[arg(long)]
        stdout: bool,
        /// Parallel jobs (short only)
        #[arg(short = 'j', conflicts_with = "stdout")]
        jobs: Option<u8>,
        /// Where to start
        #[arg(requires = "output")]
        from: Option<String>,
        /// A level, checked by clap's value parser
        #[arg(long, value_parser = level)]
        level: Option<String>,
    },
    /// Tag packages
    Tag(TagArgs),
    /// Read a file (clap spells `input` as `<FILE>`)
    Read {
        /// The file
        #[arg(value_name = "FILE", value_parser = level)]
        input: String,
    },
    /// Move a file (`src` is spelled `<DEST>`, as `dest` is by default)
    Mv {
        /// From
        #[arg(value_name = "DEST", value_parser = level)]
        src: String,
        /// To
        #[arg(value_parser = level)]
        dest: String,
    },
}

/// Tag packages: all of them, or some by name.
#[derive(clap::Args, McpTool, Debug)]
#[mcp_tool(crate = "charly_mcp")]
#[command(group(clap::ArgGroup::new("target").required(true).args(["all", "names"])))]
struct TagArgs {
    /// The tag
    tag: String,
    /// Every package
    #[arg(long)]
    all: bool,
    /// These packages (`--name`: the field is `names`)
    #[arg(long = "name")]
    names: Vec<String>,
}

fn level(s: &str) -> Result<String, String> {
    match s {
        "low" | "high" => Ok(s.to_owned()),
        _ => Err("a level is low or high".to_owned()),
    }
}

fn server() -> Server {
    let parser = CliParser::<Pk>::new();
    let runner = CliRunner::blocking("pk", move |argv, _cx| {
        let pk = parser.parse(argv)?;
        Ok::<_, ToolError>(format!("{:?}", pk.cmd))
    });
    Server::new(ServerOptions::new("pk", "0").tools(cli_tools(&Pk::catalog(), runner)))
}

/// The message of an error result.
fn error(result: &charly_mcp::server::rmcp::model::CallToolResult) -> String {
    assert_eq!(result.is_error, Some(true), "not an error: {result:?}");
    text(result)
}

/// `--output` is the field `out_file`, while another field is called `output`: the error names
/// `out_file`, the key the caller sent (it named `output`, taking clap's `'--output
/// <OUT_FILE>'` word for word). A short-only argument (`'-j <JOBS>'`) and a positional
/// (`'[FROM]'`) are named by their keys too.
#[tokio::test]
async fn renamed_and_short_only_arguments_are_named_by_their_keys() {
    let pair = connect(&server()).await;
    let c = &pair.client;
    let result = call(c, "export", json!({"out_file": "a", "stdout": true})).await.unwrap();
    assert_eq!(error(&result), "tool `export`: the argument `out_file` cannot be used with `stdout`");
    let result = call(c, "export", json!({"jobs": 2, "stdout": true})).await.unwrap();
    assert_eq!(error(&result), "tool `export`: the argument `stdout` cannot be used with `jobs`");
    let result = call(c, "export", json!({"from": "x"})).await.unwrap();
    let message = error(&result);
    assert!(
        message.starts_with("tool `export`: the following required arguments were not provided:"),
        "{message}"
    );
    assert!(message.contains("\n  `output`"), "{message}");
    assert!(!message.contains("--") && !message.contains('<'), "{message}");
    // A value clap quotes stays the caller's value, even one spelled like a flag (`-o`).
    let result = call(c, "export", json!({"level": "-o"})).await.unwrap();
    assert_eq!(error(&result), "tool `export`: invalid value '-o' for `level`: a level is low or high");
    // What the caller meant runs.
    let result = call(c, "export", json!({"out_file": "a", "output": "json"})).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    assert!(text(&result).contains(r#"out_file: Some("a"), output: Some("json")"#), "{}", text(&result));
}

/// A required group clap spells `<--all|--name <NAMES>>` is named by its keys, `all` or
/// `names`; a conflict inside the group names both keys.
#[tokio::test]
async fn group_errors_name_the_keys() {
    let pair = connect(&server()).await;
    let c = &pair.client;
    let result = call(c, "tag", json!({"tag": "t"})).await.unwrap();
    assert_eq!(
        error(&result),
        "tool `tag`: the following required arguments were not provided:\n  `all` or `names`"
    );
    let result = call(c, "tag", json!({"tag": "t", "all": true, "names": ["a"]})).await.unwrap();
    assert_eq!(error(&result), "tool `tag`: the argument `all` cannot be used with `names`");
    let result = call(c, "tag", json!({"tag": "t", "names": ["a", "b"]})).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
}

/// A positional is named by its `value_name` (`<FILE>` is `input`); a value name two
/// positionals share (`src` spelled `<DEST>` like `dest`) is left as clap spells it rather than
/// named as the wrong key.
#[tokio::test]
async fn positionals_are_named_by_their_value_names() {
    let pair = connect(&server()).await;
    let c = &pair.client;
    let result = call(c, "read", json!({"input": "xfile"})).await.unwrap();
    assert_eq!(error(&result), "tool `read`: invalid value 'xfile' for `input`: a level is low or high");
    let result = call(c, "mv", json!({"src": "xa", "dest": "low"})).await.unwrap();
    assert_eq!(error(&result), "tool `mv`: invalid value 'xa' for '<DEST>': a level is low or high");
    let result = call(c, "mv", json!({"src": "low", "dest": "high"})).await.unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
}
