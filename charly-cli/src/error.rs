//! [`CommandError`]: the one error type of every charly command, and of `main`.
//!
//! A command that ran and found problems is not an error: it returns a report whose
//! [`crate::report::Report::failure`] says so (exit status 1). An error means the command could
//! not do its work: exit status 2, printed once on stderr as `charly: <message>`, or an
//! `isError` result over MCP.

/// Why a command could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The project library refused (its message names the file, node and fix). A project
    /// change that was cancelled becomes [`CommandError::Cancelled`].
    #[error(transparent)]
    Project(crate::project::ProjectError),
    /// An MCP client call failed: connection, timeout, protocol error.
    #[error(transparent)]
    Client(#[from] charly::client::ClientError),
    /// No endpoint could be resolved.
    #[error(transparent)]
    Resolve(#[from] crate::resolve::ResolveError),
    /// A check plan is invalid or its JUnit file could not be written.
    #[error(transparent)]
    Plan(#[from] crate::check::CheckError),
    /// The MCP server could not start or its transport failed (`mcp serve`).
    #[error(transparent)]
    Serve(#[from] charly::server::ServeError),
    /// A host's config file could not be changed (`mcp install`/`uninstall`).
    #[error(transparent)]
    Hosts(#[from] crate::hosts::HostsError),
    /// A `settings` command failed (unknown key, invalid value, unreadable config.yml).
    #[error(transparent)]
    Settings(#[from] crate::settings::SettingsError),
    /// A `secrets` command failed (wrong database password, missing entry, corrupt file).
    #[error(transparent)]
    Secrets(#[from] crate::secrets::SecretsError),
    /// A `secrets gpg` command failed (not GPG, no secret key, unknown recipient).
    #[error(transparent)]
    Gpg(#[from] crate::gpg::GpgError),
    /// An `alias` command failed (bad name, missing image, a file that is not an alias).
    #[error(transparent)]
    Alias(#[from] crate::alias::AliasError),
    /// A `udev` command failed (not charly's file, needs root).
    #[error(transparent)]
    Udev(#[from] crate::udev::UdevError),
    /// A podman call failed (its message names the box, the container and the fix).
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// A lifecycle leaf could not do its work.
    #[error(transparent)]
    Deploy(Box<crate::deploy::DeployError>),
    /// A `deploy.*` leaf could not read or change the deploy file (nothing was changed).
    #[error(transparent)]
    DeployFile(crate::deployfile::DeployFileError),
    /// A `config setup/status/remove` could not do its work (the message says what was left).
    #[error(transparent)]
    Setup(Box<crate::setup::SetupError>),
    /// A `check.cdp.*` leaf could not do its work (unreachable browser, unknown tab, a page
    /// that threw); the browser and the tab are as they were.
    #[error(transparent)]
    Cdp(#[from] crate::cdp::CdpError),
    /// A `check.dbus.*` leaf could not do its work (no bus, an error reply, a bad argument).
    #[error(transparent)]
    Dbus(#[from] crate::dbus::DbusError),
    /// A `check.vnc.*` leaf could not do its work (unreachable server, wrong password,
    /// unsupported security, a bad key name); the server is as it was.
    #[error(transparent)]
    Vnc(#[from] crate::vnc::VncError),
    /// A `check.wl.*` leaf could not do its work (no session, a missing tool, bad input,
    /// sway's refusal); the desktop keeps running.
    #[error(transparent)]
    Wl(#[from] crate::wl::WlError),
    /// A `tmux.*` or `record.*` leaf could not do its work (no such session, tmux or a recorder
    /// missing in the target, a bad session name).
    #[error(transparent)]
    Tmux(#[from] crate::tmux::TmuxError),
    /// A `vm.*` leaf could not do its work (a VM in the wrong state, a port taken, a failing
    /// tool); what it had made is removed.
    #[error(transparent)]
    Vm(crate::vm::VmError),
    /// An argument is not usable; the message names it and what is allowed.
    #[error("{0}")]
    Usage(String),
    /// Writing the output, or another I/O operation outside the project, failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The command only runs from a terminal.
    #[error("`charly {0}` runs from the command line, not as a tool")]
    TerminalOnly(&'static str),
    /// The call was cancelled before its point of no return; nothing was changed.
    #[error("cancelled; nothing was changed")]
    Cancelled,
    /// Ctrl-C (SIGINT) on a terminal stopped an operation that held nothing open on a server.
    #[error("interrupted (Ctrl-C)")]
    Interrupted,
}

impl From<crate::project::ProjectError> for CommandError {
    fn from(e: crate::project::ProjectError) -> Self {
        match e {
            crate::project::ProjectError::Cancelled { .. } => CommandError::Cancelled,
            other => CommandError::Project(other),
        }
    }
}

impl From<crate::vm::VmError> for CommandError {
    fn from(e: crate::vm::VmError) -> Self {
        match e {
            crate::vm::VmError::Cancelled => CommandError::Cancelled,
            other => CommandError::Vm(other),
        }
    }
}

impl From<crate::deployfile::DeployFileError> for CommandError {
    fn from(e: crate::deployfile::DeployFileError) -> Self {
        match e {
            crate::deployfile::DeployFileError::Cancelled => CommandError::Cancelled,
            other => CommandError::DeployFile(other),
        }
    }
}

impl From<crate::deploy::DeployError> for CommandError {
    fn from(e: crate::deploy::DeployError) -> Self {
        CommandError::Deploy(Box::new(e))
    }
}

impl From<crate::setup::SetupError> for CommandError {
    fn from(e: crate::setup::SetupError) -> Self {
        match e {
            crate::setup::SetupError::Cancelled
            | crate::setup::SetupError::Entry(crate::deployfile::DeployFileError::Cancelled) => {
                CommandError::Cancelled
            }
            other => CommandError::Setup(Box::new(other)),
        }
    }
}

impl CommandError {
    /// The process exit status for this error: 130 for an interrupted MCP call (Ctrl-C, as a
    /// shell reports SIGINT), 2 otherwise (1 is for reports that record a failure).
    pub fn exit_status(&self) -> u8 {
        match self {
            CommandError::Client(charly::client::ClientError::Interrupted { .. })
            | CommandError::Interrupted => 130,
            _ => 2,
        }
    }

    /// Whether this is a closed output pipe, which a terminal run treats as success.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            CommandError::Io(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
            CommandError::Client(e) => e.is_broken_pipe(),
            CommandError::Plan(e) => e.is_broken_pipe(),
            _ => false,
        }
    }
}
