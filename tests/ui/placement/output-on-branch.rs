use charly::McpTool;
use clap::{Args, Parser, Subcommand};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Report {
    ok: bool,
}

/// A report type belongs to one command: not to a `Subcommand` enum,
#[derive(Subcommand, McpTool)]
#[mcp_tool(output = Report)]
enum Images {
    /// Pull images
    Pull,
}

/// nor to a variant holding subcommands or a flattened one,
#[derive(Subcommand, McpTool)]
enum Cmd {
    /// Image commands
    #[command(subcommand)]
    #[mcp_tool(output = Report)]
    Images(Images),
    #[command(flatten)]
    #[mcp_tool(output = Report)]
    More(More),
}

#[derive(Subcommand, McpTool)]
enum More {
    /// Fetch sources
    Fetch(Fetch),
}

#[derive(Args, McpTool)]
struct Fetch {}

/// nor to a struct with subcommands.
#[derive(Parser, McpTool)]
#[mcp_tool(output = Report)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

fn main() {}
