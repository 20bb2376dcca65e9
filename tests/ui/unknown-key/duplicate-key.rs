use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// Remove a box
    #[mcp_tool(destructive, idempotent)]
    #[mcp_tool(destructive = "deletes the box")]
    Remove,
}

fn main() {}
