use charly::McpTool;
use clap::Args;

/// A leaf with a name of 65 characters
#[derive(Args, McpTool)]
#[mcp_tool(name = "a-very-long-tool-name-that-goes-on-and-on-past-the-limit-of-64-ch")]
struct Long {}

fn main() {}
