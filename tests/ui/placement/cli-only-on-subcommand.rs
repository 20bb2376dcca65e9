use charly::McpTool;
use clap::{Parser, Subcommand};

#[derive(Parser, McpTool)]
struct Cli {
    #[command(subcommand)]
    #[mcp_tool(cli_only)]
    command: Command,
}

#[derive(Subcommand, McpTool)]
enum Command {
    /// Show the status
    Status,
}

fn main() {}
