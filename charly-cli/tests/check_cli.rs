//! Tests of the `charly check ...` commands through the binary: one test binary with a
//! module per area (the modules live in `tests/check_cli/`).
//!
//! Every test gets its own temporary directory (HOME, the repository cache and the project
//! inside it) and runs `charly` with the caller's `CHARLY_*` variables removed. Servers are
//! `charly mcp serve` processes on free 127.0.0.1 ports, killed when the test ends; a failed
//! assertion prints the command line, exit status, stdout and stderr.

#[path = "check_cli/util.rs"]
mod util;

/// A private session bus with a notification daemon, for the `check.dbus.*` rows of `json`.
#[path = "dbus/bus.rs"]
#[allow(dead_code)]
mod dbus_bus;

/// Real Chromium headless and pages on loopback, for the `check.cdp.*` rows of `json`.
#[path = "cdp/lab.rs"]
#[allow(dead_code)]
mod cdp_lab;

/// Xvfb + x11vnc on loopback, for the `check.vnc.*` rows of `json`.
#[path = "vnc/lab.rs"]
#[allow(dead_code)]
mod vnc_lab;

/// sway headless under uid 4243 and a session bus (tests/wayland's), for the `check.wl.*` rows.
#[path = "wayland/lab.rs"]
#[allow(dead_code)]
mod sway_lab;

/// A sway session with a foot and an xev window, for the `check.wl.*` rows of `json`.
#[path = "check_cli/wl_lab.rs"]
mod wl_lab;

/// `charly check mcp <method>`: output lines, exit statuses, `--json`, `.mcp.json`, pipes.
#[path = "check_cli/probes.rs"]
mod probes;

/// `charly check run|validate|box`: plans, JUnit XML, validation, the build context.
#[path = "check_cli/plans.rs"]
mod plans;

/// One test per DESIGN.md defect that concerns `check`.
#[path = "check_cli/regression.rs"]
mod regression;

/// `--json` of every catalog leaf against its `outputSchema`; text and JSON are one report.
#[path = "check_cli/json.rs"]
mod json;

/// `charly mcp serve --oauth-issuer`: access tokens from a local authorization server, sent
/// by `check mcp --header`.
#[path = "check_cli/oauth.rs"]
mod oauth;
