use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Command {
    /// Remote ops
    Remote {
        /// The remote's URL
        #[arg(long)]
        url: String,
        /// The remote's name
        name: String,
        #[command(subcommand)]
        sub: Sub,
    },
}

#[derive(Subcommand, McpTool)]
enum Sub {
    /// Show it
    Show,
}

fn main() {}
