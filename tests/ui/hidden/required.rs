use charly::McpTool;
use clap::Args;

/// Run something
#[derive(Args, McpTool)]
struct Run {
    /// Internal: required, and no call can give it
    #[arg(long, hide = true)]
    internal: String,
    /// Hidden but optional, defaulted or from the environment: fine
    #[arg(long, hide = true)]
    trace: Option<String>,
    #[arg(long, hide = true, default_value = "x")]
    mode: String,
    #[arg(long, hide = true, env = "RUN_TOKEN")]
    token: String,
}

fn main() {}
