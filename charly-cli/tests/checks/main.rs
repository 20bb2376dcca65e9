//! The check verbs, `check live`, `check box`, `box.test` and `box.pull` against real
//! containers (podman 4.3 with runc, fixture images built on the busybox base image that
//! `scripts/runtimes.sh` builds): each test has its own project and box `test-chk-<what>`,
//! and removes what it made by name when it ends.

#[path = "../deploy/util.rs"]
#[allow(dead_code)]
mod util;

/// Fixture images (built once per run, kept between runs).
mod fixture;

/// Every verb against one running container: a passing and a failing check of each kind.
mod live;

/// `check box` and `box.test`: disposable containers, no project files touched.
mod disposable;

/// `box.pull`: a local source, the registry that cannot be reached, bad `--from`.
mod pull;

/// `box.build` bakes the candy and box checks into ai.opencharly.check; `box.test` runs them.
mod label;

/// `box.merge`: fewer layers, the same filesystem (whiteouts, opaque dirs), bad input.
mod merge;

/// Plan problems name the file, the line and what is allowed (no podman needed).
mod parse;
