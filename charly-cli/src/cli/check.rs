//! `charly check ...`: MCP probes and check plans.

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use super::{Context, Timeout};
use crate::check::{Report as PlanReport, Validation as PlanValidation};
use crate::credentials::oauth::LoggedOut;
use crate::lint::LintReport;
use crate::probe::{
    Called, Pong, PromptList, ReadContents, ResourceList, ServerList, SkillFiles, SkillList, ToolList,
};

/// `charly check ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum CheckCmd {
    /// Probe one MCP server
    #[command(subcommand)]
    #[mcp_tool(open_world)]
    Mcp(McpProbe),
    /// Drive a browser over the Chrome DevTools Protocol: a box's Chromium or this machine's
    #[command(subcommand)]
    Cdp(super::cdp::CdpCmd),
    /// Call the session bus: list names, call methods, introspect, notify
    #[command(subcommand)]
    Dbus(super::dbus::DbusCmd),
    /// Drive a VNC server over RFB: a box's desktop or this machine's
    #[command(subcommand)]
    Vnc(super::vnc::VncCmd),
    /// Drive a Wayland desktop (sway): a box's or this machine's
    #[command(subcommand)]
    Wl(super::wl::WlCmd),
    /// Run a check plan: a YAML file, or the checks of a box's project and candies
    #[mcp_tool(output = PlanReport, open_world, destructive = "runs the plan's `mcp: call` steps, which can invoke anything")]
    #[command(after_long_help = DESKTOP_STEPS)]
    Run(RunArgs),
    /// Run a box's checks against its running container (deploy context)
    #[mcp_tool(output = PlanReport, open_world, destructive = "runs the plan's `mcp: call` steps, which can invoke anything")]
    #[command(after_long_help = DESKTOP_STEPS)]
    Live(LiveArgs),
    /// Run a box's candy and box checks in the build context, each in a disposable container
    /// of its built image (`mcp:` steps and checks needing published ports are skipped); exit 1
    /// when a check fails
    #[mcp_tool(output = PlanReport)]
    Box(CheckBoxArgs),
    /// Validate a check plan (a YAML file or a box) without running it
    #[mcp_tool(output = PlanValidation)]
    #[command(after_long_help = DESKTOP_STEPS)]
    Validate(PlanTarget),
}

/// The keys of a plan's desktop steps (`cdp:`, `vnc:`, `dbus:`, `wl:`), as `check run --help`,
/// `check live --help`, `check validate --help` and `charly man check run` print them (trial 2
/// M12: documented nowhere a user looks). tests/catalog checks every key the steps accept
/// is here.
pub(super) const DESKTOP_STEPS: &str = "\
Desktop steps (each also takes the common keys: check:, context:, timeout:, stdout:, stderr:, exit_status:, eventually:):

cdp: METHOD  a `charly check cdp` leaf against a browser:
  cdp_url: the DevTools endpoint (default: under `check live` the box's published port 9222, else http://127.0.0.1:9222)
  tab: a tab id (default: the browser's first page tab; close needs one)
  status, list, url, text, html, close, spa-status: no other keys
  eval: expression:            open: url:
  wait, click, coords: selector:          type: selector: text:
  axtree: query: (optional)    raw: method: params: (a map, optional)
  screenshot: artifact: (a file beneath the project; missing directories are made) artifact_min_bytes: (default 1)
  spa-click: x: y: button: scale:        spa-mouse: x: y: scale:
  spa-type: text:              spa-key: key:              spa-key-combo: combo:

vnc: METHOD  a `charly check vnc` leaf against a VNC server (passwd is not a step):
  vnc_addr: HOST:PORT (default: under `check live` the box's published port 5900, else 127.0.0.1:5900)
  status: no other keys        screenshot: artifact: artifact_min_bytes:
  click: x: y: button:         mouse: x: y:
  type: text:                  key: key:                  rfb: method: params:
  The password: VNC_PASSWORD, else the stored charly/vnc/<box[-instance]> (`.` for this machine).

dbus: METHOD  a `charly check dbus` leaf against the session bus (the box container's under `check live`):
  list: no other keys          introspect: dest: path:
  call: dest: path: method: (Interface.Method) args: [\"type:value\", ...]
  notify: text: (the title) message: (the body)

wl: METHOD  a `charly check wl` leaf on a Wayland desktop (sway; the box container's under `check live`):
  status, toplevel, windows, sway-tree, sway-workspaces, sway-outputs, sway-kill, sway-floating,
  sway-reload, overlay-list, overlay-status: no other keys
  geometry, focus, close, fullscreen, minimize, sway-focus, sway-move: target:   xprop: target: (optional)
  click, double-click, mouse: x: y: (and button: for clicks, delay: for double-click)
  scroll: x: y: direction: (up, down, left, right) amount: (default 3)
  each of them from_sway: WINDOW | from_x11: CLASS | from_cdp: TAB (with cdp_url: for `.`): x and y relative to it
  drag: x: y: x2: y2: button: duration: (ms)
  type: text:                  key: key:                  key-combo: combo: (such as ctrl+q)
  screenshot: artifact: artifact_min_bytes: output: region: (\"X,Y WxH\")
  clipboard: action: (get, set, clear) text: (set) primary:
  atspi: action: (tree, find, click) query:              exec: args: [program, arg, ...]
  resolution: size: (WIDTHxHEIGHT) output:               sway-msg: text:
  sway-resize: dimension: (width, height) amount: (10, -10px, 5ppt)
  sway-layout: mode:           sway-workspace: number:
  overlay-show: type: text: subtitle: name: position: bg: color: font_size: opacity: duration: seconds: region:
  overlay-hide: name: | all: true

Under `check box` desktop steps are skipped; under `check run <box>` they fail naming `check live`.";

/// `charly check mcp ...`: one method against one server.
#[derive(Subcommand, McpTool, Debug)]
pub enum McpProbe {
    /// Ping the server; prints `ok`
    #[mcp_tool(output = Pong, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    Ping(Endpoint),
    /// List the servers an endpoint source provides (`name<TAB>url<TAB>transport`), without dialing
    #[mcp_tool(output = ServerList)]
    Servers(Endpoint),
    /// List the server's tools (`name<TAB>first line of description`), every page
    #[mcp_tool(output = ToolList, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ListTools(Endpoint),
    /// List the server's resources (`uri<TAB>name<TAB>mime`), every page
    #[mcp_tool(output = ResourceList, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ListResources(Endpoint),
    /// List the server's prompts (`name<TAB>description`), every page
    #[mcp_tool(output = PromptList, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ListPrompts(Endpoint),
    /// Call a tool; prints its text content; exit 1 when the result is an error
    #[mcp_tool(output = Called, destructive = "invokes a tool on the far side, which can do anything")]
    Call {
        /// Tool name
        #[arg(long)]
        tool: String,
        /// Arguments as a JSON object; `@FILE` reads it from a file (for an MCP call, one
        /// inside the project root), `@-` from stdin (not for an MCP call); at most 4 MiB
        #[arg(long, value_name = "JSON|@FILE|@-")]
        input: Option<String>,
        /// Answers to what the server asks for.
        #[command(flatten)]
        answers: AnswerArgs,
        /// The server.
        #[command(flatten)]
        endpoint: Endpoint,
    },
    /// Check the server's tools against what each strict host accepts (names, schemas,
    /// output schemas, descriptions, annotations): a table host by host; exit 1 when a host
    /// would refuse one
    #[mcp_tool(output = LintReport, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    Lint {
        /// Initialize as this client (`clientInfo.name`, e.g. claude-code), to lint the tools
        /// a server that names tools per client gives that client (default: charly)
        #[arg(long, value_name = "NAME")]
        client_name: Option<String>,
        /// The server.
        #[command(flatten)]
        endpoint: Endpoint,
    },
    /// List the server's skills (`uri<TAB>name<TAB>description`), every page, reading none of
    /// their files (the skills extension)
    #[mcp_tool(output = SkillList, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ListSkills(Endpoint),
    /// Read a skill by the URI of its SKILL.md: prints SKILL.md, then each other file; every
    /// file's size, digest and the SKILL.md frontmatter are checked against the skill's entry,
    /// and a file that does not match stops the read (exit 2)
    #[mcp_tool(output = SkillFiles, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    ReadSkill {
        /// URI of the skill's SKILL.md, e.g. skill://release-notes/SKILL.md
        #[arg(long)]
        uri: String,
        /// The server.
        #[command(flatten)]
        endpoint: Endpoint,
    },
    /// Read a resource; prints its text contents
    #[mcp_tool(output = ReadContents, destructive = "starts `.mcp.json` stdio servers, running their command", open_world)]
    Read {
        /// Resource URI
        #[arg(long)]
        uri: String,
        /// Answers to what the server asks for.
        #[command(flatten)]
        answers: AnswerArgs,
        /// The server.
        #[command(flatten)]
        endpoint: Endpoint,
    },
    /// Forget the OAuth login cached for a server (its tokens and the client registration
    /// they belong to), so that the next connection logs in anew; says what was removed, or
    /// that nothing was cached, never a token
    #[mcp_tool(output = LoggedOut, destructive = "removes the server's OAuth tokens from the credential store", idempotent)]
    Logout {
        /// Server URL whose login to forget (e.g. https://mcp.example.com/mcp; a trailing `/`
        /// and the case of the host do not matter)
        // One of the two is required: the leaf says so naming both (clap's own message named
        // only --url).
        #[arg(long, conflicts_with = "server")]
        url: Option<String>,
        /// The project's .mcp.json server whose login to forget (its URL's)
        #[arg(long)]
        server: Option<String>,
    },
}

/// What `call` and `read` answer when the server asks for input (an input-required result on
/// MCP 2026-07-28, a server-to-client request before); a question left open is an error
/// naming it.
#[derive(Args, McpTool, Debug, Clone, Default)]
pub struct AnswerArgs {
    /// Answer a form field the server asks for, FIELD=VALUE (repeatable); fields with a
    /// default in the form's schema need none
    #[arg(long)]
    pub elicit: Vec<String>,
    /// The text a sampling request (the server asking the client's model) is answered with
    #[arg(long)]
    pub sample: Option<String>,
    /// A root the client reports when the server asks for its roots (repeatable)
    #[arg(long)]
    pub root: Vec<String>,
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
    /// MCP revision to offer: latest (2026-07-28, falling back to a 2025-11-25 initialize),
    /// 2026-07-28 (no fallback) or 2025-11-25 (initialize only)
    #[arg(long, default_value = "latest", value_parser = ["latest", "2026-07-28", "2025-11-25"])]
    pub protocol: String,
    /// TLS and OAuth for a remote server.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// TLS and OAuth for a remote (HTTP) MCP server. By default the system's CA roots verify an
/// https server, and a server that answers 401 with an OAuth challenge is logged in to (on a
/// terminal through the browser; unattended only when the authorization server redirects on
/// its own); tokens are kept in the credential store, one entry a server.
#[derive(Args, McpTool, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// PEM file of CA certificates trusted besides the system's (a private CA's https server)
    #[arg(long, value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
    /// Do not verify the server's TLS certificate (says so on stderr; never for production)
    #[arg(long)]
    pub insecure: bool,
    /// Never log in with OAuth: a 401 is reported as it is
    #[arg(long)]
    pub no_oauth: bool,
    /// OAuth client id registered with the authorization server beforehand (no registration then)
    #[arg(long, value_name = "ID")]
    pub oauth_client_id: Option<String>,
    /// Environment variable that holds the secret of --oauth-client-id
    #[arg(long, value_name = "VAR", requires = "oauth_client_id")]
    pub oauth_client_secret_env: Option<String>,
    /// HTTPS URL of a client ID metadata document, used as the client id where the
    /// authorization server supports such documents
    #[arg(long, value_name = "URL")]
    pub oauth_client_metadata_url: Option<String>,
    /// OAuth scope to ask for (repeatable; default: the scopes the server names)
    #[arg(long, value_name = "SCOPE")]
    pub oauth_scope: Vec<String>,
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
    /// Plan file, or box name (only a box's mcp: steps reach its container; `check live`
    /// runs all its steps there)
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
    /// HTTP header for every request of the plan's `mcp:` steps, `Name: value` (repeatable;
    /// a step's own `headers:` come after)
    #[arg(long)]
    pub header: Vec<String>,
    /// TLS and OAuth for a remote server.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// `charly check live` options.
#[derive(Args, McpTool, Debug)]
pub struct LiveArgs {
    /// Box name
    pub r#box: String,
    /// Only run checks with this verb (e.g. mcp, file, http)
    #[arg(long)]
    pub filter: Option<String>,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(short, long)]
    pub instance: Option<String>,
    /// Also write the results as JUnit XML to this file (relative to the project directory)
    #[arg(long)]
    pub junit: Option<PathBuf>,
}

/// `charly check box` options.
#[derive(Args, McpTool, Debug)]
pub struct CheckBoxArgs {
    /// Box name
    pub r#box: String,
    /// Only run checks with this verb (e.g. file, package)
    #[arg(long)]
    pub filter: Option<String>,
    /// Also write the results as JUnit XML to this file (relative to the project directory;
    /// on a terminal only)
    // check.box is a read-only tool, which writes no file: the tool has no `junit` (trial 31, L2).
    #[arg(long)]
    #[mcp_tool(cli_only)]
    pub junit: Option<PathBuf>,
}
