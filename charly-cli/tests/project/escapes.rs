use std::path::Path;

use crate::util::{Fixture, err_text};

fn refused(f: &Fixture, path: &str, reason_starts: &str) {
    let write = err_text(f.project.write(Path::new(path), "x"));
    let cat = err_text(f.project.cat(Path::new(path)));
    for err in [write, cat] {
        let expected = format!("refusing path {path:?}: {reason_starts}");
        assert!(err.starts_with(&expected), "{path}: {err}");
    }
}

#[test]
fn absolute_paths_are_refused() {
    let f = Fixture::sample();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("x");
    refused(&f, target.to_str().unwrap(), "absolute paths are not allowed");
    refused(&f, "/etc/passwd", "absolute paths are not allowed");
    assert!(!target.exists());
}

#[test]
fn dot_dot_is_refused_even_when_it_would_come_back() {
    let f = Fixture::sample();
    refused(&f, "../escape", "`..` is not allowed");
    refused(&f, "box/../../escape", "`..` is not allowed");
    refused(&f, "box/../charly.yml", "`..` is not allowed");
    assert!(!f.root().parent().unwrap().join("escape").exists());
}

#[cfg(unix)]
#[test]
fn symlinks_leading_outside_are_refused() {
    let f = Fixture::sample();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), f.path("box/out")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret"), f.path("box/secret")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("missing"), f.path("box/dangling")).unwrap();
    let reason = "it goes through a symlink that leads outside the project root";
    refused(&f, "box/out/secret", reason);
    refused(&f, "box/out/new/file", reason);
    refused(&f, "box/secret", reason);
    refused(&f, "box/dangling", "it goes through a symlink that leads nowhere");
    assert_eq!(std::fs::read_to_string(outside.path().join("secret")).unwrap(), "secret");
    assert!(!outside.path().join("new").exists() && !outside.path().join("missing").exists());
}

#[cfg(unix)]
#[test]
fn symlinks_inside_the_root_are_followed() {
    let f = Fixture::sample();
    std::os::unix::fs::symlink(f.path("candy"), f.path("box/candies")).unwrap();
    let text = f.project.cat(Path::new("box/candies/hello-svc/charly.yml")).unwrap();
    assert_eq!(text.content, f.read("candy/hello-svc/charly.yml"));
    assert_eq!(text.to_string(), text.content);
}

#[test]
fn empty_and_root_paths_are_refused() {
    let f = Fixture::sample();
    refused(&f, "", "the path is empty");
    refused(&f, ".", "the path is empty");
}

#[test]
fn write_then_cat_inside_the_root() {
    let f = Fixture::sample();
    let written = f.project.write(Path::new("box/hello/etc/motd"), "hi\n").unwrap();
    assert_eq!(written.path, Path::new("box/hello/etc/motd"));
    assert_eq!(written.to_string(), "wrote 3 bytes to box/hello/etc/motd\n");
    assert_eq!(f.project.cat(Path::new("./box/hello/etc/motd")).unwrap().content, "hi\n");
    f.project.write(Path::new("box/hello/etc/motd"), "bye\n").unwrap();
    assert_eq!(f.read("box/hello/etc/motd"), "bye\n");
}

/// Writes into `.git/` are refused, however the path gets there (a symlink inside the root,
/// another case): git runs what its config and hooks name, so a client that may only write the
/// project would run commands at the next `git status` (trial 28, H3). Reads stay allowed.
#[cfg(unix)]
#[test]
fn writes_into_git_are_refused() {
    let f = Fixture::sample();
    std::fs::create_dir_all(f.path(".git")).unwrap();
    std::fs::write(f.path(".git/config"), "[core]\n").unwrap();
    std::os::unix::fs::symlink(f.path(".git"), f.path("box/g")).unwrap();
    for path in [".git/config", ".git/hooks/pre-commit", "box/g/config", ".GIT/config", "./.git/new"] {
        let err = err_text(f.project.write(Path::new(path), "[core]\n\tfsmonitor = touch pwned\n"));
        assert!(
            err.starts_with(&format!(
                "refusing path {path:?}: it is inside .git/, the repository's own files"
            )),
            "{path}: {err}"
        );
    }
    assert_eq!(f.read(".git/config"), "[core]\n");
    assert!(!f.path(".git/hooks").exists() && !f.path(".git/new").exists());
    assert_eq!(f.project.cat(Path::new(".git/config")).unwrap().content, "[core]\n");
    // A name that only looks like it is fine.
    f.project.write(Path::new("box/hello/.gitignore"), "x\n").unwrap();
    // A git directory by its contents, under any name (`git init --separate-git-dir gitdata`:
    // trial 30, H1), and a project whose root is in one (`-C .git`, M1).
    for dir in ["gitdata/objects", "gitdata/refs"] {
        std::fs::create_dir_all(f.path(dir)).unwrap();
    }
    std::fs::write(f.path("gitdata/HEAD"), "ref: refs/heads/main\n").unwrap();
    for path in ["gitdata/config", "gitdata/hooks/pre-commit"] {
        let err = err_text(f.project.write(Path::new(path), "x"));
        // Named where it is: there is no `.git` in `gitdata/config` (trial 31, L1).
        assert!(err.contains("it is inside a git directory (gitdata/)"), "{path}: {err}");
    }
    let inside = charly_cli::project::Project::at(f.path(".git"));
    assert!(err_text(inside.write(Path::new("hooks/pre-commit"), "x")).contains("it is inside .git/"));
    assert!(!f.path(".git/hooks").exists());
}

/// A git directory is not built file by file either: `config`, `HEAD` and `objects/x` are
/// ordinary files on their own, but the write that would bring the last of `HEAD`, `objects/`
/// and `refs/` into one directory is refused, in any order, before anything on its way is made
/// (trial 31, MED-1: `git status` in `fake6/` then ran the client's `core.fsmonitor`).
#[cfg(unix)]
#[test]
fn a_git_directory_is_not_built_file_by_file() {
    let f = Fixture::sample();
    let config = "[core]\n\tfsmonitor = \"touch pwned; false\"\n";
    let write = |path: &str, text: &str| f.project.write(Path::new(path), text);
    write("fake/config", config).unwrap();
    write("fake/HEAD", "ref: refs/heads/main\n").unwrap();
    write("fake/objects/.k", "").unwrap();
    let err = err_text(write("fake/refs/a/b/c", ""));
    assert!(
        err.starts_with("refusing path \"fake/refs/a/b/c\": it would make fake/ a git directory"),
        "{err}"
    );
    assert!(!f.path("fake/refs").exists(), "a refused write left a directory behind");
    // HEAD last, and a directory made by `box.new.project` or for a new candy.
    write("other/objects/x", "").unwrap();
    write("other/refs/x", "").unwrap();
    assert!(err_text(write("other/HEAD", "ref: refs/heads/main\n")).contains("would make other/ a git"));
    assert!(err_text(write("other/head", "x")).contains("would make other/ a git"));
    assert!(!f.path("other/HEAD").exists() && !f.path("other/head").exists());
    assert!(err_text(f.project.new_project_inside(Path::new("fake/refs"))).contains("would make fake/"));
    assert!(!f.path("fake/refs").exists());
    write("candy/HEAD", "ref: refs/heads/main\n").unwrap();
    write("candy/objects/x", "").unwrap();
    assert!(err_text(f.project.new_candy("refs")).contains("would make candy/ a git directory"));
    assert!(!f.path("candy/refs").exists());
    // Files called `config` or `HEAD` stay ordinary, and so do the other two of the three.
    write("other/config", config).unwrap();
    write("box/hello/HEAD", "x").unwrap();
    write("box/hello/objects/x", "x").unwrap();
    write("fake/hooks/x", "x").unwrap();
}

/// A missing directory on the way is named with the whole path asked for, and `~` is said to
/// be a plain name; a FIFO is refused as not a file instead of "Is a directory" (trial 28, L4).
#[cfg(unix)]
#[test]
fn missing_parts_and_fifos_are_named_plainly() {
    let f = Fixture::sample();
    assert_eq!(
        err_text(f.project.cat(Path::new("box/nope/x.yml"))),
        "cannot read box/nope/x.yml: box/nope does not exist in the project"
    );
    let tilde = err_text(f.project.cat(Path::new("~/x")));
    assert!(
        tilde.starts_with("cannot read ~/x: ~ does not exist in the project")
            && tilde.contains("`~` is not expanded"),
        "{tilde}"
    );
    let made = std::process::Command::new("mkfifo").arg(f.path("pipe")).status().unwrap();
    assert!(made.success());
    let err = err_text(f.project.write(Path::new("pipe"), "x"));
    assert_eq!(
        err,
        "refusing path \"pipe\": it is not a regular file (a FIFO, socket or device); charly writes files"
    );
}
