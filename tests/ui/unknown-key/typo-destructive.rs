use charly::McpTool;
use clap::Args;

/// Remove a box
#[derive(Args, McpTool)]
#[mcp_tool(destructve)]
struct Remove {
    name: String,
}

fn main() {}
