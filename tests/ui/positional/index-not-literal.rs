use charly::McpTool;
use clap::Args;

const SECOND: usize = 2;

/// Copy a file
#[derive(Args, McpTool)]
struct Cp {
    /// Where to
    #[arg(index = SECOND)]
    dest: String,
    /// What
    #[arg(index = 1)]
    src: String,
}

fn main() {}
