use charly::McpTool;

#[derive(McpTool)]
union Either {
    a: u32,
    b: f32,
}

fn main() {}
