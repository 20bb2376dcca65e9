//! The `charly` command tree. `#[derive(McpTool)]` turns every leaf into an MCP tool named by
//! its dot-joined path (`box.new.project`); `charly mcp serve` serves them.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use charly::McpTool;
use clap::{Args, Parser, Subcommand};

pub use crate::check::Context;

/// A timeout as charly spells durations: `30s`, `500ms`, `2m`, `1m30s`, or a number of seconds
/// ([`charly::client::parse_duration`]); clap refuses anything else, naming the argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timeout(pub Duration);

impl FromStr for Timeout {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        charly::client::parse_duration(text).map(Timeout)
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
#[derive(Subcommand, McpTool, Debug)]
pub enum Command {
    /// Print charly's version
    Version,
    /// Show what this host has: podman, git, a project, and their versions
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
    /// MCP server
    #[command(subcommand)]
    #[mcp_tool(skip)]
    Mcp(McpCmd),
}

/// `charly check ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum CheckCmd {
    /// Probe one MCP server
    #[command(subcommand)]
    #[mcp_tool(open_world)]
    Mcp(McpProbe),
    /// Run a check plan: a YAML file, or the checks of a box's project and candies
    #[mcp_tool(open_world, destructive = "runs the plan's `mcp: call` steps, which can invoke anything")]
    Run(RunArgs),
    /// Run a box's checks against its running container (deploy context)
    #[mcp_tool(open_world, destructive = "runs the plan's `mcp: call` steps, which can invoke anything")]
    Live(LiveArgs),
    /// Run a box's checks in the build context (`mcp:` steps are skipped)
    Box(BoxArg),
    /// Validate a check plan (a YAML file or a box) without running it
    Validate(PlanTarget),
}

/// `charly check mcp ...`: one method against one server.
#[derive(Subcommand, McpTool, Debug)]
pub enum McpProbe {
    /// Ping the server; prints `ok`
    #[mcp_tool(destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    Ping(Endpoint),
    /// List the servers an endpoint source provides (`name<TAB>url<TAB>transport`), without dialing
    Servers(Endpoint),
    /// List the server's tools (`name<TAB>first line of description`), every page
    #[mcp_tool(destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ListTools(Endpoint),
    /// List the server's resources (`uri<TAB>name<TAB>mime`), every page
    #[mcp_tool(destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ListResources(Endpoint),
    /// List the server's prompts (`name<TAB>description`), every page
    #[mcp_tool(destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ListPrompts(Endpoint),
    /// Call a tool; prints its text content; exit 1 when the result is an error
    #[mcp_tool(destructive = "invokes a tool on the far side, which can do anything")]
    Call {
        /// Tool name
        #[arg(long)]
        tool: String,
        /// Arguments as a JSON object
        #[arg(long)]
        input: Option<String>,
        /// The server.
        #[command(flatten)]
        endpoint: Endpoint,
    },
    /// Read a resource; prints its text contents
    #[mcp_tool(destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    Read {
        /// Resource URI
        #[arg(long)]
        uri: String,
        /// The server.
        #[command(flatten)]
        endpoint: Endpoint,
    },
}

/// Where an MCP server is: `--url`, a server of a `.mcp.json`, or a box's running container.
#[derive(Args, McpTool, Debug, Clone)]
pub struct Endpoint {
    /// Box whose image declares the server (label ai.opencharly.mcp_provide); its container must run
    pub r#box: Option<String>,
    /// Server URL, e.g. http://127.0.0.1:18765/mcp
    #[arg(long, conflicts_with_all = ["box", "server"])]
    pub url: Option<String>,
    /// Transport for --url: http (Streamable HTTP, the default) or sse (legacy HTTP+SSE); a
    /// stdio server is a command, named in .mcp.json
    #[arg(long, requires = "url", value_parser = ["http", "sse"])]
    pub transport: Option<String>,
    /// Server name in the .mcp.json file (`mcpServers`)
    #[arg(long)]
    pub server: Option<String>,
    /// The .mcp.json file (default: .mcp.json in the project directory)
    #[arg(long)]
    pub mcp_json: Option<PathBuf>,
    /// Which of a box's servers, when its image declares several
    #[arg(long)]
    pub mcp_name: Option<String>,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(long)]
    pub instance: Option<String>,
    /// HTTP header for every request, `Name: value` (repeatable)
    #[arg(long)]
    pub header: Vec<String>,
    /// Timeout per operation, e.g. 30s, 500ms, 1m
    #[arg(long, default_value = "30s")]
    pub timeout: Timeout,
}

/// A check plan: a YAML file, or a box (its project's and its candies' checks).
#[derive(Args, McpTool, Debug)]
pub struct PlanTarget {
    /// Plan file, or box name
    pub target: String,
}

/// `charly check run` options.
#[derive(Args, McpTool, Debug)]
pub struct RunArgs {
    /// Plan file, or box name
    pub target: String,
    /// Only run checks with this verb (e.g. mcp)
    #[arg(long)]
    pub filter: Option<String>,
    /// Context to run in: deploy (default) or build (`mcp:` steps skipped)
    #[arg(long, default_value = "deploy", value_enum)]
    pub context: Context,
    /// Also write the results as JUnit XML to this file (relative to the project directory)
    #[arg(long)]
    pub junit: Option<PathBuf>,
    /// Server URL for the plan's `mcp:` steps (for a plan file)
    #[arg(long, conflicts_with = "server")]
    pub url: Option<String>,
    /// Transport for --url: http (the default) or sse
    #[arg(long, requires = "url", value_parser = ["http", "sse"])]
    pub transport: Option<String>,
    /// Server name in the .mcp.json file, for the plan's `mcp:` steps
    #[arg(long)]
    pub server: Option<String>,
    /// Default timeout of a step, e.g. 30s
    #[arg(long, default_value = "30s")]
    pub timeout: Timeout,
}

/// `charly check live` options.
#[derive(Args, McpTool, Debug)]
pub struct LiveArgs {
    /// Box name
    pub r#box: String,
    /// Only run checks with this verb
    #[arg(long)]
    pub filter: Option<String>,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(long)]
    pub instance: Option<String>,
}

/// `charly box ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum BoxCmd {
    /// Create a project, a box or a candy
    #[command(subcommand)]
    New(NewCmd),
    /// Set a value in charly.yml by dot path; the value is parsed as YAML
    #[mcp_tool(destructive = "edits charly.yml")]
    Set(SetArgs),
    /// Add a candy to a box (idempotent)
    #[mcp_tool(destructive = "edits charly.yml", idempotent)]
    AddCandy(BoxCandy),
    /// Remove a candy from a box (idempotent)
    #[mcp_tool(destructive = "edits charly.yml", idempotent)]
    RmCandy(BoxCandy),
    /// Write a file in the project
    #[mcp_tool(destructive = "writes a project file", idempotent)]
    Write(WriteArgs),
    /// Print a file of the project
    Cat(PathArg),
    /// Clone or update the git cache of a project repository
    #[mcp_tool(destructive = "writes the repository cache", open_world, idempotent)]
    Fetch(RepoArg),
    /// Refresh the git cache of a project repository, discarding local changes
    #[mcp_tool(destructive = "resets the cached clone", open_world, idempotent)]
    Refresh(RepoArg),
    /// Check every node of the project; exit 1 with the list of problems
    Validate,
    /// Print a box's resolved configuration as JSON
    Inspect(BoxArg),
    /// List boxes, candies or checks
    #[command(subcommand)]
    List(ListCmd),
    /// Write .build/<box>/Containerfile from the box's base and candies
    #[mcp_tool(destructive = "writes .build/<box>/Containerfile", idempotent)]
    Generate(BoxArg),
    /// Build a box's image with podman
    #[mcp_tool(destructive = "builds a container image")]
    Build(BoxArg),
}

/// `charly box new ...`
#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(destructive = "creates project files")]
pub enum NewCmd {
    /// Scaffold a project (charly.yml, box/, candy/) in a directory
    Project {
        /// Directory to create the project in (`.` for the project directory itself)
        dir: PathBuf,
    },
    /// Add a box to charly.yml
    Box {
        /// Box name
        name: String,
        /// Base image, e.g. quay.io/fedora/fedora:43
        #[arg(long)]
        base: String,
    },
    /// Create a candy (candy/<name>/charly.yml)
    Candy {
        /// Candy name
        name: String,
    },
}

/// `charly candy ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum CandyCmd {
    /// Set a value in candy/<name>/charly.yml by dot path; the value is parsed as YAML
    #[mcp_tool(destructive = "edits the candy's charly.yml")]
    Set {
        /// Candy name
        name: String,
        /// The path and the value.
        #[command(flatten)]
        set: SetArgs,
    },
    /// Add Fedora/RHEL packages (distro.fedora.package)
    #[mcp_tool(destructive = "edits the candy's charly.yml", idempotent)]
    AddRpm(Packages),
    /// Add Debian/Ubuntu packages (distro."debian,ubuntu".package)
    #[mcp_tool(destructive = "edits the candy's charly.yml", idempotent)]
    AddDeb(Packages),
    /// Add Arch packages (distro.arch.package)
    #[mcp_tool(destructive = "edits the candy's charly.yml", idempotent)]
    AddPac(Packages),
    /// Add AUR packages (distro.arch.aur.package)
    #[mcp_tool(destructive = "edits the candy's charly.yml", idempotent)]
    AddAur(Packages),
}

/// `charly box list ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum ListCmd {
    /// List the project's boxes
    Boxes,
    /// List the project's candies
    Candies,
    /// List the project's checks
    Checks,
}

/// `charly mcp ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum McpCmd {
    /// Serve the charly command tree as MCP tools
    Serve(ServeArgs),
}

/// A dot path and a YAML value.
#[derive(Args, McpTool, Debug)]
pub struct SetArgs {
    /// Dot path, e.g. `hello.box.base` (escape `.` `[` `]` `\` in keys with `\`)
    pub path: String,
    /// Value, parsed as YAML (`fedora`, `[a, b]`, `{k: v}`, `42`)
    pub value: String,
}

/// A box and a candy.
#[derive(Args, McpTool, Debug)]
pub struct BoxCandy {
    /// Box name
    pub r#box: String,
    /// Candy name
    pub candy: String,
}

/// A candy and packages.
#[derive(Args, McpTool, Debug)]
pub struct Packages {
    /// Candy name
    pub name: String,
    /// Packages to add (deduplicated)
    #[arg(required = true)]
    pub packages: Vec<String>,
}

/// A path relative to the project root, and the content to write there.
#[derive(Args, McpTool, Debug)]
pub struct WriteArgs {
    /// Path relative to the project root
    pub path: PathBuf,
    /// The file's new content
    #[arg(long)]
    pub content: String,
}

/// A path relative to the project root.
#[derive(Args, McpTool, Debug)]
pub struct PathArg {
    /// Path relative to the project root
    pub path: PathBuf,
}

/// A project repository.
#[derive(Args, McpTool, Debug)]
pub struct RepoArg {
    /// `owner/name@ref`, a git URL or a local path (default: CHARLY_PROJECT_REPO)
    pub spec: Option<String>,
}

/// A box name.
#[derive(Args, McpTool, Debug)]
pub struct BoxArg {
    /// Box name
    pub r#box: String,
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
