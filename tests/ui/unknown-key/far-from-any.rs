use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// List boxes
    #[mcp_tool(colour = "blue")]
    List,
}

fn main() {}
