//! `deploy.*` against real files: a temporary HOME and XDG_CONFIG_HOME per test, the binary
//! run as a person runs it, the deploy file read back byte for byte. `config setup`, parallel
//! writers, tools over MCP and real podman are in [`config`].

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

mod config;

const CHARLY: &str = env!("CARGO_BIN_EXE_charly");

/// A hand-edited deploy file: comments above, beside and inside nodes, flow and block style.
const HAND: &str = "\
# This host's deployments (edited by hand).
deploy:
  # the notebook
  jupyter:
    image: jupyter
    port: [\"8888:8888\"]   # published on 127.0.0.1
    env:
      - JUPYTER_ENABLE_LAB=1
  web/2: {image: web, port: [\"8081:80\"]}
provides:
  env:
    - {name: JUPYTER_URL, value: \"http://charly-jupyter:8888\", source: jupyter}
    - {name: WEB_URL, value: \"http://charly-web-2:80\", source: web/2}
";

/// A test's directories: `home/` (HOME), `cfg/` (XDG_CONFIG_HOME), `proj/` (the working
/// directory), `bin/` (PATH: no podman unless a test puts one there).
struct Home {
    dir: tempfile::TempDir,
}

/// One run.
struct Run {
    status: i32,
    stdout: String,
    stderr: String,
    args: String,
}

impl Run {
    #[track_caller]
    fn ok(self) -> Run {
        assert_eq!(self.status, 0, "{}", self.dump());
        self
    }

    #[track_caller]
    fn fails(self) -> Run {
        assert_eq!(self.status, 2, "{}", self.dump());
        assert!(self.stderr.starts_with("charly: ") && self.stdout.is_empty(), "{}", self.dump());
        self
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}\n{}", self.dump()))
    }

    fn dump(&self) -> String {
        format!(
            "charly {}: exit {}\n--- stdout\n{}--- stderr\n{}",
            self.args, self.status, self.stdout, self.stderr
        )
    }
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        for sub in ["home", "cfg", "proj", "bin"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
        }
        Home { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    /// The deploy file.
    fn deploy(&self) -> PathBuf {
        self.path("cfg/charly/charly.yml")
    }

    fn read(&self) -> Option<String> {
        std::fs::read_to_string(self.deploy()).ok()
    }

    fn write(&self, text: &str) {
        std::fs::create_dir_all(self.deploy().parent().unwrap()).unwrap();
        std::fs::write(self.deploy(), text).unwrap();
    }

    fn write_proj(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path("proj").join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(CHARLY);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if key.starts_with("CHARLY_") || key.starts_with("XDG_") || key == "DBUS_SESSION_BUS_ADDRESS" {
                cmd.env_remove(key.as_ref());
            }
        }
        cmd.args(args)
            .env("HOME", self.path("home"))
            .env("XDG_CONFIG_HOME", self.path("cfg"))
            .env("PATH", self.path("bin"))
            .env("NO_COLOR", "1")
            .current_dir(self.path("proj"))
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, args: &[&str]) -> Run {
        run(&mut self.command(args), args)
    }
}

fn run(cmd: &mut Command, args: &[&str]) -> Run {
    let out = cmd.output().expect("charly runs");
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        args: args.join(" "),
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn path_honours_xdg_config_home_and_home() {
    let h = Home::new();
    let run = h.run(&["deploy", "path"]).ok();
    assert_eq!(run.stdout.trim_end(), h.deploy().display().to_string());
    let json = h.run(&["deploy", "path", "--json"]).ok().json();
    assert_eq!(json["exists"], false);
    // Without XDG_CONFIG_HOME, and with a relative one (the XDG spec ignores it): ~/.config.
    let expected = h.path("home/.config/charly/charly.yml").display().to_string();
    let mut cmd = h.command(&["deploy", "path"]);
    cmd.env_remove("XDG_CONFIG_HOME");
    assert_eq!(run_ok(&mut cmd).trim_end(), expected);
    let mut cmd = h.command(&["deploy", "path"]);
    cmd.env("XDG_CONFIG_HOME", "relative/cfg");
    assert_eq!(run_ok(&mut cmd).trim_end(), expected);
}

/// A process with no `$HOME`, no absolute `$XDG_CONFIG_HOME` and a uid `/etc/passwd` does not
/// know (setpriv, as root): `deploy path` and `config` refuse, naming both variables, instead of
/// `/.config/charly/charly.yml`.
#[test]
fn without_any_home_the_deploy_file_is_refused_naming_home_and_xdg_config_home() {
    let uid = 54321;
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    assert!(!passwd.lines().any(|l| l.split(':').nth(2) == Some("54321")), "uid {uid} is in /etc/passwd");
    for args in [&["deploy", "path"][..], &["config", "status", "web"]] {
        let mut argv = vec![format!("--reuid={uid}"), format!("--regid={uid}"), "--clear-groups".into()];
        argv.push(CHARLY.into());
        argv.extend(args.iter().map(|a| a.to_string()));
        let mut setpriv = Command::new("/usr/bin/setpriv");
        setpriv.args(&argv).env_clear().env("XDG_CONFIG_HOME", "relative").current_dir("/");
        let run = run(&mut setpriv, args).fails();
        assert!(
            run.stderr.contains("cannot locate the deploy file")
                && run.stderr.contains("set HOME")
                && run.stderr.contains("XDG_CONFIG_HOME"),
            "{}",
            run.dump()
        );
        assert!(!run.stderr.contains("/.config/charly/charly.yml\n"), "{}", run.dump());
    }
}

fn run_ok(cmd: &mut Command) -> String {
    run(cmd, &[]).ok().stdout
}

#[test]
fn show_prints_the_file_as_written_or_one_entry() {
    let h = Home::new();
    let none = h.run(&["deploy", "show"]).ok();
    assert!(none.stdout.starts_with("No deploy entries"), "{}", none.dump());
    h.write(HAND);
    assert_eq!(h.run(&["deploy", "show"]).ok().stdout, HAND);
    let json = h.run(&["deploy", "show", "--json"]).ok().json();
    assert_eq!(json["content"]["deploy"]["jupyter"]["port"][0], "8888:8888");
    let one = h.run(&["deploy", "show", "web", "-i", "2"]).ok();
    assert!(one.stdout.contains("web/2") && one.stdout.contains("8081:80"), "{}", one.dump());
    assert!(!one.stdout.contains("jupyter"), "{}", one.dump());
    let json = h.run(&["deploy", "show", "jupyter", "--json"]).ok().json();
    assert_eq!(json["key"], "jupyter");
    assert_eq!(json["content"]["deploy"]["jupyter"]["env"][0], "JUPYTER_ENABLE_LAB=1");
    // An unknown box: an error naming it and the entries there are.
    let err = h.run(&["deploy", "show", "nope"]).fails();
    assert!(
        err.stderr.contains("no deploy entry \"nope\"") && err.stderr.contains("jupyter, web/2"),
        "{}",
        err.dump()
    );
    // A name no container could have.
    let err = h.run(&["deploy", "show", "web app"]).fails();
    assert!(err.stderr.contains("box \"web app\""), "{}", err.dump());
    assert_eq!(h.read().unwrap(), HAND);
}

#[test]
fn a_deploy_file_that_is_not_yaml_is_an_error_naming_it_and_is_left_alone() {
    let h = Home::new();
    let broken = "deploy:\n  web: {port: [\"80:80\"\n";
    h.write(broken);
    let import = h.write_proj("in.yml", "deploy:\n  api: {image: api}\n");
    for args in [
        &["deploy", "show"][..],
        &["deploy", "export"],
        &["deploy", "status"],
        &["deploy", "reset", "web"],
        &["deploy", "import", import.to_str().unwrap()],
    ] {
        let err = h.run(args).fails();
        assert!(
            err.stderr.contains(&h.deploy().display().to_string())
                && err.stderr.contains("not a valid deploy file"),
            "{}",
            err.dump()
        );
        assert_eq!(h.read().unwrap(), broken, "{}", err.dump());
    }
    // A key the schema does not know, named with where it is.
    h.write("deploy:\n  web:\n    ports: [\"80:80\"]\n");
    let err = h.run(&["deploy", "show"]).fails();
    assert!(err.stderr.contains("unknown field `ports`"), "{}", err.dump());
    // Resetting the whole file is the way out.
    h.run(&["deploy", "reset"]).ok();
    assert!(h.read().is_none());
}

#[test]
fn import_merges_field_by_field_and_keeps_the_comments_of_a_hand_edited_file() {
    let h = Home::new();
    h.write(HAND);
    let import = h.write_proj(
        "other-host.yml",
        "# from another host\ndeploy:\n  jupyter:\n    port: [\"9999:8888\"]\n    network: charly\n  api:\n    image: api\n    env: [A=1]\nprovides:\n  env: [{name: X, value: y, source: api}]\n",
    );
    let run = h.run(&["deploy", "import", "other-host.yml", "--json"]).ok();
    let json = run.json();
    assert_eq!(json["keys"], serde_json::json!(["jupyter", "api"]));
    assert_eq!(json["changed"], true);
    assert!(json["ignored"][0].as_str().unwrap().starts_with("provides of"), "{json}");
    let text = h.read().unwrap();
    for kept in [
        "# This host's deployments (edited by hand).\n",
        "  # the notebook\n",
        "# published on 127.0.0.1",
        "      - JUPYTER_ENABLE_LAB=1\n",
        "  web/2: {image: web, port: [\"8081:80\"]}\n",
        "source: web/2}",
    ] {
        assert!(text.contains(kept), "lost {kept:?}:\n{text}");
    }
    assert!(text.contains("9999:8888") && !text.contains("\"8888:8888\""), "{text}");
    assert!(text.contains("network: charly") && text.contains("api:") && !text.contains("name: X"), "{text}");
    assert_eq!(mode(&h.deploy()), 0o600);
    let shown = h.run(&["deploy", "show", "--json"]).ok().json();
    assert_eq!(shown["content"]["deploy"]["jupyter"]["env"][0], "JUPYTER_ENABLE_LAB=1");
    assert_eq!(shown["content"]["deploy"]["api"]["env"][0], "A=1");
    // Again: nothing changes.
    let again = h.run(&["deploy", "import", import.to_str().unwrap(), "--json"]).ok().json();
    assert_eq!(again["changed"], false);
    assert_eq!(h.read().unwrap(), text);
    // No temporary or lock file is left where people look, beside the lock.
    let names: Vec<String> = std::fs::read_dir(h.deploy().parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    assert_eq!(names, ["charly.yml"]);
}

#[test]
fn import_creates_the_file_with_mode_0600_and_replace_and_box_pick_what_goes_in() {
    let h = Home::new();
    let a = h.write_proj("a.yml", "deploy:\n  web: {image: web, env: [A=1]}\n  api: {image: api}\n");
    let b = h.write_proj("b.yml", "deploy:\n  web: {env: [A=2]}\n");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    h.run(&["deploy", "import", a, b]).ok();
    assert_eq!(mode(&h.deploy()), 0o600);
    let json = h.run(&["deploy", "show", "--json"]).ok().json();
    assert_eq!(json["content"]["deploy"]["web"]["env"][0], "A=2");
    assert_eq!(json["content"]["deploy"]["web"]["image"], "web");
    // --box: only that entry; --replace: from an empty file.
    h.write("# mine\ndeploy:\n  db: {image: db}\n");
    h.run(&["deploy", "import", a, "--box", "api"]).ok();
    let json = h.run(&["deploy", "show", "--json"]).ok().json();
    let keys: Vec<&String> = json["content"]["deploy"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["db", "api"], "file order: the new entry after the old");
    assert!(h.read().unwrap().starts_with("# mine\n"));
    h.run(&["deploy", "import", a, "--replace"]).ok();
    let json = h.run(&["deploy", "show", "--json"]).ok().json();
    let keys: Vec<&String> = json["content"]["deploy"].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["web", "api"], "a.yml's entries only, in its order");
    let err = h.run(&["deploy", "import", a, "--box", "nope"]).fails();
    assert!(err.stderr.contains("\"nope\"") && err.stderr.contains("api, web"), "{}", err.dump());
}

#[test]
fn a_bad_import_changes_nothing_and_names_the_file_and_the_problem() {
    let h = Home::new();
    h.write(HAND);
    let good = h.write_proj("good.yml", "deploy:\n  api: {image: api}\n");
    for (name, text, says) in [
        ("not-yaml.yml", "deploy: [unclosed\n", "not-yaml.yml is not a valid deploy file"),
        ("list.yml", "- a\n- b\n", "top level is not a map"),
        ("unknown.yml", "deploy:\n  api:\n    ports: [\"80:80\"]\n", "unknown field `ports`"),
        ("env.yml", "deploy:\n  api:\n    env: [NOEQUALS]\n", "deploy.api.env[0]: \"NOEQUALS\" has no `=`"),
        ("port.yml", "deploy:\n  api:\n    port: [\"80:http\"]\n", "deploy.api.port[0]"),
        ("name.yml", "deploy:\n  \"-api\": {}\n", "deploy.-api: the deployment name"),
        ("tabs.yml", "deploy:\n\tapi: {}\n", "tabs.yml is not a valid deploy file"),
        // What a quadlet unit cannot hold, refused here rather than at `config setup` (trial 30, L2).
        (
            "lf.yml",
            "deploy:\n  api:\n    env: [\"A=1\\nExecStartPre=/bin/false\"]\n",
            "deploy.api.env[0] \"A=1\\nExecStartPre=/bin/false\" holds a line break (or NUL)",
        ),
        (
            "bind.yml",
            "deploy:\n  api:\n    volume: [{name: d, type: bind, host: \"/srv/d\\nExecStartPre=x\"}]\n",
            "deploy.api.volume[0].host \"/srv/d\\nExecStartPre=x\" holds a line break",
        ),
        ("cr.yml", "deploy:\n  api:\n    env_file: \"a.env\\r\"\n", "deploy.api.env_file"),
        ("nul.yml", "deploy:\n  api:\n    network: \"n\\0\"\n", "deploy.api.network"),
        ("sidecar.yml", "sidecar:\n  db:\n    env: [\"B=2\\n[Service]\"]\n", "sidecar.db.env[0]"),
    ] {
        let bad = h.write_proj(name, text);
        // The good file first: a bad one later still stops the whole import.
        let err = h.run(&["deploy", "import", good.to_str().unwrap(), bad.to_str().unwrap()]).fails();
        assert!(err.stderr.contains(says), "{name}: {}", err.dump());
        assert!(err.stderr.contains("nothing was changed"), "{}", err.dump());
        assert_eq!(h.read().unwrap(), HAND, "{name}");
    }
    let err = h.run(&["deploy", "import", "missing.yml"]).fails();
    assert!(err.stderr.contains("missing.yml"), "{}", err.dump());
    assert_eq!(h.read().unwrap(), HAND);
    // A check plan is no unit's: its text may span lines; and `--box` checks what it takes.
    let plan = h.write_proj(
        "plan.yml",
        "deploy:\n  api:\n    plan: [{expect: \"one\\ntwo\"}]\n  other:\n    env: [\"A=1\\nB\"]\n",
    );
    h.run(&["deploy", "import", plan.to_str().unwrap(), "--box", "api"]).ok();
    assert!(h.read().unwrap().contains("one\\ntwo"), "{}", h.read().unwrap());
}

#[test]
fn reset_removes_an_entry_with_its_provides_then_the_file() {
    let h = Home::new();
    h.write(HAND);
    let json = h.run(&["deploy", "reset", "web", "-i", "2", "--json"]).ok().json();
    assert_eq!(json["changed"], true);
    assert_eq!(json["file_removed"], false);
    assert_eq!(json["provides_removed"], serde_json::json!(["env:WEB_URL"]));
    let text = h.read().unwrap();
    assert!(!text.contains("web/2") && !text.contains("WEB_URL"), "{text}");
    assert!(text.starts_with("# This host's deployments") && text.contains("  # the notebook\n"), "{text}");
    assert!(text.contains("JUPYTER_URL"), "{text}");
    // Unknown: nothing to remove, not an error; the entries are named.
    let run = h.run(&["deploy", "reset", "nope"]).ok();
    assert!(
        run.stdout.contains("No deploy entry \"nope\"") && run.stdout.contains("jupyter"),
        "{}",
        run.dump()
    );
    assert_eq!(h.read().unwrap(), text);
    // The last entry: the file stays for its hand-written comments, holding no entries.
    let json = h.run(&["deploy", "reset", "jupyter", "--json"]).ok().json();
    assert_eq!(json["file_removed"], false, "{json}");
    assert!(json["summary"].as_str().unwrap().contains("keeps its comments"), "{json}");
    assert_eq!(h.read().unwrap(), "# This host's deployments (edited by hand).\n");
    assert_eq!(h.run(&["deploy", "show", "--json"]).ok().json()["content"], serde_json::json!({}));
    // A file without comments goes with its last entry.
    h.write("deploy:\n  jupyter: {image: jupyter}\n");
    let json = h.run(&["deploy", "reset", "jupyter", "--json"]).ok().json();
    assert_eq!(json["file_removed"], true);
    assert!(h.read().is_none());
    let run = h.run(&["deploy", "reset"]).ok();
    assert!(run.stdout.starts_with("No deploy file to remove"), "{}", run.dump());
}

#[test]
fn export_prints_or_writes_the_file_or_some_entries() {
    let h = Home::new();
    let none = h.run(&["deploy", "export"]).ok();
    assert!(none.stdout.starts_with("No deploy entries to export"), "{}", none.dump());
    h.write(HAND);
    assert_eq!(h.run(&["deploy", "export"]).ok().stdout, HAND);
    let run = h.run(&["deploy", "export", "jupyter", "-o", "out.yml"]).ok();
    assert!(run.stdout.starts_with("Wrote ") && run.stdout.contains("(1 entry)"), "{}", run.dump());
    let out = h.path("proj/out.yml");
    assert_eq!(mode(&out), 0o600);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("jupyter") && text.contains("8888:8888") && !text.contains("web/2"), "{text}");
    // What was exported imports into an empty host as the same entry.
    let other = Home::new();
    std::fs::copy(&out, other.path("proj/out.yml")).unwrap();
    other.run(&["deploy", "import", "out.yml"]).ok();
    let a = h.run(&["deploy", "show", "jupyter", "--json"]).ok().json();
    let b = other.run(&["deploy", "show", "jupyter", "--json"]).ok().json();
    assert_eq!(a["content"], b["content"]);
    let err = h.run(&["deploy", "export", "jupyter", "nope"]).fails();
    assert!(err.stderr.contains("\"nope\""), "{}", err.dump());
}

#[test]
fn status_sets_entries_beside_quadlet_units() {
    let h = Home::new();
    let none = h.run(&["deploy", "status"]).ok();
    assert!(none.stdout.starts_with("No deploy entries"), "{}", none.dump());
    h.write(HAND);
    let units = h.path("cfg/containers/systemd");
    std::fs::create_dir_all(&units).unwrap();
    std::fs::write(units.join("charly-jupyter.container"), "[Container]\n").unwrap();
    std::fs::write(units.join("charly-other.container"), "[Container]\n").unwrap();
    std::fs::write(units.join("unrelated.container"), "[Container]\n").unwrap();
    // No podman on PATH: the container states are unknown, the rest is there.
    let json = h.run(&["deploy", "status", "--json"]).ok().json();
    assert_eq!(json["podman"], false);
    let rows: Vec<(String, String)> = json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["key"].as_str().unwrap().to_owned(), r["verdict"].as_str().unwrap().to_owned()))
        .collect();
    let expected = [("charly-other", "no deploy entry"), ("jupyter", "ok"), ("web/2", "not deployed")];
    assert_eq!(rows, expected.map(|(a, b)| (a.to_owned(), b.to_owned())));
    let text = h.run(&["deploy", "status"]).ok().stdout;
    assert!(text.contains("container: unknown"), "{text}");
}

#[test]
fn a_leftover_deploy_yml_is_an_error_saying_what_to_do() {
    let h = Home::new();
    h.write(HAND);
    std::fs::write(h.path("cfg/charly/deploy.yml"), "images: {}\n").unwrap();
    let err = h.run(&["deploy", "show"]).fails();
    assert!(err.stderr.contains("deploy.yml is the older per-host deploy file"), "{}", err.dump());
}
