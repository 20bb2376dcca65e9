use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// Add a box
    Add,
    /// Also add a box
    #[command(name = "add")]
    Append,
}

fn main() {}
