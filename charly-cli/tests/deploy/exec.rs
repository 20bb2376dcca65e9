use charly_cli::cli::Cli;
use charly_cli::{Ctx, commands};
use clap::Parser as _;
use tokio_util::sync::CancellationToken;

use crate::util::Box;

/// `argv` as an MCP call runs it: in-process, served scope.
fn served(b: &Box, argv: &[&str]) -> Result<charly_cli::report::Reply, String> {
    let cli = Cli::try_parse_from(std::iter::once("charly").chain(argv.iter().copied()))
        .map_err(|e| e.to_string())?;
    let ctx = Ctx::served(b.proj(), CancellationToken::new(), None);
    commands::run(&cli, &ctx).map_err(|e| e.to_string())
}

#[test]
fn cmd_returns_output_and_exit_status() {
    let b = Box::built("test-cmd");
    b.run(&["start", "test-cmd"]).status(0);
    let ok = b.run(&["cmd", "test-cmd", "--env", "X=1", "echo out $X; echo err >&2"]);
    ok.status(0);
    assert_eq!(ok.stdout, "out 1\nerr\n");
    // The command's own status is charly's (trial 29, M4: an alias wrapper turned 7 into 1).
    let failed = b.run(&["cmd", "test-cmd", "exit 3", "--json"]);
    failed.status(3);
    assert_eq!(failed.json()["exit_status"], 3);
    assert_eq!(failed.stderr, "charly: the command exited with status 3\n");

    // As a tool: the same report, isError for the failing status.
    let reply = served(&b, &["cmd", "test-cmd", "echo tool"]).unwrap();
    assert_eq!(reply.json["stdout"], "tool\n");
    let reply = served(&b, &["cmd", "test-cmd", "exit 4"]).unwrap();
    assert_eq!(reply.failure.as_deref(), Some("the command exited with status 4"));
}

#[test]
fn shell_runs_in_the_container_or_a_disposable_one_and_never_waits_on_a_tty() {
    let b = Box::built("test-shell");
    // Not running: a disposable container of the box's image.
    let disposable = b.run(&["shell", "test-shell", "--command", "echo $0 in disposable", "--json"]);
    disposable.status(0);
    assert_eq!(disposable.json()["disposable"], true);
    assert_eq!(disposable.json()["stdout"], "/bin/sh in disposable\n");
    assert!(!crate::util::container_exists("charly-test-shell"));

    b.run(&["start", "test-shell"]).status(0);
    b.run(&["cmd", "test-shell", "touch /tmp/mark"]).status(0);
    let inside = b.run(&["shell", "test-shell", "-c", "ls /tmp/mark", "--json"]);
    inside.status(0);
    assert_eq!(inside.json()["disposable"], false);
    assert_eq!(inside.json()["stdout"], "/tmp/mark\n");
    b.run(&["shell", "test-shell", "-c", "exit 7"]).status(7);

    // No command: as a tool an error naming the argument; on a terminal without a TTY too.
    let err = served(&b, &["shell", "test-shell"]).unwrap_err();
    assert!(err.contains("give `command`") && err.contains("never waits on a terminal"), "{err}");
    b.run(&["shell", "test-shell"]).status(2).stderr_has(&["give `command`", "stdin is not a terminal"]);
    let err = served(&b, &["logs", "test-shell", "--follow"]).unwrap_err();
    assert!(err.contains("`follow` streams to a terminal"), "{err}");
    let reply = served(&b, &["logs", "test-shell"]).unwrap();
    assert_eq!(reply.json["followed"], false);
}

#[test]
fn as_a_tool_a_bind_path_stays_inside_the_project() {
    let b = Box::built("test-bindtool");
    let err = served(&b, &["start", "test-bindtool", "--bind", "/etc:/x"]).unwrap_err();
    assert!(err.starts_with("--bind \"/etc:/x\": "), "{err}");
    assert!(!crate::util::container_exists("charly-test-bindtool"));
    std::fs::create_dir_all(b.proj().join("site")).unwrap();
    std::fs::write(b.proj().join("site/index.html"), "bound\n").unwrap();
    let reply = served(&b, &["start", "test-bindtool", "--bind", "site:/www:ro"]).unwrap();
    assert_eq!(reply.json["container"], "charly-test-bindtool");
    let cat = served(&b, &["cmd", "test-bindtool", "cat /www/index.html"]).unwrap();
    assert_eq!(cat.json["stdout"], "bound\n");
}
