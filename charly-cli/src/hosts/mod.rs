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
//! old one is copied to `<file>.bak` (created with the old file's mode; when a `<file>.bak`
//! is there already, an older backup, it is kept and the copy is the first free
//! `<file>.bak.N`, which the report names). `--print` shows the new file and writes
//! nothing. A bearer token is written as a reference to its environment variable in the
//! host's own syntax, never as the token.

mod entry;
mod jsonc;
mod locate;
mod report;
mod toml;
mod transport;

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use entry::Transport;
use locate::{Dirs, Format, Location};
pub use report::{Action, HostChange};
pub use transport::{StdioServer, check_served, http, stdio};

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

/// The scope a host's file defaults to: project where the host has one (Claude Desktop and
/// Codex: user).
pub fn default_scope(host: HostKind) -> ConfigScope {
    locate::default_scope(host)
}

/// Where the request runs: the project root, and whether a person or an MCP call asks.
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    /// The project directory (project-scope files live here).
    pub root: &'a Path,
    /// Who asks: a served call may only touch project files inside the root.
    pub scope: Scope,
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
        let (backup, suffix) = backup_path(&path)?;
        // The copy gets the original's mode from its creation: hosts' configs hold secrets.
        let mode = std::fs::metadata(&path)
            .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()))
            .unwrap_or(0o600);
        crate::project::write_atomic_mode(&backup, old.as_bytes(), mode)?;
        if suffix != ".bak" {
            change.notes.push(format!(
                "{shown}.bak is an older backup and was kept; the file as it was before this change is {shown}{suffix}"
            ));
        }
        change.backup = Some(format!("{shown}{suffix}"));
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

/// Most numbered backups (`<file>.bak.1` ...) one file gets before charly asks for room.
const MAX_BACKUPS: usize = 100;

/// Where the old file goes, and its suffix: `<file>.bak`, or when that is taken (an older
/// backup, charly's or the user's, is never overwritten) the first free `<file>.bak.N`.
///
/// # Errors
///
/// [`HostsError::Usage`] when [`MAX_BACKUPS`] numbered backups are there already.
fn backup_path(path: &Path) -> Result<(PathBuf, String), HostsError> {
    let with = |suffix: &str| {
        let mut name = path.file_name().unwrap_or_default().to_owned();
        name.push(suffix);
        path.with_file_name(name)
    };
    for n in 0..=MAX_BACKUPS {
        let suffix = if n == 0 { ".bak".to_owned() } else { format!(".bak.{n}") };
        let candidate = with(&suffix);
        if std::fs::symlink_metadata(&candidate).is_err() {
            return Ok((candidate, suffix));
        }
    }
    Err(HostsError::Usage(format!(
        "{}.bak and {MAX_BACKUPS} numbered backups beside it exist already; delete the ones you do not need, then run again",
        path.display()
    )))
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
