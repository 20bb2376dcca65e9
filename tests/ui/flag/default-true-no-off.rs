use charly::McpTool;
use clap::Args;

/// Install packages
#[derive(Args, McpTool)]
struct Install {
    /// Refresh the package index first
    #[arg(long, default_value_t = true)]
    refresh: bool,
}

fn main() {}
