//! The probes' box target through a real container: a box on the Debian desktop image
//! `scripts/runtimes.sh` builds (bookworm minbase with supervisor, dbus, Chromium 156, Xvfb,
//! x11vnc, socat), built by the test with `charly box build` and started with `charly start`,
//! its ports 5900 and 9222 published on free 127.0.0.1 ports. Built and started once for the
//! binary ([`desk::desk`]); `check.cdp.*`, `check.vnc.*` and a `check live` plan of `cdp:` and
//! `vnc:` steps name the box, not `.`. The box's supervisord also runs a session bus at
//! `unix:path=/run/bus` (`DBUS_SESSION_BUS_ADDRESS` in its environment) for the plan's `dbus:` steps.

#[path = "../deploy/util.rs"]
#[allow(dead_code)]
mod util;

/// The box, its programs, the shared container and its cleanup.
mod desk;

/// `check.cdp.*`: status, list, url, open, eval, text, type, click, close, screenshot.
mod cdp;

/// `check.vnc.*`: status, screenshot (known colours at known points), mouse, click.
mod vnc;

/// `check live` of `cdp:`, `vnc:` and `dbus:` steps: passing, then failing with reasons and JUnit.
mod plan;

/// The session bus the plan's `dbus:` steps use.
mod bus;
