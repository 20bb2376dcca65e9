//! `charly config ...`: how this host runs a box, recorded in the deploy file.

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use super::deploy::TargetArgs;
use crate::deploy::args::{env_line, port_spec};
use crate::deployfile::Configured;

/// `charly config ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum ConfigCmd {
    /// Record how this host runs a box: its deploy entry <box>[/<instance>] (image, ports, env,
    /// env file, network) in the deploy file, merged into what is there (comments kept)
    #[mcp_tool(output = Configured, destructive = "writes the deploy file", idempotent)]
    Setup(SetupArgs),
}

/// `charly config setup <box>`.
#[derive(Args, McpTool, Debug)]
pub struct SetupArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Environment variable KEY=VALUE, merged into the entry's env by key (repeatable)
    #[arg(short, long = "env", value_name = "KEY=VALUE", value_parser = env_line)]
    pub env: Vec<String>,
    /// Replace the entry's env with the --env values instead of merging
    #[arg(short, long)]
    pub clean: bool,
    /// Publish a port: [[IP:]HOST:]CONTAINER[/udp]; the given ports replace the entry's (repeatable)
    #[arg(short, long = "port", value_name = "HOST:CONTAINER", value_parser = port_spec)]
    pub port: Vec<String>,
    /// An env file for the container (recorded as an absolute path; as a tool: inside the project)
    #[arg(long)]
    pub env_file: Option<PathBuf>,
    /// The podman network to run on
    #[arg(long)]
    pub network: Option<String>,
}
