//! `charly check run|validate|box`: plans against `charly mcp serve`, JUnit XML, validation
//! messages and the build context.

use crate::util::{TestDir, Xml as _, closed_port};

const PASSING: &str = r#"# every method, each matcher shape
pinged:
  check: the server answers ping
  mcp: ping
  context: [deploy]
  stdout: "ok\n"
tools:
  check: it lists box.validate
  mcp: list-tools
  context: [deploy]
  stdout:
    - contains: "box.validate\t"
    - not_contains: "mcp.serve\t"
    - matches: '(?m)^check\.mcp\.ping\t'
resources:
  check: the project file is a resource
  mcp: list-resources
  context: [deploy]
  stdout: {contains: "charly://project/charly.yml\tcharly.yml\tapplication/yaml"}
prompts:
  check: no prompts
  mcp: list-prompts
  context: [deploy]
  stdout: ""
version:
  check: the version tool answers
  mcp: call
  tool: version
  context: [deploy]
  stdout: {matches: '^charly \d+\.\d+\.\d+', not_equals: ""}
missing:
  check: a missing file is a tool error
  mcp: call
  tool: box.cat
  input: {path: missing.yml}
  context: [deploy]
  exit_status: 1
  stdout: {contains: "cannot read missing.yml"}
read:
  check: charly.yml reads back
  mcp: read
  uri: charly://project/charly.yml
  context: [deploy]
  stdout: {contains: "candy: [hello-svc]"}
"#;

const FAILING: &str = r#"pinged:
  check: the server answers ping
  mcp: ping
  context: [deploy]
wrong:
  check: expects a tool that <is> not "there" & fails
  mcp: list-tools
  context: [deploy]
  stdout: {contains: "no-such-tool<&>"}
"#;

#[test]
fn a_passing_plan_exits_0() {
    let t = TestDir::sample();
    t.write("plan.yml", PASSING);
    let server = t.serve();
    let run = t.run(&["check", "run", "plan.yml", "--url", &server.url]);
    run.status(0).stderr("");
    assert_eq!(
        run.report(),
        "PASS pinged: the server answers ping (T)\n\
         PASS tools: it lists box.validate (T)\n\
         PASS resources: the project file is a resource (T)\n\
         PASS prompts: no prompts (T)\n\
         PASS version: the version tool answers (T)\n\
         PASS missing: a missing file is a tool error (T)\n\
         PASS read: charly.yml reads back (T)\n\
         checks: 7 passed, 0 failed, 0 skipped\n",
        "{}",
        run.dump()
    );
}

#[test]
fn a_failing_plan_exits_1_and_writes_well_formed_junit() {
    let t = TestDir::sample();
    t.write("plan.yml", FAILING);
    let server = t.serve();
    let run = t.run(&["check", "run", "plan.yml", "--url", &server.url, "--junit", "out.xml"]);
    run.status(1).stderr("charly: some checks failed\n");
    let report = run.report();
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], "PASS pinged: the server answers ping (T)", "{}", run.dump());
    assert_eq!(lines[1], "FAIL wrong: expects a tool that <is> not \"there\" & fails (T)", "{}", run.dump());
    assert!(lines[2].starts_with("    stdout \"version\\tPrint charly's version\\n"), "{}", run.dump());
    assert!(lines[2].ends_with("does not contain \"no-such-tool<&>\""), "{}", run.dump());
    assert_eq!(lines[3..], ["checks: 1 passed, 1 failed, 0 skipped"], "{}", run.dump());

    let xml = t.read("out.xml");
    let doc =
        roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("out.xml is not well-formed: {e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!((root.attr("tests"), root.attr("failures"), root.attr("skipped")), ("2", "1", "0"));
    let suites: Vec<_> = root.all("testsuite").collect();
    assert_eq!(suites.len(), 1, "{xml}");
    assert_eq!(suites[0].attr("tests"), "2");
    let cases: Vec<_> = suites[0].all("testcase").collect();
    assert_eq!(cases.iter().map(|c| c.attr("name")).collect::<Vec<_>>(), ["pinged", "wrong"]);
    assert_eq!(cases[0].attr("classname"), "mcp.ping");
    assert_eq!(cases[0].all("failure").count(), 0);
    assert_eq!(cases[1].attr("classname"), "mcp.list-tools");
    let failure = cases[1].all("failure").next().unwrap_or_else(|| panic!("no <failure> in\n{xml}"));
    assert!(failure.attr("message").ends_with("does not contain \"no-such-tool<&>\""), "{xml}");
    assert!(
        failure.text().unwrap_or_default().starts_with("expects a tool that <is> not \"there\" & fails\n"),
        "{xml}"
    );
    for case in cases {
        case.attr("time").parse::<f64>().expect("time is a number");
    }
}

#[test]
fn a_passing_plan_writes_junit_without_failures() {
    let t = TestDir::sample();
    t.write("plan.yml", PASSING);
    let server = t.serve();
    // The report's directory is not created: the error names the file.
    let missing = t.proj().join("reports/junit.xml");
    t.run(&["check", "run", "plan.yml", "--url", &server.url, "--junit", "reports/junit.xml"])
        .status(2)
        .stderr(&format!("charly: writing {}: No such file or directory (os error 2)\n", missing.display()));
    let run = t.run(&["check", "run", "plan.yml", "--url", &server.url, "--junit", "junit.xml"]);
    run.status(0);
    let xml = t.read("junit.xml");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!((root.attr("tests"), root.attr("failures")), ("7", "0"));
    assert!(root.all("testsuite").flat_map(|s| s.all("testcase")).all(|c| c.all("failure").next().is_none()));
}

#[test]
fn a_plan_from_the_mcp_json_by_server_name() {
    let t = TestDir::sample();
    t.write("plan.yml", PASSING);
    let server = t.serve();
    t.write(".mcp.json", &serde_json::json!({"mcpServers": {"web": {"url": server.url}}}).to_string());
    let run = t.run(&["check", "run", "plan.yml", "--server", "web"]);
    run.status(0);
    assert!(run.stdout.ends_with("checks: 7 passed, 0 failed, 0 skipped\n"), "{}", run.dump());
}

#[test]
fn a_plan_file_without_a_server_fails_its_mcp_steps() {
    let t = TestDir::sample();
    t.write("plan.yml", FAILING);
    let run = t.run(&["check", "run", "plan.yml"]);
    run.status(1);
    let reason = "    exit status 2, expected 0: plan.yml: no server for mcp: steps (give --url or --server)";
    assert_eq!(
        run.report(),
        format!(
            "FAIL pinged: the server answers ping (T)\n{reason}\n\
             FAIL wrong: expects a tool that <is> not \"there\" & fails (T)\n{reason}\n    \
             stdout \"\" does not contain \"no-such-tool<&>\"\n\
             checks: 0 passed, 2 failed, 0 skipped\n"
        ),
        "{}",
        run.dump()
    );
}

#[test]
fn an_unreachable_server_fails_the_steps_with_exit_status_2() {
    let t = TestDir::sample();
    t.write("plan.yml", PASSING);
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    let run = t.run(&["check", "run", "plan.yml", "--url", &url]);
    run.status(1);
    assert!(run.stdout.ends_with("checks: 0 passed, 7 failed, 0 skipped\n"), "{}", run.dump());
    let prefix = format!("    exit status 2, expected 0: cannot connect to {url}");
    assert!(run.stdout.lines().any(|l| l.starts_with(&prefix)), "{}", run.dump());
    // `missing` expects exit status 1 (isError): an unreachable server must not pass it.
    assert!(
        run.stdout.contains(&format!("    exit status 2, expected 1: cannot connect to {url}")),
        "{}",
        run.dump()
    );
}

#[test]
fn the_build_context_skips_mcp_steps() {
    let t = TestDir::sample();
    t.write("plan.yml", FAILING);
    t.run(&["check", "run", "plan.yml", "--context", "build"]).status(0).stderr("").stdout(
        "SKIP pinged: mcp: ping requires a running container (skip under charly check box)\n\
         SKIP wrong: mcp: list-tools requires a running container (skip under charly check box)\n\
         checks: 0 passed, 0 failed, 2 skipped\n",
    );
}

#[test]
fn filter_runs_only_checks_of_that_verb() {
    let t = TestDir::sample();
    t.write("plan.yml", FAILING);
    // A filter that selects no check is an error, not a run of nothing that passes (issue 14's
    // second trial): a word that is no verb, and a verb the plan has no check of.
    t.run(&["check", "run", "plan.yml", "--filter", "shell"]).status(2).stderr(
        "charly: --filter shell: not a check verb; the plan's checks have verbs: mcp (nothing was run)\n",
    );
    t.run(&["check", "run", "plan.yml", "--filter", "file"]).status(2).stderr(
        "charly: --filter file: no check of the plan has this verb; the plan's checks have verbs: mcp \
         (nothing was run)\n",
    );
}

#[test]
fn check_box_skips_the_sample_box_ping() {
    let t = TestDir::sample();
    t.run(&["check", "box", "hello"]).status(0).stderr("").stdout(
        "SKIP hello-svc-ping: mcp: ping requires a running container (skip under charly check box)\n\
         checks: 0 passed, 0 failed, 1 skipped\n",
    );
}

#[test]
fn check_box_of_a_box_the_project_does_not_have() {
    let t = TestDir::sample();
    t.run(&["check", "box", "nobox"])
        .status(2)
        .stdout("")
        .stderr("charly: no box named `nobox` in charly.yml (boxes: hello)\n");
}

#[test]
fn check_box_after_scaffolding_with_the_binary() {
    let t = TestDir::new();
    t.run(&["box", "new", "project", "."]).status(0);
    t.run(&["box", "new", "box", "web", "--base", "quay.io/fedora/fedora:43"]).status(0);
    t.run(&["box", "new", "candy", "svc"]).status(0);
    t.run(&["box", "add-candy", "web", "svc"]).status(0);
    let candy = t.read("candy/svc/charly.yml");
    t.write(
        "candy/svc/charly.yml",
        &format!("{candy}svc-tools:\n  check: svc lists its tools\n  mcp: list-tools\n  context: [deploy]\n"),
    );
    t.run(&["check", "box", "web"]).status(0).stdout(
        "SKIP svc-tools: mcp: list-tools requires a running container (skip under charly check box)\n\
         checks: 0 passed, 0 failed, 1 skipped\n",
    );
    t.run(&["check", "validate", "web"]).status(0).stdout("ok: 1 checks\n");
}

#[test]
fn validate_lists_every_problem_and_the_allowed_methods() {
    let t = TestDir::sample();
    t.write(
        "bad.yml",
        "pong:\n  check: a bad method\n  mcp: pong\n  context: [deploy]\n\
         nocall:\n  check: call without a tool\n  mcp: call\n  context: [deploy]\n\
         noread:\n  check: read without a uri\n  mcp: read\n  context: [deploy]\n\
         nodeploy:\n  check: no deploy context\n  mcp: ping\n",
    );
    // Problems name the plan as given, relative to the project (never where it lives on disk),
    // and the line of the check.
    let p = "bad.yml";
    let problems = format!(
        "{p}:1: check pong: mcp: unknown method \"pong\" (allowed: ping, servers, list-tools, list-resources, \
         list-prompts, call, read, lint, list-skills, read-skill)\n\
         {p}:5: check nocall: mcp: call needs tool: <tool name>\n\
         {p}:9: check noread: mcp: read needs uri: <resource uri>\n\
         {p}:13: check nodeploy: mcp: ping needs context: [deploy] (mcp steps talk to a running container)\n"
    );
    t.run(&["check", "validate", "bad.yml"])
        .status(1)
        .stdout(&problems)
        .stderr("charly: the check plan has problems\n");
    // `run` refuses the plan and runs nothing.
    let indented: String = problems.lines().map(|l| format!("  {l}\n")).collect();
    t.run(&["check", "run", "bad.yml", "--url", "http://127.0.0.1:1/mcp"])
        .status(2)
        .stdout("")
        .stderr(&format!("charly: invalid check plan:\n{indented}"));
}

#[test]
fn validate_a_good_plan() {
    let t = TestDir::sample();
    t.write("plan.yml", PASSING);
    t.run(&["check", "validate", "plan.yml"]).status(0).stdout("ok: 7 checks\n").stderr("");
    t.run(&["check", "validate", "hello"]).status(0).stdout("ok: 1 checks\n").stderr("");
}

/// `dns:` with `server:` asks that DNS server, not the host's resolver: a real dnsmasq on a
/// free 127.0.0.1 port answers `charly-e2e.test` with an address of its own, and `NXDOMAIN`
/// for a name it does not know.
#[test]
fn dns_server_asks_that_server() {
    use std::process::{Command, Stdio};
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    // dnsmasq listens on UDP and TCP: a port free for UDP may be another test's TCP port by
    // the time it binds (it then exits, "Address in use"), so a few ports are tried.
    let start = |port: u16| -> Option<Kill> {
        let mut dnsmasq = Command::new("dnsmasq")
            .args([
                "--keep-in-foreground",
                "--no-resolv",
                "--no-hosts",
                "--bind-interfaces",
                "--listen-address=127.0.0.1",
                &format!("--port={port}"),
                "--address=/charly-e2e.test/10.11.12.13",
                "--local=/test/",
                "--user=root",
                "--pid-file",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("dnsmasq (Debian dnsmasq-base) is installed by scripts/runtimes.sh");
        // Wait (bounded) until it is bound: a UDP port in use cannot be bound again.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            if dnsmasq.try_wait().unwrap().is_some() {
                let mut err = String::new();
                let _ = std::io::Read::read_to_string(dnsmasq.stderr.as_mut().unwrap(), &mut err);
                eprintln!("dnsmasq on port {port} exited: {err}");
                return None;
            }
            assert!(std::time::Instant::now() < deadline, "dnsmasq did not bind 127.0.0.1:{port}");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Some(Kill(dnsmasq))
    };
    let (port, _dnsmasq) = (0..5)
        .find_map(|_| {
            let port = {
                let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
                s.local_addr().unwrap().port()
            };
            start(port).map(|k| (port, k))
        })
        .expect("dnsmasq exited on 5 free ports in a row (stderr above)");
    let t = TestDir::new();
    t.write(
        "plan.yml",
        &format!(
            "ours:\n  check: dnsmasq knows it\n  dns: charly-e2e.test\n  server: 127.0.0.1:{port}\n  addrs: [10.11.12.13]\n\
             wrong:\n  check: not that address\n  dns: charly-e2e.test\n  server: 127.0.0.1:{port}\n  addrs: [10.0.0.1]\n\
             unknown:\n  check: a name it does not know\n  dns: nothing.test\n  server: 127.0.0.1:{port}\n\
             absent:\n  check: resolvable false passes for it\n  dns: nothing.test\n  server: 127.0.0.1:{port}\n  resolvable: false\n\
             host:\n  check: the host's resolver does not know the name\n  dns: charly-e2e.test\n  resolvable: false\n\
             bad:\n  check: a server that is not an address\n  dns: charly-e2e.test\n  server: dns.example\n"
        ),
    );
    let run = t.run(&["check", "run", "plan.yml"]);
    run.status(1);
    let report = run.report();
    for line in [
        "PASS ours: dnsmasq knows it (T)\n",
        "FAIL wrong: not that address (T)\n    dns charly-e2e.test resolves to 10.11.12.13, not 10.0.0.1\n",
        &format!(
            "FAIL unknown: a name it does not know (T)\n    dns nothing.test does not resolve: server 127.0.0.1:{port}: no such name (NXDOMAIN)\n"
        ),
        "PASS absent: resolvable false passes for it (T)\n",
        "PASS host: the host's resolver does not know the name (T)\n",
        "FAIL bad: a server that is not an address (T)\n    dns charly-e2e.test: server \"dns.example\" is not an IP address or IP:PORT",
    ] {
        assert!(report.contains(line), "{line:?} not in\n{report}\n{}", run.dump());
    }
}

/// `charly check run <box>` runs the box's mcp: steps against its container and nothing else
/// there: its cdp:/vnc:/dbus:/wl: steps fail naming `charly check live <box>` instead of
/// probing this machine's browser, desktop and bus (trial 2 of issue 15, H3: they passed
/// against the host's session bus). A vnc: step with its own vnc_addr: still runs.
#[test]
fn check_run_of_a_box_refuses_its_desktop_steps_naming_check_live() {
    let t = TestDir::sample();
    let lab = crate::vnc_lab::Lab::x11vnc(320, 240, None);
    let mut yml = t.read("charly.yml");
    yml.push_str(&format!(
        r#"page-up:
  check: the page answers
  cdp: status
desk-up:
  check: the desktop answers
  vnc: status
bus-up:
  check: the bus answers
  dbus: list
wl-up:
  check: sway answers
  wl: status
addressed:
  check: a desktop named by its address
  vnc: status
  vnc_addr: {}
"#,
        lab.addr
    ));
    t.write("charly.yml", &yml);
    let run = t.run(&["check", "run", "hello"]);
    let out = run.report();
    for (name, verb) in [
        ("page-up", "cdp: status"),
        ("desk-up", "vnc: status"),
        ("bus-up", "dbus: list"),
        ("wl-up", "wl: status"),
    ] {
        let line =
            out.lines().find(|l| l.contains(&format!(" {name}:"))).unwrap_or_else(|| panic!("{name}: {out}"));
        assert!(line.starts_with("FAIL"), "{line}");
        assert!(
            out.contains(&format!(
                "{verb} is for box hello's desktop, which `charly check run hello` does not reach"
            )) && out.contains("run `charly check live hello`"),
            "{out}"
        );
    }
    assert!(out.contains("PASS addressed:"), "{out}");
}

/// As a tool, `junit` writes a new file or over an earlier JUnit report, never over another
/// file of the project (a `--read-only` server's client replaced charly.yml with a report:
/// trial 28, H2), and never into `.git/`; `check.box`, a read-only tool, writes no file at all
/// (trial 30, M3) and has no `junit` argument, while `check.run` writes its report.
#[test]
fn served_junit_writes_only_reports() {
    let t = TestDir::sample();
    std::fs::create_dir_all(t.proj().join(".git")).unwrap();
    let server = t.serve();
    t.write("plan.yml", "pinged:\n  check: it answers\n  mcp: ping\n  context: [deploy]\n");
    let before = t.read("charly.yml");
    let call = |tool: &str, input: serde_json::Value| {
        t.run(&["check", "mcp", "call", "--url", &server.url, "--tool", tool, "--input", &input.to_string()])
    };
    let run = call("check.box", serde_json::json!({"box": "hello", "junit": "out/box.xml"}));
    // Nor does it list `junit` (trial 31, L2): the argument is the terminal's only.
    run.status(1);
    assert!(
        run.stdout.contains("tool `check.box`: unknown argument `junit` (allowed: box, filter)"),
        "{}",
        run.dump()
    );
    assert!(!t.proj().join("out").exists(), "{}", run.dump());
    let run_plan = |junit: &str| {
        call("check.run", serde_json::json!({"target": "plan.yml", "url": server.url, "junit": junit}))
    };
    let run = run_plan("charly.yml");
    run.status(1);
    assert!(
        run.stdout.contains("argument `junit`: charly.yml exists and is not a JUnit report")
            && run.stdout.contains("nothing was written"),
        "{}",
        run.dump()
    );
    assert_eq!(t.read("charly.yml"), before);
    let run = run_plan(".git/junit.xml");
    run.status(1);
    assert!(run.stdout.contains("it is inside .git/"), "{}", run.dump());
    assert!(!t.proj().join(".git/junit.xml").exists());
    // A new report, then the same report again.
    run_plan("junit.xml").status(0);
    assert!(t.read("junit.xml").contains("<testsuites"), "{}", t.read("junit.xml"));
    run_plan("junit.xml").status(0);
}

/// A plan file that looks fine and checks nothing is a problem (trial 28, M1, M6): keys at
/// column 0 under a check's name, nodes that are not maps, a node with a verb but no `check:`,
/// no check at all, and a step that needs a box's container, which a plan file runs without.
/// `check run` refuses such a plan as `check validate` does, and runs nothing.
#[test]
fn a_plan_file_that_checks_nothing_is_refused() {
    let t = TestDir::sample();
    t.write("flat.yml", "web-up:\ncheck: the site answers\nhttp: http://127.0.0.1:1/\nstatus: 200\n");
    let run = t.run(&["check", "validate", "flat.yml"]);
    run.status(1);
    assert!(
        run.stdout.contains("flat.yml:1: check web-up: is empty, not a check")
            && run.stdout.contains("(are its keys indented under it?)")
            && run
                .stdout
                .contains("flat.yml:3: check http: is the value \"http://127.0.0.1:1/\", not a check"),
        "{}",
        run.dump()
    );
    t.run(&["check", "run", "flat.yml"]).status(2).stdout("");
    t.write("mixed.yml", "a:\n  http: http://x/\n  status: 200\nj: [1, 2]\nf:\n  check: hosts\n  file: /etc/hosts\n  exists: true\nok:\n  check: off\n  file: /etc/hosts\n  skip: true\n");
    let run = t.run(&["check", "validate", "mixed.yml"]);
    run.status(1);
    for expected in [
        "mixed.yml:1: check a: has http: but no check:",
        "mixed.yml:4: check j: is a list, not a check",
        "mixed.yml:5: check f: file: steps run inside a box's container, and a plan file runs with none",
    ] {
        assert!(run.stdout.contains(expected), "{expected}\n{}", run.dump());
    }
    assert!(!run.stdout.contains("check ok:"), "a skipped step never runs: {}", run.dump());
    t.write("empty.yml", "# nothing yet\n");
    t.run(&["check", "validate", "empty.yml"]).status(1).stdout(
        "empty.yml: the plan holds no checks; a check is a top-level node with check: (what it checks) and one \
         verb (mcp:, http:, cdp:, ...)\n",
    );
}

/// On a terminal too, `--junit` writes nothing into a git directory: `.git/`, a symlink to it,
/// a bare repository's config (trial 31, HIGH-1: the CLI wrote them); nor does `box new
/// project` make a project inside one. An ordinary path still gets its report.
#[test]
fn terminal_junit_stays_out_of_git_directories() {
    let t = TestDir::sample();
    let git = |args: &[&str]| {
        assert!(
            std::process::Command::new("git").args(args).current_dir(t.proj()).status().unwrap().success()
        )
    };
    git(&["init", "-q"]);
    git(&["init", "-q", "--bare", "bare"]);
    std::os::unix::fs::symlink(t.proj().join(".git"), t.proj().join("gl")).unwrap();
    let config = t.read("bare/config");
    for junit in [".git/r.xml", "gl/hooks/pre-push", "bare/config", "bare/hooks/x/y.xml"] {
        let run = t.run(&["check", "box", "hello", "--junit", junit]);
        run.status(2);
        assert!(
            run.stderr.contains("argument `junit`") && run.stderr.contains("inside a git directory"),
            "{junit}: {}",
            run.dump()
        );
    }
    assert_eq!(t.read("bare/config"), config);
    assert!(!t.proj().join(".git/r.xml").exists() && !t.proj().join(".git/hooks/pre-push").exists());
    assert!(!t.proj().join("bare/hooks/x").exists());
    let run = t.run(&["box", "new", "project", "bare/x"]);
    run.status(2);
    assert!(!t.proj().join("bare/x").exists(), "{}", run.dump());
    t.run(&["check", "box", "hello", "--junit", "box-report.xml"]).status(0);
    assert!(t.read("box-report.xml").contains("<testsuites"));
}
