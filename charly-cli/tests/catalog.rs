//! The catalog of `charly` itself: full and read-only, as reviewed snapshots. A build with the
//! `read-only` feature has exactly the read-only catalog.

use charly::McpTool;
use charly_cli::cli::Cli;

fn names(catalog: &charly::Catalog) -> Vec<&str> {
    catalog.tools().iter().map(|t| t.name()).collect()
}

#[cfg(not(feature = "read-only"))]
#[test]
fn full_catalog_snapshot() {
    let catalog = Cli::catalog();
    assert!(catalog.get("mcp.serve").is_none(), "mcp serve is not a tool");
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("charly_catalog", catalog.to_json());
    });
}

/// Every input and output schema of charly's catalog follows the strict rules
/// (`charly::schema::strict_violations`: inlined, standard formats, one concrete `type`).
#[test]
fn every_schema_is_strict() {
    let catalog = Cli::catalog();
    assert!(!catalog.is_empty());
    for tool in catalog.tools() {
        let violations = charly::schema::strict_violations(tool.input_schema());
        assert!(violations.is_empty(), "{} input: {violations:#?}", tool.name());
        if let Some(output) = tool.output_schema() {
            let violations = charly::schema::strict_violations(output);
            assert!(violations.is_empty(), "{} output: {violations:#?}", tool.name());
        }
    }
}

#[test]
fn read_only_catalog_snapshot() {
    // Under the `read-only` feature the catalog is already read-only; `read_only()` is then
    // the identity, so both builds compare against the same snapshot.
    let catalog = Cli::catalog().read_only();
    assert!(catalog.tools().iter().all(|t| !t.is_destructive()));
    insta::with_settings!({snapshot_path => "../../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("charly_catalog_read_only", catalog.to_json());
    });
}

#[cfg(feature = "read-only")]
#[test]
fn read_only_build_drops_destructive_tools_at_compile_time() {
    let catalog = Cli::catalog();
    assert_eq!(names(&catalog), names(&catalog.read_only()));
    assert!(catalog.get("box.set").is_none());
    assert!(catalog.get("box.validate").is_some());
}

/// The tools issue 4 stars, plus `box.generate` (it writes a file) and `check.run`/`check.live`
/// (their `mcp: call` steps can invoke anything, like `check.mcp.call`), `check.mcp.lint` (it
/// starts `.mcp.json` stdio servers like the other probes), `check.mcp.logout` (it removes a
/// server's OAuth tokens from the credential store), `mcp.install`/`mcp.uninstall`
/// (they write a host's config file), and every host-state leaf that writes config.yml, a
/// credential store, a key, a plaintext file, a script or a rules file (`secrets.gpg.decrypt`
/// writes `--output`; `export-key` writes key files or the Secret Service, although the
/// reference marked it read-only), and the `deploy.*` leaves that write the deploy file or an
/// `--output` file (`deploy.export`, which the reference marked read-only), and `box.pull` (it
/// writes local image storage, which the reference's `image.pull` claimed was read-only), and
/// `box.merge` (it replaces the image in local storage), the `check.cdp.*` leaves that act
/// on a page (open, close, eval, click, type, raw, the `spa.*` input) or write a file
/// (`screenshot`), `check.dbus.call` (any method) and `check.dbus.notify`, and the
/// `check.vnc.*` leaves that act on a desktop (pointer, keys, raw messages), write a
/// screenshot file, or replace a stored password (`status` only reads), and the `check.wl.*`
/// leaves that act on a desktop (pointer, keys, windows, clipboard set/clear, exec,
/// resolution, atspi's click, the `sway.*` commands) or write a screenshot (status, windows,
/// toplevel, geometry, xprop and the sway queries only read), and the `tmux.*` and
/// `record.*` leaves that start, type into or end sessions and recorders (`tmux.shell` makes
/// its session when it is missing; `record.stop` also writes its output file), and the `vm.*` leaves
/// that make, run or remove a VM (`build`, `create`, `start`, `stop`, `destroy`) or run a
/// command in one (`ssh`); `list` and `console` (a log's tail as a tool) only read.
#[cfg(not(feature = "read-only"))]
#[test]
fn destructive_tools_are_the_ones_that_write_or_call_out() {
    let catalog = Cli::catalog();
    let destructive: Vec<&str> =
        catalog.tools().iter().filter(|t| t.is_destructive()).map(|t| t.name()).collect();
    assert_eq!(
        destructive,
        [
            "box.new.project",
            "box.new.box",
            "box.new.candy",
            "box.set",
            "box.add-candy",
            "box.rm-candy",
            "box.write",
            "box.fetch",
            "box.refresh",
            "box.generate",
            "box.build",
            "box.pull",
            "box.merge",
            "candy.set",
            "candy.add-rpm",
            "candy.add-deb",
            "candy.add-pac",
            "candy.add-aur",
            "check.mcp.ping",
            "check.mcp.list-tools",
            "check.mcp.list-resources",
            "check.mcp.list-prompts",
            "check.mcp.call",
            "check.mcp.lint",
            "check.mcp.list-skills",
            "check.mcp.read-skill",
            "check.mcp.read",
            "check.mcp.logout",
            "check.cdp.open",
            "check.cdp.close",
            "check.cdp.eval",
            "check.cdp.click",
            "check.cdp.type",
            "check.cdp.raw",
            "check.cdp.screenshot",
            "check.cdp.spa.click",
            "check.cdp.spa.mouse",
            "check.cdp.spa.type",
            "check.cdp.spa.key",
            "check.cdp.spa.key-combo",
            "check.dbus.call",
            "check.dbus.notify",
            "check.vnc.screenshot",
            "check.vnc.click",
            "check.vnc.mouse",
            "check.vnc.type",
            "check.vnc.key",
            "check.vnc.rfb",
            "check.vnc.passwd",
            "check.wl.screenshot",
            "check.wl.click",
            "check.wl.double-click",
            "check.wl.mouse",
            "check.wl.scroll",
            "check.wl.drag",
            "check.wl.type",
            "check.wl.key",
            "check.wl.key-combo",
            "check.wl.focus",
            "check.wl.close",
            "check.wl.fullscreen",
            "check.wl.minimize",
            "check.wl.atspi",
            "check.wl.clipboard",
            "check.wl.exec",
            "check.wl.resolution",
            "check.wl.sway.msg",
            "check.wl.sway.focus",
            "check.wl.sway.move",
            "check.wl.sway.resize",
            "check.wl.sway.layout",
            "check.wl.sway.workspace",
            "check.wl.sway.kill",
            "check.wl.sway.floating",
            "check.wl.sway.reload",
            "check.wl.overlay.show",
            "check.wl.overlay.hide",
            "check.run",
            "check.live",
            "settings.set",
            "settings.reset",
            "settings.migrate-secrets",
            "secrets.init",
            "secrets.set",
            "secrets.delete",
            "secrets.import",
            "secrets.gpg.decrypt",
            "secrets.gpg.encrypt",
            "secrets.gpg.edit",
            "secrets.gpg.set",
            "secrets.gpg.unset",
            "secrets.gpg.add-recipient",
            "secrets.gpg.import-key",
            "secrets.gpg.export-key",
            "secrets.gpg.setup",
            "alias.add",
            "alias.install",
            "alias.remove",
            "alias.uninstall",
            "udev.install",
            "udev.remove",
            "start",
            "stop",
            "shell",
            "cmd",
            "update",
            "remove",
            "service.start",
            "service.stop",
            "service.restart",
            "vm.build",
            "vm.create",
            "vm.start",
            "vm.stop",
            "vm.destroy",
            "vm.ssh",
            "config.setup",
            "config.remove",
            "config.mount",
            "config.unmount",
            "config.passwd",
            "deploy.export",
            "deploy.import",
            "deploy.reset",
            "tmux.shell",
            "tmux.run",
            "tmux.cmd",
            "tmux.send",
            "tmux.kill",
            "record.start",
            "record.stop",
            "record.cmd",
            "mcp.install",
            "mcp.uninstall",
        ]
    );
    let _ = names;
}

/// DESIGN.md defect: root flags appeared in every tool's schema but did nothing. `-C/--dir` is
/// fixed by the server, so no tool takes it.
#[test]
fn root_flags_are_not_tool_inputs() {
    for tool in Cli::catalog().tools() {
        let properties = tool.input_schema()["properties"].as_object().unwrap();
        assert!(!properties.contains_key("project_dir"), "{} takes the root --dir", tool.name());
    }
}

/// Every charly command an error or a report suggests (a string literal holding
/// `` `charly ...` `` anywhere in src/) parses as printed: placeholders (`{box}`, `<VALUE>`)
/// filled with a value their place takes, `...` with `x`, `&&` chains split (trial 2 M6: `charly cmd BOX -- pgrep
/// -af ...` was refused, `cmd` takes the command as one argument).
#[test]
fn every_suggested_charly_command_parses() {
    use clap::Parser as _;
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let hint = regex::Regex::new(r"`charly ([^`]*)`").unwrap();
    let placeholder = regex::Regex::new(r"\{[^}]*\}|<[^>]*>").unwrap();
    let continuation = regex::Regex::new(r"\\\n\s*").unwrap();
    let mut files = vec![src];
    let mut checked = 0;
    let mut failures = Vec::new();
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for line in continuation.replace_all(&text, "").lines() {
            // Comments describe commands in prose (`charly deploy reset <box>[/<instance>]`);
            // string literals are what users are told to run.
            if line.trim_start().starts_with("//") || !line.contains('"') {
                continue;
            }
            for found in hint.captures_iter(line) {
                if found[1].starts_with('{') {
                    continue; // `charly {0}`: a command path filled in, not a hint.
                }
                // A placeholder takes a value its place accepts: a box name mostly.
                let filled = placeholder.replace_all(&found[1], |c: &regex::Captures<'_>| {
                    match &c[0] {
                        "{verb}" => "install",
                        "{host}" => "cursor",
                        "{port}" => "9222",
                        "{leaf}" => "destroy",
                        _ => "web",
                    }
                    .to_owned()
                });
                for command in filled.split("&&") {
                    let command = command.trim().strip_prefix("charly ").unwrap_or(command.trim());
                    let argv = words(command);
                    checked += 1;
                    if let Err(e) = Cli::try_parse_from(std::iter::once("charly".to_owned()).chain(argv)) {
                        use clap::error::ErrorKind::*;
                        // A hint naming a command (`charly check`, `charly check vnc passwd`: only
                        // subcommand words) points at it, not at one call of it.
                        let named =
                            command.split(' ').all(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
                        let missing = matches!(
                            e.kind(),
                            DisplayHelpOnMissingArgumentOrSubcommand
                                | MissingSubcommand
                                | MissingRequiredArgument
                        );
                        if !(named && missing) {
                            failures.push(format!("{}: `charly {command}`: {}", path.display(), e.kind()));
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} hints found");
    assert!(
        failures.is_empty(),
        "{} of {checked} hints do not parse:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// `command` split into words as a POSIX shell would for these hints: blanks separate, single
/// quotes group, a bare `...` (an elided value or list) is one word `x`.
fn words(command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    let end = |word: Option<String>, out: &mut Vec<String>, was_quoted: bool| match word {
        Some(w) if w == "..." && !was_quoted => out.push("x".to_owned()),
        w => out.extend(w),
    };
    let mut had_quote = false;
    for c in command.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                had_quote = true;
                word.get_or_insert_default();
            }
            c if c.is_whitespace() && !quoted => {
                end(word.take(), &mut out, had_quote);
                had_quote = false;
            }
            c => word.get_or_insert_default().push(c),
        }
    }
    end(word, &mut out, had_quote);
    out
}

/// Every key a `cdp:`, `vnc:`, `dbus:` or `wl:` plan step accepts is documented where a user
/// looks: `check run --help` (and so `charly man check run`) (trial 2 M12; `wl:` was missing).
#[test]
fn every_desktop_step_key_is_in_check_run_help() {
    use clap::CommandFactory as _;
    let mut cli = Cli::command();
    let run = cli.find_subcommand_mut("check").unwrap().find_subcommand_mut("run").unwrap();
    let help = run.render_long_help().to_string();
    let keys = charly_cli::check::CDP_KEYS
        .iter()
        .chain(&charly_cli::check::VNC_KEYS)
        .chain(&charly_cli::check::DBUS_KEYS)
        .chain(&charly_cli::check::WL_KEYS);
    let missing: Vec<_> = keys.filter(|k| !help.contains(&format!("{k}:"))).collect();
    assert!(missing.is_empty(), "not in `check run --help`: {missing:?}\n{help}");
    let methods = charly_cli::check::CDP_METHODS
        .iter()
        .chain(&charly_cli::check::VNC_METHODS)
        .chain(&charly_cli::check::DBUS_METHODS)
        .chain(&charly_cli::check::WL_METHODS);
    let missing: Vec<_> = methods.filter(|m| !help.contains(*m)).collect();
    assert!(missing.is_empty(), "methods not in `check run --help`: {missing:?}");
}

/// A read-only build says so where a person or a client looks (trial 28, H1: a read-only build
/// served 66 tools and nothing said why): `charly version`, and the instructions the server
/// gives every client. A full build says neither, unless served with `--read-only`.
#[test]
fn a_read_only_build_says_so() {
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_charly")).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let build = cfg!(feature = "read-only");
    let version: serde_json::Value = serde_json::from_str(&run(&["version", "--json"])).unwrap();
    assert_eq!(version["read_only_build"], build, "{version}");
    assert_eq!(run(&["version"]).contains("(read-only build)"), build);
    let note = "This server is read-only";
    let instructions = |read_only: bool| {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec!["mcp", "serve", "--stdio"];
        args.extend(read_only.then_some("--read-only"));
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_charly"))
            .args(&args)
            .current_dir(dir.path())
            .env_remove("CHARLY_PROJECT_DIR")
            .env_remove("CHARLY_PROJECT_REPO")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
        writeln!(child.stdin.take().unwrap(), "{init}").unwrap();
        let out = child.wait_with_output().unwrap();
        let first = String::from_utf8(out.stdout).unwrap().lines().next().unwrap_or_default().to_owned();
        let reply: serde_json::Value = serde_json::from_str(&first).unwrap();
        reply["result"]["instructions"].as_str().unwrap_or_default().to_owned()
    };
    assert_eq!(instructions(false).contains(note), build);
    assert!(instructions(true).contains(note));
}
