//! What a host's entry runs or reaches: the stdio command (`charly [-C DIR] mcp serve --stdio`)
//! or a Streamable HTTP URL, and the checks a served call's install must pass.

use std::path::{Path, PathBuf};

use super::entry::Transport;
use super::{ConfigScope, HostKind, HostsError, locate};

/// How the stdio entry is built: `<command> [-C <dir>] mcp serve --stdio [--read-only]`.
#[derive(Clone, Debug, Default)]
pub struct StdioServer {
    /// The charly executable; default the running one. A relative path (`./charly`,
    /// `target/release/charly`) is made absolute against the working directory (hosts start
    /// servers in directories of their own); a bare name (`charly`) stays, for the host to find
    /// on its `PATH`.
    pub command: Option<String>,
    /// The project directory to pin (`-C`): the one named with `-C`, and for a project-scope
    /// file the project's own, so the host serves it whatever directory it starts the server
    /// in. It must hold a `charly.yml`.
    pub dir: Option<PathBuf>,
    /// Whether `dir` was named with `-C` (for the refusal's wording).
    pub dir_named: bool,
    /// `--read-only`.
    pub read_only: bool,
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
/// [`HostsError::Usage`] when the running executable cannot be found, a relative `--command`
/// names no file, or the directory to pin holds no `charly.yml`.
pub fn stdio(server: &StdioServer) -> Result<Transport, HostsError> {
    let command = match &server.command {
        Some(command) if command.trim().is_empty() => {
            return Err(HostsError::Usage("--command must name the charly executable".into()));
        }
        Some(command) if command.contains('/') && !Path::new(command).is_absolute() => {
            // Relative to this working directory, which is not the one the host starts in.
            std::env::current_dir()
                .map(|cwd| cwd.join(command))
                .and_then(|p| p.canonicalize())
                .map_err(|e| {
                    HostsError::Usage(format!(
                        "--command {command:?}: cannot find it from here ({e}); hosts start servers in \
                         other working directories, so a relative path is written as an absolute one, \
                         and it must exist: give the charly executable's path"
                    ))
                })?
                .display()
                .to_string()
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
        if !dir.join(crate::project::PROJECT_FILE).is_file() {
            let shown = dir.display();
            return Err(HostsError::Usage(if server.dir_named {
                format!(
                    "-C {shown}: no charly.yml there, so the server would serve an empty directory; \
                     name a charly project's directory, or create a project there first \
                     (`charly box new project {shown}`)"
                )
            } else {
                format!(
                    "{shown} has no charly.yml: a project-scope entry pins the project directory (-C) \
                     so the host serves it whatever directory it starts the server in, and this one \
                     is not a charly project; create one first (`charly box new project .`), name one \
                     with -C DIR, or install with --scope user (the server then serves the directory \
                     the host starts it in, or the embedded sample)"
                )
            }));
        }
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
