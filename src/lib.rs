#![doc = include_str!("../README.md")]

pub use charly_macros::McpTool;
pub use charly_mcp::*;
