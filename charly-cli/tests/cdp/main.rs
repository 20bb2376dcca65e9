//! `check.cdp.*` and the `cdp:` plan verb against real Debian Chromium headless (installed by
//! `scripts/runtimes.sh`) on a free loopback port, with pages served by the test on 127.0.0.1:
//! a form with a link, a shadow-DOM component, an element that appears late, a Selkies-like
//! canvas that records its input events. Each test has its own browser and pages.

/// Chromium, the pages, the `charly` binary.
mod lab;

/// One test per leaf, with its bad input.
mod leaves;

/// A box's container: its published port 9222, a missing mapping, a box not started.
mod boxes;

/// `cdp:` steps in a plan: passing, failing with reasons and JUnit, validation.
mod plan;

/// Over MCP: the screenshot comes back as `image` content.
mod mcp;
