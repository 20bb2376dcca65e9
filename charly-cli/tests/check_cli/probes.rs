//! `charly check mcp <method>` against `charly mcp serve` on 127.0.0.1: exact output lines
//! and exit statuses, `--json`, endpoints from `.mcp.json`, and errors.

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use charly::McpTool;
use charly_cli::cli::Cli;

use crate::util::{BlackHole, CHARLY, TestDir, closed_port, read_all};

/// `name\tfirst line of description` for every tool of charly's own catalog, in order: what
/// `list-tools` must print for `charly mcp serve`.
fn catalog_lines() -> String {
    let catalog = Cli::catalog();
    let mut lines = String::new();
    for tool in catalog.tools() {
        let first = tool.description().trim_start().lines().next().unwrap_or("").trim_end();
        lines.push_str(&format!("{}\t{}\n", tool.name(), first.replace('\t', " ")));
    }
    lines
}

#[test]
fn ping_prints_ok() {
    let t = TestDir::sample();
    let server = t.serve();
    t.run(&["check", "mcp", "ping", "--url", &server.url]).status(0).stdout("ok\n").stderr("");
}

#[test]
fn list_tools_prints_every_tool_of_the_catalog() {
    let t = TestDir::sample();
    let server = t.serve();
    let run = t.run(&["check", "mcp", "list-tools", "--url", &server.url]);
    run.status(0).stdout(&catalog_lines()).stderr("");
    // A few lines spelled out, so a catalog change that breaks them is seen here too.
    for line in [
        "version\tPrint charly's version",
        "check.mcp.ping\tPing the server; prints `ok` [destructive: starts `.mcp.json` stdio servers, running their command]",
        "box.validate\tCheck every node of the project; exit 1 with the list of problems",
    ] {
        assert!(run.stdout.lines().any(|l| l == line), "no line {line:?}\n{}", run.dump());
    }
}

#[test]
fn list_resources_prints_uri_name_mime() {
    let t = TestDir::sample();
    let server = t.serve();
    t.run(&["check", "mcp", "list-resources", "--url", &server.url]).status(0).stderr("").stdout(
        "charly://project/charly.yml\tcharly.yml\tapplication/yaml\n\
         charly://project/candy/hello-svc/charly.yml\tcandy/hello-svc/charly.yml\tapplication/yaml\n",
    );
}

#[test]
fn list_prompts_of_a_server_without_prompts_is_empty() {
    let t = TestDir::sample();
    let server = t.serve();
    t.run(&["check", "mcp", "list-prompts", "--url", &server.url]).status(0).stdout("").stderr("");
}

#[test]
fn call_prints_the_text_content() {
    let t = TestDir::sample();
    let server = t.serve();
    t.run(&["check", "mcp", "call", "--url", &server.url, "--tool", "version"])
        .status(0)
        .stdout(&format!("charly {}\n", env!("CARGO_PKG_VERSION")))
        .stderr("");
    t.run(&["check", "mcp", "call", "--url", &server.url, "--tool", "box.list.boxes", "--input", "{}"])
        .status(0)
        .stdout("hello\n");
}

#[test]
fn call_with_is_error_exits_1_with_the_text() {
    let t = TestDir::sample();
    let server = t.serve();
    t.run(&[
        "check",
        "mcp",
        "call",
        "--url",
        &server.url,
        "--tool",
        "box.cat",
        "--input",
        r#"{"path":"missing.yml"}"#,
    ])
    .status(1)
    .stdout("cannot read missing.yml: No such file or directory (os error 2)\n")
    .stderr("charly: the tool's result is an error (isError: true)\n");
}

#[test]
fn call_of_an_unknown_tool_is_a_protocol_error() {
    let t = TestDir::sample();
    let server = t.serve();
    let run = t.run(&["check", "mcp", "call", "--url", &server.url, "--tool", "no.such.tool"]);
    run.status(2).stdout("");
    assert!(
        run.stderr.starts_with("charly: tools/call: server error -32602: unknown tool `no.such.tool`"),
        "{}",
        run.dump()
    );
}

#[test]
fn call_with_input_that_is_not_an_object_is_refused_before_dialing() {
    let t = TestDir::new();
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    t.run(&["check", "mcp", "call", "--url", &url, "--tool", "x", "--input", "[1]"])
        .status(2)
        .stdout("")
        .stderr("charly: --input must be a JSON object, got an array\n");
}

#[test]
fn read_prints_the_resource_text() {
    let t = TestDir::sample();
    let server = t.serve();
    t.run(&["check", "mcp", "read", "--url", &server.url, "--uri", "charly://project/charly.yml"])
        .status(0)
        .stdout(&t.read("charly.yml"))
        .stderr("");
}

#[test]
fn an_unreachable_server_exits_2() {
    let t = TestDir::new();
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    for method in ["ping", "list-tools", "list-resources", "list-prompts"] {
        let run = t.run(&["check", "mcp", method, "--url", &url]);
        run.status(2).stdout("");
        assert!(run.stderr.starts_with(&format!("charly: cannot connect to {url}: ")), "{}", run.dump());
        assert_eq!(run.stderr.lines().count(), 1, "one line of error\n{}", run.dump());
    }
}

#[test]
fn a_server_that_never_answers_times_out_after_timeout() {
    let t = TestDir::new();
    let hole = BlackHole::start();
    let run = t.run(&["check", "mcp", "ping", "--url", &hole.url, "--timeout", "500ms"]);
    run.status(2).stdout("").stderr(&format!(
        "charly: no answer from {} within 500ms (connect and initialize timed out)\n",
        hole.url
    ));
    assert!(run.took.as_secs() < 10, "took {:?}", run.took);
}

#[test]
fn an_unknown_transport_is_refused() {
    let t = TestDir::new();
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    for method in ["ping", "list-tools"] {
        t.run(&["check", "mcp", method, "--url", &url, "--transport", "carrier-pigeon"])
            .status(2)
            .stdout("")
            .stderr(
                "error: invalid value 'carrier-pigeon' for '--transport <TRANSPORT>'\n  [possible values: http, sse]\n\nFor more information, try '--help'.\n",
            );
    }
}

/// MCP 2026-07-28 has no HTTP+SSE transport: the combination is refused before dialling (it
/// spoke legacy SSE silently), naming both flags.
#[test]
fn sse_with_protocol_2026_07_28_is_refused() {
    let t = TestDir::new();
    let url = format!("http://127.0.0.1:{}/sse", closed_port());
    t.run(&["check", "mcp", "ping", "--url", &url, "--transport", "sse", "--protocol", "2026-07-28"])
        .status(2)
        .stdout("")
        .stderr(&format!(
            "charly: {url}: MCP 2026-07-28 has no HTTP+SSE transport (that transport ended with 2024-11-05): use \
             --transport http with --protocol 2026-07-28, or keep --transport sse without --protocol 2026-07-28\n"
        ));
}

/// `--protocol 2025-11-25` against `charly mcp serve`: the session is a 2025-11-25 one (no
/// `server/discover` follows: `ping` is a ping), and `--json` says which revision was agreed
/// and, after a fallback, why discovery failed (here none: charly discovers).
#[test]
fn ping_json_names_the_negotiated_revision() {
    let t = TestDir::sample();
    let server = t.serve();
    for (protocol, version) in
        [("2025-11-25", "2025-11-25"), ("latest", "2026-07-28"), ("2026-07-28", "2026-07-28")]
    {
        let run = t.run(&["--json", "check", "mcp", "ping", "--url", &server.url, "--protocol", protocol]);
        run.status(0);
        let json = run.json();
        assert_eq!(json["protocol_version"], version, "{}", run.dump());
        assert!(json.get("fallback").is_none(), "{}", run.dump());
    }
}

#[test]
fn a_bad_timeout_is_a_usage_error() {
    let t = TestDir::new();
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    // Timeouts are parsed by clap (like `--transport`): its usage error, exit status 2.
    t.run(&["check", "mcp", "ping", "--url", &url, "--timeout", "soon"]).status(2).stdout("").stderr(
        "error: invalid value 'soon' for '--timeout <TIMEOUT>': invalid duration \"soon\" (expected e.g. 30s, \
         500ms, 2m, 1h30m or a number of seconds)\n\nFor more information, try '--help'.\n",
    );
    // Zero is refused when parsed, not discovered as a timed-out connection.
    t.run(&["check", "mcp", "ping", "--url", &url, "--timeout", "0s"]).status(2).stdout("").stderr(
        "error: invalid value '0s' for '--timeout <TIMEOUT>': \"0s\" is zero; a timeout must be more than \
         zero (e.g. 30s, 500ms)\n\nFor more information, try '--help'.\n",
    );
}

/// A `.mcp.json` with an HTTP server, a stdio server (charly itself) and an SSE server that
/// is not there.
fn mcp_json(t: &TestDir, http_url: &str, sse_url: &str) -> String {
    let proj = t.proj();
    let json = serde_json::json!({
        "mcpServers": {
            "web": {"type": "http", "url": http_url},
            "local": {
                "command": CHARLY,
                "args": ["-C", proj.to_str().unwrap(), "mcp", "serve", "--stdio"],
                "env": {"CHARLY_LOG": "off"}
            },
            "legacy": {"type": "sse", "url": sse_url},
        }
    });
    serde_json::to_string_pretty(&json).unwrap()
}

#[test]
fn servers_lists_the_mcp_json_without_dialing() {
    let t = TestDir::new();
    // Nothing listens on either URL and the stdio command is never started: `servers`
    // only reads the file.
    let http = format!("http://127.0.0.1:{}/mcp", closed_port());
    let sse = format!("http://127.0.0.1:{}/sse", closed_port());
    let json = serde_json::json!({
        "mcpServers": {
            "web": {"type": "http", "url": http},
            "local": {"command": "/nonexistent/mcp-server", "args": ["--stdio", "-v"]},
            "legacy": {"type": "sse", "url": sse},
        }
    });
    t.write(".mcp.json", &json.to_string());
    t.run(&["check", "mcp", "servers"]).status(0).stderr("").stdout(&format!(
        "web\t{http}\thttp\nlocal\t/nonexistent/mcp-server --stdio -v\tstdio\nlegacy\t{sse}\tsse\n"
    ));
    // A report's JSON has an object at its root: the list is under `servers`.
    let listed = t.run(&["check", "mcp", "servers", "--json"]).status(0).json();
    assert_eq!(
        listed,
        serde_json::json!({"servers": [
            {"name": "web", "url": http, "transport": "http"},
            {"name": "local", "command": "/nonexistent/mcp-server --stdio -v", "transport": "stdio"},
            {"name": "legacy", "url": sse, "transport": "sse"},
        ]})
    );
    // `--json` is global: before the subcommand too.
    assert_eq!(t.run(&["--json", "check", "mcp", "servers"]).status(0).json(), listed);
    // Another file, by --mcp-json.
    t.write("other/servers.json", r#"{"mcpServers": {"solo": {"url": "http://127.0.0.1:1/mcp"}}}"#);
    t.run(&["check", "mcp", "servers", "--mcp-json", "other/servers.json"])
        .status(0)
        .stdout("solo\thttp://127.0.0.1:1/mcp\thttp\n");
    // An entry whose ${VAR} is not set is listed as written, not an error for the whole list
    // (trial finding); a run that uses it says which variable.
    let unset = r#"{"mcpServers": {"solo": {"url": "http://127.0.0.1:1/mcp"},
        "remote": {"url": "http://127.0.0.1:2/mcp", "headers": {"X-Api-Key": "${CHARLY_TEST_UNSET_KEY}"}}}}"#;
    t.write("other/unset.json", unset);
    t.run(&["check", "mcp", "servers", "--mcp-json", "other/unset.json"])
        .status(0)
        .stdout("solo\thttp://127.0.0.1:1/mcp\thttp\nremote\thttp://127.0.0.1:2/mcp\thttp\n");
    let run = t.run(&["check", "mcp", "ping", "--mcp-json", "other/unset.json", "--server", "remote"]);
    run.status(2);
    assert!(run.stderr.contains("environment variable CHARLY_TEST_UNSET_KEY is not set"), "{}", run.dump());
}

#[test]
fn servers_without_a_mcp_json_says_which_file_is_missing() {
    let t = TestDir::new();
    let run = t.run(&["check", "mcp", "servers", "--mcp-json", ".mcp.json"]);
    run.status(2).stdout("");
    let path = t.proj().join(".mcp.json");
    assert!(run.stderr.starts_with(&format!("charly: cannot read {}: ", path.display())), "{}", run.dump());
}

#[test]
fn server_flag_picks_a_server_of_the_mcp_json() {
    let t = TestDir::sample();
    let server = t.serve();
    let sse = format!("http://127.0.0.1:{}/sse", closed_port());
    t.write(".mcp.json", &mcp_json(&t, &server.url, &sse));
    t.run(&["check", "mcp", "ping", "--server", "web"]).status(0).stdout("ok\n").stderr("");
    // The stdio server: a child process started from the .mcp.json command.
    t.run(&["check", "mcp", "ping", "--server", "local"]).status(0).stdout("ok\n").stderr("");
    t.run(&["check", "mcp", "list-tools", "--server", "local"]).status(0).stdout(&catalog_lines());
    t.run(&["check", "mcp", "call", "--server", "local", "--tool", "box.list.boxes"])
        .status(0)
        .stdout("hello\n");
    // The legacy SSE server is not there.
    let run = t.run(&["check", "mcp", "ping", "--server", "legacy"]);
    run.status(2).stdout("");
    assert!(run.stderr.starts_with(&format!("charly: cannot connect to {sse}")), "{}", run.dump());
    t.run(&["check", "mcp", "ping", "--server", "nope"])
        .status(2)
        .stdout("")
        .stderr("charly: no mcp server named \"nope\" (available: web, local, legacy)\n");
}

#[test]
fn several_servers_and_no_server_flag_is_an_error_naming_the_flag() {
    let t = TestDir::new();
    let http = format!("http://127.0.0.1:{}/mcp", closed_port());
    let sse = format!("http://127.0.0.1:{}/sse", closed_port());
    t.write(".mcp.json", &mcp_json(&t, &http, &sse));
    let path = t.proj().join(".mcp.json");
    t.run(&["check", "mcp", "ping"]).status(2).stdout("").stderr(&format!(
        "charly: {} provides several mcp servers (web, local, legacy): choose one with --server\n",
        path.display()
    ));
}

#[test]
fn no_target_and_no_mcp_json_names_the_ways_to_name_a_server() {
    let t = TestDir::new();
    for method in ["ping", "servers", "list-tools"] {
        t.run(&["check", "mcp", method]).status(2).stdout("").stderr(
            "charly: no .mcp.json in the project directory: name the server with a BOX, --url URL, or \
             --mcp-json PATH (as a tool: `box`, `url` or `mcp_json`)\n",
        );
    }
}

#[test]
fn a_plan_file_that_is_missing_is_named_as_a_file() {
    let t = TestDir::sample();
    for target in ["nofile.yml", "plans/web.yaml"] {
        for verb in ["validate", "run"] {
            t.run(&["check", verb, target]).status(2).stdout("").stderr(&format!(
                "charly: no plan file {target} in the project directory (a target is a plan file there, or a box \
                 name)\n"
            ));
        }
    }
}

#[test]
fn json_output_parses() {
    let t = TestDir::sample();
    let server = t.serve();
    let url = server.url.as_str();
    let json = |args: &[&str]| {
        let mut all = vec!["check", "mcp"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["--url", url, "--json"]);
        t.run(&all).status(0).json()
    };
    // Which server answered: its serverInfo.
    let pong = json(&["ping"]);
    assert_eq!(pong["server_name"], "charly", "{pong}");
    assert_eq!(pong["server_version"], env!("CARGO_PKG_VERSION"), "{pong}");
    let tools = json(&["list-tools"]);
    let tools = tools["tools"].as_array().expect("tools array");
    assert_eq!(tools.len(), Cli::catalog().len());
    let ping = tools.iter().find(|t| t["name"] == "check.mcp.ping").expect("check.mcp.ping listed");
    assert_eq!(ping["inputSchema"]["type"], "object");
    // It may start a `.mcp.json` stdio server's command, so it is not read-only.
    assert_eq!(ping["annotations"]["readOnlyHint"], false);
    assert_eq!(ping["annotations"]["destructiveHint"], true);
    let resources = json(&["list-resources"]);
    assert_eq!(resources["resources"][0]["uri"], "charly://project/charly.yml");
    assert_eq!(resources["resources"][0]["mimeType"], "application/yaml");
    assert_eq!(json(&["list-prompts"]), serde_json::json!({"prompts": []}));
    let called = json(&["call", "--tool", "version"]);
    assert_eq!(called["content"][0]["type"], "text");
    assert_eq!(called["content"][0]["text"], format!("charly {}\n", env!("CARGO_PKG_VERSION")));
    let read = json(&["read", "--uri", "charly://project/charly.yml"]);
    assert_eq!(read["contents"][0]["text"], t.read("charly.yml"));
    // isError keeps exit status 1 under --json, and the result is still printed whole.
    let run = t.run(&[
        "check",
        "mcp",
        "call",
        "--url",
        url,
        "--json",
        "--tool",
        "box.cat",
        "--input",
        r#"{"path":"missing.yml"}"#,
    ]);
    assert_eq!(run.status(1).json()["isError"], true);
}

#[test]
fn a_closed_stdout_is_not_an_error() {
    let t = TestDir::sample();
    let server = t.serve();
    // Nobody reads: the reading end is closed before the command writes anything, so its
    // first write fails with EPIPE.
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = t
        .charly()
        .args(["check", "mcp", "list-tools", "--url", &server.url])
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "", "nothing on stderr, no panic message");
}

#[test]
fn a_reader_that_stops_after_one_line_is_not_an_error() {
    let t = TestDir::sample();
    // A resource far larger than a pipe's buffer (800 KB; resources/read serves at most 1 MiB),
    // so the writer is still writing when the reader goes away.
    let big: String = (0..25_000).map(|i| format!("# line {i:06} of a long comment\n")).collect();
    t.write("charly.yml", &format!("{big}{}", t.read("charly.yml")));
    let server = t.serve();
    let mut child = t
        .charly()
        .args(["check", "mcp", "read", "--url", &server.url, "--uri", "charly://project/charly.yml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    lines.read_line(&mut first).unwrap();
    assert_eq!(first, "# line 000000 of a long comment\n");
    drop(lines);
    let stderr = String::from_utf8(read_all(child.stderr.take().unwrap())).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(stderr, "", "nothing on stderr, no panic message");
}

#[test]
fn a_large_output_arrives_whole_through_a_pipe() {
    let t = TestDir::sample();
    let big: String = (0..25_000).map(|i| format!("# line {i:06} of a long comment\n")).collect();
    let contents = format!("{big}{}", t.read("charly.yml"));
    t.write("charly.yml", &contents);
    let server = t.serve();
    let run = t.run(&["check", "mcp", "read", "--url", &server.url, "--uri", "charly://project/charly.yml"]);
    run.status(0).stderr("");
    assert_eq!(run.stdout.len(), contents.len());
    assert!(run.stdout == contents, "the text arrived changed");
}

#[test]
fn header_goes_to_the_server_whatever_names_it() {
    let t = TestDir::new();
    let hole = BlackHole::start();
    t.write(
        ".mcp.json",
        &serde_json::json!({"mcpServers": {"hole": {"url": hole.url, "headers": {"X-From-File": "f"}}}})
            .to_string(),
    );
    let header = ["--header", "X-Charly-Probe: yes", "--timeout", "500ms"];
    for source in [&["--url", hole.url.as_str()][..], &["--server", "hole"][..]] {
        let mut args = vec!["check", "mcp", "ping"];
        args.extend_from_slice(source);
        args.extend_from_slice(&header);
        t.run(&args).status(2).stderr(&format!(
            "charly: no answer from {} within 500ms (connect and initialize timed out)\n",
            hole.url
        ));
    }
    let heads = hole.heads();
    assert_eq!(heads.len(), 2, "one initialize POST per run: {heads:#?}");
    let has = |head: &str, line: &str| head.lines().any(|l| l.eq_ignore_ascii_case(line));
    assert!(has(&heads[0], "x-charly-probe: yes"), "--url run: {}", heads[0]);
    assert!(has(&heads[1], "x-charly-probe: yes"), "--server run: {}", heads[1]);
    assert!(has(&heads[1], "x-from-file: f"), "the file's own header too: {}", heads[1]);
}

// ===== --input @FILE and @- =====

/// `box.write`'s arguments with `size` bytes of content (a line of `x`s, newline-ended).
fn write_args(path: &str, size: usize) -> (String, String) {
    let content = format!("{}\n", "x".repeat(size - 1));
    (serde_json::json!({"path": path, "content": content}).to_string(), content)
}

/// A 1 MiB `box.write` read from a file reaches the server whole: past Linux's 128 KiB cap
/// on one argument, which `--input JSON` cannot pass.
#[test]
fn input_from_a_file_carries_a_megabyte() {
    let t = TestDir::sample();
    let server = t.serve();
    let (args, content) = write_args("big.txt", 1 << 20);
    assert!(args.len() > 128 << 10);
    t.write("../args.json", &args);
    t.run(&["check", "mcp", "call", "--url", &server.url, "--tool", "box.write", "--input", "@../args.json"])
        .status(0)
        .stderr("");
    assert_eq!(t.read("big.txt"), content);
}

/// `@-` reads the arguments from stdin, to its end.
#[test]
fn input_from_stdin_carries_a_megabyte() {
    let t = TestDir::sample();
    let server = t.serve();
    let (args, content) = write_args("piped.txt", 1 << 20);
    let mut cmd = t.charly();
    let argv = ["check", "mcp", "call", "--url", &server.url, "--tool", "box.write", "--input", "@-"];
    cmd.args(argv).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, args.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(t.read("piped.txt"), content);
}

/// Over 4 MiB, the most one request may carry to charly's server, `--input` is refused before
/// dialing (the URL has no server), with a message naming the flag and the limit; so is a
/// file that is not there.
#[test]
fn input_over_four_mebibytes_is_refused_before_dialing() {
    let t = TestDir::new();
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    let (args, _) = write_args("big.txt", 5 << 20);
    t.write("args.json", &args);
    t.run(&["check", "mcp", "call", "--url", &url, "--tool", "box.write", "--input", "@args.json"])
        .status(2)
        .stdout("")
        .stderr(
            "charly: --input @args.json is larger than 4 MiB (4194304 bytes), the most one MCP request \
             may carry to charly's server on either transport; send smaller arguments\n",
        );
    let mut cmd = t.charly();
    cmd.args(["check", "mcp", "call", "--url", &url, "--tool", "box.write", "--input", "@-"]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // charly stops reading past the limit and exits; the rest of the write may meet a closed pipe.
    let writer = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, args.as_bytes()));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.starts_with("charly: --input @- is larger than 4 MiB"), "{stderr}");
    // Just under 4 MiB passes the file's own cap, but the tools/call request around it would
    // not (a 413 over HTTP): refused before dialing, saying so.
    let (args, _) = write_args("near.txt", (4 << 20) - 100);
    assert!(args.len() <= 4 << 20);
    t.write("near.json", &args);
    let run = t.run(&["check", "mcp", "call", "--url", &url, "--tool", "box.write", "--input", "@near.json"]);
    run.status(2).stdout("");
    assert!(
        run.stderr
            .starts_with("charly: --input @near.json: the tools/call request for `box.write` would be ")
            && run.stderr.contains("over the 4 MiB (4194304 bytes)"),
        "{}",
        run.dump()
    );
    let (args, _) = write_args("fits.txt", (4 << 20) - 4096);
    t.write("fits.json", &args);
    // The same with room for the envelope goes on to dial (and fails: no server there).
    let fits =
        t.run(&["check", "mcp", "call", "--url", &url, "--tool", "box.write", "--input", "@fits.json"]);
    fits.status(2).stdout("");
    assert!(!fits.stderr.contains("--input"), "{}", fits.dump());
    let run = t.run(&["check", "mcp", "call", "--url", &url, "--tool", "x", "--input", "@nope.json"]);
    run.status(2)
        .stdout("")
        .stderr("charly: --input @nope.json: cannot read it: No such file or directory (os error 2)\n");
}

/// `check.mcp.call` as an MCP tool: `@FILE` is read beneath the served project's root (here the
/// HTTP server calls itself with a 1 MiB `box.write` read from `in/args.json`); a path leading
/// out is refused like the other paths a served call names, and `@-` is refused because a stdio
/// server's stdin is the protocol stream.
#[test]
fn served_input_files_stay_inside_the_project() {
    let t = TestDir::sample();
    let server = t.serve();
    let (args, content) = write_args("served.txt", 1 << 20);
    t.write("in/args.json", &args);
    t.write("../outside.json", r#"{"path":"evil.txt","content":"x"}"#);
    std::os::unix::fs::symlink(t.proj().join("../outside.json"), t.proj().join("link.json")).unwrap();
    let call = |input: &str| {
        let outer = serde_json::json!({"tool": "box.write", "url": server.url, "input": input}).to_string();
        t.run(&["check", "mcp", "call", "--url", &server.url, "--tool", "check.mcp.call", "--input", &outer])
    };
    call("@in/args.json").status(0).stderr("");
    assert_eq!(t.read("served.txt"), content);
    for (input, reason) in [
        ("@../outside.json", "`..` is not allowed"),
        ("@/etc/hostname", "absolute paths are not allowed"),
        ("@link.json", "leads outside the project root"),
        ("@-", "--input @- reads standard input, which for an MCP call is the protocol stream"),
    ] {
        let run = call(input);
        run.status(1);
        assert!(run.stdout.contains(reason), "{input}: {}", run.dump());
        if input != "@-" {
            assert!(run.stdout.contains(&format!("--input {input}: refusing path")), "{}", run.dump());
        }
    }
    assert!(!t.proj().join("evil.txt").exists());
}

/// `charly check mcp call` of `tool` with `input` on `server`.
fn call_tool(
    t: &TestDir,
    server: &crate::util::Server,
    tool: &str,
    input: serde_json::Value,
) -> crate::util::Run {
    t.run(&["check", "mcp", "call", "--url", &server.url, "--tool", tool, "--input", &input.to_string()])
}

/// clap's errors reach a tool's caller in its terms: an optional positional is named by its
/// JSON key (`box`), not clap's placeholder `[BOX]` (trial 28, L4).
#[test]
fn clap_conflicts_name_the_tools_arguments() {
    let t = TestDir::sample();
    let server = t.serve();
    let run =
        call_tool(&t, &server, "check.mcp.servers", serde_json::json!({"box": "hello", "url": server.url}));
    run.status(1);
    assert!(
        run.stdout.contains("tool `check.mcp.servers`:") && run.stdout.contains("`box`"),
        "{}",
        run.dump()
    );
    assert!(!run.stdout.contains("[BOX]"), "{}", run.dump());
}

/// A refused path names the argument it came from, for every tool that takes one (trial 28,
/// L5): `box.cat`'s `path`, `check.validate`'s `target`, `check.run`'s `junit`,
/// `secrets.gpg.show`'s `file`.
#[test]
fn refused_paths_name_their_argument() {
    let t = TestDir::sample();
    t.write("../plan.yml", "p:\n  check: x\n  mcp: ping\n  context: [deploy]\n");
    let server = t.serve();
    for (tool, input, arg) in [
        ("box.cat", serde_json::json!({"path": "../outside"}), "path"),
        ("box.write", serde_json::json!({"path": ".git/config", "content": "x"}), "path"),
        ("check.validate", serde_json::json!({"target": "../plan.yml"}), "target"),
        ("check.run", serde_json::json!({"target": "hello", "junit": "../junit.xml"}), "junit"),
        ("secrets.gpg.show", serde_json::json!({"file": "../.secrets"}), "file"),
    ] {
        let run = call_tool(&t, &server, tool, input);
        run.status(1);
        assert!(run.stdout.contains(&format!("argument `{arg}`: refusing path")), "{tool}: {}", run.dump());
    }
}
