//! Running a parsed command: the same code serves a terminal and an MCP call.
//!
//! [`run`] takes the parsed [`Cli`] and an output sink (the terminal's stdout, or the call's
//! [`charly_mcp::server::Output`]) and returns [`CommandError`] on failure: a failed check
//! such as `box.validate` (exit status 1, `isError` over MCP) or an error (exit status 2).

mod check;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{BoxCmd, CandyCmd, Cli, Command, ListCmd, NewCmd};
use crate::project::{self, PackageSection, Project, ProjectError, RepoCache, RepoSpec};

/// Why a command did not succeed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The command ran and found problems (exit status 1); its output lists them.
    #[error("{0}")]
    Failed(String),
    /// The command could not do its work (exit status 2).
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
    /// An argument is not usable (exit status 2).
    #[error("{0}")]
    Usage(String),
    /// An MCP client call failed: connection, timeout, protocol error.
    #[error(transparent)]
    Client(#[from] charly::client::ClientError),
    /// No endpoint could be resolved.
    #[error(transparent)]
    Resolve(#[from] crate::resolve::ResolveError),
    /// A check plan is invalid or its report could not be written.
    #[error(transparent)]
    Plan(#[from] crate::check::CheckError),
    /// The command only runs from a terminal.
    #[error("`charly {0}` runs from the command line, not as a tool")]
    TerminalOnly(&'static str),
}

impl CommandError {
    /// The process exit status for this error: 1 for a failed check, 2 otherwise.
    pub fn exit_status(&self) -> u8 {
        match self {
            CommandError::Failed(_) => 1,
            _ => 2,
        }
    }

    /// Whether this is a closed output pipe, which a terminal run treats as success.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            CommandError::Output(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
            CommandError::Client(e) => e.is_broken_pipe(),
            CommandError::Plan(e) => e.is_broken_pipe(),
            _ => false,
        }
    }
}

/// The project directory a command works on: `-C/--dir` (or `CHARLY_PROJECT_DIR`, which clap
/// reads into the same flag), else the working directory.
pub fn project_root(cli: &Cli) -> std::io::Result<PathBuf> {
    match &cli.dir {
        Some(dir) if dir.is_absolute() => Ok(dir.clone()),
        Some(dir) => Ok(std::env::current_dir()?.join(dir)),
        None => std::env::current_dir(),
    }
}

/// Who runs a command, and so which paths it may touch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// A person at a terminal: paths mean what they mean in their shell.
    Terminal,
    /// An MCP call: every path an argument names (`box.new.project`'s directory, a plan file,
    /// a JUnit file) must stay inside the project root, as `box.write` and `box.cat` always do.
    Served,
}

/// Runs `cli`'s command against the project at `root`, writing its report to `out`.
///
/// # Errors
///
/// [`CommandError::Failed`] when a check found problems, [`CommandError::Project`] for
/// anything the project library refused (with its message), [`CommandError::TerminalOnly`]
/// for `mcp serve`.
pub fn run(cli: &Cli, root: &Path, scope: Scope, out: &mut dyn Write) -> Result<(), CommandError> {
    let project = || Project::at(root.to_owned());
    match &cli.command {
        Command::Version => writeln!(out, "charly {}", env!("CARGO_PKG_VERSION"))?,
        Command::Doctor => {
            let opened = Project::open(root).ok();
            project::doctor(opened.as_ref(), out)?;
        }
        Command::Box(cmd) => run_box(cmd, root, scope, &project(), out)?,
        Command::Candy(cmd) => run_candy(cmd, &project(), out)?,
        Command::Check(cmd) => check::run(cmd, root, scope, out)?,
        Command::Mcp(_) => return Err(CommandError::TerminalOnly("mcp serve")),
    }
    Ok(())
}

fn run_box(
    cmd: &BoxCmd,
    root: &Path,
    scope: Scope,
    project: &Project,
    out: &mut dyn Write,
) -> Result<(), CommandError> {
    match cmd {
        BoxCmd::New(NewCmd::Project { dir }) => {
            let target = match scope {
                _ if dir.components().all(|c| c == std::path::Component::CurDir) => root.to_owned(),
                Scope::Terminal => root.join(dir),
                Scope::Served => project.resolve_inside(dir)?.0,
            };
            project::new_project(&target, out)?;
        }
        BoxCmd::New(NewCmd::Box { name, base }) => {
            project.new_box(name, base, out)?;
        }
        BoxCmd::New(NewCmd::Candy { name }) => {
            project.new_candy(name, out)?;
        }
        BoxCmd::Set(set) => {
            project.set(&set.path, &set.value, out)?;
        }
        BoxCmd::AddCandy(a) => {
            project.add_candy(&a.r#box, &a.candy, out)?;
        }
        BoxCmd::RmCandy(a) => {
            project.rm_candy(&a.r#box, &a.candy, out)?;
        }
        BoxCmd::Write(w) => {
            project.write(&w.path, &w.content, out)?;
        }
        BoxCmd::Cat(c) => {
            project.cat(&c.path, out)?;
        }
        BoxCmd::Fetch(r) => {
            RepoCache::from_env().fetch(&RepoSpec::parse_or_env(r.spec.as_deref())?, out)?;
        }
        BoxCmd::Refresh(r) => {
            RepoCache::from_env().refresh(&RepoSpec::parse_or_env(r.spec.as_deref())?, out)?;
        }
        BoxCmd::Validate => {
            let problems = project.validate(out)?;
            if !problems.is_empty() {
                return Err(CommandError::Failed(format!("{} problem(s) found", problems.len())));
            }
        }
        BoxCmd::Inspect(b) => {
            project.inspect(&b.r#box, out)?;
        }
        BoxCmd::List(ListCmd::Boxes) => {
            project.list_boxes(out)?;
        }
        BoxCmd::List(ListCmd::Candies) => {
            project.list_candies(out)?;
        }
        BoxCmd::List(ListCmd::Checks) => {
            project.list_checks(out)?;
        }
        BoxCmd::Generate(b) => {
            project.generate(&b.r#box, out)?;
        }
        BoxCmd::Build(b) => {
            project.build(&b.r#box, out)?;
        }
    }
    Ok(())
}

fn run_candy(cmd: &CandyCmd, project: &Project, out: &mut dyn Write) -> Result<(), CommandError> {
    let (packages, section) = match cmd {
        CandyCmd::Set { name, set } => {
            project.candy_set(name, &set.path, &set.value, out)?;
            return Ok(());
        }
        // The section comes from the parsed command, never from the process's own argv.
        CandyCmd::AddRpm(p) => (p, PackageSection::Rpm),
        CandyCmd::AddDeb(p) => (p, PackageSection::Deb),
        CandyCmd::AddPac(p) => (p, PackageSection::Pac),
        CandyCmd::AddAur(p) => (p, PackageSection::Aur),
    };
    project.add_packages(&packages.name, section, &packages.packages, out)?;
    Ok(())
}
