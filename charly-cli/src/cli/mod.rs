//! The `charly` command tree. `#[derive(McpTool)]` turns every leaf into an MCP tool named by
//! its dot-joined path (`box.new.project`); `charly mcp serve` serves them.
//!
//! One file per family: [`project`] (`box ...`, `candy ...`), [`check`] (`check ...`),
//! [`serve`] (`mcp serve|install|uninstall`), [`settings`] (`settings ...`), [`secrets`]
//! (`secrets ...`, `secrets gpg ...`), [`host`] (`alias ...`, `udev ...`), [`deploy`] (the
//! lifecycle leaves), [`deployfile`] (`deploy ...`), [`config`] (`config ...`), [`vm`] (`vm ...`); `completions` and `man`
//! are here. A family's leaves name their report type with
//! `#[mcp_tool(output = ...)]`, which becomes the tool's `outputSchema`.

mod cdp;
mod check;
mod config;
mod dbus;
mod deploy;
mod deployfile;
mod host;
mod project;
mod secrets;
mod serve;
mod settings;
mod tmux;
mod vm;
mod vnc;
mod wl;

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use charly::McpTool;
use clap::{Parser, Subcommand};

pub use self::cdp::{CdpCmd, CdpTarget, SelectorArgs, SpaCmd, SpaPoint, TabArgs};
pub use self::check::{
    AnswerArgs, CheckBoxArgs, CheckCmd, Endpoint, LiveArgs, McpProbe, PlanTarget, RemoteArgs, RunArgs,
};
pub use self::config::{ConfigCmd, ConfigRemoveArgs, CryptArgs, PasswdArgs, SetupArgs};
pub use self::dbus::{BusTarget, DbusCmd};
pub use self::deploy::{
    CmdArgs, LogsArgs, RemoveArgs, ServiceArgs, ServiceCmd, ServiceStatusArgs, ShellArgs, StartArgs,
    StatusArgs, StopArgs, TargetArgs, UpdateArgs,
};
pub use self::deployfile::{DeployCmd, DeployKey};
pub use self::host::{AliasCmd, AliasDest, UdevCmd, UdevRoot};
pub use self::project::{
    BoxArg, BoxCandy, BoxCmd, BoxMergeArgs, BoxPullArgs, BoxTestArgs, CandyCmd, CandySetArgs, ListCmd,
    NewCmd, Packages, PathArg, RepoArg, SetArgs, WriteArgs,
};
pub use self::secrets::{GpgCmd, KdbxArg, SecretsCmd, SecretsFile};
pub use self::serve::{InstallArgs, McpCmd, ServeArgs, UninstallArgs};
pub use self::settings::{SettingKey, SettingsCmd};
pub use self::tmux::{RecordCmd, TmuxCmd, TmuxTarget};
pub use self::vm::{AccelArg, DiskFormat, VmBackendArg, VmCmd, VmTarget};
pub use self::vnc::{VncCmd, VncPoint, VncTarget};
pub use self::wl::{OriginArgs, OverlayCmd, OverlayPosition, SwayCmd, WindowArgs, WlCmd, WlPoint, WlTarget};
pub use crate::check::Context;
use crate::deploy::{Executed, Logs, Removed, Started, StatusReport, Stopped, Updated};
use crate::project::DoctorReport;
use crate::report::Version;

/// A timeout as charly spells durations: `30s`, `500ms`, `2m`, `1m30s`, or a number of seconds
/// ([`charly::client::parse_duration`]); clap refuses anything else, naming the argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout(pub Duration);

impl FromStr for Timeout {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match charly::client::parse_duration(text)? {
            Duration::ZERO => {
                Err(format!("{text:?} is zero; a timeout must be more than zero (e.g. 30s, 500ms)"))
            }
            duration => Ok(Timeout(duration)),
        }
    }
}

impl From<Timeout> for Duration {
    fn from(timeout: Timeout) -> Duration {
        timeout.0
    }
}

/// charly: MCP both ways, and charly projects (boxes and candies) edited safely.
#[derive(Parser, McpTool, Debug)]
#[command(name = "charly", version)]
pub struct Cli {
    /// Project directory (default: the working directory). Not a tool input: a server fixes
    /// it for every call.
    // Its id differs from every leaf argument's (`box new project <dir>`): clap copies a
    // global argument's value from a subcommand argument with the same id.
    #[arg(id = "project_dir", short = 'C', long = "dir", global = true, env = "CHARLY_PROJECT_DIR")]
    pub dir: Option<PathBuf>,
    /// Print the command's report as JSON instead of text. Not a tool input: a tool call
    /// returns both, the JSON as `structuredContent`.
    #[arg(long, global = true)]
    pub json: bool,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
// One value a process (or a served call), parsed once: `check`'s remote-server flags make its
// variant the largest, and boxing it would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, McpTool, Debug)]
pub enum Command {
    /// Print charly's version
    #[mcp_tool(output = Version)]
    Version,
    /// Show what this host has: podman, git, a project, and their versions
    #[mcp_tool(output = DoctorReport)]
    Doctor,
    /// Boxes (container images) and the project around them
    #[command(subcommand)]
    Box(BoxCmd),
    /// Candies (layers that boxes are built from)
    #[command(subcommand)]
    Candy(CandyCmd),
    /// Probe MCP servers and run check plans
    #[command(subcommand)]
    Check(CheckCmd),
    /// Per-host settings (~/.config/charly/config.yml)
    #[command(subcommand)]
    Settings(SettingsCmd),
    /// The KeePass database of secrets, and GPG-encrypted dotenv files
    #[command(subcommand)]
    Secrets(SecretsCmd),
    /// Wrapper scripts on the host that run a command in a box
    #[command(subcommand)]
    Alias(AliasCmd),
    /// udev rules for GPU access from rootless containers
    #[command(subcommand)]
    Udev(UdevCmd),
    /// Start a box's container charly-<box>[-<instance>] (podman run -d; ports on 127.0.0.1)
    #[mcp_tool(output = Started, destructive = "starts a container")]
    Start(StartArgs),
    /// Stop a box's running container
    #[mcp_tool(output = Stopped, destructive = "stops a container")]
    Stop(StopArgs),
    /// Show charly's containers, with their ports and MCP servers probed
    #[mcp_tool(output = StatusReport)]
    Status(StatusArgs),
    /// Print the last lines of a box container's log
    #[mcp_tool(output = Logs)]
    Logs(LogsArgs),
    /// Run a command in a box's container (or a disposable one when it is not running)
    #[mcp_tool(output = Executed, destructive = "runs a command in a container")]
    Shell(ShellArgs),
    /// Run a command in a box's running container
    #[mcp_tool(output = Executed, destructive = "runs a command in a container")]
    Cmd(CmdArgs),
    /// Rebuild a box's image and recreate its running container from it
    #[mcp_tool(output = Updated, destructive = "rebuilds an image and recreates a container")]
    Update(UpdateArgs),
    /// Remove a box's container; --purge also removes its named volumes
    #[mcp_tool(output = Removed, destructive = "removes a container and, with purge, its volumes", idempotent)]
    Remove(RemoveArgs),
    /// The services (supervisord programs) of a box's running container
    #[command(subcommand)]
    Service(ServiceCmd),
    /// Boxes as virtual machines (qemu over QMP, or libvirt): build, create, start, stop,
    /// destroy, list, console, ssh
    #[command(subcommand)]
    Vm(VmCmd),
    /// How this host runs a box: its entry in the deploy file
    #[command(subcommand)]
    Config(ConfigCmd),
    /// The per-host deploy file (~/.config/charly/charly.yml): how this host runs its boxes
    #[command(subcommand)]
    Deploy(DeployCmd),
    /// tmux sessions in a box's running container, or on this machine (`.`)
    #[command(subcommand)]
    Tmux(TmuxCmd),
    /// Terminal (asciinema) and desktop (wf-recorder) recordings in a box's running container,
    /// or on this machine (`.`)
    #[command(subcommand)]
    Record(RecordCmd),
    /// MCP server: serve charly's tools, or register them with a host
    #[command(subcommand)]
    Mcp(McpCmd),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[mcp_tool(skip)]
    Completions(CompletionsArgs),
    /// Print charly's man page (roff), or a subcommand's (`charly man check mcp`)
    #[mcp_tool(skip)]
    Man(ManArgs),
}

/// `charly completions <shell>`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `charly man [COMMAND]...`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// The subcommand whose page to print (`check mcp`); none for charly's own
    pub command: Vec<String>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    /// clap's own consistency checks over the whole tree (unique ids and flags, valid
    /// defaults, conflicts that name real arguments), which clap otherwise runs only when a
    /// command is parsed in a debug build.
    #[test]
    fn the_command_tree_passes_clap_debug_assert() {
        super::Cli::command().debug_assert();
    }

    #[test]
    fn a_bad_timeout_is_a_clap_error_naming_the_flag() {
        use clap::Parser as _;
        let err = super::Cli::try_parse_from([
            "charly",
            "check",
            "mcp",
            "ping",
            "--url",
            "http://x/",
            "--timeout",
            "soon",
        ])
        .unwrap_err();
        let text = err.to_string();
        assert!(text.contains("--timeout <TIMEOUT>") && text.contains("invalid duration \"soon\""), "{text}");
        let err = super::Cli::try_parse_from(["charly", "check", "run", "plan.yml", "--context", "live"])
            .unwrap_err();
        assert!(err.to_string().contains("possible values: build, deploy"), "{err}");
    }
}
