//! `doctor`: what the host has — podman, git, a project — and their versions.

use std::ffi::OsStr;
use std::io::Write;
use std::path::PathBuf;

use super::error::Result;
use super::model::{PROJECT_FILE, Project};
use super::{say, tools};

/// What [`doctor`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorReport {
    /// charly's own version.
    pub charly: String,
    /// `podman --version`, when podman runs.
    pub podman: Option<String>,
    /// `git --version`, when git runs.
    pub git: Option<String>,
    /// The project root, when `project` names a directory with a charly.yml.
    pub project: Option<PathBuf>,
    /// The project's problems, as `box.validate` reports them (empty without a project).
    pub problems: usize,
}

/// Reports the versions of charly, podman and git, and whether `project` is a valid project.
pub fn doctor(project: Option<&Project>, out: &mut dyn Write) -> Result<DoctorReport> {
    let podman = tools::version(OsStr::new("podman"));
    let git = tools::version(OsStr::new("git"));
    let charly = env!("CARGO_PKG_VERSION").to_owned();
    say(out, format_args!("charly  {charly}"))?;
    let missing = |what: &str| format!("missing ({what})");
    say(out, format_args!("podman  {}", podman.clone().unwrap_or_else(|| missing("needed by box build"))))?;
    say(
        out,
        format_args!("git     {}", git.clone().unwrap_or_else(|| missing("needed by box fetch/refresh"))),
    )?;
    let found = project.filter(|p| p.root().join(PROJECT_FILE).is_file());
    let mut problems = 0;
    match found {
        Some(p) => {
            say(out, format_args!("project {}", p.root().display()))?;
            problems = p.validate(&mut std::io::sink())?.len();
            say(out, format_args!("        {problems} problem(s) (see `charly box validate`)"))?;
        }
        None => say(out, format_args!("project none (no charly.yml; `charly box new project` makes one)"))?,
    }
    Ok(DoctorReport { charly, podman, git, project: found.map(|p| p.root().to_owned()), problems })
}
