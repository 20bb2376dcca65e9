//! Item 7: a cancelled edit does not land. Project changes ask their `Cancel` before the rename
//! that makes the new file visible (and while they wait for the edit lock); a served call's
//! `Cancel` is its cancellation token, fired by `notifications/cancelled`.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use charly_cli::project::{Cancel, Project, ProjectError};
use serde_json::{Value, json};

use crate::util::{StdioServer, text_of};

/// A `Cancel` that lets the first `passes` questions through and then says "cancelled"; the
/// counter tells how often it was asked.
fn cancel_after(passes: usize) -> (Cancel, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&asked);
    (Cancel::when(move || counter.fetch_add(1, Ordering::SeqCst) >= passes), asked)
}

/// Every kind of change, cancelled at its last question (the point of no return, after the new
/// contents are written and flushed), leaves the project as it was and says it was cancelled.
#[test]
fn a_change_cancelled_at_its_point_of_no_return_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(dir.path()).unwrap();
    let listing = || {
        let mut all = Vec::new();
        let mut stack = vec![dir.path().to_owned()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p.clone());
                }
                let text = std::fs::read(&p).unwrap_or_default();
                all.push((p, text));
            }
        }
        all.sort();
        all
    };
    let before = listing();
    type Change = fn(&Project) -> Result<String, ProjectError>;
    let changes: [(&str, Change); 5] = [
        ("box.set", |p| p.set("project.defaults.tag", "v2").map(|r| r.to_string())),
        ("box.write", |p| p.write(Path::new("box/new/file"), "x").map(|r| r.to_string())),
        ("box.new.candy", |p| p.new_candy("fresh").map(|r| r.to_string())),
        ("box.generate", |p| p.generate("hello").map(|r| r.to_string())),
        ("candy.add-rpm", |p| {
            p.add_packages("hello-svc", charly_cli::project::PackageSection::Rpm, &["curl".into()])
                .map(|r| r.to_string())
        }),
    ];
    for (name, change) in changes {
        // Asked once when the lock is taken, once before the rename: the second one says yes.
        let (cancel, asked) = cancel_after(1);
        let project = Project::at(dir.path()).with_cancel(cancel);
        let err = change(&project).expect_err(name);
        assert!(matches!(err, ProjectError::Cancelled { .. }), "{name}: {err}");
        assert!(err.to_string().starts_with("cancelled before "), "{name}: {err}");
        assert_eq!(asked.load(Ordering::SeqCst), 2, "{name}: not cancelled at its last question");
        // Directories made on the way (box/new, .build/hello, candy/fresh) may stay; no file
        // was written or changed, and no temporary file is left.
        let after: Vec<_> = listing().into_iter().filter(|(p, _)| !p.is_dir()).collect();
        let files: Vec<_> = before.iter().filter(|(p, _)| !p.is_dir()).cloned().collect();
        assert_eq!(after, files, "{name} changed files");
    }
    // Not cancelled: the same change lands.
    let (cancel, _) = cancel_after(usize::MAX);
    Project::at(dir.path()).with_cancel(cancel).set("project.defaults.tag", "v2").unwrap();
}

/// A `charly.yml` big enough that one `box.set` takes well over a second in yaml-edit.
pub(crate) fn big_project(root: &Path) -> String {
    let mut text = String::from(charly_cli::project::SAMPLE_FILES[0].1);
    for i in 0..1_500 {
        text.push_str(&format!("filler-{i}:\n  check: filler {i}\n  mcp: ping\n  context: [deploy]\n"));
    }
    std::fs::write(root.join("charly.yml"), &text).unwrap();
    text
}

fn cancelled(server: &mut StdioServer, id: u64) {
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the test cancels it"}}));
}

/// Waits for the response to `id`, which may not come (a cancelled request need not be
/// answered); when it does, it must say the call was cancelled.
fn cancelled_response(server: &mut StdioServer, id: u64) -> Option<Value> {
    let response = server.try_response(id, Duration::from_secs(10))?;
    let said = format!("{} {}", response["error"], text_of(&response["result"]));
    assert!(said.to_lowercase().contains("cancel"), "the response to a cancelled call: {response}");
    Some(response)
}

/// Sends a second edit of the same file and waits for it: it queues behind the cancelled one
/// (same edit lock), so when it is answered the cancelled call's thread has finished.
fn edit_after(server: &mut StdioServer, id: u64) {
    server.call(id, "box.set", json!({"path": "project.defaults.after", "value": "yes"}));
    let response = server.response(id, Duration::from_secs(300));
    assert_ne!(response["result"]["isError"], true, "{response}");
}

/// The text `root`'s charly.yml has after [`edit_after`]'s edit alone, made on a copy; and how
/// long that edit took.
fn expected_after(root: &Path) -> (String, Duration) {
    let copy = tempfile::tempdir().unwrap();
    std::fs::write(copy.path().join("charly.yml"), std::fs::read(root.join("charly.yml")).unwrap()).unwrap();
    let started = Instant::now();
    Project::at(copy.path()).set("project.defaults.after", "yes").unwrap();
    let took = started.elapsed();
    (std::fs::read_to_string(copy.path().join("charly.yml")).unwrap(), took)
}

/// `box.set` over MCP on a large file, cancelled with `notifications/cancelled` while yaml-edit
/// is still at work: the file is unchanged (a later edit of the same file lands alone).
#[test]
fn a_box_set_cancelled_over_mcp_mid_edit_does_not_land() {
    let dir = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(dir.path()).unwrap();
    big_project(dir.path());
    // The cancel must come well within one edit.
    let (expected, took) = expected_after(dir.path());
    assert!(took > Duration::from_millis(200), "one edit takes {took:?}: make big_project bigger");
    // A quarter of the way into the edit (the cancelled call also waits behind no lock).
    let delay = took / 4;

    let mut server = StdioServer::start(dir.path());
    server.call(1, "box.set", json!({"path": "project.defaults.cancelled", "value": "yes"}));
    std::thread::sleep(delay);
    cancelled(&mut server, 1);
    let answered = cancelled_response(&mut server, 1);
    edit_after(&mut server, 2);
    let text = std::fs::read_to_string(dir.path().join("charly.yml")).unwrap();
    assert!(!text.contains("cancelled: yes"), "the cancelled box.set landed");
    assert!(text == expected, "more than the later edit changed charly.yml");
    eprintln!("one edit: {took:?}; cancelled after {delay:?}; answered: {}", answered.is_some());
}

/// `box.set` over MCP waiting for the edit lock (another process holds the directory's
/// `flock`), cancelled: it stops waiting at once and never edits, even after the lock is free.
#[test]
fn a_box_set_cancelled_while_waiting_for_the_lock_does_not_land() {
    let dir = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(dir.path()).unwrap();
    let (expected, _) = expected_after(dir.path());
    // The test holds the directory's flock itself, as another charly process editing there would.
    let holder = std::fs::File::open(dir.path()).unwrap();
    holder.lock().unwrap();

    let mut server = StdioServer::start(dir.path());
    server.call(1, "box.set", json!({"path": "project.defaults.cancelled", "value": "yes"}));
    std::thread::sleep(Duration::from_millis(300));
    cancelled(&mut server, 1);
    let answered = cancelled_response(&mut server, 1);
    // The waiting call has given up: the lock is let go, and nothing lands.
    drop(holder);
    edit_after(&mut server, 2);
    let text = std::fs::read_to_string(dir.path().join("charly.yml")).unwrap();
    assert!(!text.contains("cancelled: yes"), "the cancelled box.set landed after the lock was released");
    assert_eq!(text, expected, "more than the later edit changed charly.yml");
    eprintln!("answered: {}", answered.is_some());
}

/// Through the command layer, as `charly mcp serve` runs a call: a served run whose token is
/// cancelled returns `CommandError::Cancelled` ("cancelled; nothing was changed") for every
/// editing leaf, and the files are as they were.
#[test]
fn a_cancelled_served_run_says_so_and_changes_nothing() {
    use clap::Parser as _;
    let dir = tempfile::tempdir().unwrap();
    charly_cli::project::write_sample(dir.path()).unwrap();
    let before = std::fs::read_to_string(dir.path().join("charly.yml")).unwrap();
    let token = tokio_util::sync::CancellationToken::new();
    token.cancel();
    let ctx = charly_cli::context::Ctx::served(dir.path().to_owned(), token, None);
    for argv in [
        &["box", "set", "project.defaults.tag", "v2"][..],
        &["box", "new", "box", "web", "--base", "quay.io/fedora/fedora:43"],
        &["box", "write", "notes.txt", "--content", "x"],
        &["candy", "add-rpm", "hello-svc", "curl"],
    ] {
        let cli = charly_cli::cli::Cli::try_parse_from(std::iter::once("charly").chain(argv.iter().copied()))
            .unwrap();
        let err = charly_cli::commands::run(&cli, &ctx).expect_err("a cancelled run fails");
        assert!(matches!(err, charly_cli::error::CommandError::Cancelled), "{argv:?}: {err}");
        assert_eq!(err.to_string(), "cancelled; nothing was changed");
    }
    assert_eq!(std::fs::read_to_string(dir.path().join("charly.yml")).unwrap(), before);
    assert!(!dir.path().join("notes.txt").exists());
}
