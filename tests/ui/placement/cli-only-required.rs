use charly::McpTool;
use clap::Args;

/// Write a report
#[derive(Args, McpTool)]
struct Report {
    /// Where to write it
    #[arg(long)]
    #[mcp_tool(cli_only)]
    out: std::path::PathBuf,
}

fn main() {}
