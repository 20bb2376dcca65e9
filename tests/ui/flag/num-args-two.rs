use charly::McpTool;
use clap::Args;

/// Draw a line
#[derive(Args, McpTool)]
struct Line {
    /// Start point, as two coordinates
    #[arg(long, num_args = 2)]
    from: Vec<i32>,
}

fn main() {}
