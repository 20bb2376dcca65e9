use charly::McpTool;
use clap::Args;

/// Add packages
#[derive(Args, McpTool)]
#[command(rename_all = "shouting")]
struct Add {
    #[arg(long)]
    dry_run: bool,
}

fn main() {}
