use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// Add packages
    #[command(name = "add rpm")]
    AddRpm,
}

fn main() {}
