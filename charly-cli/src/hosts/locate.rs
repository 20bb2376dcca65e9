//! Where each host keeps its MCP servers, and in which format. Each location names the public
//! documentation it comes from.

use std::path::{Path, PathBuf};

use super::{ConfigScope, HostKind, HostsError};

/// A config file's format: JSON (comments and trailing commas kept where the host allows them)
/// with the servers under `key`, or Codex's TOML (`[mcp_servers.<name>]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    /// A JSON object whose member `key` maps server names to entries.
    Json {
        /// `mcpServers` or (VS Code) `servers`.
        key: &'static str,
    },
    /// TOML with `[mcp_servers.<name>]` tables.
    Toml,
}

/// A host's config file for one scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Location {
    /// The file.
    pub(crate) path: PathBuf,
    /// Its format.
    pub(crate) format: Format,
}

/// The directories the user-scope files live under, read from the environment.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dirs {
    /// `HOME` (`USERPROFILE` on Windows).
    pub(crate) home: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`, else `~/.config` (Linux).
    pub(crate) config: Option<PathBuf>,
    /// `APPDATA` (Windows).
    pub(crate) appdata: Option<PathBuf>,
    /// `CODEX_HOME`, else `~/.codex`.
    pub(crate) codex_home: Option<PathBuf>,
    /// `CLAUDE_CONFIG_DIR` (Claude Code keeps `.claude.json` there when set), else `~`.
    pub(crate) claude_config: Option<PathBuf>,
}

impl Dirs {
    /// From this process's environment (empty variables count as unset).
    pub(crate) fn from_env() -> Dirs {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let home = var("HOME").or_else(|| var("USERPROFILE"));
        Dirs {
            config: var("XDG_CONFIG_HOME").or_else(|| home.as_ref().map(|h| h.join(".config"))),
            appdata: var("APPDATA"),
            codex_home: var("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex"))),
            claude_config: var("CLAUDE_CONFIG_DIR").or_else(|| home.clone()),
            home,
        }
    }

    fn home(&self) -> Result<&Path, HostsError> {
        self.home.as_deref().ok_or(HostsError::NoHome)
    }
}

/// The scope used when none is given: the project file where the host has one, except Codex,
/// which reads a project's `.codex/config.toml` only once the project is trusted (its own
/// `codex mcp add` writes the user file).
pub(crate) fn default_scope(host: HostKind) -> ConfigScope {
    match host {
        HostKind::ClaudeDesktop | HostKind::Codex => ConfigScope::User,
        _ => ConfigScope::Project,
    }
}

/// Where `host` keeps its servers in `scope`, for the project at `root`.
///
/// # Errors
///
/// [`HostsError::NoScope`] for a scope the host does not have (Claude Desktop has no project
/// file), [`HostsError::NoHome`] when a user file is asked for and `HOME` is unset.
pub(crate) fn locate(
    host: HostKind,
    scope: ConfigScope,
    root: &Path,
    dirs: &Dirs,
) -> Result<Location, HostsError> {
    let json = |path: PathBuf, key| Ok(Location { path, format: Format::Json { key } });
    let per_os = |mac: &str, windows: &str, linux: &str| -> Result<PathBuf, HostsError> {
        if cfg!(target_os = "macos") {
            Ok(dirs.home()?.join("Library/Application Support").join(mac))
        } else if cfg!(windows) {
            Ok(dirs.appdata.clone().ok_or(HostsError::NoHome)?.join(windows))
        } else {
            Ok(dirs.config.clone().ok_or(HostsError::NoHome)?.join(linux))
        }
    };
    match (host, scope) {
        // Claude Code, "Connect Claude Code to tools via MCP" (code.claude.com/docs/en/mcp),
        // "MCP installation scopes": project scope is `.mcp.json` at the project root, user
        // scope the top-level `mcpServers` of `~/.claude.json` (local scope, under
        // `projects.<path>` in the same file, is not written here).
        (HostKind::ClaudeCode, ConfigScope::Project) => json(root.join(".mcp.json"), "mcpServers"),
        (HostKind::ClaudeCode, ConfigScope::User) => {
            let dir = dirs.claude_config.clone().ok_or(HostsError::NoHome)?;
            json(dir.join(".claude.json"), "mcpServers")
        }
        // Claude Desktop, "Connect to local MCP servers" (modelcontextprotocol.io/docs/develop/
        // connect-local-servers): `~/Library/Application Support/Claude/claude_desktop_config.json`
        // on macOS, `%APPDATA%\Claude\claude_desktop_config.json` on Windows. There is no
        // official Linux build; community builds read `~/.config/Claude/`, used here.
        (HostKind::ClaudeDesktop, ConfigScope::User) => json(
            per_os(
                "Claude/claude_desktop_config.json",
                "Claude/claude_desktop_config.json",
                "Claude/claude_desktop_config.json",
            )?,
            "mcpServers",
        ),
        (HostKind::ClaudeDesktop, ConfigScope::Project) => Err(HostsError::NoScope { host, scope }),
        // Cursor, "Model Context Protocol (MCP)" (cursor.com/docs/context/mcp), "Configuration
        // locations": `.cursor/mcp.json` in the project, `~/.cursor/mcp.json` for every project.
        (HostKind::Cursor, ConfigScope::Project) => json(root.join(".cursor/mcp.json"), "mcpServers"),
        (HostKind::Cursor, ConfigScope::User) => json(dirs.home()?.join(".cursor/mcp.json"), "mcpServers"),
        // VS Code, "MCP configuration reference" (code.visualstudio.com/docs/copilot/reference/
        // mcp-configuration): `.vscode/mcp.json` in the workspace or `mcp.json` in the user
        // profile (the `User` folder of VS Code's user data directory: `~/.config/Code/User` on
        // Linux, `~/Library/Application Support/Code/User` on macOS, `%APPDATA%\Code\User` on
        // Windows), servers under `servers`; JSON with comments.
        (HostKind::Vscode, ConfigScope::Project) => json(root.join(".vscode/mcp.json"), "servers"),
        (HostKind::Vscode, ConfigScope::User) => {
            json(per_os("Code/User/mcp.json", "Code/User/mcp.json", "Code/User/mcp.json")?, "servers")
        }
        // Codex, "Model Context Protocol" (developers.openai.com/codex/mcp): `[mcp_servers.<name>]`
        // tables in `~/.codex/config.toml` (`CODEX_HOME` moves it), or `.codex/config.toml` in
        // a trusted project.
        (HostKind::Codex, ConfigScope::User) => {
            let dir = dirs.codex_home.clone().ok_or(HostsError::NoHome)?;
            Ok(Location { path: dir.join("config.toml"), format: Format::Toml })
        }
        (HostKind::Codex, ConfigScope::Project) => {
            Ok(Location { path: root.join(".codex/config.toml"), format: Format::Toml })
        }
        // Gemini CLI, "Gemini CLI configuration" (geminicli.com/docs/cli/configuration) and
        // "MCP servers with Gemini CLI" (geminicli.com/docs/tools/mcp-server): `mcpServers` in
        // `~/.gemini/settings.json` or the project's `.gemini/settings.json`.
        (HostKind::Gemini, ConfigScope::Project) => json(root.join(".gemini/settings.json"), "mcpServers"),
        (HostKind::Gemini, ConfigScope::User) => {
            json(dirs.home()?.join(".gemini/settings.json"), "mcpServers")
        }
    }
}
