//! What a tool call leaves out: the argv rebuild keeps every given value in clap's place
//! (a left-out positional's default is written out before a later positional the call gives,
//! or the call is refused), and an argument the server's environment can fill (`env`) is not
//! a required tool input. Each rebuilt argv is parsed back with clap.

use charly::McpTool;
use clap::{Parser, ValueEnum};
use serde_json::{Value, json};

#[derive(Clone, Copy, Debug, PartialEq, ValueEnum)]
enum Mode {
    Fast,
    SlowAndSafe,
}

/// Pack files
#[derive(Parser, McpTool, Debug, PartialEq)]
#[command(name = "pack")]
struct Pack {
    /// Mode
    #[arg(value_enum, default_value_t = Mode::SlowAndSafe)]
    mode: Mode,
    /// Level
    #[arg(default_value_t = 3)]
    level: u8,
    /// Archive name
    #[arg(default_value = "out.tar")]
    name: String,
    /// Target
    target: Option<String>,
}

fn argv(tool: &charly::CliTool, args: Value) -> Result<Vec<String>, String> {
    tool.argv(args.as_object().unwrap()).map_err(|e| e.to_string())
}

fn parse<T: Parser>(name: &str, argv: Vec<String>) -> T {
    T::try_parse_from(std::iter::once(name.to_owned()).chain(argv)).unwrap()
}

#[test]
fn left_out_defaults_before_a_given_positional_are_written_out() {
    let catalog = Pack::catalog();
    let tool = catalog.get("pack").unwrap();
    let a = argv(tool, json!({"target": "T"})).unwrap();
    assert_eq!(a, ["--", "slow-and-safe", "3", "out.tar", "T"]);
    let expected =
        Pack { mode: Mode::SlowAndSafe, level: 3, name: "out.tar".into(), target: Some("T".into()) };
    assert_eq!(parse::<Pack>("pack", a), expected);

    let a = argv(tool, json!({"level": 9, "mode": "fast"})).unwrap();
    assert_eq!(a, ["--", "fast", "9"]);
    let expected = Pack { mode: Mode::Fast, level: 9, name: "out.tar".into(), target: None };
    assert_eq!(parse::<Pack>("pack", a), expected);

    // Nothing given later: the defaults are left to clap.
    assert_eq!(argv(tool, json!({})).unwrap(), Vec::<String>::new());
    assert_eq!(parse::<Pack>("pack", vec![]).name, "out.tar");
}

fn computed() -> String {
    "computed".to_owned()
}

/// Unpack files
#[derive(Parser, McpTool, Debug, PartialEq)]
#[command(name = "unpack")]
struct Unpack {
    /// A default the derive cannot see as a constant
    #[arg(default_value_t = computed())]
    dir: String,
    /// A default clap takes only when the environment has no value
    #[arg(env = "CHARLY_TEST_GAPS_UNPACK_FORMAT", default_value = "tar")]
    format: String,
    /// Target
    target: Option<String>,
}

#[test]
fn defaults_that_cannot_be_written_out_still_refuse_the_call() {
    let catalog = Unpack::catalog();
    let tool = catalog.get("unpack").unwrap();
    assert_eq!(
        argv(tool, json!({"target": "T"})).unwrap_err(),
        "tool `unpack`: argument `target`: positional arguments go in order: give `dir` too, or leave `target` out"
    );
    assert_eq!(
        argv(tool, json!({"dir": "d", "target": "T"})).unwrap_err(),
        "tool `unpack`: argument `target`: positional arguments go in order: give `format` too, or leave `target` out"
    );
    let a = argv(tool, json!({"dir": "d", "format": "zip", "target": "T"})).unwrap();
    assert_eq!(a, ["--", "d", "zip", "T"]);
    let expected = Unpack { dir: "d".into(), format: "zip".into(), target: Some("T".into()) };
    assert_eq!(parse::<Unpack>("unpack", a), expected);
}

const TOKEN: &str = "CHARLY_TEST_GAPS_TOKEN";

/// Call an API
#[derive(Parser, McpTool, Debug, PartialEq)]
#[command(name = "call")]
struct Call {
    /// API token
    #[arg(long, env = "CHARLY_TEST_GAPS_TOKEN")]
    token: String,
    /// Host
    #[arg(env = "CHARLY_TEST_GAPS_HOST", required = true)]
    host: String,
    /// Path
    #[arg(long)]
    path: String,
}

/// Runs again in a child process with the variables set (the tests cannot set their own
/// environment: `unsafe` is forbidden, and other tests run beside them).
#[test]
fn an_argument_the_environment_fills_is_not_required() {
    let catalog = Call::catalog();
    let tool = catalog.get("call").unwrap();
    let schema = Value::Object(tool.input_schema().as_ref().clone());
    assert_eq!(schema["required"], json!(["path"]), "{schema}");
    let a = argv(tool, json!({"path": "/p"})).unwrap();
    assert_eq!(a, ["--path=/p"]);
    if std::env::var_os(TOKEN).is_none() {
        // Without the variables, clap's own error names what is missing.
        let err = Call::try_parse_from(std::iter::once("call".to_owned()).chain(a)).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::MissingRequiredArgument, "{err}");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "an_argument_the_environment_fills_is_not_required", "--nocapture"])
            .env(TOKEN, "sekrit")
            .env("CHARLY_TEST_GAPS_HOST", "h.example")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains("1 passed"), "{text}");
        return;
    }
    let expected = Call { token: "sekrit".into(), host: "h.example".into(), path: "/p".into() };
    assert_eq!(parse::<Call>("call", a), expected);
    // A value the call gives wins over the environment.
    let a = argv(tool, json!({"path": "/p", "token": "t", "host": "h"})).unwrap();
    assert_eq!(parse::<Call>("call", a), Call { token: "t".into(), host: "h".into(), path: "/p".into() });
}

/// A positional kept on the command line only, in a struct other commands flatten.
#[derive(clap::Args, McpTool, Debug, PartialEq)]
struct Extra {
    /// Only on a terminal
    #[mcp_tool(cli_only)]
    extra: Option<String>,
}

/// The kept-off positional comes first: a call's `second` would arrive as `extra`.
#[derive(Parser, McpTool, Debug, PartialEq)]
#[command(name = "before")]
struct Before {
    #[command(flatten)]
    extra: Extra,
    second: Option<String>,
}

/// The kept-off positional comes last: nothing shifts.
#[derive(Parser, McpTool, Debug, PartialEq)]
#[command(name = "after")]
struct After {
    second: Option<String>,
    #[command(flatten)]
    extra: Extra,
}

#[test]
#[should_panic(
    expected = "positional `extra` is not a tool input (`#[mcp_tool(cli_only)]` or `hide = true`), \
                           but positional `second` after it is (through #[command(flatten)])"
)]
fn a_kept_off_positional_before_a_tool_positional_through_flatten_is_refused() {
    let _ = Before::catalog();
}

#[test]
fn a_kept_off_positional_after_the_tool_positionals_is_fine() {
    let catalog = After::catalog();
    let a = argv(catalog.get("after").unwrap(), json!({"second": "S"})).unwrap();
    assert_eq!(parse::<After>("after", a), After { second: Some("S".into()), extra: Extra { extra: None } });
}
