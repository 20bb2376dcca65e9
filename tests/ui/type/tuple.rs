use charly::McpTool;

/// Resize
#[derive(McpTool)]
struct Resize {
    /// Width and height
    size: (u32, u32),
}

fn main() {}
