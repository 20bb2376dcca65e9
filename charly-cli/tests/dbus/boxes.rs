//! A box as the target: its container `charly-<box>` runs a real `dbus-daemon --session` (the
//! localhost/charly-desktop image `scripts/runtimes.sh` builds) listening at
//! `unix:path=/run/bus`, the container's `DBUS_SESSION_BUS_ADDRESS`. charly finds the
//! container with podman and dials the socket from the host through `/proc/<pid>/root`; the
//! test does the same to export its notification recorder on the container's bus, so what a
//! leaf sent is checked where it arrived.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::bus::Server;
use crate::out;
use crate::util::{Box as Project, require_image};

/// The desktop image: bookworm with dbus, Chromium, Xvfb, x11vnc.
const DESKTOP: &str = "localhost/charly-desktop:latest";

/// A container removed by name at drop (also at the start, left over from a killed run).
pub(crate) struct Container {
    name: String,
}

impl Container {
    /// `podman run -d --name <name> [-e <env>...] <desktop image> <command...>`, labelled as
    /// `charly start` labels box `<name>` without `charly-` (charly refuses a container of a
    /// box's name without its box and run labels).
    pub(crate) fn run(name: &str, env: &[&str], command: &[&str]) -> Container {
        require_image(DESKTOP);
        let c = Container { name: name.to_owned() };
        c.remove();
        let box_label =
            format!("ai.opencharly.box={}", name.strip_prefix("charly-").expect("a charly-<box> name"));
        let mut args =
            vec!["run", "-d", "--name", name, "--label", &box_label, "--label", "ai.opencharly.run={}"];
        for e in env {
            args.extend(["-e", e]);
        }
        args.push(DESKTOP);
        args.extend(command);
        let out = Command::new("podman").args(&args).output().unwrap();
        assert!(out.status.success(), "podman run: {}", String::from_utf8_lossy(&out.stderr));
        c
    }

    /// A container running `dbus-daemon --session` at `unix:path=/run/bus`, its
    /// `DBUS_SESSION_BUS_ADDRESS` saying so, once the socket is there.
    pub(crate) fn with_bus(name: &str) -> Container {
        let c = Container::run(
            name,
            &["DBUS_SESSION_BUS_ADDRESS=unix:path=/run/bus"],
            &["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path=/run/bus"],
        );
        let started = Instant::now();
        while !c.socket().exists() {
            assert!(started.elapsed() < Duration::from_secs(20), "no /run/bus in {name}");
            std::thread::sleep(Duration::from_millis(50));
        }
        c
    }

    /// The container's main process, as the host sees it.
    fn pid(&self) -> u32 {
        let out = Command::new("podman").args(["inspect", "--format", "{{.State.Pid}}", &self.name]).output();
        String::from_utf8_lossy(&out.unwrap().stdout).trim().parse().unwrap()
    }

    /// The bus socket from the host: `/proc/<pid>/root/run/bus`.
    fn socket(&self) -> PathBuf {
        PathBuf::from(format!("/proc/{}/root/run/bus", self.pid()))
    }

    /// The notification recorder (and org.charly.Shapes) on the container's bus.
    pub(crate) fn serve(&self) -> Server {
        Server::serve(&format!("unix:path={}", self.socket().display()))
    }

    fn remove(&self) {
        let _ = Command::new("podman")
            .args(["rm", "-f", "-t", "0", &self.name])
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

/// `charly check dbus <args...>` with no session bus of its own: only the box's can answer.
fn charly(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(["check", "dbus"])
        .args(args)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/host-bus")
        .env_remove("CHARLY_PROJECT_DIR")
        .output()
        .unwrap()
}

#[test]
fn list_shows_the_names_on_the_box_bus() {
    let c = Container::with_bus("charly-test-dbus-list");
    let (code, stdout, stderr) = out(&charly(&["list", "test-dbus-list"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.lines().any(|l| l == "org.freedesktop.DBus"), "{stdout}");
    assert!(!stdout.contains("org.freedesktop.Notifications"), "{stdout}");
    // A service the test exports on that bus shows up in the next list.
    let _server = c.serve();
    let (code, stdout, stderr) = out(&charly(&["list", "test-dbus-list", "--json"]));
    assert_eq!(code, Some(0), "{stderr}");
    let j: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let names: Vec<&str> = j["names"].as_array().unwrap().iter().filter_map(|n| n.as_str()).collect();
    assert!(names.contains(&"org.freedesktop.Notifications") && names.contains(&"org.charly.Shapes"), "{j}");
}

#[test]
fn call_sends_typed_arguments_to_the_box_bus() {
    let c = Container::with_bus("charly-test-dbus-call");
    let _server = c.serve();
    let dbus = ["test-dbus-call", "org.freedesktop.DBus", "/org/freedesktop/DBus"];
    let has_owner = |name: &str| {
        let arg = format!("string:{name}");
        out(&charly(&["call", dbus[0], dbus[1], dbus[2], "org.freedesktop.DBus.NameHasOwner", &arg]))
    };
    let (code, stdout, stderr) = has_owner("org.freedesktop.Notifications");
    assert_eq!((code, stdout.as_str()), (Some(0), "true\n"), "{stderr}");
    let (code, stdout, stderr) = has_owner("org.example.Nobody");
    assert_eq!((code, stdout.as_str()), (Some(0), "false\n"), "{stderr}");
    // An array where the signature needs one, answered by the service on the box's bus.
    let (code, stdout, stderr) = out(&charly(&[
        "call",
        dbus[0],
        "org.charly.Shapes",
        "/org/charly/Shapes",
        "org.charly.Shapes.Sum",
        "array:uint32:1,2,40",
    ]));
    assert_eq!((code, stdout.as_str()), (Some(0), "uint64 43\n"), "{stderr}");
    // A type the method does not take: named from the box's dbus-daemon's introspection.
    let (code, _, stderr) =
        out(&charly(&["call", dbus[0], dbus[1], dbus[2], "org.freedesktop.DBus.GetNameOwner", "uint32:5"]));
    assert_eq!(code, Some(2));
    assert!(stderr.contains("argument 1 \"uint32:5\" of org.freedesktop.DBus.GetNameOwner"), "{stderr}");
}

#[test]
fn introspect_prints_the_xml_of_an_object_on_the_box_bus() {
    let c = Container::with_bus("charly-test-dbus-intro");
    let (code, stdout, stderr) =
        out(&charly(&["introspect", "test-dbus-intro", "org.freedesktop.DBus", "/org/freedesktop/DBus"]));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("<interface name=\"org.freedesktop.DBus\">"), "{stdout}");
    assert!(stdout.contains("<method name=\"ListNames\">"), "{stdout}");
    let _server = c.serve();
    let (code, stdout, stderr) = out(&charly(&[
        "introspect",
        "test-dbus-intro",
        "org.freedesktop.Notifications",
        "/org/freedesktop/Notifications",
    ]));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("<method name=\"Notify\">"), "{stdout}");
}

#[test]
fn notify_reaches_the_notification_server_on_the_box_bus() {
    let c = Container::with_bus("charly-test-dbus-notify");
    // No notification server on the box's bus yet: the error names the service.
    let (code, _, stderr) = out(&charly(&["notify", "test-dbus-notify", "x"]));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("ServiceUnknown: The name org.freedesktop.Notifications was not provided"),
        "{stderr}"
    );
    let server = c.serve();
    let (code, stdout, stderr) =
        out(&charly(&["notify", "test-dbus-notify", "Box built", "in the container"]));
    assert_eq!((code, stdout.as_str()), (Some(0), "Notification 1\n"), "{stderr}");
    assert_eq!(
        *server.got.lock().unwrap(),
        [("charly".to_owned(), "Box built".to_owned(), "in the container".to_owned(), -1)]
    );
}

#[test]
fn a_box_that_is_not_running_names_its_container_and_how_to_start_it() {
    // Never started, and no project here that has it: not told to start it (a box of a
    // project is: tests/cdp/boxes.rs `an_unknown_box_is_named_...`).
    let (code, _, stderr) = out(&charly(&["list", "test-dbus-never", "-i", "3"]));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains(
            "box test-dbus-never is not a box of this project and has no container (there is no charly.yml in"
        ),
        "{stderr}"
    );
    // Created, never run.
    let c = Container { name: "charly-test-dbus-created".into() };
    c.remove();
    let made = Command::new("podman")
        .args(["create", "--name", &c.name, "--label", "ai.opencharly.box=test-dbus-created"])
        .args(["--label", "ai.opencharly.run={}", DESKTOP, "true"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    let (code, _, stderr) = out(&charly(&["list", "test-dbus-created"]));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("container charly-test-dbus-created is created, not running")
            && stderr.contains("`charly start test-dbus-created`"),
        "{stderr}"
    );
}

#[test]
fn a_box_bus_address_that_is_missing_or_unreachable_is_an_error_saying_what_to_set() {
    let _none = Container::run("charly-test-dbus-noaddr", &[], &["sleep", "300"]);
    let (code, _, stderr) = out(&charly(&["list", "test-dbus-noaddr"]));
    assert_eq!(code, Some(2));
    assert!(
        stderr
            .contains("container charly-test-dbus-noaddr has no DBUS_SESSION_BUS_ADDRESS in its environment")
            && stderr.contains("add `env: [\"DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/dbus-session\"]`")
            && stderr.contains("to box test-dbus-noaddr")
            && stderr.contains("`charly update test-dbus-noaddr`"),
        "{stderr}"
    );
    // An abstract socket and tcp: named, with what is supported.
    let abstract_ = "DBUS_SESSION_BUS_ADDRESS=unix:abstract=/tmp/dbus-x,guid=1234";
    let tcp = "DBUS_SESSION_BUS_ADDRESS=tcp:host=127.0.0.1,port=5555";
    let _a = Container::run("charly-test-dbus-abstract", &[abstract_], &["sleep", "300"]);
    let _t = Container::run("charly-test-dbus-tcp", &[tcp], &["sleep", "300"]);
    for (name, address) in [("test-dbus-abstract", abstract_), ("test-dbus-tcp", tcp)] {
        let (code, _, stderr) = out(&charly(&["call", name, "a.b", "/", "a.b.C"]));
        assert_eq!(code, Some(2));
        let value = address.trim_start_matches("DBUS_SESSION_BUS_ADDRESS=");
        assert!(
            stderr.contains(&format!(
                "container charly-{name}: DBUS_SESSION_BUS_ADDRESS={value:?} cannot be reached"
            )) && stderr.contains("unix:path=/ABSOLUTE/PATH"),
            "{stderr}"
        );
    }
    // A unix:path= with no daemon behind it: the socket named, and how to look.
    let _gone = Container::run(
        "charly-test-dbus-nobus",
        &["DBUS_SESSION_BUS_ADDRESS=unix:path=/run/nobus"],
        &["sleep", "300"],
    );
    let (code, _, stderr) = out(&charly(&["introspect", "test-dbus-nobus", "org.freedesktop.DBus", "/"]));
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("cannot connect to the session bus of container charly-test-dbus-nobus")
            && stderr.contains("there is no socket /run/nobus in the container")
            && stderr.contains("`charly cmd test-dbus-nobus 'grep -lx dbus-daemon /proc/[0-9]*/comm'`"),
        "{stderr}"
    );
}

/// A plan of `dbus:` steps, run by `charly check live` against the box.
const PLAN: &str = r#"
owner:
  check: a notification server owns its name on the box's bus
  dbus: call
  dest: org.freedesktop.DBus
  path: /org/freedesktop/DBus
  method: org.freedesktop.DBus.NameHasOwner
  args: ["string:org.freedesktop.Notifications"]
  stdout: "true"
names:
  check: the box's bus lists it
  dbus: list
  stdout: {contains: org.freedesktop.Notifications}
said:
  check: a notification goes out in the box
  dbus: notify
  text: From a live plan
  message: in the box
nobody:
  check: a destination that is not there
  dbus: introspect
  dest: org.example.Nobody
  path: /
"#;

#[test]
fn a_plan_of_dbus_steps_runs_against_the_box_bus() {
    let name = "test-dbus-plan";
    let project = Project::with_base(name, DESKTOP);
    project.run(&["box", "new", "candy", "bus"]).status(0);
    project.run(&["box", "add-candy", name, "bus"]).status(0);
    let candy = project.proj().join("candy/bus/charly.yml");
    let text = std::fs::read_to_string(&candy).unwrap();
    std::fs::write(&candy, format!("{text}{PLAN}")).unwrap();
    let c = Container::with_bus(&format!("charly-{name}"));
    let server = c.serve();
    let ran = project.run(&["check", "live", name, "--json"]);
    ran.status(1);
    let report = ran.json();
    let results = report["results"].as_array().unwrap();
    let result = |check: &str| {
        results.iter().find(|r| r["name"] == check).unwrap_or_else(|| panic!("no {check}\n{}", ran.dump()))
    };
    for pass in ["owner", "names", "said"] {
        assert_eq!(result(pass)["verdict"], "pass", "{pass}: {}", ran.dump());
        assert!(result(pass)["kind"].as_str().unwrap().starts_with("dbus."), "{}", ran.dump());
    }
    assert_eq!(result("owner")["stdout"], "true\n");
    let nobody = result("nobody");
    assert_eq!(nobody["verdict"], "fail", "{}", ran.dump());
    assert!(nobody["reasons"].to_string().contains("exit status 2, expected 0"), "{nobody}");
    assert!(
        nobody["stderr"].as_str().unwrap().contains(
            "org.freedesktop.DBus.Error.ServiceUnknown: The name org.example.Nobody was not provided"
        ),
        "{nobody}"
    );
    assert_eq!(
        *server.got.lock().unwrap(),
        [("charly".to_owned(), "From a live plan".to_owned(), "in the box".to_owned(), -1)]
    );
}
