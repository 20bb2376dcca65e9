//! `charly config ...`: how this host runs a box, recorded in the deploy file.

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use super::deploy::TargetArgs;
use crate::deploy::args::{env_line, port_spec};
use crate::setup::{ConfigStatus, Crypted, RunMode, SetUp, Unconfigured};

/// `charly config ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum ConfigCmd {
    /// Record how this host runs a box: its deploy entry <box>[/<instance>] (image, ports, env,
    /// env file, network, secrets, volumes) in the deploy file, merged into what is there
    /// (comments kept); ports checked free, podman secrets made from the credential store,
    /// named volumes created, quadlet units written in quadlet mode. On failure nothing is left
    #[mcp_tool(
        output = SetUp,
        destructive = "writes the deploy file, podman secrets and volumes, quadlet units",
        idempotent
    )]
    Setup(SetupArgs),
    /// Show a box's deploy entry beside what exists for it: its podman secrets, volumes
    /// (podman volume or host directory), quadlet unit and container
    #[mcp_tool(output = ConfigStatus)]
    Status(TargetArgs),
    /// Remove a box's deploy entry, its podman secrets and quadlet units (only this
    /// instance's); its volumes too with --purge. Refused while its container runs
    #[mcp_tool(output = Unconfigured, destructive = "removes the deploy entry, podman secrets, units, volumes with --purge", idempotent)]
    Remove(ConfigRemoveArgs),
    /// Mount a box's encrypted volumes (gocryptfs; passphrase $GOCRYPTFS_PASSWORD or
    /// credential charly/enc/<box>[/<instance>]); mounted ones are left as they are
    #[mcp_tool(output = Crypted, destructive = "mounts encrypted volumes on the host", idempotent)]
    Mount(CryptArgs),
    /// Unmount a box's encrypted volumes
    #[mcp_tool(output = Crypted, destructive = "unmounts encrypted volumes", idempotent)]
    Unmount(CryptArgs),
    /// Change the passphrase of a box's encrypted volumes (all unmounted) and store the new one
    /// as credential charly/enc/<box>[/<instance>] (each instance has its own)
    #[mcp_tool(output = Crypted, destructive = "re-keys encrypted volumes and the stored passphrase")]
    Passwd(PasswdArgs),
}

/// `charly config mount|unmount <box>`.
#[derive(Args, McpTool, Debug)]
pub struct CryptArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Only this encrypted volume
    #[arg(long)]
    pub volume: Option<String>,
}

/// `charly config passwd <box>`.
#[derive(Args, McpTool, Debug)]
pub struct PasswdArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// The new passphrase (the current one comes from $GOCRYPTFS_PASSWORD or the credential store)
    #[arg(long)]
    pub new_passphrase: String,
}

/// `charly config remove <box>`.
#[derive(Args, McpTool, Debug)]
pub struct ConfigRemoveArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Remove the deployment's podman volumes too (their data is lost)
    #[arg(long)]
    pub purge: bool,
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
    /// A secret the container sees as $NAME, from credential charly/secret/KEY (default KEY:
    /// NAME), made a podman secret (repeatable; merged into the entry's by name)
    #[arg(long = "secret", value_name = "NAME[=KEY]")]
    pub secret: Vec<String>,
    /// A named volume NAME at container path PATH, podman volume charly-<box>[-<instance>]-NAME
    /// (repeatable; merged into the entry's by name)
    #[arg(short, long = "volume", value_name = "NAME:PATH")]
    pub volume: Vec<String>,
    /// Bind-mount volume NAME from HOST_DIR, an existing absolute directory (repeatable)
    #[arg(long = "bind", value_name = "NAME=HOST_DIR")]
    pub bind: Vec<String>,
    /// Encrypt volume NAME with gocryptfs (its cipher and plain dirs under
    /// ~/.local/share/charly/encrypted; passphrase $GOCRYPTFS_PASSWORD or credential
    /// charly/enc/<box>[/<instance>]) (repeatable)
    #[arg(long = "encrypt", value_name = "NAME")]
    pub encrypt: Vec<String>,
    /// The encrypted volumes' passphrase: stored (it must be in the credential store or
    /// $GOCRYPTFS_PASSWORD already) or auto (generated, 32 random bytes as hex, and stored as
    /// charly/enc/<box>[/<instance>] when none is)
    #[arg(long, value_enum, default_value = "stored")]
    pub password: crate::setup::Password,
    /// How this host runs the container (default: the run_mode setting; auto is quadlet where
    /// systemd is PID 1): quadlet writes units to ~/.config/containers/systemd
    #[arg(long, value_enum)]
    pub run_mode: Option<RunMode>,
}
