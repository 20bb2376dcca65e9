//! `charly alias ...` (wrapper scripts on the host) and `charly udev ...` (GPU device rules).

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::alias::{AliasChanged, AliasList};
use crate::udev::{Rules, UdevChanged, UdevStatus};

/// `charly alias ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum AliasCmd {
    /// Write a wrapper script that runs a command in a box's container (the box's image must be local)
    #[mcp_tool(output = AliasChanged, destructive = "writes a script in the alias directory", idempotent)]
    Add {
        /// The script's name (letters, digits, `._+-`)
        name: String,
        /// The box
        r#box: String,
        /// The command to run in the container (default: the name)
        command: Option<String>,
        /// Where the scripts live.
        #[command(flatten)]
        dest: AliasDest,
    },
    /// Write the wrapper scripts a box's image declares (label ai.opencharly.alias)
    #[mcp_tool(output = AliasChanged, destructive = "writes scripts in the alias directory", idempotent)]
    Install {
        /// The box
        r#box: String,
        /// Where the scripts live.
        #[command(flatten)]
        dest: AliasDest,
    },
    /// List the wrapper scripts (`name<TAB>box<TAB>command`)
    #[mcp_tool(output = AliasList)]
    List(AliasDest),
    /// Remove a wrapper script (only a file charly wrote)
    #[mcp_tool(output = AliasChanged, destructive = "deletes a script in the alias directory")]
    Remove {
        /// The script's name
        name: String,
        /// Where the scripts live.
        #[command(flatten)]
        dest: AliasDest,
    },
    /// Remove every wrapper script of a box
    #[mcp_tool(output = AliasChanged, destructive = "deletes scripts in the alias directory", idempotent)]
    Uninstall {
        /// The box
        r#box: String,
        /// Where the scripts live.
        #[command(flatten)]
        dest: AliasDest,
    },
}

/// The alias directory.
#[derive(Args, McpTool, Debug, Clone)]
pub struct AliasDest {
    /// Directory of the scripts (default: ~/.local/bin)
    #[arg(long)]
    pub dest: Option<PathBuf>,
}

/// `charly udev ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum UdevCmd {
    /// Print the udev rules that give the render group the GPU nodes
    #[mcp_tool(output = Rules)]
    Generate(UdevRoot),
    /// Install the rules (idempotent, byte for byte), reload udev and re-trigger drm and kfd
    #[mcp_tool(output = UdevChanged, destructive = "writes /etc/udev/rules.d and reloads udev", idempotent)]
    Install(UdevRoot),
    /// Remove the rules (only charly's file) and reload udev
    #[mcp_tool(output = UdevChanged, destructive = "deletes from /etc/udev/rules.d and reloads udev", idempotent)]
    Remove(UdevRoot),
    /// List the GPU device nodes with driver, owner, group, mode and the user's access, and the fixes
    #[mcp_tool(output = UdevStatus)]
    Status(UdevRoot),
}

/// The file system root.
#[derive(Args, McpTool, Debug, Clone)]
pub struct UdevRoot {
    /// File system root to work under (tests, packaging); udev is reloaded only for /
    #[arg(long, default_value = "/")]
    pub root: PathBuf,
}
