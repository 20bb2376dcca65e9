use crate::util::{BUSYBOX, Box, podman};

/// Four small layers over the busybox base: a file rewritten twice, a file deleted (a
/// whiteout) and a base-layer file deleted, a directory of the group and one of the base
/// replaced (opaque directories: `rm -rf` then `mkdir` under overlay).
const LAYERED: &str = "LABEL ai.opencharly.box=test-chk-merge
RUN mkdir -p /m/opq && echo one > /m/a && echo keep > /m/gone && echo old > /m/opq/old
RUN echo two > /m/a && rm /m/gone /bin/vi
RUN rm -rf /m/opq /www && mkdir /m/opq /www && echo new > /m/opq/new && echo new > /www/new
RUN echo three > /m/b && echo three > /m/a
";

/// What the filesystem must look like, before and after any merge.
const SEEN: &str = "a=three\nb=three\nopq=new\nwww=new\n";

const PROBE: &str = "echo a=$(cat /m/a); echo b=$(cat /m/b); echo opq=$(ls -A /m/opq); echo www=$(ls -A /www); \
                     test -e /m/gone && echo gone-is-there; test -e /bin/vi && echo vi-is-there; true";

fn layers(image: &str) -> usize {
    podman(&["image", "inspect", "--format", "{{len .RootFS.Layers}}", image]).trim().parse().unwrap()
}

fn id(image: &str) -> String {
    podman(&["image", "inspect", "--format", "{{.Id}}", image]).trim().to_owned()
}

fn seen(image: &str) -> String {
    podman(&["run", "--rm", image, "sh", "-c", PROBE])
}

#[test]
fn merge_keeps_the_filesystem_with_fewer_layers() {
    let name = "test-chk-merge";
    let image = "localhost/test-chk-merge:latest";
    let b = Box::new(name);
    // Never built: a clear error, naming the box and the fix.
    let unbuilt = b.run(&["box", "merge", name]);
    assert_eq!(unbuilt.code, Some(2), "{}", unbuilt.dump());
    unbuilt.stderr_has(&["box test-chk-merge", "is not in local storage", "charly box build test-chk-merge"]);

    let dir = tempfile::tempdir().unwrap();
    // An earlier build of the box, untagged by the next one: a dangling image of the box that
    // the merge removes.
    let older = format!("FROM {BUSYBOX}\nLABEL ai.opencharly.box={name}\nRUN echo older > /older\n");
    std::fs::write(dir.path().join("Containerfile"), older).unwrap();
    podman(&["build", "-q", "-t", image, dir.path().to_str().unwrap()]);
    let older = id(image);
    std::fs::write(dir.path().join("Containerfile"), format!("FROM {BUSYBOX}\n{LAYERED}")).unwrap();
    podman(&["build", "-q", "-t", image, dir.path().to_str().unwrap()]);
    assert_eq!(layers(image), 5);
    assert_eq!(seen(image), SEEN);
    let built = id(image);

    // Bad input changes nothing.
    let zero = b.run(&["box", "merge", name, "--max-mb", "0"]);
    assert_eq!(zero.code, Some(2), "{}", zero.dump());
    zero.stderr_has(&["--max-mb", "at least 1"]);
    let tag = b.run(&["box", "merge", name, "--tag=-bad"]);
    assert_eq!(tag.code, Some(2), "{}", tag.dump());
    tag.stderr_has(&["--tag", "\"-bad\""]);
    let neither = b.run(&["box", "merge"]);
    assert_eq!(neither.code, Some(2), "{}", neither.dump());
    let unknown = b.run(&["box", "merge", "test-chk-nobox"]);
    assert_eq!(unknown.code, Some(2), "{}", unknown.dump());
    unknown.stderr_has(&["test-chk-nobox"]);

    // The plan only: the base layer (2 MB) alone, the four small ones in one group.
    let dry = b.run(&["box", "merge", name, "--max-mb", "1", "--dry-run", "--json"]);
    dry.status(0);
    let plan = &dry.json()["boxes"][0];
    assert_eq!(
        (plan["layers_before"].as_u64(), plan["layers_after"].as_u64()),
        (Some(5), Some(2)),
        "{}",
        dry.dump()
    );
    assert_eq!(plan["groups"][1]["first"], 1);
    assert_eq!(plan["groups"][1]["last"], 4);
    assert_eq!(plan["dry_run"], true);
    assert_eq!(id(image), built, "--dry-run changed the image");
    let text = b.run(&["box", "merge", name, "--max-mb", "1", "--dry-run"]);
    text.status(0);
    assert!(text.stdout.contains("[keep]") && text.stdout.contains("> merge ("), "{}", text.dump());
    assert!(text.stdout.ends_with("5 layers -> 2 layers (dry run: nothing changed)\n"), "{}", text.dump());

    // Merged over a kept base: the whiteouts and opaque dirs must hide the base's files.
    let merged = b.run(&["box", "merge", name, "--max-mb", "1", "--json"]);
    merged.status(0);
    let report = &merged.json()["boxes"][0];
    assert_eq!(report["layers_after"], 2, "{}", merged.dump());
    assert_eq!(layers(image), 2);
    assert_ne!(id(image), built);
    assert_eq!(report["image_id"].as_str().unwrap(), &id(image)[..12]);
    // The image the reference named before is not left behind, untagged.
    assert_eq!(report["previous_removed"], true, "{}", merged.dump());
    let gone = std::process::Command::new("podman").args(["image", "exists", &built]).status().unwrap();
    assert!(!gone.success(), "the earlier image {built} is still there");
    // Nor is an earlier build's dangling image of the box (before, only `update` pruned them).
    assert!(
        report["pruned_images"].as_array().unwrap().contains(&serde_json::json!(&older[..12])),
        "{}",
        merged.dump()
    );
    let gone = std::process::Command::new("podman").args(["image", "exists", &older]).status().unwrap();
    assert!(!gone.success(), "the earlier build {older} is still there");
    assert_eq!(seen(image), SEEN, "the merged image is another filesystem");
    let history = podman(&["history", "--format", "{{.CreatedBy}}", image]);
    assert!(history.contains("rm -rf /m/opq"), "{history}");

    // Everything into one layer (the default limit): the same filesystem again. A container
    // of the earlier image keeps it, and the report says why.
    let user = format!("{name}-user");
    b.cleanup().containers(&[&user]);
    let before = id(image);
    podman(&["create", "--name", &user, image, "true"]);
    let all = b.run(&["box", "merge", name]);
    all.status(0);
    assert!(all.stdout.contains("merged: 2 layers -> 1 layers"), "{}", all.dump());
    assert!(all.stdout.contains(&format!("kept the earlier image {}", &before[..12])), "{}", all.dump());
    podman(&["rm", &user]);
    podman(&["rmi", &before]);
    assert_eq!(layers(image), 1);
    assert_eq!(seen(image), SEEN);
    // Nothing left to merge: said so, the image unchanged.
    let one = id(image);
    let again = b.run(&["box", "merge", name, "--json"]);
    again.status(0);
    assert_eq!(again.json()["boxes"][0]["skipped"], "no layers to merge", "{}", again.dump());
    assert_eq!(id(image), one);
}

#[test]
fn merge_all_takes_the_boxes_that_ask_for_it() {
    let name = "test-chk-merge-all";
    let image = "localhost/test-chk-merge-all:latest";
    let b = Box::new(name);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Containerfile"),
        format!("FROM {BUSYBOX}\nLABEL ai.opencharly.box={name}\nRUN echo 1 > /one\nRUN echo 2 > /two\n"),
    )
    .unwrap();
    podman(&["build", "-q", "-t", image, dir.path().to_str().unwrap()]);
    let none = b.run(&["box", "merge", "--all"]);
    none.status(0);
    none.stderr_has(&["merge: {auto: true}"]);
    assert_eq!(layers(image), 3);
    b.run(&["box", "set", &format!("{name}.box.merge"), "{auto: true, max_mb: 1}"]).status(0);
    b.run(&["box", "validate"]).status(0);
    let run = b.run(&["box", "merge", "--all", "--json"]);
    run.status(0);
    let report = &run.json()["boxes"][0];
    assert_eq!(
        (report["max_mb"].as_u64(), report["layers_after"].as_u64()),
        (Some(1), Some(2)),
        "{}",
        run.dump()
    );
    assert_eq!(layers(image), 2);
    assert_eq!(podman(&["run", "--rm", image, "cat", "/one", "/two"]), "1\n2\n");
    // A bad limit is a problem `box validate` names, so the edit is refused before it lands.
    let refused = b.run(&["box", "set", &format!("{name}.box.merge"), "{max_mb: -1}"]);
    refused.status(2);
    refused.stderr_has(&["would add 1 problem(s)", "`box.merge.max_mb` is -1"]);
    b.run(&["box", "validate"]).status(0);
}
