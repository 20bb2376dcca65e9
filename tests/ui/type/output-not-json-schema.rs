use charly::McpTool;
use clap::Args;

/// Serialisable, but without a `JsonSchema`: it has no output schema.
#[derive(serde::Serialize)]
struct Report {
    ok: bool,
}

/// Pull an image
#[derive(Args, McpTool)]
#[mcp_tool(output = Report)]
struct Pull {}

fn main() {}
