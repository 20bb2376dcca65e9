use charly::McpTool;
use clap::Args;

/// Run a command in a box
#[derive(Args, McpTool)]
struct Run {
    /// The box
    name: String,
    /// The command and its arguments
    #[arg(last = true)]
    command: Vec<String>,
}

fn main() {}
