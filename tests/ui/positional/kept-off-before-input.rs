use charly::McpTool;
use clap::{Args, Subcommand};

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// Copy a file
    Co {
        /// Only on the command line
        #[mcp_tool(cli_only)]
        first: Option<String>,
        second: Option<String>,
    },
    /// Hidden first positional, with a default
    Hp {
        #[arg(hide = true, default_value = "def")]
        first: String,
        second: Option<String>,
    },
}

/// Placed by index: the hidden one comes first in clap's order
#[derive(Args, McpTool)]
struct Indexed {
    #[arg(index = 2)]
    b: Option<String>,
    #[arg(index = 1)]
    #[mcp_tool(cli_only)]
    a: Option<String>,
}

/// After every tool positional: fine
#[derive(Args, McpTool)]
struct Trailing {
    name: String,
    #[mcp_tool(cli_only)]
    extra: Option<String>,
    #[arg(long)]
    flag: bool,
}

fn main() {}
