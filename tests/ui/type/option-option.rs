use charly::McpTool;
use clap::Args;

/// Build
#[derive(Args, McpTool)]
struct Build {
    /// Tag, or the default tag when given without a value
    #[arg(long)]
    tag: Option<Option<String>>,
}

fn main() {}
