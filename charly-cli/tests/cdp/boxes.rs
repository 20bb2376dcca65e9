//! A box as the target: the container is found by name and its published port 9222 dialled
//! (podman 4.3 with the busybox image `scripts/runtimes.sh` builds; no Chromium inside, so
//! what is checked is how charly finds the port and what it says when there is none).

use std::process::{Command, Stdio};

use crate::lab::Lab;

const BUSYBOX: &str = "localhost/charly-busybox:latest";

/// A container removed by name at drop.
struct Container(String);

impl Container {
    fn run(name: &str, publish: Option<u16>) -> Container {
        Container::try_run(name, publish).unwrap_or_else(|e| panic!("podman run: {e}"))
    }

    /// `podman run -d` of the busybox image sleeping, labelled as `charly start` labels a
    /// box's container (box and run labels: charly refuses a container of a box's name
    /// without them); podman's stderr when it fails.
    fn try_run(name: &str, publish: Option<u16>) -> Result<Container, String> {
        let box_name = name.strip_prefix("charly-").expect("a charly-<box> name");
        let labels = [format!("ai.opencharly.box={box_name}"), "ai.opencharly.run={}".to_owned()];
        Container::try_run_labelled(name, publish, &labels)
    }

    /// `podman run -d` of the busybox image sleeping, with `labels`.
    fn try_run_labelled(name: &str, publish: Option<u16>, labels: &[String]) -> Result<Container, String> {
        let out = Command::new("podman").args(["image", "exists", BUSYBOX]).status();
        assert!(
            out.is_ok_and(|s| s.success()),
            "podman has no {BUSYBOX}: run scripts/runtimes.sh as root (it installs podman and builds the image)"
        );
        let c = Container(name.to_owned());
        c.remove();
        let mut args = vec!["run".to_owned(), "-d".into(), "--name".into(), name.into()];
        if let Some(port) = publish {
            args.extend(["-p".into(), format!("127.0.0.1:{port}:9222")]);
        }
        for l in labels {
            args.extend(["--label".into(), l.clone()]);
        }
        args.extend([BUSYBOX.into(), "sleep".into(), "300".into()]);
        let out = Command::new("podman").args(&args).output().unwrap();
        if out.status.success() { Ok(c) } else { Err(String::from_utf8_lossy(&out.stderr).into_owned()) }
    }

    /// Runs `name` with container port 9222 published on a free loopback port; the port.
    /// A port found free can be taken before podman binds it (other tests run beside this
    /// one): then another is tried, up to 5 times.
    fn run_published(name: &str) -> (u16, Container) {
        let mut last = String::new();
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            match Container::try_run(name, Some(port)) {
                Ok(c) => return (port, c),
                Err(e) if e.contains("address already in use") => last = e,
                Err(e) => panic!("podman run: {e}"),
            }
        }
        panic!("podman run: no free port in 5 tries: {last}");
    }

    fn remove(&self) {
        let _ = Command::new("podman")
            .args(["rm", "-f", "-t", "0", &self.0])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        self.remove();
    }
}

#[test]
fn a_box_without_port_9222_published_is_an_error_saying_how_to_publish_it() {
    let lab = Lab::without_browser();
    let _c = Container::run("charly-test-cdp-noport", None);
    let ran = lab.charly(&["check", "cdp", "status", "test-cdp-noport"]).status(2);
    assert!(
        ran.stderr.contains(
            "container charly-test-cdp-noport publishes no host port for CDP's container port 9222"
        ),
        "{}",
        ran.stderr
    );
    // The fix, in the one wording every unpublished port gets (run as printed in
    // tests/deploy/publish.rs).
    assert!(
        ran.stderr.contains(&charly_cli::resolve::publish_hint("test-cdp-noport", None, 9222)),
        "{}",
        ran.stderr
    );
    // An instance that was never started, with no project here to say the box exists: not
    // told to start it (`cdp_unknown_box_...` below has the box of a project).
    let ran = lab.charly(&["check", "cdp", "list", "test-cdp-noport", "-i", "2"]).status(2);
    assert!(
        ran.stderr.contains(
            "box test-cdp-noport is not a box of this project and has no container (there is no charly.yml in"
        ),
        "{}",
        ran.stderr
    );
}

#[test]
fn a_box_publishing_9222_is_dialled_at_its_host_port() {
    let lab = Lab::without_browser();
    let (port, _c) = Container::run_published("charly-test-cdp-pub");
    // No browser in the container: the host port is what charly dials, and it says so.
    let ran = lab.charly(&["check", "cdp", "status", "test-cdp-pub", "--json"]).status(1);
    let j: serde_json::Value = serde_json::from_str(&ran.stdout).unwrap();
    assert_eq!(j["url"], format!("http://127.0.0.1:{port}"));
    assert_eq!(j["reachable"], false);
    assert!(
        j["error"]
            .as_str()
            .unwrap()
            .contains("container charly-test-cdp-pub runs, but nothing answers on its port 9222"),
        "{j}"
    );
}

/// A container of a box's name that charly did not create (plain `podman run`, no charly
/// labels) is not that box: refused, naming it, and left running.
#[test]
fn a_container_of_the_boxs_name_not_created_by_charly_is_refused() {
    let lab = Lab::without_browser();
    let _c = Container::try_run_labelled("charly-test-cdp-foreign", None, &[])
        .unwrap_or_else(|e| panic!("podman run: {e}"));
    let ran = lab.charly(&["check", "cdp", "status", "test-cdp-foreign"]).status(2);
    assert!(
        ran.stderr.contains("container charly-test-cdp-foreign: it was not created by charly")
            && ran.stderr.contains("-i <other>"),
        "{}",
        ran.stderr
    );
    let state = Command::new("podman")
        .args(["inspect", "--format", "{{.State.Running}}", "charly-test-cdp-foreign"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&state.stdout).trim(), "true");
}

/// `--cdp-url` is the endpoint of `.`; with a box it was silently ignored (issue 15 trial 2,
/// LOW), so a user pointing it at a browser reached the box's instead. Refused, naming both
/// and what each is for; the same URL with `.` reaches that browser.
#[test]
fn cdp_url_with_a_box_target_is_refused_naming_both() {
    let lab = Lab::new();
    let (_port, _c) = Container::run_published("charly-test-dl-cdp-url");
    let url = lab.cdp_url();
    let ran = lab.charly(&["check", "cdp", "status", "test-dl-cdp-url", "--cdp-url", &url]).status(2);
    assert!(
        ran.stderr.contains(&format!("--cdp-url {url:?} (cdp_url over MCP) is the endpoint for the target `.`"))
            && ran.stderr.contains("the box \"test-dl-cdp-url\", which is dialled at the host port its container publishes for port 9222")
            && ran.stderr.contains("drop --cdp-url to use the box, or give `.` as the target"),
        "{}",
        ran.stderr
    );
    assert!(ran.stdout.is_empty(), "{}", ran.stdout);
    // Without --cdp-url the box is dialled (nothing answers in it); with `.` the URL is.
    lab.charly(&["check", "cdp", "status", "test-dl-cdp-url"]).status(1);
    lab.charly(&["check", "cdp", "status", ".", "--cdp-url", &url]).status(0);
}

/// A box with no container that is not one of the project's was told "start it with `charly
/// start X`", which cannot work (issue 15 trial 2 and issue 16 trial L13): it is named as not
/// a box of this project, with the project's boxes; a box of the project never started is
/// still told how to start it.
#[test]
fn an_unknown_box_is_named_with_the_projects_boxes_not_told_to_start() {
    let lab = Lab::without_browser();
    let ran = lab.charly(&["check", "cdp", "status", "test-dl-nobox"]).status(2);
    assert!(
        ran.stderr.contains(
            "box test-dl-nobox is not a box of this project and has no container (there is no charly.yml in"
        ) && !ran.stderr.contains("charly start")
            // No boxes to name (this stop's trial, LOW-9): only the way to the project that has it.
            && ran.stderr.contains("); give the directory of the project that has it with -C DIR")
            && !ran.stderr.contains("name one of its boxes"),
        "{}",
        ran.stderr
    );
    lab.charly(&["box", "new", "project", "."]).status(0);
    lab.charly(&["box", "new", "box", "test-dl-known", "--base", BUSYBOX]).status(0);
    for leaf in [
        &["check", "cdp", "status"][..],
        &["check", "vnc", "status"],
        &["check", "dbus", "list"],
        &["tmux", "list"],
        &["check", "wl", "status"],
    ] {
        let mut args = leaf.to_vec();
        args.push("test-dl-nobox");
        let ran = lab.charly(&args).status(2);
        assert!(
            ran.stderr.contains(&format!(
                "box test-dl-nobox is not a box of this project and has no container (the boxes of {}/charly.yml: test-dl-known)",
                lab.dir.path().display()
            )) && ran.stderr.contains("name one of its boxes, or give the directory of the project that has it with -C DIR")
                && !ran.stderr.contains("charly start"),
            "{args:?}: {}",
            ran.stderr
        );
    }
    let ran = lab.charly(&["check", "cdp", "status", "test-dl-known"]).status(2);
    assert!(
        ran.stderr.contains("container charly-test-dl-known does not exist")
            && ran.stderr.contains("charly start test-dl-known"),
        "{}",
        ran.stderr
    );
}

/// A `--cdp-url`'s password and query values are never printed: not in the unreachable
/// error, the status report or the refusal beside a box target (this stop's trial, LOW-1).
#[test]
fn a_cdp_urls_secrets_are_never_printed() {
    let lab = Lab::without_browser();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://u:pw-LEAK1@127.0.0.1:{port}?token=LEAK2");
    lab.charly(&["box", "new", "project", "."]).status(0);
    lab.charly(&["box", "new", "box", "test-dl-leak", "--base", BUSYBOX]).status(0);
    for args in [
        &["check", "cdp", "status", ".", "--cdp-url", &url][..],
        &["check", "cdp", "status", ".", "--cdp-url", &url, "--json"],
        &["check", "cdp", "list", ".", "--cdp-url", &url],
        &["check", "cdp", "status", "test-dl-leak", "--cdp-url", &url],
    ] {
        let ran = lab.charly(args);
        let all = format!("{}{}", ran.stdout, ran.stderr);
        assert!(!all.contains("LEAK") && all.contains("u:***@127.0.0.1"), "{args:?}: {all}");
    }
}
