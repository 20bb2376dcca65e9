use charly::McpTool;
use clap::Args;

/// Deploy a service
#[derive(Args, McpTool)]
struct Deploy {
    /// More output
    #[arg(short, action = clap::ArgAction::Count, env = "DEPLOY_VERBOSE")]
    verbose: u8,
    /// Tags to apply
    #[arg(long, env = "DEPLOY_TAGS", value_delimiter = ',')]
    tags: Vec<String>,
    /// Overrides
    #[arg(long, env = "DEPLOY_OV", num_args = 0..)]
    ov: Option<Vec<String>>,
    /// Regions: a list that must have values can be left to the environment
    #[arg(long, env = "DEPLOY_REGIONS", default_value = "eu")]
    regions: Vec<String>,
}

fn main() {}
