use charly::McpTool;
use clap::Args;

const TWO: usize = 2;

/// Take a pair
#[derive(Args, McpTool)]
struct Pair {
    /// Two values
    #[arg(num_args = TWO)]
    pair: Vec<String>,
}

fn main() {}
