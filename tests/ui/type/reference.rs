use charly::McpTool;

/// Greet
#[derive(McpTool)]
struct Greet {
    /// Who to greet
    name: &'static str,
}

fn main() {}
