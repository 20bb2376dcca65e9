use charly::McpTool;
use clap::Args;

const LONG: &str = "packages";

/// Add packages
#[derive(Args, McpTool)]
struct Add {
    #[arg(long = LONG)]
    packages: Vec<String>,
}

fn main() {}
