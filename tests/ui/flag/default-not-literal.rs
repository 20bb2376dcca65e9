use charly::McpTool;
use clap::Args;

const REFRESH: bool = true;

/// Install packages
#[derive(Args, McpTool)]
struct Install {
    /// Refresh the package index first
    #[arg(long, default_value_t = REFRESH)]
    refresh: bool,
}

fn main() {}
