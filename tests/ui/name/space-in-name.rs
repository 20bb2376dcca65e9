use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// Add packages
    #[mcp_tool(name = "add rpm")]
    AddRpm,
}

fn main() {}
