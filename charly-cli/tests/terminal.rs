//! The `charly` binary from a terminal: exit statuses and regressions.

use std::path::Path;
use std::process::{Command, Output};

fn charly(cwd: &Path, args: &[&str]) -> Output {
    let home = cwd.join(".home");
    Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(args)
        .current_dir(cwd)
        .env_remove("CHARLY_PROJECT_DIR")
        .env_remove("CHARLY_PROJECT_REPO")
        .env("HOME", &home)
        .env("CHARLY_REPO_CACHE", home.join("repos"))
        .output()
        .expect("run charly")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `box new project <dir>` once also set the root `--dir` (clap copies a global argument's
/// value from a subcommand argument with the same id), so the project landed in `dir/dir`.
#[test]
fn new_project_dir_is_not_taken_for_the_project_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let out = charly(tmp.path(), &["box", "new", "project", "foo"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(tmp.path().join("foo/charly.yml").is_file());
    assert!(!tmp.path().join("foo/foo").exists());
}

#[test]
fn exit_statuses() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(charly(tmp.path(), &["box", "new", "project", "."]).status.success());
    // A check that finds problems: 1, with the problems on stdout.
    std::fs::write(
        tmp.path().join("charly.yml"),
        "project:\n  version: 1\nweb:\n  box:\n    candy: [nope]\n",
    )
    .unwrap();
    let out = charly(tmp.path(), &["box", "validate"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("nope"), "{}", text(&out.stdout));
    // An error: 2, one line on stderr with the program prefix.
    let out = charly(tmp.path(), &["box", "cat", "../outside"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.starts_with("charly: ") && err.contains(".."), "{err}");
    assert_eq!(charly(tmp.path(), &["version"]).status.code(), Some(0));
}

/// One call with thousands of packages once held the candy's edit lock for minutes (the editor
/// appends one item at a time): a call takes at most `MAX_PACKAGES_PER_CALL`.
#[test]
fn too_many_packages_in_one_call_is_refused_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(charly(tmp.path(), &["box", "new", "project", "."]).status.success());
    assert!(charly(tmp.path(), &["box", "new", "candy", "c"]).status.success());
    let before = std::fs::read_to_string(tmp.path().join("candy/c/charly.yml")).unwrap();
    let max = charly_cli::project::MAX_PACKAGES_PER_CALL;
    let packages: Vec<String> = (0..=max).map(|i| format!("pkg{i}")).collect();
    let mut args = vec!["candy", "add-rpm", "c"];
    args.extend(packages.iter().map(String::as_str));
    let out = charly(tmp.path(), &args);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(&format!("add at most {max} at a time")), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(tmp.path().join("candy/c/charly.yml")).unwrap(), before);
    args.truncate(3 + max);
    assert!(charly(tmp.path(), &args).status.success());
}

#[test]
fn a_path_with_a_newline_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(charly(tmp.path(), &["box", "new", "project", "."]).status.success());
    let out = charly(tmp.path(), &["box", "write", "new\nline.txt", "--content", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("control character"), "{}", text(&out.stderr));
    assert!(!tmp.path().join("new\nline.txt").exists());
}

/// `charly completions bash` completes every top-level command; every shell gets a script.
#[test]
fn bash_completion_names_every_top_level_command() {
    use clap::CommandFactory as _;
    let tmp = tempfile::tempdir().unwrap();
    let out = charly(tmp.path(), &["completions", "bash"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let script = text(&out.stdout);
    // The words offered after `charly`: the `opts="..."` line of the `charly)` case.
    let case = script.split("\n        charly)\n").nth(1).expect("a case for charly itself");
    let opts = case.lines().find_map(|l| l.trim().strip_prefix("opts=\"")).expect("an opts line");
    let words: Vec<&str> = opts.trim_end_matches('"').split_whitespace().collect();
    for command in charly_cli::cli::Cli::command().get_subcommands() {
        assert!(words.contains(&command.get_name()), "{} is not completed: {words:?}", command.get_name());
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = charly(tmp.path(), &["completions", shell]);
        assert!(out.status.success() && text(&out.stdout).contains("mcp"), "{shell}: {}", text(&out.stderr));
    }
    let out = charly(tmp.path(), &["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("possible values: bash, elvish, fish, powershell, zsh"),
        "{}",
        text(&out.stderr)
    );
}

/// `charly man` is roff that groff renders without a warning, and `man -l` shows as a page
/// with charly's commands; `charly man check mcp` is that subcommand's page.
#[test]
fn the_man_page_renders() {
    let tmp = tempfile::tempdir().unwrap();
    for (args, title) in [(&["man"][..], "charly"), (&["man", "check", "mcp"][..], "charly-check-mcp")] {
        let out = charly(tmp.path(), args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let page = tmp.path().join(format!("{title}.1"));
        std::fs::write(&page, &out.stdout).unwrap();
        let groff = Command::new("groff").args(["-man", "-Tutf8", "-ww", "-z"]).arg(&page).output().unwrap_or_else(|e| {
            panic!("groff is not installed ({e}): run `scripts/runtimes.sh` (Debian packages groff-base, man-db)")
        });
        assert!(groff.status.success() && groff.stderr.is_empty(), "groff: {}", text(&groff.stderr));
        let man = Command::new("man")
            .args(["-l", "-P", "cat"])
            .arg(&page)
            .env("MANWIDTH", "100")
            .env("MAN_KEEP_FORMATTING", "0")
            .output()
            .unwrap_or_else(|e| {
                panic!("man is not installed ({e}): run `scripts/runtimes.sh` (Debian package man-db)")
            });
        // grotty's bold and underline are `c BACKSPACE c` and `_ BACKSPACE c`: keep the last.
        let mut shown = String::new();
        for c in text(&man.stdout).chars() {
            if c == '\u{8}' {
                shown.pop();
            } else {
                shown.push(c);
            }
        }
        assert!(man.status.success(), "man: {}", text(&man.stderr));
        assert!(shown.contains("NAME") && shown.contains(title), "{shown}");
    }
    let shown = text(&charly(tmp.path(), &["man"]).stdout);
    for command in ["completions", "check", "mcp"] {
        assert!(shown.contains(command), "{command}: {shown}");
    }
}

/// `box write --content -` reads the content from stdin: more than a command line holds (the
/// trial's 128 KiB `Argument list too long`), byte for byte. A path ending in `/` names a
/// directory and is refused, where it used to write a file of that name (trial 28, L9).
#[test]
fn box_write_reads_stdin_and_refuses_a_directory_path() {
    use std::io::Write as _;
    let tmp = tempfile::tempdir().unwrap();
    assert!(charly(tmp.path(), &["box", "new", "project", "."]).status.success());
    let big: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    assert!(big.len() > 200 << 10);
    let mut child = Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(["box", "write", "notes/big.txt", "--content", "-"])
        .current_dir(tmp.path())
        .env_remove("CHARLY_PROJECT_DIR")
        .env("HOME", tmp.path().join(".home"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(big.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(tmp.path().join("notes/big.txt")).unwrap(), big);
    let out = charly(tmp.path(), &["box", "write", "notes/sub/", "--content", "x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("it ends with `/`, which names a directory"), "{}", text(&out.stderr));
    assert!(!tmp.path().join("notes/sub").exists());
}

/// `box new project .git` is refused on a terminal too (trial 30, M1: after it, `charly -C .git
/// box write hooks/pre-commit` wrote a hook).
#[test]
fn no_project_is_made_in_a_git_directory() {
    let tmp = tempfile::tempdir().unwrap();
    assert!(Command::new("git").args(["init", "-q"]).current_dir(tmp.path()).status().unwrap().success());
    let out = charly(tmp.path(), &["box", "new", "project", ".git"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("it is inside a git directory"), "{}", text(&out.stderr));
    assert!(!tmp.path().join(".git/charly.yml").exists() && !tmp.path().join(".git/box").exists());
    // Nor the directory that would complete one (`HEAD` and `objects/` are there; trial 31,
    // MED-1), and nothing on its way is left behind.
    std::fs::create_dir_all(tmp.path().join("d/objects")).unwrap();
    std::fs::write(tmp.path().join("d/HEAD"), "ref: refs/heads/main\n").unwrap();
    let out = charly(tmp.path(), &["box", "new", "project", "d/refs/x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("a git directory (HEAD, objects/ and refs/"), "{}", text(&out.stderr));
    assert!(!tmp.path().join("d/refs").exists());
}
