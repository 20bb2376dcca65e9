//! Regression tests for the DESIGN.md defects of the reference implementations that concern
//! `check`, through the binary.

use std::time::Duration;

use crate::util::{BlackHole, TestDir};

/// The run's own default is a minute; a step that says `timeout: 1s` must give up after
/// about a second, not sixty.
const RUN_DEFAULT: &str = "60s";
const BOUND: Duration = Duration::from_secs(20);

/// DESIGN.md: "The check step's `timeout:` was silently ignored." Here while connecting: the
/// server accepts the connection and never answers `initialize`.
#[test]
fn step_timeout_is_honoured_while_connecting() {
    let t = TestDir::new();
    let hole = BlackHole::start();
    t.write(
        "plan.yml",
        "slow:\n  check: a server that never answers\n  mcp: ping\n  context: [deploy]\n  timeout: 1s\n",
    );
    let run = t.run(&["check", "run", "plan.yml", "--url", &hole.url, "--timeout", RUN_DEFAULT]);
    run.status(1);
    assert_eq!(
        run.report(),
        format!(
            "FAIL slow: a server that never answers (T)\n    \
             exit status 2, expected 0: no answer from {} within 1s (connect and initialize timed out)\n\
             checks: 0 passed, 1 failed, 0 skipped\n",
            hole.url
        ),
        "{}",
        run.dump()
    );
    assert!(run.took < BOUND, "the step's 1s timeout was not applied: took {:?}", run.took);
}

/// The same defect during a request on an open session: `charly mcp serve` answers at once,
/// but its `check.mcp.ping` tool, pointed at the black hole with a 60 s timeout of its own,
/// runs far past the step's `timeout: 1s`.
#[test]
fn step_timeout_is_honoured_during_a_tool_call() {
    let t = TestDir::sample();
    let hole = BlackHole::start();
    let server = t.serve();
    t.write(
        "plan.yml",
        &format!(
            "slow-call:\n  check: a tool that hangs\n  mcp: call\n  tool: check.mcp.ping\n  \
             input: {{url: \"{}\", timeout: 60s}}\n  context: [deploy]\n  timeout: 1s\n\
             after:\n  check: the server still answers\n  mcp: ping\n  context: [deploy]\n",
            hole.url
        ),
    );
    let run = t.run(&["check", "run", "plan.yml", "--url", &server.url, "--timeout", RUN_DEFAULT]);
    run.status(1);
    // The client's own 1 s request timeout names `tools/call`; on a loaded machine, where
    // connecting took over 0.5 s, the step's bound on the whole attempt (1 s + 0.5 s) fires
    // first and names the step's method (CI saw both).
    let report = |why: &str| {
        format!(
            "FAIL slow-call: a tool that hangs (T)\n    exit status 2, expected 0: {why} timed out after 1s\n\
             PASS after: the server still answers (T)\nchecks: 1 passed, 1 failed, 0 skipped\n"
        )
    };
    assert!([report("tools/call"), report("mcp: call")].contains(&run.report()), "{}", run.dump());
    assert!(run.took < BOUND, "the step's 1s timeout was not applied: took {:?}", run.took);
}

/// Without `timeout:` the run's `--timeout` is the step's bound (so the step above really
/// did override something).
#[test]
fn run_timeout_is_the_default_of_a_step() {
    let t = TestDir::new();
    let hole = BlackHole::start();
    t.write("plan.yml", "slow:\n  check: a server that never answers\n  mcp: ping\n  context: [deploy]\n");
    let run = t.run(&["check", "run", "plan.yml", "--url", &hole.url, "--timeout", "700ms"]);
    run.status(1);
    assert!(
        run.stdout.contains(&format!(
            "    exit status 2, expected 0: no answer from {} within 700ms (connect and initialize timed out)\n",
            hole.url
        )),
        "{}",
        run.dump()
    );
    assert!(run.took < BOUND, "took {:?}", run.took);
}
