use charly::McpTool;
use clap::Args;

/// Add packages
#[derive(Args, McpTool)]
#[mcp_tool(cli_only)]
struct Add {
    #[arg(long)]
    force: bool,
}

fn main() {}
