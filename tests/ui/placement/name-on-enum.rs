use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
#[mcp_tool(name = "boxes")]
enum BoxCmd {
    /// List boxes
    List,
}

fn main() {}
