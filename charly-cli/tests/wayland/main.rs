//! `check.wl.*` and the `wl:` plan verb against real sway 1.7 headless: on this machine (the
//! target `.`, a sway per test under uid 4243, [`desk`]) every leaf with its bad input; through
//! a box's running container (sway and foot inside a box built from localhost/charly-wayland,
//! [`boxes`]) each family; and a `check live` plan of `wl:` steps ([`plan`]).

#[path = "../deploy/util.rs"]
#[allow(dead_code)]
mod util;

/// sway under uid 4243 and a session bus as that uid, each ended with its process group.
mod lab;

/// A sway of its own per test, on this machine.
mod desk;

/// type, key, key-combo, clipboard, click, double-click, mouse, drag, scroll.
mod input;

/// status, screenshot, windows and window actions, geometry, xprop, translations, exec,
/// resolution.
mod windows;

/// sway.*, atspi.
mod sway;

/// The families through a box's container.
mod boxes;

/// A plan of wl: steps run by check live against the box.
mod plan;

/// overlay.show|hide|list|status on `.` (charly-overlay built by the test).
mod overlay;
