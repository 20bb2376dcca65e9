//! Hooks within a time limit: a `pre_remove` hook that never returns is stopped in the
//! container after `--hook-timeout` and the removal refused (nothing removed), `--no-hooks`
//! removes without it; a `post_enable` hook that never returns undoes the start; hooks of a
//! stopped container are said to be skipped.

use std::time::Duration;

use super::stopping::{runs_in, wait_runs_in};
use crate::util::{Box, container_exists};

#[test]
fn a_pre_remove_hook_that_hangs_is_stopped_and_nothing_is_removed() {
    let name = "test-dx-hkrm";
    let container = format!("charly-{name}");
    let b = Box::new(name);
    b.candy(name, "hk", "hk:\n  candy: {}\nhk-hook:\n  hook: {pre_remove: 'sleep 300'}\n");
    b.run(&["box", "build", name]).status(0);
    b.run(&["start", name]).status(0);
    let r = b.run(&["remove", name, "--hook-timeout", "2", "-t", "1"]);
    r.status(2).stderr_has(&[
        &format!(
            "box {name}: the pre_remove hook `sleep 300` did not finish within 2 s in container {container}"
        ),
        "it was stopped there, and nothing was removed",
        "--hook-timeout SECS",
        &format!("`charly remove {name} --no-hooks`"),
    ]);
    assert!(r.took < Duration::from_secs(20), "{}", r.dump());
    assert!(container_exists(&container), "{}", r.dump());
    wait_runs_in(&container, "sleep 300", false);
    // As printed: without the hook.
    let removed = b.run(&["remove", name, "--no-hooks", "-t", "1"]);
    removed.status(0);
    assert!(removed.stdout.contains("pre_remove hooks not run: --no-hooks"), "{}", removed.dump());
    assert!(!container_exists(&container));

    // A stopped container's hooks cannot run: the report says so.
    b.run(&["start", name]).status(0);
    b.run(&["stop", name, "-t", "1"]).status(0);
    let removed = b.run(&["remove", name, "--json"]).status(0).json();
    let why = removed["pre_remove_skipped"].as_str().unwrap_or_default().to_owned();
    assert!(why.starts_with(&format!("container {container} is exited (")), "{removed}");
    assert!(why.ends_with("and hooks run in a running container"), "{removed}");
}

#[test]
fn a_post_enable_hook_that_hangs_undoes_the_start() {
    let name = "test-dx-hken";
    let container = format!("charly-{name}");
    let b = Box::new(name);
    b.candy(name, "hk", "hk:\n  candy: {}\nhk-hook:\n  hook: {post_enable: 'sleep 300'}\n");
    b.run(&["box", "build", name]).status(0);
    let r = b.run(&["start", name, "--hook-timeout", "2"]);
    r.status(2).stderr_has(&[
        &format!(
            "box {name}: the post_enable hook `sleep 300` did not finish within 2 s in container {container}"
        ),
        "the container was removed: nothing was started",
    ]);
    assert!(r.took < Duration::from_secs(20), "{}", r.dump());
    assert!(!container_exists(&container), "{}", r.dump());
    assert!(!runs_in(&container, "sleep 300"));
}
