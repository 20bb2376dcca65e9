use charly::McpTool;
use clap::Args;

const LOWEST: i64 = 1024;

/// Listen
#[derive(Args, McpTool)]
struct Listen {
    #[arg(long, value_parser = clap::value_parser!(u16).range(LOWEST..))]
    port: u16,
}

fn main() {}
