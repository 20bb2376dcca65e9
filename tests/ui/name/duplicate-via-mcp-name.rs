use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// Remove a box
    #[mcp_tool(name = "box.remove")]
    Remove,
    /// Delete a box
    #[mcp_tool(name = "box.remove")]
    Delete,
}

fn main() {}
