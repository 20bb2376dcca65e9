use charly::McpTool;
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, McpTool)]
struct Cli {
    /// Output format (a required global)
    #[arg(long, global = true)]
    format: String,
    /// Optional, with a default, or from the environment: fine
    #[arg(long, default_value = "info")]
    level: String,
    #[arg(long, env = "CLI_TOKEN")]
    token: String,
    #[arg(long)]
    quiet: bool,
    #[command(subcommand)]
    cmd: Command,
}

#[derive(Subcommand, McpTool)]
enum Command {
    /// Configuration
    Config(ConfigArgs),
}

#[derive(Args, McpTool)]
struct ConfigArgs {
    /// Config file
    #[arg(long, required = true)]
    file: PathBuf,
    #[command(subcommand)]
    cmd: ConfigCmd,
}

#[derive(Subcommand, McpTool)]
enum ConfigCmd {
    /// Get a key
    Get { key: String },
}

fn main() {}
