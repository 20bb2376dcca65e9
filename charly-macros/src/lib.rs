//! `#[derive(McpTool)]`.
use proc_macro::TokenStream;

/// Derives `charly::McpTool`.
#[proc_macro_derive(McpTool, attributes(mcp_tool))]
pub fn derive_mcp_tool(_input: TokenStream) -> TokenStream {
    TokenStream::new()
}
