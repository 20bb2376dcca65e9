//! Data seeding lands once, over what the image has at the volume's path (podman's copy-up
//! filled the empty volume first and the seed was skipped), and `post_enable` runs when a start
//! makes the container, not at every restart.

use crate::util::{Box, free_port, http_get};

#[test]
fn the_seed_wins_over_the_images_file_once_and_post_enable_runs_once() {
    let name = "test-dx-seed";
    let b = Box::new(name);
    b.cleanup().volumes(&[&format!("charly-{name}-www")]);
    // The busybox base image has /www/index.html ("hello from busybox httpd"): the seed's
    // index.html must win over it.
    let seed = b.proj().join("candy/site/seed");
    std::fs::create_dir_all(&seed).unwrap();
    std::fs::write(seed.join("index.html"), "<h1>seeded by charly</h1>\n").unwrap();
    b.candy(
        name,
        "site",
        "site:\n  candy: {}\nsite-vol:\n  volume: [{name: www, path: /www}]\n\
         site-data:\n  data: [{volume: www, source: seed, dest: \"\"}]\n\
         site-hook:\n  hook: {post_enable: 'echo enabled >> /www/enabled'}\n",
    );
    b.run(&["box", "build", name]).status(0);
    let port = free_port();
    let publish = format!("{port}:80");
    let args = ["start", name, "-p", &publish, "--json", "--", "httpd", "-f", "-p", "80", "-h", "/www"];
    let started = b.run(&args).status(0).json();
    assert_eq!(started["seeded"], serde_json::json!(["www"]), "{started}");
    assert!(http_get(port).contains("seeded by charly"), "the image's index.html won");
    // The image's other files at the path are there too, as podman's copy-up gives them.
    let listed = b.run(&["cmd", name, "ls /www"]).status(0).stdout.clone();
    assert!(listed.contains("index.html") && listed.contains("enabled"), "{listed}");
    // A restart: nothing seeded again (the volume holds data), post_enable not run again.
    b.run(&["cmd", name, "echo changed > /www/index.html"]).status(0);
    b.run(&["stop", name, "-t", "1"]).status(0);
    let again = b.run(&args).status(0).json();
    assert_eq!(again["seeded"], serde_json::json!([]), "{again}");
    assert!(again["post_enable_skipped"].as_str().unwrap_or_default().contains("restart"), "{again}");
    assert!(http_get(port).contains("changed"));
    assert_eq!(b.run(&["cmd", name, "cat /www/enabled"]).status(0).stdout, "enabled\n");
    // Removed (its volume kept) and started: a new container, enabled again; the volume's data
    // stays (nothing seeded over it).
    b.run(&["remove", name, "-t", "1"]).status(0);
    let fresh = b.run(&args).status(0).json();
    assert_eq!(fresh["seeded"], serde_json::json!([]), "{fresh}");
    assert_eq!(b.run(&["cmd", name, "cat /www/enabled"]).status(0).stdout, "enabled\nenabled\n");
    b.run(&["remove", name, "-t", "1", "--purge"]).status(0);
}
