//! The session bus the box's supervisord runs for `dbus:` steps: the program runs, the
//! container's environment names its socket, and it answers `ListNames` there.

use crate::desk::{NAME, desk};

#[test]
fn the_session_bus_runs_at_the_address_the_environment_names() {
    let d = desk();
    let status = d.run(&["service", "status", NAME, "dbus", "--json"]).json();
    assert_eq!(status["services"][0]["state"], "RUNNING", "{status}");
    let ran = d.run(&[
        "cmd",
        NAME,
        "echo $DBUS_SESSION_BUS_ADDRESS; dbus-send --session --print-reply --dest=org.freedesktop.DBus \
         /org/freedesktop/DBus org.freedesktop.DBus.ListNames",
    ]);
    ran.status(0);
    assert!(ran.stdout.starts_with("unix:path=/run/bus\n"), "{}", ran.dump());
    assert!(ran.stdout.contains("string \"org.freedesktop.DBus\""), "{}", ran.dump());
}
