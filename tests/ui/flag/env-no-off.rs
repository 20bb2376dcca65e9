use charly::McpTool;
use clap::Args;

/// Install a package
#[derive(Args, McpTool)]
struct Install {
    /// Offline mode
    #[arg(long, env = "PKGCTL_OFFLINE")]
    offline: bool,
    /// Colour the output
    #[arg(long = "no-color", action = clap::ArgAction::SetFalse, env = "PKGCTL_COLOR")]
    color: bool,
}

fn main() {}
