//! LOW findings of issue 14's first trial: a build leaves no dangling image of the box behind
//! (`box merge` and `box pull` of a `localhost/` base are in the `checks` tests).

use std::process::Command;

use crate::util::{Box, podman};

fn image_id(image: &str) -> String {
    podman(&["image", "inspect", "--format", "{{.Id}}", image]).trim().to_owned()
}

fn image_exists(id: &str) -> bool {
    Command::new("podman").args(["image", "exists", id]).status().unwrap().success()
}

/// A second build replaces the first image: the first one, untagged, is removed with the
/// build (by the box's label), not left as a `<none>` image until an `update`.
#[test]
fn box_build_removes_the_dangling_image_of_the_earlier_build() {
    let name = "test-i14l-prune";
    let b = Box::built(name);
    let first = image_id(&format!("localhost/{name}:latest"));
    b.candy(name, "extra", "extra:\n  candy: {}\nextra-env:\n  env: [EXTRA=1]\n");
    let run = b.run(&["box", "build", name, "--json"]);
    run.status(0);
    let second = image_id(&format!("localhost/{name}:latest"));
    assert_ne!(first, second, "the candy changed nothing in the image");
    assert!(!image_exists(&first), "the earlier build {first} is left behind:\n{}", run.dump());
    // The report names it (with its build cache, the earlier build's own intermediate images).
    let pruned = run.json()["pruned_images"].clone();
    assert!(pruned.as_array().unwrap().contains(&serde_json::json!(&first[..12])), "{}", run.dump());
    let text = b.run(&["box", "build", name]);
    text.status(0);
    // Nothing left to prune: no line about it.
    assert!(!text.stdout.contains("dangling"), "{}", text.dump());
}

/// A box that is neither the project's nor has a container is named as such by the lifecycle
/// leaves, with the project's boxes, not told to start (this stop's trial, MED-1: `stop` of
/// an unknown box said "start it").
#[test]
fn lifecycle_leaves_name_a_box_that_is_not_the_projects() {
    let b = Box::new("test-i14l-known");
    for leaf in [&["stop", "nosuch-i14l"][..], &["logs", "nosuch-i14l"], &["cmd", "nosuch-i14l", "true"]] {
        let r = b.run(leaf);
        r.status(2).stderr_has(&["box nosuch-i14l is not a box of this project", "test-i14l-known"]);
        assert!(!r.stderr.contains("start it"), "{}", r.dump());
    }
}
