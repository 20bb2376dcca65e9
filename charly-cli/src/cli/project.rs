//! `charly box ...` and `charly candy ...`: the project authoring commands.

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::project::{
    AliasList, BoxList, Built, CandyList, CheckList, Created, Edited, Fetched, FileText, Generated,
    Inspection, RouteList, ServiceList, TargetList, Validation, VolumeList, Written,
};

/// `charly box ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum BoxCmd {
    /// Create a project, a box or a candy
    #[command(subcommand)]
    New(NewCmd),
    /// Set a value in charly.yml by dot path; the value is parsed as YAML
    #[mcp_tool(output = Edited, destructive = "edits charly.yml")]
    Set(SetArgs),
    /// Add a candy to a box (idempotent)
    #[mcp_tool(output = Edited, destructive = "edits charly.yml", idempotent)]
    AddCandy(BoxCandy),
    /// Remove a candy from a box (idempotent)
    #[mcp_tool(output = Edited, destructive = "edits charly.yml", idempotent)]
    RmCandy(BoxCandy),
    /// Write a file in the project
    #[mcp_tool(output = Written, destructive = "writes a project file", idempotent)]
    Write(WriteArgs),
    /// Print a file of the project (as a tool, one of at most 1 MiB)
    #[mcp_tool(output = FileText)]
    Cat(PathArg),
    /// Clone or update the git cache of a project repository
    #[mcp_tool(output = Fetched, destructive = "writes the repository cache", open_world, idempotent)]
    Fetch(RepoArg),
    /// Refresh the git cache of a project repository, discarding local changes
    #[mcp_tool(output = Fetched, destructive = "resets the cached clone", open_world, idempotent)]
    Refresh(RepoArg),
    /// Check every node of the project; exit 1 with the list of problems
    #[mcp_tool(output = Validation)]
    Validate,
    /// Print a box's resolved configuration as JSON
    #[mcp_tool(output = Inspection)]
    Inspect(BoxArg),
    /// List boxes, candies, checks, or what the candies declare for running boxes
    #[command(subcommand)]
    List(ListCmd),
    /// Write .build/<box>/Containerfile from the box's base and candies
    #[mcp_tool(output = Generated, destructive = "writes .build/<box>/Containerfile", idempotent)]
    Generate(BoxArg),
    /// Build a box's image with podman
    #[mcp_tool(output = Built, destructive = "builds a container image and removes the box's dangling (untagged) images")]
    Build(BoxArg),
    /// Run the checks baked into an image's ai.opencharly.check label, each in a disposable
    /// container (never reads the project files); exit 1 when a check fails
    #[mcp_tool(output = crate::check::Report)]
    Test(BoxTestArgs),
    /// Pull (refresh) a box's base image, from its registry or a local source
    /// (--from oci-archive:FILE, docker-archive:FILE, containers-storage:REF, dir:PATH)
    #[mcp_tool(output = crate::deploy::pull::Pulled, destructive = "writes local image storage", open_world, idempotent)]
    Pull(BoxPullArgs),
    /// Merge consecutive layers of a box's built image into fewer layers (groups up to
    /// --max-mb), loaded back under the same reference; --dry-run prints the plan only
    #[mcp_tool(output = crate::deploy::merge::MergeReport, destructive = "replaces the box's image in local storage")]
    Merge(BoxMergeArgs),
}

/// `charly box merge` options.
#[derive(Args, McpTool, Debug)]
pub struct BoxMergeArgs {
    /// Box name (or --all)
    #[arg(required_unless_present = "all")]
    pub r#box: Option<String>,
    /// Every box whose node in charly.yml says `merge: {auto: true}`, in the project's order;
    /// a box that fails is a warning
    #[arg(long, conflicts_with = "box")]
    pub all: bool,
    /// Largest group of layers to merge, in MB (default: the box's merge.max_mb, else 128)
    #[arg(long, value_name = "MB")]
    pub max_mb: Option<u64>,
    /// Leave an image whose layers total more than this alone, in MB (default: the box's
    /// merge.max_total_mb, else no limit)
    #[arg(long, value_name = "MB")]
    pub max_total_mb: Option<u64>,
    /// The tag of the box's image to merge
    #[arg(long, default_value = "latest")]
    pub tag: String,
    /// Print the plan only; change nothing
    #[arg(long)]
    pub dry_run: bool,
}

/// `charly box test` options.
#[derive(Args, McpTool, Debug)]
pub struct BoxTestArgs {
    /// Image: a reference in local storage, or a box name (the image labelled ai.opencharly.box=<name>)
    pub image: String,
    /// Only run checks with this verb (e.g. file, package)
    #[arg(long)]
    pub filter: Option<String>,
}

/// `charly box pull` options.
#[derive(Args, McpTool, Debug)]
pub struct BoxPullArgs {
    /// Box name
    pub r#box: String,
    /// Pull from a local source instead of the registry: oci-archive:FILE, docker-archive:FILE,
    /// containers-storage:REF or dir:PATH (tagged as the box's base)
    #[arg(long)]
    pub from: Option<String>,
}

/// `charly box new ...`
#[derive(Subcommand, McpTool, Debug)]
#[mcp_tool(destructive = "creates project files")]
pub enum NewCmd {
    /// Scaffold a project (charly.yml, box/, candy/) in a directory
    #[mcp_tool(output = Created)]
    Project {
        /// Directory to create the project in (`.` for the project directory itself)
        dir: PathBuf,
    },
    /// Add a box to charly.yml
    #[mcp_tool(output = Edited)]
    Box {
        /// Box name
        name: String,
        /// Base image, e.g. quay.io/fedora/fedora:43
        #[arg(long)]
        base: String,
    },
    /// Create a candy (candy/<name>/charly.yml)
    #[mcp_tool(output = Edited)]
    Candy {
        /// Candy name
        name: String,
    },
}

/// `charly candy ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum CandyCmd {
    /// Set a value in candy/<name>/charly.yml by dot path; the value is parsed as YAML
    #[mcp_tool(output = Edited, destructive = "edits the candy's charly.yml")]
    Set(CandySetArgs),
    /// Add Fedora/RHEL packages (distro.fedora.package)
    #[mcp_tool(output = Edited, destructive = "edits the candy's charly.yml", idempotent)]
    AddRpm(Packages),
    /// Add Debian/Ubuntu packages (distro."debian,ubuntu".package)
    #[mcp_tool(output = Edited, destructive = "edits the candy's charly.yml", idempotent)]
    AddDeb(Packages),
    /// Add Arch packages (distro.arch.package)
    #[mcp_tool(output = Edited, destructive = "edits the candy's charly.yml", idempotent)]
    AddPac(Packages),
    /// Add AUR packages (distro.arch.aur.package)
    #[mcp_tool(output = Edited, destructive = "edits the candy's charly.yml", idempotent)]
    AddAur(Packages),
}

/// `charly box list ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum ListCmd {
    /// List the project's boxes
    #[mcp_tool(output = BoxList)]
    Boxes,
    /// List the project's candies
    #[mcp_tool(output = CandyList)]
    Candies,
    /// List the project's checks
    #[mcp_tool(output = CheckList)]
    Checks,
    /// List the aliases the candies declare (name, command, candy)
    #[mcp_tool(output = AliasList)]
    Aliases,
    /// List the HTTP routes the candies declare (host, path, container port, candy)
    #[mcp_tool(output = RouteList)]
    Routes,
    /// List the supervisord services the candies declare (name, command, candy)
    #[mcp_tool(output = ServiceList)]
    Services,
    /// List the boxes in build order: a box after the box its base image is (name, image, base)
    #[mcp_tool(output = TargetList)]
    Targets,
    /// List the volumes the candies declare (name, container path, candy)
    #[mcp_tool(output = VolumeList)]
    Volumes,
}

/// A dot path and a YAML value.
#[derive(Args, McpTool, Debug)]
pub struct SetArgs {
    /// Dot path, e.g. `hello.box.base`; `[N]` is item N of a list (`hello.box.candy[0]`; the
    /// list's length appends); escape `.` `[` `]` `\` in keys with `\`
    pub path: String,
    /// Value, parsed as YAML (`fedora`, `[a, b]`, `{k: v}`, `42`; empty is the empty string) and
    /// written as given: one YAML would change (a trailing `# comment`, an anchor, an alias) is
    /// refused
    pub value: String,
}

/// A candy, a dot path in its file and a YAML value.
#[derive(Args, McpTool, Debug)]
pub struct CandySetArgs {
    /// Candy name
    pub name: String,
    /// Dot path from the top of candy/<name>/charly.yml, starting at one of the candy's nodes,
    /// e.g. `tools.candy.description` or `tools-port.port[0]` for candy `tools`; `[N]` is item N
    /// of a list; escape `.` `[` `]` `\` in keys with `\`
    pub path: String,
    /// Value, parsed as YAML (`fedora`, `[a, b]`, `{k: v}`, `42`; empty is the empty string) and
    /// written as given: one YAML would change (a trailing `# comment`, an anchor, an alias) is
    /// refused
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
    /// The file's new content (on a terminal, `-` reads it from standard input: content too
    /// big for a command line, or a file's: `--content - < FILE`)
    #[arg(long, allow_hyphen_values = true)]
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
