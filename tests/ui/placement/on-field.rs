use charly::McpTool;
use clap::Args;

/// Add packages
#[derive(Args, McpTool)]
struct Add {
    #[mcp_tool(destructive)]
    #[arg(long)]
    force: bool,
}

fn main() {}
