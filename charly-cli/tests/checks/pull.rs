use std::process::Command;

use crate::util::{BUSYBOX, Box};

#[test]
fn box_pull_from_a_local_archive_and_the_registry_that_cannot_be_reached() {
    let base = "localhost/test-chk-pullbase:latest";
    let b = Box::new("test-chk-pull");
    b.cleanup().images(&[base]);
    b.run(&["box", "set", "test-chk-pull.box.base", base]).status(0);

    // A `localhost/` base is a local image: said at once (no https://localhost dialed), with
    // whether it is there, and --from.
    let local = b.run(&["box", "pull", "test-chk-pull"]);
    assert_eq!(local.code, Some(2), "{}", local.dump());
    local.stderr_has(&[
        &format!("box test-chk-pull: its base {base} is a local image"),
        "it is not in local storage",
        "charly box pull test-chk-pull --from oci-archive:FILE",
    ]);
    assert!(
        !local.stderr.contains("https://localhost") && !local.stderr.contains("registry localhost"),
        "{}",
        local.dump()
    );

    let archive = b.proj().join("../base.tar");
    let saved = Command::new("podman")
        .args(["save", "--format", "oci-archive", "-o"])
        .arg(&archive)
        .arg(BUSYBOX)
        .output()
        .unwrap();
    assert!(saved.status.success(), "{}", String::from_utf8_lossy(&saved.stderr));
    let from = format!("oci-archive:{}", archive.display());
    let pulled = b.run(&["box", "pull", "test-chk-pull", "--from", &from, "--json"]);
    pulled.status(0);
    let json = pulled.json();
    assert_eq!(json["base"], base);
    assert!(json.get("previous_image_id").is_none(), "{json}");
    assert_eq!(json["changed"], true);
    assert!(Command::new("podman").args(["image", "exists", base]).status().unwrap().success());
    // Again from the local storage: the same image, unchanged.
    let again = b.run(&[
        "box",
        "pull",
        "test-chk-pull",
        "--from",
        &format!("containers-storage:{BUSYBOX}"),
        "--json",
    ]);
    again.status(0);
    assert_eq!(again.json()["changed"], false, "{}", again.dump());
    // And the box builds on it.
    b.run(&["box", "build", "test-chk-pull"]).status(0);
    // There now: said so, with its id.
    let id = json["image_id"].as_str().unwrap();
    let local = b.run(&["box", "pull", "test-chk-pull"]);
    assert_eq!(local.code, Some(2), "{}", local.dump());
    local.stderr_has(&[
        &format!("it is in local storage (image {id}), nothing to pull"),
        "--from oci-archive:FILE",
    ]);

    // A registry that cannot be reached (nothing listens on 127.0.0.1:1): named, with the fix.
    b.run(&["box", "set", "test-chk-pull.box.base", "127.0.0.1:1/test-chk-pullbase:latest"]).status(0);
    let offline = b.run(&["box", "pull", "test-chk-pull"]);
    assert_eq!(offline.code, Some(2), "{}", offline.dump());
    offline.stderr_has(&["registry 127.0.0.1:1 cannot be reached", "--from oci-archive:FILE"]);

    let bad = b.run(&["box", "pull", "test-chk-pull", "--from", "https://example.com/x.tar"]);
    assert_eq!(bad.code, Some(2), "{}", bad.dump());
    bad.stderr_has(&["--from", "oci-archive:, docker-archive:, containers-storage:, dir:"]);
}
