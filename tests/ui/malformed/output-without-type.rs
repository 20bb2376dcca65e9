use charly::McpTool;
use clap::Args;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Report {
    ok: bool,
}

/// `output` needs a type,
#[derive(Args, McpTool)]
#[mcp_tool(output)]
struct Pull {}

/// a type rather than a string,
#[derive(Args, McpTool)]
#[mcp_tool(output = "Report")]
struct Push {}

/// and only one.
#[derive(Args, McpTool)]
#[mcp_tool(output = Report, output = Report)]
struct Tag {}

fn main() {}
