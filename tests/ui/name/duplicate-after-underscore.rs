use charly::McpTool;
use clap::Subcommand;

#[derive(Subcommand, McpTool)]
enum Cmd {
    /// List boxes
    #[mcp_tool(name = "box.list")]
    BoxList,
    /// Also list boxes, under the name clients that reject dots get for the first
    #[command(name = "box_list")]
    ListBoxes,
}

fn main() {}
