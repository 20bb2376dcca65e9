//! The lifecycle leaves: `start`, `stop`, `status`, `logs`, `shell`, `cmd`, `update`, `remove`
//! on containers named `charly-<box>[-<instance>]`.

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::deploy::ServiceReport;

use crate::deploy::args::{bind_spec, env_line, port_spec, volume_spec};

/// A box and an instance.
#[derive(Args, McpTool, Debug)]
pub struct TargetArgs {
    /// Box name
    pub r#box: String,
    /// Instance name: the container is charly-<box>-<instance> (default: charly-<box>)
    #[arg(short, long)]
    pub instance: Option<String>,
}

/// `charly start <box>`.
#[derive(Args, McpTool, Debug)]
pub struct StartArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Environment variable KEY=VALUE (repeatable)
    #[arg(short, long = "env", value_name = "KEY=VALUE", value_parser = env_line)]
    pub env: Vec<String>,
    /// Publish a port: [[IP:]HOST:]CONTAINER[/udp]; remaps the box's own port of that container port (repeatable)
    #[arg(short, long = "port", value_name = "HOST:CONTAINER", value_parser = port_spec)]
    pub port: Vec<String>,
    /// Named volume NAME:PATH, made as charly-<box>[-<instance>]-NAME (repeatable)
    #[arg(short, long = "volume", value_name = "NAME:PATH", value_parser = volume_spec)]
    pub volume: Vec<String>,
    /// Bind mount HOST_PATH:PATH[:ro]; the host path must exist (as a tool: inside the project) (repeatable)
    #[arg(long = "bind", value_name = "HOST_PATH:PATH", value_parser = bind_spec)]
    pub bind: Vec<String>,
    /// Seconds each post_enable hook may run before it is stopped (and the start undone)
    #[arg(long, value_name = "SECS", default_value_t = crate::deploy::hooks::HOOK_TIMEOUT_SECS)]
    pub hook_timeout: u32,
    /// The command to run instead of the keep-alive `sleep infinity` (after the flags; a
    /// command whose first word starts with `-` follows `--`)
    // Not `last = true`: a tool call's argv puts every positional after `--` (the box too),
    // which `last` would have taken as the command, leaving the box missing. Not
    // `allow_hyphen_values`: a flag after the box (`--network x`, a typo) would silently
    // become the command; clap refuses it and says to write `-- --network` for a command.
    #[arg(trailing_var_arg = true)]
    pub command: Vec<String>,
}

/// `charly stop <box>`, `charly remove <box>`.
#[derive(Args, McpTool, Debug)]
pub struct StopArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Seconds to wait after SIGTERM before SIGKILL
    #[arg(short, long, default_value_t = 10)]
    pub timeout: u32,
}

/// `charly status [box]`.
#[derive(Args, McpTool, Debug)]
pub struct StatusArgs {
    /// Box name (default: every charly container)
    pub r#box: Option<String>,
    /// Instance name (with a box)
    #[arg(short, long, requires = "box")]
    pub instance: Option<String>,
}

/// `charly logs <box>`.
#[derive(Args, McpTool, Debug)]
pub struct LogsArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// How many of the last lines
    #[arg(short = 'n', long, default_value_t = 100)]
    pub lines: u32,
    /// Keep streaming new lines to the terminal (terminal only; a tool returns the last lines)
    #[arg(short, long)]
    pub follow: bool,
}

/// `charly shell <box>`.
#[derive(Args, McpTool, Debug)]
pub struct ShellArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Run this with `sh -c` and return its output and exit status (required as a tool;
    /// without it a terminal gets an interactive shell)
    #[arg(short, long)]
    pub command: Option<String>,
    /// Environment variable KEY=VALUE for the command (repeatable)
    #[arg(short, long = "env", value_name = "KEY=VALUE", value_parser = env_line)]
    pub env: Vec<String>,
}

/// `charly cmd <box> <command>`.
#[derive(Args, McpTool, Debug)]
pub struct CmdArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// The command, run with `sh -c` in the running container
    pub command: String,
    /// Environment variable KEY=VALUE for the command (repeatable)
    #[arg(short, long = "env", value_name = "KEY=VALUE", value_parser = env_line)]
    pub env: Vec<String>,
}

/// `charly update <box>`.
#[derive(Args, McpTool, Debug)]
pub struct UpdateArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Ask podman for a newer base image while rebuilding (`podman build --pull=newer`)
    #[arg(long)]
    pub pull: bool,
}

/// `charly remove <box>`.
#[derive(Args, McpTool, Debug)]
pub struct RemoveArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Also remove this instance's named volumes (only volumes labelled as its own)
    #[arg(long)]
    pub purge: bool,
    /// Seconds to wait after SIGTERM before SIGKILL
    #[arg(short, long, default_value_t = 10)]
    pub timeout: u32,
    /// Seconds each pre_remove hook may run before it is stopped (and nothing removed)
    #[arg(long, value_name = "SECS", default_value_t = crate::deploy::hooks::HOOK_TIMEOUT_SECS)]
    pub hook_timeout: u32,
    /// Do not run the image's pre_remove hooks
    #[arg(long)]
    pub no_hooks: bool,
}

/// `charly service ...`: a running box's supervisord programs.
#[derive(Subcommand, McpTool, Debug)]
pub enum ServiceCmd {
    /// Start a service (a supervisord program the image declares) in a box's running container
    #[mcp_tool(output = ServiceReport, destructive = "starts a service in a container")]
    Start(ServiceArgs),
    /// Stop a service in a box's running container
    #[mcp_tool(output = ServiceReport, destructive = "stops a service in a container")]
    Stop(ServiceArgs),
    /// Restart a service in a box's running container
    #[mcp_tool(output = ServiceReport, destructive = "restarts a service in a container")]
    Restart(ServiceArgs),
    /// Show the services of a box's running container (supervisorctl status)
    #[mcp_tool(output = ServiceReport)]
    Status(ServiceStatusArgs),
}

/// `charly service start|stop|restart <box> <service>`.
#[derive(Args, McpTool, Debug)]
pub struct ServiceArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// The service: a name the box's image declares (`charly box list services`)
    pub service: String,
}

/// `charly service status <box> [service]`.
#[derive(Args, McpTool, Debug)]
pub struct ServiceStatusArgs {
    /// The box and instance.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Only this service (default: every one)
    pub service: Option<String>,
}
