//! `charly mcp install <host>` / `uninstall`: charly's server entry in a host's own config
//! file, in the host's format and place, merged with what is there.
//!
//! | host | project scope | user scope | format |
//! |---|---|---|---|
//! | `claude-code` | `.mcp.json` | `~/.claude.json` | JSON, `mcpServers` |
//! | `claude-desktop` | - | `claude_desktop_config.json` in the app's config folder | JSON, `mcpServers` |
//! | `cursor` | `.cursor/mcp.json` | `~/.cursor/mcp.json` | JSON, `mcpServers` |
//! | `vscode` | `.vscode/mcp.json` | `mcp.json` in the user profile | JSONC, `servers` |
//! | `codex` | `.codex/config.toml` (trusted projects) | `~/.codex/config.toml` | TOML, `[mcp_servers.<name>]` |
//! | `gemini` | `.gemini/settings.json` | `~/.gemini/settings.json` | JSONC, `mcpServers` |
//!
//! Other servers, keys charly does not write and comments stay; the file is replaced
//! atomically (temporary file + rename, permissions kept, a symlink's target edited) after the
//! old one is copied to `<file>.charly-backup` (created with the old file's mode). `--print` shows the new file and writes
//! nothing. A bearer token is written as a reference to its environment variable in the
//! host's own syntax, never as the token.

mod entry;
mod jsonc;
mod locate;
mod report;
mod toml;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use entry::Transport;
use locate::{Dirs, Format, Location};
pub use report::{Action, HostChange};

use crate::context::Scope;

/// A host whose config charly can write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
#[non_exhaustive]
pub enum HostKind {
    /// Claude Code (the `claude` CLI).
    ClaudeCode,
    /// The Claude Desktop app.
    ClaudeDesktop,
    /// Cursor.
    Cursor,
    /// VS Code (GitHub Copilot's agent mode).
    Vscode,
    /// OpenAI's Codex CLI.
    Codex,
    /// Google's Gemini CLI.
    Gemini,
}

impl HostKind {
    /// `claude-code`, `claude-desktop`, `cursor`, `vscode`, `codex`, `gemini`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HostKind::ClaudeCode => "claude-code",
            HostKind::ClaudeDesktop => "claude-desktop",
            HostKind::Cursor => "cursor",
            HostKind::Vscode => "vscode",
            HostKind::Codex => "codex",
            HostKind::Gemini => "gemini",
        }
    }
}

impl fmt::Display for HostKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which of a host's config files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum ConfigScope {
    /// The file in the project directory (shared with the repository).
    Project,
    /// The host's file in the user's home (every project).
    User,
}

impl ConfigScope {
    /// `project` or `user`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ConfigScope::Project => "project",
            ConfigScope::User => "user",
        }
    }
}

impl fmt::Display for ConfigScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a host's config could not be changed; nothing was written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostsError {
    /// The host has no file for this scope.
    #[error("{host} has no {scope}-scope config file (use --scope {})", other(*scope))]
    NoScope {
        /// The host.
        host: HostKind,
        /// The scope asked for.
        scope: ConfigScope,
    },
    /// The host's file cannot hold what was asked for.
    #[error("{host} does not take {what}")]
    Unsupported {
        /// The host.
        host: HostKind,
        /// What it does not take, and what to do instead.
        what: String,
    },
    /// The existing file does not parse; it was left alone.
    #[error("{path}: not valid {format}: {message} (fix or move the file, then run again)")]
    Parse {
        /// The file, as shown.
        path: String,
        /// `JSON` or `TOML`.
        format: &'static str,
        /// The parser's message.
        message: String,
    },
    /// A part of the existing file has the wrong shape; it was left alone.
    #[error(
        "{path}: {what} is not an object, so no server can be added to it (fix the file, then run again)"
    )]
    Shape {
        /// The file, as shown.
        path: String,
        /// Which part.
        what: String,
    },
    /// A key appears twice in the existing file where charly edits; it was left alone.
    #[error(
        "{path}: the key `{key}` appears twice in {what}, so which one the host reads is unclear (keep one, then run again)"
    )]
    Duplicate {
        /// The file, as shown.
        path: String,
        /// The repeated key.
        key: String,
        /// Where: `the file's top level`, `` `mcpServers` ``, `` `mcpServers.charly` ``.
        what: String,
    },
    /// An argument is unusable.
    #[error("{0}")]
    Usage(String),
    /// No home directory: `HOME` (or on Windows `USERPROFILE`/`APPDATA`) is unset.
    #[error("cannot find the user's config files: HOME is not set (set it, or use --scope project)")]
    NoHome,
    /// Reading, backing up or writing failed.
    #[error(transparent)]
    Project(#[from] crate::project::ProjectError),
}

fn other(scope: ConfigScope) -> &'static str {
    match scope {
        ConfigScope::Project => "user",
        ConfigScope::User => "project",
    }
}

/// What to install: the server entry's name and what it runs or reaches.
#[derive(Clone, Debug)]
pub struct Request {
    /// The host.
    pub host: HostKind,
    /// The scope; default: project where the host has one (Claude Desktop and Codex: user).
    pub scope: Option<ConfigScope>,
    /// The entry's name.
    pub name: String,
    /// Show, do not write.
    pub print: bool,
}

/// How the stdio entry is built: `<command> [-C <dir>] mcp serve --stdio [--read-only]`.
#[derive(Clone, Debug, Default)]
pub struct StdioServer {
    /// The charly executable; default the running one.
    pub command: Option<String>,
    /// A project directory to pin (`-C`), when one was named.
    pub dir: Option<PathBuf>,
    /// `--read-only`.
    pub read_only: bool,
}

/// Where the request runs: the project root, and whether a person or an MCP call asks.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    /// The project directory (project-scope files live here).
    pub root: &'a Path,
    /// Who asks: a served call may only touch project files inside the root.
    pub scope: Scope,
}

/// The checks of a served (`mcp.install` / `mcp.uninstall` over MCP) call, which may only
/// touch the project: the project-scope file (a user file holds other servers' secrets and
/// account data, which `print` would hand to the model), and a stdio entry that starts this
/// very charly (a `command` naming any other executable would have the host run it).
///
/// # Errors
///
/// [`HostsError::Usage`] naming the argument and saying to run the command from a terminal.
/// `verb` is `install` or `uninstall`, for the message.
pub fn check_served(
    verb: &str,
    host: HostKind,
    scope: Option<ConfigScope>,
    command: Option<&str>,
) -> Result<(), HostsError> {
    let effective = scope.unwrap_or_else(|| locate::default_scope(host));
    if effective != ConfigScope::Project {
        let why = match scope {
            Some(_) => "is `user`".to_owned(),
            None => format!("defaults to `user` for {host}"),
        };
        let fix = if host == HostKind::ClaudeDesktop {
            String::new()
        } else {
            " (pass `scope: project` for the project's file)".to_owned()
        };
        return Err(HostsError::Usage(format!(
            "argument `scope` {why}: over MCP only the project's config file is written{fix}; \
             for the user file run `charly mcp {verb} {host} --scope user` from a terminal instead"
        )));
    }
    if let Some(command) = command {
        let this = std::env::current_exe().and_then(|p| p.canonicalize()).ok();
        let named = Path::new(command).canonicalize().ok();
        if this.is_none() || named != this {
            return Err(HostsError::Usage(format!(
                "argument `command` {command:?}: over MCP the entry can only start this charly (leave \
                 `command` out); to register another executable run `charly mcp install {host} \
                 --command {command}` from a terminal instead"
            )));
        }
    }
    Ok(())
}

/// The stdio transport for `server`.
///
/// # Errors
///
/// [`HostsError::Usage`] when the running executable cannot be found.
pub fn stdio(server: &StdioServer) -> Result<Transport, HostsError> {
    let command = match &server.command {
        Some(command) if command.trim().is_empty() => {
            return Err(HostsError::Usage("--command must name the charly executable".into()));
        }
        Some(command) => command.clone(),
        None => std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| {
                HostsError::Usage(format!("cannot find this charly executable ({e}); name it with --command"))
            })?
            .display()
            .to_string(),
    };
    let mut args = Vec::new();
    if let Some(dir) = &server.dir {
        args.extend(["-C".to_owned(), dir.display().to_string()]);
    }
    args.extend(["mcp", "serve", "--stdio"].map(String::from));
    if server.read_only {
        args.push("--read-only".into());
    }
    Ok(Transport::Stdio { command, args })
}

/// The HTTP transport for `--url` and `--token-env`.
///
/// # Errors
///
/// [`HostsError::Usage`] for a URL that is not http(s) or a variable name that is not one.
pub fn http(url: &str, token_env: Option<&str>) -> Result<Transport, HostsError> {
    let parsed =
        url::Url::parse(url).map_err(|e| HostsError::Usage(format!("--url {url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(HostsError::Usage(format!("--url {url:?} must be http:// or https://")));
    }
    if let Some(var) = token_env
        && (var.is_empty()
            || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || var.starts_with(|c: char| c.is_ascii_digit()))
    {
        return Err(HostsError::Usage(format!(
            "--token-env {var:?} is not an environment variable name (letters, digits and _, not starting with a digit)"
        )));
    }
    Ok(Transport::Http { url: url.to_owned(), token_env: token_env.map(str::to_owned) })
}

/// `charly mcp install`: writes (or with `print`, shows) `transport` as `request.name` in the
/// host's config.
///
/// # Errors
///
/// [`HostsError`]; nothing is written then.
pub fn install(request: &Request, transport: &Transport, place: Place<'_>) -> Result<HostChange, HostsError> {
    check_name(&request.name)?;
    let entry = entry::entry(request.host, transport)?;
    let mut notes = Vec::new();
    if let Transport::Http { token_env: Some(var), .. } = transport
        && std::env::var_os(var).is_none()
    {
        notes.push(format!("{var} is not set here; the host reads it when it connects"));
    }
    edit(request, place, Some(entry), notes)
}

/// `charly mcp uninstall`: removes `request.name` from the host's config.
///
/// # Errors
///
/// [`HostsError`]; nothing is written then.
pub fn uninstall(request: &Request, place: Place<'_>) -> Result<HostChange, HostsError> {
    check_name(&request.name)?;
    edit(request, place, None, Vec::new())
}

fn edit(
    request: &Request,
    place: Place<'_>,
    entry: Option<Map<String, Value>>,
    mut notes: Vec<String>,
) -> Result<HostChange, HostsError> {
    let scope = request.scope.unwrap_or_else(|| locate::default_scope(request.host));
    let dirs = Dirs::from_env();
    let location = locate::locate(request.host, scope, place.root, &dirs)?;
    let shown = show(&location.path, place.root, scope, &dirs);
    let path = target(&location.path, place, scope)?;
    // No lock (and so no directory made) for `--print`, nor to remove from a file that cannot
    // be there.
    let nothing_to_remove = entry.is_none() && !path.parent().is_some_and(Path::is_dir);
    let _lock = if request.print || nothing_to_remove { None } else { Some(lock(&path)?) };
    let old = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(crate::project::ProjectError::io("read", &path, e).into()),
    };
    let text = old.clone().unwrap_or_default();
    let problem = |p: jsonc::JsonProblem| match p {
        jsonc::JsonProblem::Parse(message) => HostsError::Parse {
            path: shown.clone(),
            format: if location.format == Format::Toml { "TOML" } else { "JSON" },
            message,
        },
        jsonc::JsonProblem::NotAnObject(what) => HostsError::Shape { path: shown.clone(), what },
        jsonc::JsonProblem::Duplicate(key, what) => HostsError::Duplicate { path: shown.clone(), key, what },
    };
    let previous = current(&location, &text, &request.name);
    let (new, action, reported) = match &entry {
        Some(entry) => {
            let new = match location.format {
                Format::Json { key } => jsonc::upsert(&text, key, &request.name, entry),
                Format::Toml => toml::upsert(&text, &request.name, entry),
            }
            .map_err(problem)?;
            let action = match (&previous, old.as_deref() == Some(new.as_str())) {
                (_, true) => Action::Unchanged,
                (Some(_), false) => Action::Updated,
                (None, false) => Action::Added,
            };
            // What the host will read: the merged entry, user keys included.
            let merged = current(&location, &new, &request.name).and_then(|v| v.as_object().cloned());
            (Some(new), action, merged)
        }
        None => {
            let new = match location.format {
                Format::Json { key } => jsonc::remove(&text, key, &request.name),
                Format::Toml => toml::remove(&text, &request.name),
            }
            .map_err(problem)?;
            let action = if new.is_some() { Action::Removed } else { Action::Absent };
            (new, action, previous.as_ref().and_then(|v| v.as_object().cloned()))
        }
    };
    // The edit must read back as asked before anything is written.
    if let Some(new) = &new {
        let after = current(&location, new, &request.name);
        let ok = match &entry {
            Some(entry) => after
                .as_ref()
                .and_then(Value::as_object)
                .is_some_and(|got| entry.iter().all(|(k, v)| got.get(k) == Some(v))),
            None => after.is_none(),
        };
        assert!(ok, "charly: editing {shown} did not give the entry asked for; nothing was written");
    }
    if entry.is_some() {
        notes.extend(host_notes(request.host, scope));
    }
    let changes = matches!(action, Action::Added | Action::Updated | Action::Removed);
    let mut change = HostChange {
        host: request.host.as_str().to_owned(),
        scope: scope.as_str().to_owned(),
        path: shown.clone(),
        name: request.name.clone(),
        action,
        written: false,
        backup: None,
        entry: reported,
        content: None,
        notes,
    };
    let Some(new) = new.filter(|_| changes) else { return Ok(change) };
    if request.print {
        change.content = Some(new);
        return Ok(change);
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| crate::project::ProjectError::io("create directory", dir, e))?;
    }
    if let Some(old) = &old {
        let backup = backup_path(&path);
        // The copy gets the original's mode from its creation: hosts' configs hold secrets.
        let mode = std::fs::metadata(&path)
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
            .unwrap_or(0o600);
        crate::project::write_atomic_mode(&backup, old.as_bytes(), mode)?;
        change.backup = Some(format!("{shown}.charly-backup"));
    }
    crate::project::write_atomic(&path, new.as_bytes(), false)?;
    change.written = true;
    Ok(change)
}

fn check_name(name: &str) -> Result<(), HostsError> {
    if name.is_empty() || name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(HostsError::Usage(format!(
            "--name {name:?} must be a non-empty name without spaces, e.g. charly"
        )));
    }
    Ok(())
}

/// The entry `name` of a file's text, in its format.
fn current(location: &Location, text: &str, name: &str) -> Option<Value> {
    match location.format {
        Format::Json { key } => jsonc::get(text, key, name),
        Format::Toml => toml::get(text, name),
    }
}

/// The file actually written: a symlink's target (so a dotfile manager's link stays a link);
/// for a served call, a project file must resolve inside the project.
fn target(path: &Path, place: Place<'_>, scope: ConfigScope) -> Result<PathBuf, HostsError> {
    if place.scope == Scope::Served && scope == ConfigScope::Project {
        let relative = path.strip_prefix(place.root).unwrap_or(path);
        let project = crate::project::Project::at(place.root.to_owned());
        return Ok(project.resolve_inside(relative)?.0);
    }
    Ok(match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => path.canonicalize().unwrap_or_else(|_| path.to_owned()),
        _ => path.to_owned(),
    })
}

/// The edit lock of `path` (its directory is made first, as the lock needs it).
fn lock(path: &Path) -> Result<crate::project::EditLock, HostsError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| crate::project::ProjectError::io("create directory", dir, e))?;
    }
    Ok(crate::project::EditLock::acquire_path(path)?)
}

/// `<file>.charly-backup`.
fn backup_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(".charly-backup");
    path.with_file_name(name)
}

/// `path` for people: relative to the project for project scope, `~/...` under the home.
fn show(path: &Path, root: &Path, scope: ConfigScope, dirs: &Dirs) -> String {
    if scope == ConfigScope::Project
        && let Ok(relative) = path.strip_prefix(root)
    {
        return relative.display().to_string();
    }
    if let Some(home) = &dirs.home
        && let Ok(relative) = path.strip_prefix(home)
    {
        return format!("~/{}", relative.display());
    }
    path.display().to_string()
}

/// What a host does with a new entry that the user should know.
fn host_notes(host: HostKind, scope: ConfigScope) -> Vec<String> {
    match (host, scope) {
        (HostKind::ClaudeCode, ConfigScope::Project) => {
            vec![
                "Claude Code asks to approve servers from .mcp.json when it next starts in this project"
                    .into(),
            ]
        }
        (HostKind::Codex, ConfigScope::Project) => {
            vec!["Codex reads .codex/config.toml only in projects you have trusted".into()]
        }
        (HostKind::Gemini, _) => {
            vec!["Gemini CLI starts MCP servers only in folders you have trusted".into()]
        }
        (HostKind::ClaudeDesktop | HostKind::Cursor | HostKind::Vscode, _) => {
            vec![format!("restart {host} (or reload its MCP servers) to pick the change up")]
        }
        _ => Vec::new(),
    }
}
