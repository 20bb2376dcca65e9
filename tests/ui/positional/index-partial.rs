use charly::McpTool;
use clap::Args;

/// Copy a file
#[derive(Args, McpTool)]
struct Cp {
    /// Where to
    #[arg(index = 2)]
    dest: String,
    /// What
    src: String,
}

fn main() {}
