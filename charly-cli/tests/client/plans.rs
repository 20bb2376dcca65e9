//! Check plans: validation messages, passing and failing plans against a live
//! server-everything, timeouts, `eventually`, the build context, JUnit XML.

use std::time::{Duration, Instant};

use charly::client::TransportKind;
use charly_cli::check::{self, Context, Endpoints, Plan, RunOptions, Verdict};
use charly_cli::report::Report as _;

use crate::support::NodeServer;

fn problems(yaml: &str) -> Vec<String> {
    Plan::parse(yaml, "").problems.iter().map(|p| p.to_string()).collect()
}

#[test]
fn each_validation_message() {
    let allowed =
        "ping, servers, list-tools, list-resources, list-prompts, call, read, lint, list-skills, read-skill";
    let cases: Vec<(&str, String)> = vec![
        (
            "a: {check: d, mcp: list, context: [deploy]}",
            format!("check a: mcp: unknown method \"list\" (allowed: {allowed})"),
        ),
        ("a: {check: d, mcp: call, context: [deploy]}", "check a: mcp: call needs tool: <tool name>".into()),
        ("a: {check: d, mcp: read, context: [deploy]}", "check a: mcp: read needs uri: <resource uri>".into()),
        (
            "a: {check: d, mcp: ping}",
            "check a: mcp: ping needs context: [deploy] (mcp steps talk to a running container)".into(),
        ),
        (
            "a: {check: d, mcp: ping, context: [build]}",
            "check a: mcp: ping needs context: [deploy] (mcp steps talk to a running container)".into(),
        ),
        (
            "a: {check: d, context: [deploy]}",
            format!("check a: no verb: a check needs one of: {}", check::VERBS.join(", ")),
        ),
        (
            "a: {check: d, mcp: ping, context: [deploy], stdot: ok}",
            format!("check a: unknown key \"stdot\" (expected one of: {})", check::CHECK_KEYS.join(", ")),
        ),
        (
            "a: {check: d, mcp: ping, context: [deploy], stdout: {startswith: o}}",
            format!(
                "check a: stdout: unknown matcher \"startswith\" (expected one of: {})",
                check::MATCHER_KINDS.join(", ")
            ),
        ),
        (
            "a: {check: d, mcp: ping, context: [deploy], timeout: soon}",
            "check a: timeout: invalid duration \"soon\" (expected e.g. 30s, 500ms, 2m, 1h30m or a number of seconds)"
                .into(),
        ),
        (
            "a: {check: d, mcp: ping, context: [deploy, prod]}",
            "check a: context: unknown context \"prod\" (expected build or deploy)".into(),
        ),
        (
            "a: {check: d, mcp: call, tool: echo, input: [1], context: [deploy]}",
            "check a: input: must be a map (the tool's arguments) or a JSON object string".into(),
        ),
        (
            "a: {check: d, mcp: ping, context: [deploy], exit_status: one}",
            "check a: exit_status: expects an integer, got \"one\"".into(),
        ),
        (
            "a: {check: d, mcp: ping, tool: echo, context: [deploy]}",
            "check a: tool/input: only apply to mcp: call, not ping".into(),
        ),
        (
            "a: {check: d, mcp: ping, context: [deploy], retry_interval: 1s}",
            "check a: retry_interval: only means something with eventually:".into(),
        ),
        ("a: {check: '', mcp: ping, context: [deploy]}", "check a: check: needs a description (check: <what it shows>)".into()),
        (
            "a: {check: d, mcp: ping, context: [deploy], stdout: {matches: '('}}",
            "check a: stdout: matches: invalid regular expression: regex parse error:\n    (\n    ^\nerror: unclosed group"
                .into(),
        ),
    ];
    for (yaml, want) in cases {
        assert_eq!(problems(yaml), [want], "{yaml}");
    }
    assert!(problems("a: [unclosed")[0].starts_with("invalid YAML: "));
    assert_eq!(problems("- a\n- b\n"), ["a plan is a map of name-first nodes"]);
    // Every problem of every check, not just the first.
    let many = problems("a: {check: d, mcp: call}\nb: {check: d, mcp: read, context: [deploy]}\n");
    assert_eq!(many.len(), 3, "{many:?}");
    // Other node kinds in the same file are not checks.
    let plan = Plan::parse("hello:\n  box: {base: x}\nhello-port:\n  port: [18765]\n", "");
    assert!(plan.checks.is_empty() && plan.problems.is_empty());
}

#[test]
fn validate_prints_problems_or_ok() {
    let plan = Plan::parse("a: {check: d, mcp: ping, context: [deploy]}", "p.yml");
    let validation = check::validate(&plan);
    assert_eq!(validation.failure(), None);
    assert_eq!(validation.to_string(), "ok: 1 checks\n");
    let plan = Plan::parse("a: {check: d, mcp: read, context: [deploy]}", "p.yml");
    let validation = check::validate(&plan);
    assert!(validation.failure().is_some());
    assert_eq!(validation.to_string(), "p.yml:1: check a: mcp: read needs uri: <resource uri>\n");
}

const PASSING: &str = r#"
# A candy's charly.yml is a plan too: non-check nodes are ignored.
everything-mcp:
  mcp_provide:
    - {name: everything, url: "http://{{.ContainerName}}:3001/mcp", transport: http}
ping:
  check: the server answers ping
  mcp: ping
  context: [deploy]
  stdout: ok
servers:
  check: servers lists without dialling
  mcp: servers
  context: [deploy]
  stdout: {matches: "^everything\thttp://127\\.0\\.0\\.1:\\d+/mcp\thttp$"}
tools:
  check: echo is listed and nothing is called "rm"
  mcp: list-tools
  context: [deploy]
  stdout:
    - {contains: "echo\tEchoes back the input"}
    - {not_matches: "(?m)^rm\t"}
resources:
  check: all 100 resources across the pages
  mcp: list-resources
  context: [deploy, build]
  stdout: {matches: "(?m)^test://static/resource/100\tResource 100\t", not_contains: "resource/101"}
prompts:
  check: the simple prompt
  mcp: list-prompts
  mcp_name: everything
  context: [deploy]
  stdout: {contains: simple_prompt}
echo:
  check: echo says what it is told
  mcp: call
  tool: echo
  input: {message: hello plan}
  context: [deploy]
  timeout: 10s
  stdout: {equals: "Echo: hello plan", not_equals: "Echo: something else"}
add:
  check: add adds
  mcp: call
  tool: add
  input: '{"a": 20, "b": 22}'
  context: [deploy]
  stdout: "The sum of 20 and 22 is 42."
  exit_status: 0
read:
  check: a text resource reads back
  mcp: read
  uri: test://static/resource/1
  context: [deploy]
  stdout: {contains: plaintext}
  stderr: ""
  eventually: 5s
  retry_interval: 100ms
"#;

const FAILING: &str = r#"
wrong-text:
  check: a matcher that does not hold
  mcp: call
  tool: echo
  input: {message: hi}
  context: [deploy]
  stdout: "Echo: bye"
unknown-resource:
  check: a JSON-RPC error is exit status 2
  mcp: read
  uri: test://nope
  context: [deploy]
slow:
  check: the step timeout is honoured
  mcp: call
  tool: longRunningOperation
  input: {duration: 5, steps: 5}
  context: [deploy]
  timeout: 1s
retried:
  check: eventually retries until its window closes
  mcp: ping
  context: [deploy]
  stdout: pong
  eventually: 1500ms
  retry_interval: 200ms
both-contexts:
  check: a check for either context
  mcp: ping
  context: [build, deploy]
"#;

fn named(mut endpoint: charly::client::Endpoint, name: &str) -> charly::client::Endpoint {
    endpoint.name = name.to_owned();
    endpoint
}

#[tokio::test]
async fn a_passing_plan_against_a_live_server() {
    let server = NodeServer::start(TransportKind::StreamableHttp);
    let plan = Plan::parse(PASSING, "candy/everything/charly.yml");
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let endpoints = Endpoints::Resolved(vec![named(server.endpoint(), "everything")]);
    let report = check::run(&plan, &endpoints, &RunOptions::default(), None).await.unwrap();
    let text = report.to_string();
    assert_eq!(report.failure(), None, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 9, "{text}");
    for (line, name) in
        lines.iter().zip(["ping", "servers", "tools", "resources", "prompts", "echo", "add", "read"])
    {
        assert!(line.starts_with(&format!("PASS {name}: ")), "{line}");
    }
    assert_eq!(lines[8], "checks: 8 passed, 0 failed, 0 skipped");
}

#[tokio::test]
async fn a_failing_plan_reports_each_reason_and_junit() {
    // Over legacy SSE this time.
    let server = NodeServer::start(TransportKind::Sse);
    let plan = Plan::parse(FAILING, "failing.yml");
    assert!(plan.problems.is_empty(), "{:?}", plan.problems);
    let endpoints = Endpoints::Resolved(vec![server.endpoint()]);
    let junit = std::env::temp_dir().join(format!("charly-junit-{}.xml", std::process::id()));
    let started = Instant::now();
    let report = check::run(&plan, &endpoints, &RunOptions::default(), Some(&junit)).await.unwrap();
    let text = report.to_string();
    assert!(report.failure().is_some(), "{text}");
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("FAIL wrong-text: a matcher that does not hold ("), "{text}");
    assert_eq!(lines[1], r#"    stdout "Echo: hi" does not equal "Echo: bye""#);
    assert!(lines[2].starts_with("FAIL unknown-resource: "), "{text}");
    assert_eq!(
        lines[3],
        "    exit status 2, expected 0: resources/read: server error -32603: Unknown resource: test://nope"
    );
    assert!(lines[4].starts_with("FAIL slow: "), "{text}");
    assert_eq!(lines[5], "    exit status 2, expected 0: tools/call timed out after 1s");
    assert!(lines[6].starts_with("FAIL retried: ") && lines[6].contains(" attempts)"), "{text}");
    assert_eq!(lines[7], r#"    stdout "ok" does not equal "pong""#);
    assert!(lines[8].starts_with("PASS both-contexts: "), "{text}");
    assert_eq!(lines[9], "checks: 1 passed, 4 failed, 0 skipped");

    let xml = std::fs::read_to_string(&junit).unwrap();
    std::fs::remove_file(&junit).unwrap();
    let summary = junit_summary(&xml);
    assert_eq!(summary.suites, 1);
    assert_eq!(summary.cases, 5);
    assert_eq!(summary.failures, 4);
    assert_eq!(
        summary.root_attrs,
        [("tests", "5"), ("failures", "4"), ("skipped", "0")].map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    assert!(xml.contains(r#"<testcase name="wrong-text" classname="mcp.call""#), "{xml}");
    assert!(xml.contains("stdout &quot;Echo: hi&quot; does not equal &quot;Echo: bye&quot;"), "{xml}");
}

#[tokio::test]
async fn eventually_counts_its_attempts() {
    let plan = Plan::parse(FAILING, "");
    let retried = plan.checks.iter().find(|c| c.name == "retried").unwrap();
    let server = NodeServer::start(TransportKind::StreamableHttp);
    let endpoints = Endpoints::Resolved(vec![server.endpoint()]);
    let result = check::run_check(retried, &endpoints, &RunOptions::default()).await;
    assert_eq!(result.verdict, Verdict::Fail);
    assert!(!result.reasons.is_empty(), "{result:?}");
    assert!(result.attempts >= 2, "{} attempts", result.attempts);
}

#[tokio::test]
async fn the_build_context_skips_mcp_steps() {
    let plan = Plan::parse(PASSING, "");
    let junit = std::env::temp_dir().join(format!("charly-junit-box-{}.xml", std::process::id()));
    let report = check::run_box(&plan, check::Venue::default(), None, Some(&junit)).await.unwrap();
    let text = report.to_string();
    assert_eq!(report.failure(), None, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "SKIP ping: mcp: ping requires a running container (skip under charly check box)");
    assert_eq!(
        lines[3],
        "SKIP resources: mcp: list-resources requires a running container (skip under charly check box)"
    );
    assert_eq!(lines[8], "checks: 0 passed, 0 failed, 8 skipped");
    let xml = std::fs::read_to_string(&junit).unwrap();
    std::fs::remove_file(&junit).unwrap();
    let summary = junit_summary(&xml);
    assert_eq!((summary.cases, summary.failures, summary.skipped), (8, 0, 8));
}

#[tokio::test]
async fn filters_and_missing_endpoints() {
    let plan = Plan::parse(PASSING, "");
    let options = RunOptions { filter: Some("http".into()), ..RunOptions::default() };
    let report = check::run_plan(&plan, &Endpoints::Resolved(vec![]), &options).await.unwrap();
    assert!(report.results.is_empty());
    let options = RunOptions { context: Context::Deploy, ..RunOptions::default() };
    let unavailable = Endpoints::Unavailable("container charly-x is exited".into());
    let plan = Plan::parse("a: {check: d, mcp: ping, context: [deploy]}", "");
    let report = check::run_plan(&plan, &unavailable, &options).await.unwrap();
    assert_eq!(
        (report.results[0].verdict, report.results[0].reasons.clone()),
        (Verdict::Fail, vec!["exit status 2, expected 0: container charly-x is exited".to_owned()])
    );
    let invalid = Plan::parse("a: {check: d, mcp: read, context: [deploy]}", "p.yml");
    let err = check::run(&invalid, &unavailable, &options, None).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid check plan:\n  p.yml:1: check a: mcp: read needs uri: <resource uri>"
    );
}

#[derive(Debug, Default)]
struct JunitSummary {
    suites: usize,
    cases: usize,
    failures: usize,
    skipped: usize,
    root_attrs: Vec<(String, String)>,
}

/// Parses the XML with roxmltree (any well-formedness error fails the test) and counts.
fn junit_summary(xml: &str) -> JunitSummary {
    let doc = roxmltree::Document::parse(xml).unwrap_or_else(|e| panic!("malformed JUnit XML: {e}\n{xml}"));
    let count = |name: &str| doc.descendants().filter(|n| n.has_tag_name(name)).count();
    let root = doc.root_element();
    let root_attrs = ["tests", "failures", "skipped"]
        .into_iter()
        .filter(|_| root.has_tag_name("testsuites"))
        .filter_map(|key| root.attribute(key).map(|value| (key.to_owned(), value.to_owned())))
        .collect();
    JunitSummary {
        suites: count("testsuite"),
        cases: count("testcase"),
        failures: count("failure"),
        skipped: count("skipped"),
        root_attrs,
    }
}
