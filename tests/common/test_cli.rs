//! A clap CLI written for the tests: every field shape the derive types, three levels of
//! nesting, flatten, skips and every `#[mcp_tool]` key, with report types for `output`.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;

use charly::McpTool;
use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use schemars::JsonSchema;
use serde::Serialize;

/// The test CLI.
#[derive(Parser, McpTool, Debug, PartialEq)]
#[command(name = "tcli", version)]
pub(crate) struct Cli {
    /// Project directory (a root flag: not a tool input).
    #[arg(short = 'C', long, global = true)]
    pub(crate) dir: Option<PathBuf>,
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Subcommand, McpTool, Debug, PartialEq)]
pub(crate) enum Cmd {
    /// Print the version
    Version,
    /// Every scalar type as a flag.
    ///
    /// The long description of the scalars command.
    Scalars(Scalars),
    /// Boolean flags of every kind
    #[mcp_tool(idempotent)]
    Flags(Flags),
    /// Lists, counts and positionals
    Lists(Lists),
    /// Work on boxes
    #[command(subcommand)]
    Box(BoxCmd),
    /// Shapes at the edges of what clap derives
    Edge(Edge),
    #[command(flatten)]
    Extra(Extra),
    /// Serve (left out of the catalog)
    #[mcp_tool(skip)]
    Serve {
        #[arg(long)]
        port: u16,
    },
    /// Hidden from help and from the catalog
    #[command(hide = true)]
    Secret,
    /// Maintenance commands (a whole subtree skipped on its enum)
    #[command(subcommand)]
    Internal(Internal),
}

/// Flags holding every scalar type
#[derive(Args, McpTool, Debug, PartialEq)]
pub(crate) struct Scalars {
    #[arg(long)]
    pub(crate) i8: Option<i8>,
    #[arg(long)]
    pub(crate) i16: Option<i16>,
    #[arg(long)]
    pub(crate) i32: Option<i32>,
    #[arg(long)]
    pub(crate) i64: Option<i64>,
    #[arg(long)]
    pub(crate) isize: Option<isize>,
    #[arg(long)]
    pub(crate) u8: Option<u8>,
    #[arg(long)]
    pub(crate) u16: Option<u16>,
    #[arg(long)]
    pub(crate) u32: Option<u32>,
    #[arg(long)]
    pub(crate) u64: Option<u64>,
    #[arg(long)]
    pub(crate) usize: Option<usize>,
    /// Held to what JSON integers carry
    #[arg(long)]
    pub(crate) i128: Option<i128>,
    #[arg(long)]
    pub(crate) u128: Option<u128>,
    /// A short-only flag
    #[arg(short = 'n')]
    pub(crate) nice: Option<i8>,
    /// A 32-bit float
    #[arg(long)]
    pub(crate) f32: Option<f32>,
    #[arg(long)]
    pub(crate) f64: Option<f64>,
    /// Any text
    #[arg(long)]
    pub(crate) text: Option<String>,
    #[arg(long)]
    pub(crate) path: Option<PathBuf>,
    #[arg(long)]
    pub(crate) letter: Option<char>,
    /// A duration like `30s`, read by its own parser
    #[arg(long, value_parser = parse_seconds)]
    pub(crate) timeout: Option<u64>,
    /// Port with a clap value parser range
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub(crate) port: Option<u16>,
    /// How loud
    #[arg(long, value_enum, default_value_t = Level::Normal)]
    pub(crate) level: Level,
    /// One of three fixed words
    #[arg(long, value_parser = ["red", "green", "blue"])]
    pub(crate) color: Option<String>,
    /// The retry count
    #[arg(long, default_value = "3")]
    pub(crate) retries: u32,
    /// A ratio
    #[arg(long, default_value_t = 0.5)]
    pub(crate) ratio: f64,
    /// Token for the service
    #[arg(long, env = "TCLI_TOKEN")]
    pub(crate) token: Option<String>,
    #[arg(long, hide = true)]
    pub(crate) internal: Option<String>,
    #[arg(skip)]
    pub(crate) skipped: u8,
}

/// Parses `30s`, `2m` or plain seconds.
pub(crate) fn parse_seconds(s: &str) -> Result<u64, String> {
    let (n, unit) = match s.strip_suffix('s') {
        Some(n) => (n, 1),
        None => match s.strip_suffix('m') {
            Some(n) => (n, 60),
            None => (s, 1),
        },
    };
    n.parse::<u64>().map(|n| n * unit).map_err(|e| format!("{s:?}: {e}"))
}

/// How loud the output is.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    Quiet,
    Normal,
    VeryLoud,
}

/// Boolean flags
#[derive(Args, McpTool, Debug, PartialEq)]
pub(crate) struct Flags {
    /// Plain switch
    #[arg(short, long)]
    pub(crate) force: bool,
    /// On unless turned off
    #[arg(long = "no-color", action = ArgAction::SetFalse)]
    pub(crate) color: bool,
    /// Takes true or false; defaults to true
    #[arg(long, default_value_t = true, action = ArgAction::Set)]
    pub(crate) refresh: bool,
    /// Optional explicit boolean
    #[arg(long)]
    pub(crate) confirm: Option<bool>,
    #[command(flatten)]
    pub(crate) common: Common,
}

/// Flags shared by several commands.
#[derive(Args, McpTool, Debug, PartialEq)]
pub(crate) struct Common {
    /// More output
    #[arg(short, long, action = ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Dry run
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// Lists and positionals
#[derive(Args, McpTool, Debug, PartialEq)]
#[command(rename_all = "snake_case")]
pub(crate) struct Lists {
    /// The target (positional)
    pub(crate) target: String,
    /// Labels, repeatable
    #[arg(long = "label", short = 'l')]
    pub(crate) labels: Vec<String>,
    /// Numbers with a default list
    #[arg(long, default_values_t = [1u16, 2])]
    pub(crate) numbers: Vec<u16>,
    /// Comma separated
    #[arg(long, value_delimiter = ',')]
    pub(crate) csv: Vec<String>,
    /// Levels, several allowed
    #[arg(long, value_enum)]
    pub(crate) levels: Vec<Level>,
    /// Extra files (positional, any number)
    pub(crate) files: Vec<PathBuf>,
    /// An explicit id
    #[arg(id = "the-mode", long)]
    pub(crate) mode: Option<String>,
    /// Output format in snake_case
    #[arg(long)]
    pub(crate) out_format: Option<String>,
}

/// Edge shapes
#[derive(Args, McpTool, Debug, PartialEq)]
pub(crate) struct Edge {
    /// A positional with a default
    #[arg(default_value = "main")]
    pub(crate) branch: String,
    /// A boolean that must be given, as `--sign=true|false`
    #[arg(long, action = ArgAction::Set)]
    pub(crate) sign: bool,
    /// A list that may be absent
    #[arg(long)]
    pub(crate) opt_list: Option<Vec<String>>,
    /// Numbers, comma separated
    #[arg(long, value_delimiter = ',')]
    pub(crate) ports: Vec<u16>,
    /// A text default with a space
    #[arg(long, default_value = "a b")]
    pub(crate) words: String,
    /// A char with a default
    #[arg(long, default_value_t = 'x')]
    pub(crate) ch: char,
    /// A signed range
    #[arg(long, value_parser = clap::value_parser!(i64).range(-5..=5))]
    pub(crate) delta: Option<i64>,
    /// Values from a parser object
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(["x", "y"]))]
    pub(crate) pick: Option<String>,
    /// Counted, with a short only
    #[arg(short = 'q', action = ArgAction::Count)]
    pub(crate) quiet: u8,
}

/// Maintenance commands: `#[mcp_tool(skip)]` on the enum leaves its whole subtree out.
#[derive(Subcommand, McpTool, Debug, PartialEq)]
#[mcp_tool(skip)]
pub(crate) enum Internal {
    /// Rebuild the cache
    Reindex,
    /// Drop the cache
    Purge {
        /// Really
        #[arg(long)]
        yes: bool,
    },
}

/// Box commands
#[derive(Subcommand, McpTool, Debug, PartialEq)]
pub(crate) enum BoxCmd {
    /// Create things
    #[command(subcommand)]
    New(NewCmd),
    /// Set a value in charly.yml
    #[mcp_tool(destructive = "edits charly.yml")]
    Set {
        /// Dot path
        path: String,
        /// YAML value
        value: String,
    },
    /// Remove a candy from a box
    #[mcp_tool(destructive, idempotent, name = "box.remove")]
    #[command(name = "rm-candy")]
    RmCandy(RmCandy),
}

/// Create things
#[derive(Subcommand, McpTool, Debug, PartialEq)]
#[mcp_tool(destructive)]
pub(crate) enum NewCmd {
    /// Scaffold a project
    Project {
        /// Where
        dir: PathBuf,
    },
    /// Add a box
    #[command(name = "box")]
    NewBox(NewBox),
}

/// Add a box to the project
#[derive(Args, McpTool, Debug, PartialEq)]
pub(crate) struct NewBox {
    /// Box name
    pub(crate) name: String,
    /// Base image
    #[arg(long, required = true)]
    pub(crate) base: String,
    /// Extra packages
    #[arg(long, required = true)]
    pub(crate) packages: Vec<String>,
}

/// Remove a candy.
///
/// The struct's long text, which the variant's one-paragraph doc replaces.
#[derive(Args, McpTool, Debug, PartialEq)]
pub(crate) struct RmCandy {
    /// Box name
    pub(crate) r#box: String,
    /// Candy name
    pub(crate) candy: String,
}

/// Commands merged in at the top level
#[derive(Subcommand, McpTool, Debug, PartialEq)]
pub(crate) enum Extra {
    /// Fetch from the network
    #[mcp_tool(open_world, output = FetchReport)]
    Fetch {
        /// What to fetch
        spec: Option<String>,
    },
    #[command(name = "pull-all")]
    Pull(Pull),
}

/// Pull every image (the struct's doc: its variant has none).
///
/// A second paragraph, so clap also has a long about.
#[derive(Args, McpTool, Debug, PartialEq)]
#[mcp_tool(output = PullReport)]
pub(crate) struct Pull {
    /// Also pull images of disabled boxes
    #[arg(long)]
    pub(crate) disabled: bool,
}

/// What `fetch` fetched (a variant's report type).
#[derive(Serialize, JsonSchema, Debug)]
pub(crate) struct FetchReport {
    /// The fetched specs, in order
    pub(crate) fetched: Vec<String>,
}

/// What `pull-all` did: nested structs, an enum, lists, optional fields, integers and a map.
#[derive(Serialize, JsonSchema, Debug)]
pub(crate) struct PullReport {
    /// Every image looked at, in order
    pub(crate) images: Vec<Image>,
    /// How many were already current
    pub(crate) unchanged: u32,
    /// Bytes fetched in all
    pub(crate) bytes: u64,
    /// Seconds the slowest pull took behind the fastest (may be negative)
    pub(crate) skew: i64,
    /// Labels put on the run
    pub(crate) labels: BTreeMap<String, String>,
    /// The registry mirror used, when one was
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) mirror: Option<String>,
    /// The slowest image, when any was pulled
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) slowest: Option<Image>,
    /// How the run ended
    pub(crate) outcome: Outcome,
}

/// One image of a pull.
#[derive(Serialize, JsonSchema, Debug)]
pub(crate) struct Image {
    /// The reference pulled
    pub(crate) reference: String,
    /// Its digest, once known
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) digest: Option<String>,
    /// Size in bytes
    pub(crate) size: u64,
    /// Layers, top first
    pub(crate) layers: Vec<u16>,
    /// What happened to it
    pub(crate) state: Outcome,
}

/// How a pull ended.
#[derive(Serialize, JsonSchema, Debug, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Outcome {
    /// Everything was pulled
    Pulled,
    /// Nothing needed pulling
    UpToDate,
    /// Something failed
    Failed,
}
