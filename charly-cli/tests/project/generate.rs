use std::ffi::OsStr;

use charly_cli::project::{Family, PackageSection};
use serde_json::json;

use crate::util::{Fixture, err_text};

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({snapshot_path => concat!(env!("CARGO_MANIFEST_DIR"), "/../snapshots"), prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn sample_containerfile() {
    let f = Fixture::sample();
    let generated = f.project.generate("hello").unwrap();
    assert_eq!(generated.containerfile, std::path::Path::new(".build/hello/Containerfile"));
    assert_eq!(generated.to_string(), "wrote .build/hello/Containerfile\n");
    snapshot("containerfile_sample_fedora", &f.read(".build/hello/Containerfile"));
}

#[test]
fn debian_containerfile_with_two_candies() {
    let f = Fixture::sample();
    let p = &f.project;
    p.new_box("deb", "docker.io/library/debian:13").unwrap();
    p.new_candy("tools").unwrap();
    p.add_packages("tools", PackageSection::Deb, &["curl".into(), "git".into()]).unwrap();
    p.add_packages("hello-svc", PackageSection::Deb, &["openssh-server".into(), "curl".into()]).unwrap();
    p.add_candy("deb", "hello-svc").unwrap();
    p.add_candy("deb", "tools").unwrap();
    p.generate("deb").unwrap();
    snapshot("containerfile_debian", &f.read(".build/deb/Containerfile"));
}

#[test]
fn arch_containerfile_with_aur() {
    let f = Fixture::sample();
    let p = &f.project;
    p.new_box("arch", "docker.io/library/archlinux:latest").unwrap();
    p.add_packages("hello-svc", PackageSection::Pac, &["openssh".into()]).unwrap();
    p.add_packages("hello-svc", PackageSection::Aur, &["yay-bin".into()]).unwrap();
    p.add_candy("arch", "hello-svc").unwrap();
    p.generate("arch").unwrap();
    snapshot("containerfile_arch", &f.read(".build/arch/Containerfile"));
}

#[test]
fn unknown_distro_is_an_error_only_with_packages() {
    let f = Fixture::sample();
    let p = &f.project;
    p.new_box("alp", "docker.io/library/alpine:3").unwrap();
    p.generate("alp").unwrap();
    p.add_candy("alp", "hello-svc").unwrap();
    let err = err_text(p.generate("alp"));
    assert!(
        err.starts_with("box `alp`: cannot tell the distribution of base image `docker.io/library/alpine:3`"),
        "{err}"
    );
    p.set("alp.box.distro", "fedora").unwrap();
    p.generate("alp").unwrap();
}

#[test]
fn family_detection() {
    for (base, family) in [
        ("quay.io/fedora/fedora:43", Some(Family::Fedora)),
        ("registry.access.redhat.com/ubi9/ubi-minimal", Some(Family::Fedora)),
        ("docker.io/library/ubuntu:24.04", Some(Family::Debian)),
        ("debian@sha256:abc", Some(Family::Debian)),
        ("localhost:5000/archlinux", Some(Family::Arch)),
        ("docker.io/library/alpine:3", None),
    ] {
        assert_eq!(Family::detect(base, None), family, "{base}");
    }
}

#[test]
fn inspect_resolves_the_box() {
    let f = Fixture::sample();
    let value = serde_json::to_value(f.project.inspect("hello").unwrap()).unwrap();
    assert_eq!(
        value,
        json!({
            "name": "hello",
            "base": "quay.io/fedora/fedora:43",
            "distro": "fedora",
            "candies": [{
                "name": "hello-svc",
                "description": "a tiny service",
                "packages": {"rpm": ["openssh-server"], "deb": [], "pac": [], "aur": []},
                "ports": [18765],
                "mcp_provide": [{"name": "hello", "url": "http://{{.ContainerName}}:18765/mcp", "transport": "http"}],
                "checks": ["hello-svc-ping"],
            }],
            "packages": {"rpm": ["openssh-server"]},
            "ports": [18765],
            "mcp_provide": [{"name": "hello", "url": "http://{{.ContainerName}}:18765/mcp", "transport": "http"}],
            "containerfile": ".build/hello/Containerfile",
            "image": "ghcr.io/example/hello:latest",
        })
    );
    let err = err_text(f.project.inspect("nope"));
    assert_eq!(err, "no box named `nope` in charly.yml (boxes: hello)");
}

#[test]
fn build_without_podman_is_a_clear_error() {
    let f = Fixture::sample();
    let err = err_text(f.project.build_with(OsStr::new("/nonexistent/podman"), "hello"));
    assert!(
        err.starts_with("`/nonexistent/podman` is needed to build container images but could not be run: "),
        "{err}"
    );
    assert!(err.ends_with("; install it or put it on PATH"), "{err}");
}

#[cfg(unix)]
#[test]
fn build_runs_podman_build_on_the_generated_file() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::sample();
    let fake = f.path("fake-podman");
    std::fs::write(&fake, "#!/bin/sh\necho \"podman $*\"\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let built = f.project.build_with(fake.as_os_str(), "hello").unwrap();
    assert_eq!(built.image, "ghcr.io/example/hello:latest");
    let root = f.root().display();
    assert_eq!(
        built.to_string(),
        format!(
            "wrote .build/hello/Containerfile\npodman build --file {root}/.build/hello/Containerfile --tag ghcr.io/example/hello:latest {root}\nbuilt ghcr.io/example/hello:latest\n"
        )
    );
}

/// A candy's `file:` nodes: each entry a `COPY` from the candy's directory (the build context
/// is the project root) after the packages; a source that is not in the candy's directory,
/// and a `file:` node outside a candy's file, are problems, and generate refuses the box.
#[test]
fn candy_files_are_copied_from_the_candys_directory_after_the_packages() {
    let f = Fixture::with(&[
        (
            "charly.yml",
            "project: {version: 1}\ndesk:\n  box:\n    base: docker.io/library/debian:13\n    candy: [overlay, conf]\n",
        ),
        (
            "candy/overlay/charly.yml",
            "overlay:\n  candy:\n    distro:\n      \"debian,ubuntu\": {package: [fonts-dejavu-core]}\n\
             overlay-bin:\n  file: [{source: charly-overlay, dest: /usr/local/bin/charly-overlay, mode: \"0755\"}]\n",
        ),
        ("candy/overlay/charly-overlay", "#!/bin/sh\n"),
        (
            "candy/conf/charly.yml",
            "conf:\n  candy: {}\nconf-files:\n  file:\n    - {source: etc/app.conf, dest: /etc/app/app.conf}\n    - {source: share, dest: /usr/share/app}\n",
        ),
        ("candy/conf/etc/app.conf", "a=1\n"),
        ("candy/conf/share/x.txt", "x\n"),
    ]);
    assert_eq!(f.project.validate().unwrap().problems, vec![]);
    f.project.generate("desk").unwrap();
    snapshot("containerfile_candy_files", &f.read(".build/desk/Containerfile"));

    let missing = "candy/overlay/charly.yml: node `overlay-bin`: `file` source \"charly-overlay\" (for /usr/local/bin/charly-overlay) is not in the candy's directory (candy/overlay/charly-overlay); put the file there, or name one that is";
    std::fs::remove_file(f.path("candy/overlay/charly-overlay")).unwrap();
    let problems: Vec<String> =
        f.project.validate().unwrap().problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(problems, [missing]);
    let err = err_text(f.project.generate("desk"));
    assert!(err.contains(missing), "{err}");
    // A symlink out of the project is not the candy's file.
    std::os::unix::fs::symlink("/etc/passwd", f.path("candy/overlay/charly-overlay")).unwrap();
    let problems: Vec<String> =
        f.project.validate().unwrap().problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(problems, [missing]);

    let stray =
        Fixture::with(&[("charly.yml", "project: {version: 1}\nstray:\n  file: [{source: x, dest: /x}]\n")]);
    let problems: Vec<String> =
        stray.project.validate().unwrap().problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        problems,
        [
            "charly.yml: node `stray`: a `file:` node belongs in a candy's file (candy/<name>/charly.yml), where the candy's boxes pick it up"
        ]
    );
}
