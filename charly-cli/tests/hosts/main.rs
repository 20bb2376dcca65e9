//! `charly mcp install|uninstall` against real files in a temporary HOME and project, and the
//! hosts' own CLIs (`claude mcp list`, `gemini mcp list`, `codex mcp list`, pinned in
//! scripts/hosts.sh) reading what charly wrote.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The hosts' own CLIs reading what charly wrote.
mod clis;

/// The binary under test.
const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// A temporary `home/` (HOME) and `proj/` (the working directory).
struct Env {
    dir: tempfile::TempDir,
}

/// A finished run.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn of(out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    #[track_caller]
    fn ok(self) -> Run {
        assert_eq!(self.code, Some(0), "stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

impl Env {
    /// A home and a charly project (`proj/charly.yml`: a project-scope entry pins it).
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "proj"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        std::fs::write(dir.path().join("proj/charly.yml"), "project:\n  version: 1\n").unwrap();
        Env { dir }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    fn proj(&self) -> PathBuf {
        self.dir.path().join("proj")
    }

    /// A command with HOME here and none of the variables that move the hosts' files.
    fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        for key in ["XDG_CONFIG_HOME", "CODEX_HOME", "CLAUDE_CONFIG_DIR", "APPDATA", "USERPROFILE", "TOK"] {
            cmd.env_remove(key);
        }
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("CHARLY_") {
                cmd.env_remove(&key);
            }
        }
        cmd.env("HOME", self.home()).env("NO_COLOR", "1").current_dir(self.proj()).stdin(Stdio::null());
        cmd
    }

    fn charly(&self, args: &[&str]) -> Run {
        Run::of(self.command(CHARLY).args(args).output().unwrap())
    }

    fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSONC file's value.
fn jsonc(text: &str) -> Value {
    jsonc_parser::parse_to_serde_value(text, &Default::default()).unwrap()
}

/// One host and scope, with a file that holds another server, a key charly does not know and
/// (where the format has them) a comment.
struct Case {
    host: &'static str,
    scope: &'static str,
    path: PathBuf,
    before: String,
    /// Reads the `charly` entry (or `None`) and the `other` entry from the file's text.
    entries: fn(&str) -> (Option<Value>, Option<Value>),
    comment: Option<&'static str>,
}

fn json_entries(key: &'static str) -> impl Fn(&str) -> (Option<Value>, Option<Value>) {
    move |text| {
        let v = jsonc(text);
        (v[key].get("charly").cloned(), v[key].get("other").cloned())
    }
}

fn cases(env: &Env) -> Vec<Case> {
    let (home, proj) = (env.home(), env.proj());
    let mcp_servers = |text: &str| {
        let v = jsonc(text);
        (v["mcpServers"].get("charly").cloned(), v["mcpServers"].get("other").cloned())
    };
    let servers = |text: &str| {
        let v = jsonc(text);
        (v["servers"].get("charly").cloned(), v["servers"].get("other").cloned())
    };
    let toml = |text: &str| {
        let doc: toml_edit::DocumentMut = text.parse().unwrap();
        let get = |name: &str| {
            doc.get("mcp_servers").and_then(|s| s.get(name)).map(|t| Value::String(t.to_string()))
        };
        (get("charly"), get("other"))
    };
    let _ = json_entries;
    let strict = "{\n  \"theme\": \"dark\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"other-server\"}\n  }\n}\n";
    let vscode = "// my workspace servers\n{\n  \"servers\": {\n    // keep this one\n    \"other\": {\"type\": \"stdio\", \"command\": \"other-server\"},\n  },\n  \"inputs\": [],\n}\n";
    let gemini = "{\n  // theme first\n  \"theme\": \"Dracula\",\n  \"mcpServers\": {\"other\": {\"command\": \"other-server\"}}\n}\n";
    let codex =
        "# my codex settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other-server\" # keep\n";
    let desktop = if cfg!(target_os = "macos") {
        home.join("Library/Application Support/Claude/claude_desktop_config.json")
    } else {
        home.join(".config/Claude/claude_desktop_config.json")
    };
    vec![
        Case {
            host: "claude-code",
            scope: "project",
            path: proj.join(".mcp.json"),
            before: strict.into(),
            entries: mcp_servers,
            comment: None,
        },
        Case {
            host: "claude-code",
            scope: "user",
            path: home.join(".claude.json"),
            before: strict.into(),
            entries: mcp_servers,
            comment: None,
        },
        Case {
            host: "claude-desktop",
            scope: "user",
            path: desktop,
            before: strict.into(),
            entries: mcp_servers,
            comment: None,
        },
        Case {
            host: "cursor",
            scope: "project",
            path: proj.join(".cursor/mcp.json"),
            before: strict.into(),
            entries: mcp_servers,
            comment: None,
        },
        Case {
            host: "cursor",
            scope: "user",
            path: home.join(".cursor/mcp.json"),
            before: strict.into(),
            entries: mcp_servers,
            comment: None,
        },
        Case {
            host: "vscode",
            scope: "project",
            path: proj.join(".vscode/mcp.json"),
            before: vscode.into(),
            entries: servers,
            comment: Some("// keep this one"),
        },
        Case {
            host: "vscode",
            scope: "user",
            path: home.join(".config/Code/User/mcp.json"),
            before: vscode.into(),
            entries: servers,
            comment: Some("// my workspace servers"),
        },
        Case {
            host: "codex",
            scope: "user",
            path: home.join(".codex/config.toml"),
            before: codex.into(),
            entries: toml,
            comment: Some("# keep"),
        },
        Case {
            host: "codex",
            scope: "project",
            path: proj.join(".codex/config.toml"),
            before: codex.into(),
            entries: toml,
            comment: Some("# my codex settings"),
        },
        Case {
            host: "gemini",
            scope: "project",
            path: proj.join(".gemini/settings.json"),
            before: gemini.into(),
            entries: mcp_servers,
            comment: Some("// theme first"),
        },
        Case {
            host: "gemini",
            scope: "user",
            path: home.join(".gemini/settings.json"),
            before: gemini.into(),
            entries: mcp_servers,
            comment: Some("// theme first"),
        },
    ]
}

#[test]
fn install_merges_backs_up_and_uninstall_keeps_the_rest() {
    let env = Env::new();
    for case in cases(&env) {
        let what = format!("{} {}", case.host, case.scope);
        env.write(&case.path, &case.before);
        let run = env.charly(&["mcp", "install", case.host, "--scope", case.scope, "--read-only"]).ok();
        assert!(run.stdout.starts_with("added charly to "), "{what}: {}", run.stdout);
        let after = read(&case.path);
        let (charly, other) = (case.entries)(&after);
        let charly = charly.unwrap_or_else(|| panic!("{what}: no charly entry in\n{after}"));
        assert!(
            charly.to_string().contains("mcp") && charly.to_string().contains("--read-only"),
            "{what}: {charly}"
        );
        assert_eq!(other, (case.entries)(&case.before).1, "{what}: the other server changed\n{after}");
        if let Some(comment) = case.comment {
            assert!(after.contains(comment), "{what}: the comment {comment:?} is gone\n{after}");
        }
        assert!(
            after.contains("dark")
                || after.contains("Dracula")
                || after.contains("o3")
                || after.contains("inputs"),
            "{what}: {after}"
        );
        // The old file, byte for byte, beside it.
        let backup =
            case.path.with_file_name(format!("{}.bak", case.path.file_name().unwrap().to_string_lossy()));
        assert_eq!(read(&backup), case.before, "{what}");
        // Again: nothing to do, nothing written.
        let again =
            env.charly(&["mcp", "install", case.host, "--scope", case.scope, "--read-only", "--json"]).ok();
        let report: Value = serde_json::from_str(&again.stdout).unwrap();
        assert_eq!(
            (report["action"].as_str(), report["written"].as_bool()),
            (Some("unchanged"), Some(false)),
            "{what}"
        );
        assert_eq!(read(&case.path), after, "{what}");
        // Uninstall: charly goes, the rest stays.
        let removed = env.charly(&["mcp", "uninstall", case.host, "--scope", case.scope]).ok();
        assert!(removed.stdout.starts_with("removed charly from "), "{what}: {}", removed.stdout);
        let left = read(&case.path);
        assert_eq!((case.entries)(&left), (None, (case.entries)(&case.before).1), "{what}\n{left}");
        if let Some(comment) = case.comment {
            assert!(left.contains(comment), "{what}\n{left}");
        }
        let gone = env.charly(&["mcp", "uninstall", case.host, "--scope", case.scope]).ok();
        assert!(gone.stdout.starts_with("charly is not in "), "{what}: {}", gone.stdout);
    }
}

#[test]
fn print_shows_the_file_and_writes_nothing() {
    let env = Env::new();
    let run = env.charly(&["mcp", "install", "vscode", "--print"]).ok();
    assert!(
        run.stdout
            .starts_with("would add charly to .vscode/mcp.json (vscode, project scope); nothing written."),
        "{}",
        run.stdout
    );
    let file = run.stdout.split_once("The file would be:\n").unwrap().1;
    let file = file.split("\nnote:").next().unwrap();
    let dir = env.proj().canonicalize().unwrap().display().to_string();
    assert_eq!(
        jsonc(file)["servers"]["charly"]["args"],
        serde_json::json!(["-C", dir, "mcp", "serve", "--stdio"]),
        "a project-scope entry pins its project"
    );
    assert!(!env.proj().join(".vscode").exists(), "--print created a directory");
    let run = env.charly(&["mcp", "uninstall", "cursor"]).ok();
    assert_eq!(run.stdout, "charly is not in .cursor/mcp.json (cursor, project scope); nothing written\n");
    assert!(!env.proj().join(".cursor").exists(), "uninstall created a directory");
}

#[test]
fn a_token_is_written_as_a_reference_never_itself() {
    let env = Env::new();
    let secret = "s3cr3t-token-value";
    let url = "http://127.0.0.1:18765/mcp";
    let cases = [
        ("claude-code", ".mcp.json", "Bearer ${TOK}"),
        ("cursor", ".cursor/mcp.json", "Bearer ${env:TOK}"),
        ("vscode", ".vscode/mcp.json", "Bearer ${env:TOK}"),
        ("gemini", ".gemini/settings.json", "Bearer ${TOK}"),
    ];
    for (host, file, header) in cases {
        let run = Run::of(
            env.command(CHARLY)
                .args(["mcp", "install", host, "--url", url, "--token-env", "TOK"])
                .env("TOK", secret)
                .output()
                .unwrap(),
        )
        .ok();
        let text = read(&env.proj().join(file));
        assert!(!text.contains(secret) && !run.stdout.contains(secret), "{host}: the token leaked");
        let v = jsonc(&text);
        let servers = if host == "vscode" { &v["servers"] } else { &v["mcpServers"] };
        assert_eq!(servers["charly"]["headers"]["Authorization"], header, "{host}: {text}");
    }
    let run = Run::of(
        env.command(CHARLY)
            .args(["mcp", "install", "codex", "--url", url, "--token-env", "TOK"])
            .env("TOK", secret)
            .output()
            .unwrap(),
    )
    .ok();
    let text = read(&env.home().join(".codex/config.toml"));
    assert!(!text.contains(secret) && !run.stdout.contains(secret));
    assert!(text.contains("bearer_token_env_var = \"TOK\""), "{text}");
    // Without the variable set, the report says so.
    let run = env
        .charly(&["mcp", "install", "claude-code", "--url", url, "--token-env", "TOK", "--scope", "user"])
        .ok();
    assert!(
        run.stdout.contains("note: TOK is not set here; the host reads it when it connects"),
        "{}",
        run.stdout
    );
}

#[test]
fn refusals_name_the_fix_and_write_nothing() {
    let env = Env::new();
    let run = env.charly(&["mcp", "install", "claude-desktop", "--url", "http://127.0.0.1:1/mcp"]);
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("claude-desktop does not take a server URL (--url)")
            && run.stderr.contains("Settings > Connectors"),
        "{}",
        run.stderr
    );
    let run = env.charly(&["mcp", "install", "claude-desktop", "--scope", "project"]);
    assert_eq!(run.stderr, "charly: claude-desktop has no project-scope config file (use --scope user)\n");
    let broken = env.proj().join(".mcp.json");
    env.write(&broken, "{\"mcpServers\": {\n");
    let run = env.charly(&["mcp", "install", "claude-code"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.starts_with("charly: .mcp.json: not valid JSON: "), "{}", run.stderr);
    assert_eq!(read(&broken), "{\"mcpServers\": {\n");
    assert!(!env.proj().join(".mcp.json.bak").exists());
    // A duplicate key: a clean refusal naming the file and the key, the file unchanged.
    for (text, key, verb) in [
        (r#"{"mcpServers": {"a": 1}, "mcpServers": {"b": 2}}"#, "mcpServers", "install"),
        (r#"{"mcpServers": {"charly": {"command": "x"}, "charly": {"command": "y"}}}"#, "charly", "install"),
        (
            r#"{"mcpServers": {"charly": {"command": "x"}, "charly": {"command": "y"}}}"#,
            "charly",
            "uninstall",
        ),
    ] {
        env.write(&broken, text);
        let run = env.charly(&["mcp", verb, "claude-code"]);
        assert_eq!(run.code, Some(2), "{text}: {}", run.stderr);
        assert!(
            run.stderr.starts_with(&format!("charly: .mcp.json: the key `{key}` appears twice")),
            "{text}: {}",
            run.stderr
        );
        assert_eq!(read(&broken), text);
    }
    let gemini = env.proj().join(".gemini/settings.json");
    env.write(&gemini, "{\"mcpServers\": {}, // comment\n \"mcpServers\": {}}");
    let run = env.charly(&["mcp", "install", "gemini"]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains(".gemini/settings.json: the key `mcpServers` appears twice"),
        "{}",
        run.stderr
    );
    assert!(!env.proj().join(".mcp.json.bak").exists());
    let run = env.charly(&["mcp", "install", "cursor", "--url", "ftp://x"]);
    assert_eq!(run.stderr, "charly: --url \"ftp://x\" must be http:// or https://\n");
    let run = env.charly(&["mcp", "install", "cursor", "--url", "http://x/mcp", "--token-env", "1BAD"]);
    assert!(run.stderr.contains("is not an environment variable name"), "{}", run.stderr);
}

#[test]
fn a_named_project_directory_is_pinned_and_a_symlink_stays_a_link() {
    let env = Env::new();
    let run = env
        .charly(&["-C", env.proj().to_str().unwrap(), "mcp", "install", "cursor", "--command", "charly"])
        .ok();
    assert!(run.stdout.starts_with("added charly to .cursor/mcp.json"), "{}", run.stdout);
    let v = jsonc(&read(&env.proj().join(".cursor/mcp.json")));
    let dir = env.proj().display().to_string();
    assert_eq!(
        v["mcpServers"]["charly"],
        serde_json::json!({"type": "stdio", "command": "charly", "args": ["-C", dir, "mcp", "serve", "--stdio"]})
    );
    // A dotfile manager's link: the target is edited, the link stays.
    let real = env.dir.path().join("dotfiles/claude.json");
    env.write(&real, "{}\n");
    std::os::unix::fs::symlink(&real, env.home().join(".claude.json")).unwrap();
    env.charly(&["mcp", "install", "claude-code", "--scope", "user"]).ok();
    assert!(std::fs::symlink_metadata(env.home().join(".claude.json")).unwrap().file_type().is_symlink());
    assert!(jsonc(&read(&real))["mcpServers"]["charly"].is_object());
}

/// `mcp.install` as a tool of `charly mcp serve`: the project file lands in the served
/// project, the entry pins it (`-C`, whatever directory the host starts it in), and a project
/// file whose directory is a symlink leading out of the project is refused.
#[test]
fn installed_over_mcp_into_the_served_project() {
    let env = Env::new();
    std::fs::write(env.proj().join("charly.yml"), "project:\n  version: 1\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let mut server = env
        .command(CHARLY)
        .args(["-C", env.proj().to_str().unwrap(), "mcp", "serve", "--listen", &listen])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(&listen).is_err() {
        assert!(std::time::Instant::now() < deadline, "charly mcp serve did not listen on {listen}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let url = format!("http://{listen}/mcp");
    let call = |input: &str| {
        // From another directory: the call works on the served project, not on the caller's.
        let mut cmd = env.command(CHARLY);
        cmd.current_dir(env.home()).args([
            "check",
            "mcp",
            "call",
            "--tool",
            "mcp.install",
            "--input",
            input,
            "--url",
            &url,
        ]);
        Run::of(cmd.output().unwrap())
    };
    let run = call(r#"{"host": "cursor"}"#);
    let entry = jsonc(&read(&env.proj().join(".cursor/mcp.json")))["mcpServers"]["charly"].clone();
    let dir = env.proj().canonicalize().unwrap().display().to_string();
    assert_eq!(
        entry["args"],
        serde_json::json!(["-C", dir, "mcp", "serve", "--stdio"]),
        "{}{}",
        run.stdout,
        run.stderr
    );
    assert!(
        run.stdout.starts_with("added charly to .cursor/mcp.json (cursor, project scope)"),
        "{}",
        run.stdout
    );
    // `.gemini` leads out of the project: refused, nothing written there.
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, env.proj().join(".gemini")).unwrap();
    let run = call(r#"{"host": "gemini"}"#);
    assert_eq!(run.code, Some(1), "{}{}", run.stdout, run.stderr);
    assert!(
        std::fs::read_dir(&outside).unwrap().next().is_none(),
        "something was written outside the project"
    );
    // Nothing outside the project: no user scope (given or by default), no other executable.
    let user = env.home().join(".cursor/mcp.json");
    env.write(&user, "{\"mcpServers\": {\"other\": {\"command\": \"x\", \"env\": {\"T\": \"s3cret\"}}}}\n");
    for (input, argument) in [
        (r#"{"host": "cursor", "scope": "user", "print": true}"#, "argument `scope` is `user`"),
        (r#"{"host": "codex"}"#, "argument `scope` defaults to `user` for codex"),
        (r#"{"host": "claude-desktop", "print": true}"#, "argument `scope` defaults to `user`"),
        (
            r#"{"host": "cursor", "command": "/tmp/evil", "name": "other"}"#,
            "argument `command` \"/tmp/evil\"",
        ),
    ] {
        let run = call(input);
        assert_eq!(run.code, Some(1), "{input}: {}{}", run.stdout, run.stderr);
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(all.contains(argument) && all.contains("from a terminal instead"), "{input}: {all}");
        assert!(!all.contains("s3cret"), "{input}: {all}");
    }
    let mut cmd = env.command(CHARLY);
    cmd.current_dir(env.home()).args([
        "check",
        "mcp",
        "call",
        "--tool",
        "mcp.uninstall",
        "--input",
        r#"{"host": "cursor", "scope": "user"}"#,
        "--url",
        &url,
    ]);
    let run = Run::of(cmd.output().unwrap());
    assert!(run.stdout.contains("argument `scope` is `user`"), "{}{}", run.stdout, run.stderr);
    assert!(read(&user).contains("s3cret") && !env.home().join(".codex").exists());
    assert!(!env.home().join(".cursor/mcp.json.bak").exists());
    // The served charly itself may be named.
    let me = std::fs::canonicalize(CHARLY).unwrap().display().to_string();
    let run = call(&serde_json::json!({"host": "vscode", "command": me}).to_string());
    assert_eq!(run.code, Some(0), "{}{}", run.stdout, run.stderr);
    let _ = server.kill();
    let _ = server.wait();
}

/// Hosts' configs hold secrets (`env` tokens): the backup of a 0600 (or 0640) file gets that
/// mode, not the umask's 0644, even where an older, wider backup is already there.
#[test]
fn the_backup_keeps_the_original_files_mode() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let claude = env.home().join(".claude.json");
    env.write(
        &claude,
        "{\"mcpServers\": {\"other\": {\"command\": \"x\", \"env\": {\"TOKEN\": \"s3cret\"}}}}\n",
    );
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o600)).unwrap();
    // An older backup (charly's or the user's) is kept: the copy goes to `.bak.1`, and the
    // report says so.
    let older = env.home().join(".claude.json.bak");
    env.write(&older, "old\n");
    std::fs::set_permissions(&older, std::fs::Permissions::from_mode(0o644)).unwrap();
    let run = env.charly(&["mcp", "install", "claude-code", "--scope", "user"]).ok();
    let backup = env.home().join(".claude.json.bak.1");
    assert!(read(&backup).contains("s3cret"));
    assert_eq!(read(&older), "old\n", "the older backup was overwritten");
    assert!(
        run.stdout.contains(
            "note: ~/.claude.json.bak is an older backup and was kept; the file as it was before this change is ~/.claude.json.bak.1"
        ),
        "{}",
        run.stdout
    );
    assert_eq!(mode(&backup), 0o600);
    assert_eq!(mode(&claude), 0o600);
    // The next change takes the next free number.
    env.charly(&["mcp", "install", "claude-code", "--scope", "user", "--read-only"]).ok();
    assert!(read(&env.home().join(".claude.json.bak.2")).contains("s3cret"));
    assert!(!read(&env.home().join(".claude.json.bak.2")).contains("--read-only"));
    let codex = env.home().join(".codex/config.toml");
    env.write(&codex, "model = \"o3\"\n");
    std::fs::set_permissions(&codex, std::fs::Permissions::from_mode(0o640)).unwrap();
    env.charly(&["mcp", "install", "codex", "--scope", "user"]).ok();
    assert_eq!(mode(&env.home().join(".codex/config.toml.bak")), 0o640);
    assert_eq!(mode(&codex), 0o640);
}

/// A relative `--command` is written as an absolute path (the host starts the server in a
/// directory of its own), one that names nothing is refused; a bare name stays for the host's
/// `PATH`. A `-C` without a charly.yml is refused, and so is a project-scope entry for a
/// directory that is no charly project; user scope without `-C` pins nothing.
#[test]
fn commands_are_absolute_and_pinned_directories_are_projects() {
    let env = Env::new();
    let bin = env.proj().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::copy(CHARLY, bin.join("charly")).unwrap();
    let run = env.charly(&["mcp", "install", "cursor", "--command", "./bin/charly"]).ok();
    let entry = jsonc(&read(&env.proj().join(".cursor/mcp.json")))["mcpServers"]["charly"].clone();
    let absolute = bin.join("charly").canonicalize().unwrap().display().to_string();
    assert_eq!(entry["command"], absolute.as_str(), "{}", run.stdout);
    let run = env.charly(&["mcp", "install", "cursor", "--command", "nope/charly"]);
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    assert!(
        run.stderr.starts_with("charly: --command \"nope/charly\": cannot find it from here"),
        "{}",
        run.stderr
    );
    env.charly(&["mcp", "install", "cursor", "--command", "charly"]).ok();
    let entry = jsonc(&read(&env.proj().join(".cursor/mcp.json")))["mcpServers"]["charly"].clone();
    assert_eq!(entry["command"], "charly");

    let empty = env.dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let run = env.charly(&["-C", empty.to_str().unwrap(), "mcp", "install", "cursor", "--scope", "user"]);
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    assert!(run.stderr.contains("no charly.yml there"), "{}", run.stderr);
    assert!(!env.home().join(".cursor").exists(), "a refused install wrote something");
    let run =
        Run::of(env.command(CHARLY).current_dir(&empty).args(["mcp", "install", "gemini"]).output().unwrap());
    assert_eq!(run.code, Some(2), "{}", run.stdout);
    assert!(
        run.stderr.contains("has no charly.yml: a project-scope entry pins the project directory"),
        "{}",
        run.stderr
    );
    assert!(!empty.join(".gemini").exists());
    let run = Run::of(
        env.command(CHARLY)
            .current_dir(&empty)
            .args(["mcp", "install", "gemini", "--scope", "user"])
            .output()
            .unwrap(),
    )
    .ok();
    let entry = jsonc(&read(&env.home().join(".gemini/settings.json")))["mcpServers"]["charly"].clone();
    assert_eq!(entry["args"], serde_json::json!(["mcp", "serve", "--stdio"]), "{}", run.stdout);
}
