use charly::McpTool;
use clap::Args;

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Report {
    ok: bool,
}

/// Pull an image
#[derive(Args, McpTool)]
struct Pull {
    /// The image
    #[mcp_tool(output = Report)]
    image: String,
}

fn main() {}
