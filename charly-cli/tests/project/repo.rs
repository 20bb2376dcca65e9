use std::path::Path;
use std::process::Command;

use charly_cli::project::{RepoAction, RepoCache, RepoSpec};

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main"])
        .arg("-C")
        .arg(dir)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

/// A local repository holding the sample project, with a tag `v1` on its first commit.
fn origin() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git(dir.path(), &["init", "--quiet"]);
    for (relative, contents) in charly_cli::project::SAMPLE_FILES {
        let path = dir.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }
    git(dir.path(), &["add", "."]);
    git(dir.path(), &["commit", "--quiet", "-m", "sample"]);
    git(dir.path(), &["tag", "v1"]);
    dir
}

#[test]
fn fetch_clones_once_and_refresh_updates() {
    let origin = origin();
    let cache = RepoCache { dir: tempfile::tempdir().unwrap().keep() };
    let spec = RepoSpec::parse(origin.path().to_str().unwrap()).unwrap();
    let fetched = cache.fetch(&spec).unwrap();
    let clone = fetched.path.clone();
    assert!(clone.starts_with(&cache.dir));
    assert!(clone.join("candy/hello-svc/charly.yml").is_file());
    assert_eq!(fetched.action, RepoAction::Cloned);
    let text = fetched.to_string();
    assert!(text.starts_with("cloned "), "{text}");

    std::fs::write(origin.path().join("NEW"), "new\n").unwrap();
    git(origin.path(), &["add", "NEW"]);
    git(origin.path(), &["commit", "--quiet", "-m", "new"]);

    let fetched = cache.fetch(&spec).unwrap();
    assert_eq!(fetched.path, clone);
    assert_eq!(fetched.action, RepoAction::Cached);
    let text = fetched.to_string();
    assert!(text.contains("is cached in"), "{text}");
    assert!(!clone.join("NEW").exists());

    std::fs::write(clone.join("charly.yml"), "local change\n").unwrap();
    let refreshed = cache.refresh(&spec).unwrap();
    assert_eq!((&refreshed.path, refreshed.action), (&clone, RepoAction::Refreshed));
    assert!(clone.join("NEW").is_file());
    assert_eq!(
        std::fs::read_to_string(clone.join("charly.yml")).unwrap(),
        charly_cli::project::SAMPLE_FILES[0].1
    );
    std::fs::remove_dir_all(&cache.dir).unwrap();
}

#[test]
fn a_ref_gets_its_own_clone() {
    let origin = origin();
    std::fs::write(origin.path().join("NEW"), "new\n").unwrap();
    git(origin.path(), &["add", "NEW"]);
    git(origin.path(), &["commit", "--quiet", "-m", "new"]);
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RepoCache { dir: cache_dir.path().to_owned() };
    let at_v1 = RepoSpec::parse(&format!("{}@v1", origin.path().display())).unwrap();
    let head = RepoSpec::parse(&origin.path().display().to_string()).unwrap();
    let v1 = cache.fetch(&at_v1).unwrap().path;
    let main = cache.refresh(&head).unwrap().path;
    assert_ne!(v1, main);
    assert!(!v1.join("NEW").exists());
    assert!(main.join("NEW").exists());
}

#[test]
fn a_missing_repository_is_a_git_error() {
    let cache_dir = tempfile::tempdir().unwrap();
    let cache = RepoCache { dir: cache_dir.path().to_owned() };
    let missing = cache_dir.path().join("no-such-repo");
    let spec = RepoSpec { url: missing.display().to_string(), reference: None };
    let err = cache.fetch(&spec).unwrap_err().to_string();
    assert!(err.starts_with("`git clone --quiet -- "), "{err}");
    assert_eq!(std::fs::read_dir(cache_dir.path()).unwrap().count(), 0, "no partial clone is left");
}
