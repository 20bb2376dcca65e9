//! `charly mcp ...`: the MCP server (`serve`, not a tool itself) and registering it with a
//! host (`install`, `uninstall`: tools, destructive, since they write the host's config file).

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use crate::hosts::{ConfigScope, HostChange, HostKind};

/// `charly mcp ...`
// `ServeArgs` is large next to the others (its `--oauth-*` settings); the value is parsed
// once per process, so boxing it would save nothing worth the indirection.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, McpTool, Debug)]
pub enum McpCmd {
    /// Serve the charly command tree as MCP tools
    #[mcp_tool(skip)]
    #[command(after_help = "Logging: the server logs to stderr at the level CHARLY_LOG names (an \
        EnvFilter directive: `info`, `debug`, `charly_mcp=trace`; default `warn`; RUST_LOG is not \
        read). The MCP library's own lines (target `rmcp`) stop at info whatever CHARLY_LOG says, \
        as its debug lines would carry tool arguments and results: secret values.")]
    Serve(ServeArgs),
    /// Register charly's server with a host (claude-code, claude-desktop, cursor, vscode, codex,
    /// gemini) in the host's own config file, merged with what is there
    #[mcp_tool(output = HostChange, idempotent, destructive = "writes the host's MCP config file (project or user scope), keeping a backup of the old one")]
    Install(InstallArgs),
    /// Remove charly's server from a host's config file, keeping everything else
    #[mcp_tool(output = HostChange, idempotent, destructive = "writes the host's MCP config file (project or user scope), keeping a backup of the old one")]
    Uninstall(UninstallArgs),
}

/// `charly mcp install` options.
#[derive(Args, McpTool, Debug, Clone)]
pub struct InstallArgs {
    /// The host: claude-code, claude-desktop, cursor, vscode, codex or gemini
    #[arg(value_enum)]
    pub host: HostKind,
    /// Which config file: project (in the project directory) or user (the host's file in your
    /// home). Default: project where the host has one (codex: user; claude-desktop has user only)
    #[arg(long, value_enum)]
    pub scope: Option<ConfigScope>,
    /// The server's name in the host's config
    #[arg(long, default_value = "charly")]
    pub name: String,
    /// Register a running Streamable HTTP server at this URL instead of a stdio command
    #[arg(long)]
    pub url: Option<String>,
    /// Send `Authorization: Bearer <token>` to --url, the host reading the token from this
    /// environment variable (written as a reference to the variable, never the token)
    #[arg(long, value_name = "VAR", requires = "url")]
    pub token_env: Option<String>,
    /// Serve without destructive tools (`mcp serve --read-only`)
    #[arg(long, conflicts_with = "url")]
    pub read_only: bool,
    /// The charly executable the host starts (default: this one, by absolute path)
    #[arg(long, value_name = "PATH", conflicts_with = "url")]
    pub command: Option<String>,
    /// Show the file as it would be written, without writing anything
    #[arg(long)]
    pub print: bool,
}

/// `charly mcp uninstall` options.
#[derive(Args, McpTool, Debug, Clone)]
pub struct UninstallArgs {
    /// The host: claude-code, claude-desktop, cursor, vscode, codex or gemini
    #[arg(value_enum)]
    pub host: HostKind,
    /// Which config file: project or user (default as for install)
    #[arg(long, value_enum)]
    pub scope: Option<ConfigScope>,
    /// The server's name in the host's config
    #[arg(long, default_value = "charly")]
    pub name: String,
    /// Show the file as it would be written, without writing anything
    #[arg(long)]
    pub print: bool,
}

/// `charly mcp serve --tool-names`: how tool names are published.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ToolNames {
    /// `_`-joined to the clients known to reject dots, dotted to the others.
    #[default]
    Auto,
    /// Dotted to every client.
    Dotted,
    /// `_`-joined to every client.
    Underscore,
}

impl ToolNames {
    /// The framework's style.
    pub fn style(self) -> charly::server::ToolNameStyle {
        match self {
            ToolNames::Auto => charly::server::ToolNameStyle::Auto,
            ToolNames::Dotted => charly::server::ToolNameStyle::Dotted,
            ToolNames::Underscore => charly::server::ToolNameStyle::Underscored,
        }
    }
}

/// `charly mcp serve` options.
#[derive(Args, McpTool, Debug)]
pub struct ServeArgs {
    /// Address to listen on for Streamable HTTP (binding beyond loopback is explicit; add the
    /// names clients reach it by with --allow-host)
    #[arg(long, default_value = "127.0.0.1:18765", conflicts_with = "stdio")]
    pub listen: String,
    /// Also accept this Host (`name` for any port, or `name:port`), and browser Origins on it
    /// (http and https, any port); loopback names are always accepted. Repeatable
    #[arg(long, value_name = "HOST", conflicts_with = "stdio")]
    pub allow_host: Vec<String>,
    /// URL path of the MCP endpoint
    #[arg(long, default_value = "/mcp", conflicts_with = "stdio")]
    pub path: String,
    /// Require `Authorization: Bearer <token>` over HTTP, the token read from this environment
    /// variable (requests without it get 401)
    #[arg(long, value_name = "VAR", conflicts_with_all = ["token_file", "stdio"])]
    pub token_env: Option<String>,
    /// Require `Authorization: Bearer <token>` over HTTP, the token read from this file
    /// (surrounding whitespace trimmed)
    #[arg(long, value_name = "PATH", conflicts_with = "stdio")]
    pub token_file: Option<PathBuf>,
    /// Act as an OAuth 2.1 resource server for this authorization server (its issuer URL):
    /// publish protected resource metadata, answer requests without a valid access token 401
    /// with the challenge MCP clients log in from, and accept JWTs signed by the issuer's keys
    /// (RS256 or ES256) for this server (`aud`), with the scopes each tool needs
    #[arg(long, value_name = "URL", conflicts_with_all = ["token_env", "token_file", "stdio"])]
    pub oauth_issuer: Option<String>,
    /// The resource URL access tokens must be issued for (their `aud`): the public URL of the
    /// MCP endpoint. Default: http://<--listen><--path>; needed when listening beyond loopback
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_resource: Option<String>,
    /// Where the issuer's signing keys are (JWKS). Default: the `jwks_uri` of its
    /// authorization server metadata
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_jwks_uri: Option<String>,
    /// A PEM file of CA certificates to trust, besides the system's roots, for the issuer's
    /// metadata and keys: an issuer behind a private CA
    #[arg(long, value_name = "PATH", requires = "oauth_issuer")]
    pub oauth_ca_file: Option<PathBuf>,
    /// The scope every request needs ("" for none)
    #[arg(long, value_name = "SCOPE", default_value = charly::server::DEFAULT_READ_SCOPE, requires = "oauth_issuer")]
    pub oauth_read_scope: String,
    /// The scope calling a tool that is not read-only also needs; without it such a call gets
    /// 403 insufficient_scope ("" for none)
    #[arg(long, value_name = "SCOPE", default_value = charly::server::DEFAULT_WRITE_SCOPE, requires = "oauth_issuer")]
    pub oauth_write_scope: String,
    /// No sessions: every POST is served on its own, so replicas behind a round-robin load
    /// balancer need no affinity (server-to-client requests and the GET stream need sessions)
    #[arg(long, conflicts_with = "stdio")]
    pub stateless: bool,
    /// Name this replica in the session ids it mints (`NAME.<uuid>`), so a load balancer can
    /// route each session back to it (deploy/nginx/charly.conf.template): 1 to 63 ASCII
    /// letters, digits, `-` or `_`
    #[arg(long, value_name = "NAME", conflicts_with_all = ["stdio", "stateless"])]
    pub replica: Option<String>,
    /// URL path of the health endpoint for load balancers and probes: GET answers 200
    /// `{"status":"ok"}` (503 while stopping), with no bearer token and no Host check
    #[arg(long, value_name = "PATH", default_value = "/healthz", conflicts_with = "stdio")]
    pub health_path: String,
    /// Most sessions open at once over stateful HTTP: an `initialize` past it gets 503 with
    /// `Retry-After`, until a session is deleted or idles out (0: no cap)
    #[arg(long, value_name = "N", default_value_t = charly::server::DEFAULT_MAX_SESSIONS,
          conflicts_with_all = ["stdio", "stateless"])]
    pub max_sessions: usize,
    /// Most requests of one session in flight at once: a request past it gets a JSON-RPC error
    /// (-32000, server busy) carrying its id, over HTTP in a 503 with `Retry-After` (0: no cap)
    #[arg(long, value_name = "N", default_value_t = charly::server::DEFAULT_MAX_REQUESTS_PER_SESSION,
          conflicts_with = "stateless")]
    pub max_requests_per_session: usize,
    /// Close an HTTP session after this many seconds without a request, a running tool call
    /// or an open GET stream; its next request gets 404 (0: never)
    #[arg(long, value_name = "SECS", default_value_t = 300, conflicts_with_all = ["stdio", "stateless"])]
    pub session_idle_timeout: u64,
    /// Serve over stdio instead of HTTP
    #[arg(long)]
    pub stdio: bool,
    /// Leave destructive tools out (neither listed nor callable). Read-only tools still read:
    /// `settings.get`, `secrets.get` and `secrets.export` return stored credentials
    #[arg(long)]
    pub read_only: bool,
    /// How tool names are published: auto (`box_new_project` to the clients known to reject
    /// dots, by the `clientInfo.name` they send: Claude Code, Claude Desktop and claude.ai,
    /// Codex, ChatGPT, Copilot CLI; `box.new.project` to the others), dotted, or underscore
    /// (to every client). Calls take either spelling
    #[arg(long, value_enum, default_value_t = ToolNames::Auto)]
    pub tool_names: ToolNames,
    /// Fail instead of serving the embedded sample project when no project is named
    #[arg(long)]
    pub no_default_repo: bool,
    /// Project repository to clone and serve (`owner/name@ref`, a git URL or a local path)
    #[arg(long, env = "CHARLY_PROJECT_REPO")]
    pub repo: Option<String>,
}
