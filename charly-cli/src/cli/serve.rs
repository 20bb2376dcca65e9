//! `charly mcp ...`: the MCP server (not a tool itself).

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

/// `charly mcp ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum McpCmd {
    /// Serve the charly command tree as MCP tools
    Serve(ServeArgs),
}

/// `charly mcp serve` options.
#[derive(Args, McpTool, Debug)]
pub struct ServeArgs {
    /// Address to listen on for Streamable HTTP (binding beyond loopback is explicit; add the
    /// names clients reach it by with --allow-host)
    #[arg(long, default_value = "127.0.0.1:18765")]
    pub listen: String,
    /// Also accept this Host (`name` for any port, or `name:port`), and browser Origins on it
    /// (http and https, any port); loopback names are always accepted. Repeatable
    #[arg(long, value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// URL path of the MCP endpoint
    #[arg(long, default_value = "/mcp")]
    pub path: String,
    /// Require `Authorization: Bearer <token>` over HTTP, the token read from this environment
    /// variable (requests without it get 401)
    #[arg(long, value_name = "VAR", conflicts_with_all = ["token_file", "stdio"])]
    pub token_env: Option<String>,
    /// Require `Authorization: Bearer <token>` over HTTP, the token read from this file
    /// (surrounding whitespace trimmed)
    #[arg(long, value_name = "PATH", conflicts_with = "stdio")]
    pub token_file: Option<PathBuf>,
    /// Serve over stdio instead of HTTP
    #[arg(long)]
    pub stdio: bool,
    /// Leave destructive tools out (neither listed nor callable)
    #[arg(long)]
    pub read_only: bool,
    /// Fail instead of serving the embedded sample project when no project is named
    #[arg(long)]
    pub no_default_repo: bool,
    /// Project repository to clone and serve (`owner/name@ref`, a git URL or a local path)
    #[arg(long, env = "CHARLY_PROJECT_REPO")]
    pub repo: Option<String>,
}
