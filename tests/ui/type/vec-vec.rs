use charly::McpTool;

/// Build
#[derive(McpTool)]
struct Build {
    /// Groups of targets
    groups: Vec<Vec<String>>,
}

fn main() {}
