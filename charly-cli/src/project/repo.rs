//! `box.fetch` and `box.refresh`: a git clone cache of project repositories.
//!
//! A repository is named by `owner/name[@ref]` (a GitHub repository), a git URL (`https://`,
//! `ssh://`, `git://`, `file://`, `user@host:path`), or a local path to a git repository, with an
//! optional `@ref` after a URL or path too. Each (repository, ref) pair gets its own clone under
//! the cache directory: `$CHARLY_REPO_CACHE`, or `~/.cache/charly/repos`. The clones are made and
//! updated with the `git` command.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::error::{ProjectError, Result};
use super::report::{Fetched, RepoAction};
use super::tools;

/// A parsed project repository spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoSpec {
    /// What `git clone` is given: a URL or a local path.
    pub url: String,
    /// The branch, tag or commit to check out (`None`: the remote's default branch).
    pub reference: Option<String>,
}

impl RepoSpec {
    /// Parses `owner/name[@ref]`, a git URL (optionally `@ref`), or a local path (optionally `@ref`).
    pub fn parse(spec: &str) -> Result<RepoSpec> {
        let err =
            |message: &str| ProjectError::RepoSpec { spec: spec.to_owned(), message: message.to_owned() };
        let spec_trimmed = spec.trim();
        if spec_trimmed.is_empty() {
            return Err(err("it is empty"));
        }
        if spec_trimmed.starts_with('-') {
            return Err(err("it starts with `-`"));
        }
        // `@ref` is the part after the last `@` that follows the last `/` or `:` (so `git@host:x`
        // keeps its user).
        let (location, reference) = match spec_trimmed.rfind('@') {
            Some(at)
                if !spec_trimmed[at..].contains(['/', ':']) && spec_trimmed[..at].contains(['/', ':']) =>
            {
                let reference = &spec_trimmed[at + 1..];
                if reference.is_empty() || reference.starts_with('-') {
                    return Err(err("the ref after `@` is empty or starts with `-`"));
                }
                (&spec_trimmed[..at], Some(reference.to_owned()))
            }
            _ => (spec_trimmed, None),
        };
        let is_url =
            ["https://", "http://", "ssh://", "git://", "file://"].iter().any(|p| location.starts_with(p))
                || (location.contains('@') && location.contains(':'));
        let is_path = location.starts_with(['/', '.', '~']) || Path::new(location).exists();
        let url = if is_url {
            location.to_owned()
        } else if is_path {
            expand_home(location)
        } else {
            let parts: Vec<&str> = location.split('/').collect();
            let valid =
                |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
            if parts.len() != 2 || !parts.iter().all(|p| valid(p)) {
                return Err(err("not owner/name, a URL, or an existing path"));
            }
            format!("https://github.com/{location}.git")
        };
        Ok(RepoSpec { url, reference })
    }

    /// `spec` when given, else `$CHARLY_PROJECT_REPO` (what `box.fetch`/`box.refresh` default to).
    pub fn parse_or_env(spec: Option<&str>) -> Result<RepoSpec> {
        match spec {
            Some(spec) => RepoSpec::parse(spec),
            None => match std::env::var("CHARLY_PROJECT_REPO") {
                Ok(spec) if !spec.is_empty() => RepoSpec::parse(&spec),
                _ => Err(ProjectError::RepoSpec {
                    spec: String::new(),
                    message: "none given and CHARLY_PROJECT_REPO is not set".into(),
                }),
            },
        }
    }

    /// Whether git reads this repository from this machine's filesystem (a path or a
    /// `file://` URL) rather than over the network.
    pub fn is_local(&self) -> bool {
        let url = self.url.as_str();
        url.starts_with("file://") || !(url.contains("://") || (url.contains('@') && url.contains(':')))
    }

    /// The clone's directory name in the cache: readable, and unique per (URL, ref).
    pub fn cache_key(&self) -> String {
        let text = format!("{}@{}", self.url, self.reference.as_deref().unwrap_or(""));
        let readable: String = self
            .url
            .trim_end_matches(".git")
            .rsplit(['/', ':'])
            .take(2)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("-")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
            .collect();
        format!("{readable}-{:016x}", fnv1a(text.as_bytes()))
    }
}

/// The directory holding cached clones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoCache {
    /// The cache directory.
    pub dir: PathBuf,
}

impl RepoCache {
    /// `$CHARLY_REPO_CACHE`, else `$HOME/.cache/charly/repos`.
    pub fn from_env() -> RepoCache {
        let dir = match std::env::var_os("CHARLY_REPO_CACHE").filter(|d| !d.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => home().join(".cache").join("charly").join("repos"),
        };
        RepoCache { dir }
    }

    /// `box.fetch`: the clone of `spec`, cloned first when it is not cached yet.
    pub fn fetch(&self, spec: &RepoSpec) -> Result<Fetched> {
        let clone = self.dir.join(spec.cache_key());
        let report = |action, log: Vec<u8>| Fetched {
            url: spec.url.clone(),
            path: clone.clone(),
            action,
            log: String::from_utf8_lossy(&log).into_owned(),
        };
        if clone.join(".git").is_dir() {
            return Ok(report(RepoAction::Cached, Vec::new()));
        }
        let mut log = Vec::new();
        let out = &mut log;
        std::fs::create_dir_all(&self.dir).map_err(|e| ProjectError::io("create directory", &self.dir, e))?;
        // Clone next to the final place and rename, so an interrupted clone is never taken as done.
        let partial = tempfile::Builder::new()
            .prefix(".clone-")
            .tempdir_in(&self.dir)
            .map_err(|e| ProjectError::io("create a temporary directory in", &self.dir, e))?;
        let target = partial.path().join("repo");
        let args = [
            OsStr::new("clone"),
            OsStr::new("--quiet"),
            OsStr::new("--"),
            OsStr::new(&spec.url),
            target.as_os_str(),
        ];
        git(args, out)?;
        if let Some(reference) = &spec.reference {
            checkout(&target, reference, out)?;
        }
        std::fs::rename(&target, &clone).map_err(|e| ProjectError::io("move the clone to", &clone, e))?;
        Ok(report(RepoAction::Cloned, log))
    }

    /// `box.refresh`: fetches `spec` (cloning it when missing), then updates the clone to the
    /// remote's current state of the ref (or of its default branch).
    pub fn refresh(&self, spec: &RepoSpec) -> Result<Fetched> {
        let clone = self.dir.join(spec.cache_key());
        if !clone.join(".git").is_dir() {
            return self.fetch(spec);
        }
        let mut log = Vec::new();
        let out = &mut log;
        git_in(&clone, &["fetch", "--quiet", "--tags", "--prune", "origin"], out)?;
        match &spec.reference {
            Some(reference) => checkout(&clone, reference, out)?,
            None => {
                git_in(&clone, &["remote", "set-head", "origin", "--auto"], &mut std::io::sink())?;
                detach(&clone, "origin/HEAD", out)?;
            }
        }
        Ok(Fetched {
            url: spec.url.clone(),
            path: clone,
            action: RepoAction::Refreshed,
            log: String::from_utf8_lossy(&log).into_owned(),
        })
    }
}

/// Checks out `reference`: the remote branch of that name if there is one, else a tag or commit.
fn checkout(clone: &Path, reference: &str, out: &mut dyn Write) -> Result<()> {
    let branch = format!("refs/remotes/origin/{reference}");
    let is_branch =
        git_in(clone, &["rev-parse", "--verify", "--quiet", &branch], &mut std::io::sink()).is_ok();
    detach(clone, if is_branch { &branch } else { reference }, out)
}

/// Checks out `target` as a detached HEAD, discarding local changes.
fn detach(clone: &Path, target: &str, out: &mut dyn Write) -> Result<()> {
    git_in(clone, &["checkout", "--quiet", "--force", "--detach", target, "--"], out)
}

/// `git -C <clone> <args>`.
fn git_in(clone: &Path, args: &[&str], out: &mut dyn Write) -> Result<()> {
    let args = args.iter().map(OsStr::new);
    git([OsStr::new("-C"), clone.as_os_str()].into_iter().chain(args), out)
}

fn git<'a>(args: impl IntoIterator<Item = &'a OsStr>, out: &mut dyn Write) -> Result<()> {
    tools::run(OsStr::new("git"), args, "fetch project repositories", out).map(drop)
}

fn home() -> PathBuf {
    std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from)
}

fn expand_home(path: &str) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => home().join(rest).to_string_lossy().into_owned(),
        None => path.to_owned(),
    }
}

/// 64-bit FNV-1a: a stable hash for cache directory names (std's hasher may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        let gh = RepoSpec::parse("example/hello@v1").unwrap();
        assert_eq!(
            gh,
            RepoSpec { url: "https://github.com/example/hello.git".into(), reference: Some("v1".into()) }
        );
        let ssh = RepoSpec::parse("git@github.com:example/hello.git").unwrap();
        assert_eq!(ssh, RepoSpec { url: "git@github.com:example/hello.git".into(), reference: None });
        let url = RepoSpec::parse("https://example.invalid/x/y.git@main").unwrap();
        assert_eq!(url.reference.as_deref(), Some("main"));
        assert_eq!(RepoSpec::parse("/srv/repo").unwrap().url, "/srv/repo");
        for bad in ["", "-oops", "just-a-name", "a/b/c", "a/b@"] {
            assert!(RepoSpec::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn local_repositories_are_told_apart() {
        for local in ["/srv/repo", "./repo", "file:///srv/repo"] {
            assert!(RepoSpec::parse(local).unwrap().is_local(), "{local}");
        }
        for remote in ["example/hello", "https://example.com/x.git", "git@github.com:example/hello.git"] {
            assert!(!RepoSpec::parse(remote).unwrap().is_local(), "{remote}");
        }
    }

    #[test]
    fn cache_keys_differ_by_ref() {
        let a = RepoSpec::parse("example/hello").unwrap().cache_key();
        let b = RepoSpec::parse("example/hello@v1").unwrap().cache_key();
        assert!(a.starts_with("example-hello-"), "{a}");
        assert_ne!(a, b);
    }
}
