//! `charly deploy ...`: the per-host deploy file `~/.config/charly/charly.yml`.

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::deployfile::{DeployPath, DeployStatus, Exported, Imported, Reset, Shown};

/// `charly deploy ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum DeployCmd {
    /// Print the deploy file as written (comments kept), or only the named entries; with
    /// --output, write it to a file instead
    #[mcp_tool(output = Exported, destructive = "writes the --output file when one is given", idempotent)]
    Export {
        /// Deployment names to export: <box> or <box>/<instance> (default: the whole file)
        keys: Vec<String>,
        /// Write the YAML to this file (mode 0600; as a tool: inside the project) instead of
        /// returning it
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Merge deploy files into this host's, left to right, field by field (every file is
    /// checked first: a bad one changes nothing)
    #[mcp_tool(output = Imported, destructive = "rewrites the deploy file", idempotent)]
    Import {
        /// The files to import (as a tool: inside the project)
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Start from an empty deploy file instead of merging into the current one
        #[arg(long)]
        replace: bool,
        /// Import only this deployment: <box> or <box>/<instance>
        #[arg(long, value_name = "NAME")]
        r#box: Option<String>,
    },
    /// Print the deploy file's path
    #[mcp_tool(output = DeployPath)]
    Path,
    /// Remove one deployment's entry (and the provides it made), or the whole deploy file;
    /// quadlet units and containers are left alone
    #[mcp_tool(output = Reset, destructive = "removes deploy entries or the deploy file", idempotent)]
    Reset(DeployKey),
    /// Show the deploy file, or one deployment's entry
    #[mcp_tool(output = Shown)]
    Show(DeployKey),
    /// List the deploy file's entries beside the quadlet units and charly containers
    #[mcp_tool(output = DeployStatus)]
    Status,
}

/// An optional box and instance: one deployment of the deploy file.
#[derive(Args, McpTool, Debug)]
pub struct DeployKey {
    /// Box name (default: the whole file)
    pub r#box: Option<String>,
    /// Instance name (with a box): the entry <box>/<instance>
    #[arg(short, long, requires = "box")]
    pub instance: Option<String>,
}
