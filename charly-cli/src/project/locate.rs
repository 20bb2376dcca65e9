//! Which project a command (or `charly mcp serve`) works on.
//!
//! In order: a directory named explicitly (`-C/--dir`, then `CHARLY_PROJECT_DIR`), used even before
//! it holds a `charly.yml` so a project can be scaffolded into it; a repository
//! (`CHARLY_PROJECT_REPO` or `--repo`), cloned into the repository cache; the working directory when
//! it holds a `charly.yml`; else the embedded sample project, written to a cache directory — unless
//! `--no-default-repo`, which makes that last case an error listing the ways to name a project.

use std::io::Write;
use std::path::PathBuf;

use super::error::{ProjectError, Result};
use super::model::{PROJECT_FILE, Project};
use super::repo::{RepoCache, RepoSpec};
use super::{sample, say};

/// Where a project may come from, as the command line and environment give it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectSources {
    /// `-C/--dir` (clap also fills it from `CHARLY_PROJECT_DIR`).
    pub dir: Option<PathBuf>,
    /// `CHARLY_PROJECT_REPO` / `--repo`: `owner/name@ref`, a git URL or a local path.
    pub repo: Option<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// `--no-default-repo`: fail instead of falling back to the sample project.
    pub no_default_repo: bool,
    /// Where the sample project is written when it is used.
    pub sample_dir: PathBuf,
}

/// How the project was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProjectOrigin {
    /// A directory named with `-C/--dir` or `CHARLY_PROJECT_DIR`.
    Named,
    /// A clone of this repository.
    Repo(RepoSpec),
    /// The working directory, which holds a `charly.yml`.
    WorkingDirectory,
    /// The embedded sample project.
    Sample,
}

impl ProjectSources {
    /// The sources from the environment: `CHARLY_PROJECT_DIR`, `CHARLY_PROJECT_REPO`, the working
    /// directory, and the sample under `$CHARLY_REPO_CACHE/../sample` or `~/.cache/charly/sample`.
    pub fn from_env() -> Result<ProjectSources> {
        let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
        let cwd =
            std::env::current_dir().map_err(|e| ProjectError::io("read the working directory", ".", e))?;
        let cache = RepoCache::from_env().dir;
        let sample_dir = cache.parent().map_or_else(|| cache.join("sample"), |p| p.join("sample"));
        Ok(ProjectSources {
            dir: var("CHARLY_PROJECT_DIR").map(PathBuf::from),
            repo: var("CHARLY_PROJECT_REPO").map(|v| v.to_string_lossy().into_owned()),
            cwd,
            no_default_repo: false,
            sample_dir,
        })
    }

    /// Picks the project (see the module docs). Notices (a clone, the sample being used) go to
    /// `notices`, which `charly mcp serve` points at stderr.
    pub fn locate(&self, cache: &RepoCache, notices: &mut dyn Write) -> Result<(Project, ProjectOrigin)> {
        if let Some(dir) = &self.dir {
            let dir = if dir.is_absolute() { dir.clone() } else { self.cwd.join(dir) };
            return Ok((Project::at(dir), ProjectOrigin::Named));
        }
        if let Some(repo) = &self.repo {
            let spec = RepoSpec::parse(repo)?;
            let fetched = cache.fetch(&spec)?;
            write!(notices, "{fetched}").map_err(|e| ProjectError::io("write to", "stderr", e))?;
            return Ok((Project::open(fetched.path)?, ProjectOrigin::Repo(spec)));
        }
        if self.cwd.join(PROJECT_FILE).is_file() {
            return Ok((Project::at(self.cwd.clone()), ProjectOrigin::WorkingDirectory));
        }
        if self.no_default_repo {
            return Err(ProjectError::NotAProject { dir: self.cwd.clone() });
        }
        let project = sample::write_sample(&self.sample_dir)?;
        say(
            notices,
            format_args!(
                "charly: no project named and no charly.yml in {}; serving the embedded sample project from {} \
                 (a temporary copy: edits to it go when the server stops; serve a directory with -C DIR to keep them)",
                self.cwd.display(),
                self.sample_dir.display()
            ),
        )?;
        Ok((project, ProjectOrigin::Sample))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sources(cwd: &std::path::Path, sample: &std::path::Path) -> ProjectSources {
        ProjectSources { cwd: cwd.to_owned(), sample_dir: sample.to_owned(), ..Default::default() }
    }

    #[test]
    fn order_of_sources() {
        let cwd = tempfile::tempdir().unwrap();
        let sample_dir = tempfile::tempdir().unwrap();
        let cache = RepoCache { dir: sample_dir.path().join("repos") };
        let mut s = sources(cwd.path(), &sample_dir.path().join("sample"));

        let mut notices = Vec::new();
        let (project, origin) = s.locate(&cache, &mut notices).unwrap();
        assert_eq!(origin, ProjectOrigin::Sample);
        assert!(project.root().join("candy/hello-svc/charly.yml").is_file());
        let notices = String::from_utf8(notices).unwrap();
        assert!(notices.contains("serving the embedded sample project"), "{notices}");
        assert!(
            notices
                .contains("edits to it go when the server stops; serve a directory with -C DIR to keep them"),
            "{notices}"
        );

        s.no_default_repo = true;
        let err = s.locate(&cache, &mut std::io::sink()).unwrap_err().to_string();
        assert!(err.contains("-C/--dir, CHARLY_PROJECT_DIR or CHARLY_PROJECT_REPO"), "{err}");

        std::fs::write(cwd.path().join(PROJECT_FILE), "project: {version: 1}\n").unwrap();
        let (project, origin) = s.locate(&cache, &mut std::io::sink()).unwrap();
        assert_eq!((project.root(), origin), (cwd.path(), ProjectOrigin::WorkingDirectory));

        s.dir = Some(PathBuf::from("not-yet"));
        let (project, origin) = s.locate(&cache, &mut std::io::sink()).unwrap();
        assert_eq!((project.root().to_owned(), origin), (cwd.path().join("not-yet"), ProjectOrigin::Named));
    }
}
