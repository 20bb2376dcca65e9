//! `config setup`/`status`/`remove` against real podman: podman secrets from the credential
//! store (the config backend, in the test's HOME), named and bind volumes, the port
//! pre-flight, nothing left behind on failure, instances kept apart, and the quadlet units
//! checked by podman 5's generator and `systemd-analyze verify`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::util::{BUSYBOX, Box, free_port, volume_exists};

/// The podman secrets whose names start with `prefix`.
pub(super) fn secrets(prefix: &str) -> Vec<String> {
    let out = Command::new("podman").args(["secret", "ls", "--format", "{{.Name}}"]).output().unwrap();
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|n| n.starts_with(prefix))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

pub(super) fn remove_secrets(prefix: &str) {
    for name in secrets(prefix) {
        let _ = Command::new("podman").args(["secret", "rm", &name]).output();
    }
}

/// What a container sees in `$var` from podman secret `secret`.
pub(super) fn secret_value(secret: &str) -> String {
    let arg = format!("{secret},type=env,target=V");
    let out = Command::new("podman")
        .args(["run", "--rm", "--secret", &arg, BUSYBOX, "sh", "-c", "printf %s \"$V\""])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A box with credentials in the config backend of its HOME.
pub(super) struct Host {
    pub(super) b: Box,
    name: String,
}

impl Host {
    pub(super) fn new(name: &str, credentials: &[(&str, &str)]) -> Host {
        let b = Box::new(name);
        remove_secrets(&format!("charly-{name}"));
        b.cleanup().volumes(&[&format!("charly-{name}-data"), &format!("charly-{name}-2-data")]);
        let h = Host { b, name: name.to_owned() };
        h.credentials(credentials);
        h
    }

    pub(super) fn credentials(&self, credentials: &[(&str, &str)]) {
        let mut text = String::from("secret_backend: config\nvnc_passwords:\n");
        for (k, v) in credentials {
            text.push_str(&format!("  charly/secret/{k}: {v}\n"));
        }
        std::fs::create_dir_all(self.config()).unwrap();
        std::fs::write(self.config().join("config.yml"), text).unwrap();
    }

    pub(super) fn home(&self) -> PathBuf {
        self.b.proj().parent().unwrap().join("home")
    }

    pub(super) fn config(&self) -> PathBuf {
        self.home().join(".config/charly")
    }

    pub(super) fn deploy(&self) -> Option<String> {
        std::fs::read_to_string(self.config().join("charly.yml")).ok()
    }

    pub(super) fn units(&self) -> PathBuf {
        self.home().join(".config/containers/systemd")
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        remove_secrets(&format!("charly-{}", self.name));
    }
}

#[test]
fn setup_makes_secrets_and_volumes_and_re_setup_replaces_them() {
    let h = Host::new("test-cfgsec", &[("TOKEN", "s3cret"), ("api-key", "k1")]);
    let site = h.home().join("site");
    std::fs::create_dir_all(&site).unwrap();
    let bind = format!("site={}", site.display());
    let json =
        h.b.run(&[
            "config",
            "setup",
            "test-cfgsec",
            "--secret",
            "TOKEN",
            "--secret",
            "API=api-key",
            "-v",
            "data:/data",
            "-v",
            "site:/www",
            "--bind",
            &bind,
            "--json",
        ])
        .status(0)
        .json();
    assert_eq!(json["run_mode"], "direct");
    assert_eq!(json["secrets"][0]["podman"], "charly-test-cfgsec-TOKEN");
    assert_eq!(json["secrets"][1]["credential"], "charly/secret/api-key");
    assert_eq!(json["volumes"][0]["created"], true);
    assert_eq!(
        json["entry"]["secret"],
        serde_json::json!([{"name": "TOKEN"}, {"name": "API", "source": "api-key"}])
    );
    assert_eq!(secrets("charly-test-cfgsec"), ["charly-test-cfgsec-API", "charly-test-cfgsec-TOKEN"]);
    assert_eq!(secret_value("charly-test-cfgsec-TOKEN"), "s3cret");
    assert_eq!(secret_value("charly-test-cfgsec-API"), "k1");
    assert!(volume_exists("charly-test-cfgsec-data"));
    // The value never went on a command line: it is not in the report either.
    assert!(!h.b.run(&["config", "status", "test-cfgsec", "--json"]).status(0).stdout.contains("s3cret"));
    // A new stored value and the entry without API: re-setup replaces TOKEN, drops API.
    h.credentials(&[("TOKEN", "n3w")]);
    let text = h.deploy().unwrap().replace("{name: TOKEN}, {name: API, source: api-key}", "{name: TOKEN}");
    std::fs::write(h.config().join("charly.yml"), text).unwrap();
    let json = h.b.run(&["config", "setup", "test-cfgsec", "--json"]).status(0).json();
    assert_eq!(json["secrets_removed"], serde_json::json!(["charly-test-cfgsec-API"]));
    assert_eq!(json["volumes"][0]["created"], false, "the volume is kept");
    assert_eq!(secrets("charly-test-cfgsec"), ["charly-test-cfgsec-TOKEN"]);
    assert_eq!(secret_value("charly-test-cfgsec-TOKEN"), "n3w");
    let status = h.b.run(&["config", "status", "test-cfgsec", "--json"]).status(0).json();
    assert_eq!(status["complete"], true, "{status}");
    // The bind directory goes away: status says so.
    std::fs::remove_dir(&site).unwrap();
    let status = h.b.run(&["config", "status", "test-cfgsec", "--json"]).status(0).json();
    assert_eq!(status["complete"], false);
    assert_eq!(status["volumes"][1]["present"], false);
}

#[test]
fn a_failed_setup_leaves_nothing() {
    let h = Host::new("test-cfgfail", &[("TOKEN", "s3cret")]);
    let none = |r: &super::util::Run| {
        assert!(h.deploy().is_none(), "a deploy entry was left\n{}", r.dump());
        assert!(secrets("charly-test-cfgfail").is_empty(), "secrets were left\n{}", r.dump());
        assert!(!volume_exists("charly-test-cfgfail-data"), "a volume was left\n{}", r.dump());
    };
    let base = ["config", "setup", "test-cfgfail", "--secret", "TOKEN", "-v", "data:/data"];
    let with = |more: &[&str]| -> Vec<String> { base.iter().chain(more).map(|s| s.to_string()).collect() };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        h.b.run(&args)
    };
    // A secret without a value.
    let r = run(with(&["--secret", "MISSING"]));
    r.status(2).stderr_has(&[
        "box test-cfgfail",
        "MISSING (charly/secret/MISSING)",
        "(config ",
        "`charly/secret/MISSING: <VALUE>` under `vnc_passwords:`",
        "nothing was changed",
    ]);
    none(&r);
    // A bind directory that does not exist, or is relative.
    let r = run(with(&["--bind", "data=/no/such/dir"]));
    r.status(2).stderr_has(&["--bind data=/no/such/dir", "does not exist"]);
    none(&r);
    let r = run(with(&["--bind", "data=rel/dir"]));
    r.status(2).stderr_has(&["--bind data=rel/dir", "not absolute"]);
    none(&r);
    let r = run(with(&["--bind", "nope=/tmp"]));
    r.status(2).stderr_has(&["--bind nope=/tmp", "no volume \"nope\"", "--volume nope:/path"]);
    none(&r);
    // A host port held by this test's own process: named with its pid, and the remap.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let p = format!("{port}:80");
    let r = run(with(&["-p", &p]));
    r.status(2).stderr_has(&[&format!("host port {port}"), &format!("pid {}", std::process::id())]);
    // The remap is a port free when charly looked (not blindly port + 1, which another test
    // may hold), never the one in use.
    crate::util::suggested_remap(&r.stderr, "remap it: `-p ", port, 80);
    none(&r);
    drop(listener);
    // A failure after the first podman change (the unit directory is a file): undone.
    std::fs::create_dir_all(h.units().parent().unwrap()).unwrap();
    std::fs::write(h.units(), "not a directory").unwrap();
    let r = run(with(&["--run-mode", "quadlet"]));
    r.status(2).stderr_has(&["box test-cfgfail", "removed again"]);
    none(&r);
    std::fs::remove_file(h.units()).unwrap();
    // A line break in a value of a quadlet unit (trial 29, H1: it wrote `[Service]
    // ExecStartPre=` lines that systemd would run on the host): refused, nothing written.
    let inject = "INJ=a\n[Service]\nExecStartPre=/bin/touch /tmp/pwned\n#";
    let r = run(with(&["--run-mode", "quadlet", "-e", inject]));
    r.status(2)
        .stderr_has(&["the environment entry \"INJ=a\\n[Service]", "which a quadlet unit cannot hold"]);
    none(&r);
    assert!(!h.units().join("charly-test-cfgfail.container").exists(), "{}", r.dump());
    // And then it works.
    run(with(&[])).status(0);
    assert_eq!(secrets("charly-test-cfgfail"), ["charly-test-cfgfail-TOKEN"]);
}

#[test]
fn a_port_held_by_a_container_names_it() {
    let h = Host::new("test-cfgport", &[]);
    let other = Box::built("test-cfgport2");
    let port = free_port();
    let p = format!("{port}:80");
    other.run(&["start", "test-cfgport2", "-p", &p]).status(0);
    let r = h.b.run(&["config", "setup", "test-cfgport", "-p", &p]);
    r.status(2)
        .stderr_has(&["container charly-test-cfgport2 (box test-cfgport2)", "charly stop test-cfgport2"]);
    // A port free when charly looked, after the one in use (not blindly port + 1).
    crate::util::suggested_remap(&r.stderr, "remap it: `-p ", port, 80);
    assert!(h.deploy().is_none());
}

#[test]
fn remove_takes_only_its_own_instance() {
    let h = Host::new("test-cfgrm", &[("TOKEN", "t")]);
    for inst in [None, Some("2")] {
        let mut args = vec![
            "config",
            "setup",
            "test-cfgrm",
            "--secret",
            "TOKEN",
            "-v",
            "data:/data",
            "--run-mode",
            "quadlet",
        ];
        if let Some(i) = inst {
            args.extend(["-i", i]);
        }
        h.b.run(&args).status(0);
    }
    assert_eq!(secrets("charly-test-cfgrm"), ["charly-test-cfgrm-2-TOKEN", "charly-test-cfgrm-TOKEN"]);
    let unit = |n: &str| h.units().join(n);
    assert!(
        unit("charly-test-cfgrm-2.container").is_file() && unit("charly-test-cfgrm-2-data.volume").is_file()
    );
    // Without --purge the volume stays.
    let json = h.b.run(&["config", "remove", "test-cfgrm", "-i", "2", "--json"]).status(0).json();
    assert_eq!(json["entry_removed"], true);
    assert_eq!(json["secrets_removed"], serde_json::json!(["charly-test-cfgrm-2-TOKEN"]));
    assert_eq!(json["volumes_kept"], serde_json::json!(["charly-test-cfgrm-2-data"]));
    assert!(volume_exists("charly-test-cfgrm-2-data"));
    assert!(
        !unit("charly-test-cfgrm-2.container").exists() && !unit("charly-test-cfgrm-2-data.volume").exists()
    );
    // The other instance is whole.
    assert_eq!(secrets("charly-test-cfgrm"), ["charly-test-cfgrm-TOKEN"]);
    assert!(unit("charly-test-cfgrm.container").is_file() && volume_exists("charly-test-cfgrm-data"));
    let status = h.b.run(&["config", "status", "test-cfgrm", "--json"]).status(0).json();
    assert_eq!(status["complete"], true);
    assert!(h.deploy().unwrap().contains("test-cfgrm:"));
    // --purge (the entry is gone already: the volume labelled as the instance's still goes).
    let json = h.b.run(&["config", "remove", "test-cfgrm", "-i", "2", "--purge", "--json"]).status(0).json();
    assert_eq!(json["entry_removed"], false);
    assert_eq!(json["volumes_removed"], serde_json::json!(["charly-test-cfgrm-2-data"]));
    h.b.run(&["config", "remove", "test-cfgrm", "--purge"]).status(0);
    assert!(secrets("charly-test-cfgrm").is_empty() && !volume_exists("charly-test-cfgrm-data"));
    assert!(h.deploy().is_none(), "the last entry removed the file");
    let status = h.b.run(&["config", "status", "test-cfgrm"]);
    status.status(0);
    assert!(status.stdout.contains("not configured"), "{}", status.dump());
}

/// podman 5's quadlet generator from trixie's .deb (scripts/runtimes.sh), or CHARLY_QUADLET.
fn quadlet() -> PathBuf {
    if let Some(p) = std::env::var_os("CHARLY_QUADLET") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.runtimes/quadlet/usr/libexec/podman/quadlet");
    assert!(
        p.is_file(),
        "no quadlet generator at {}: run scripts/runtimes.sh as root (it extracts trixie's podman .deb there)",
        p.display()
    );
    p
}

#[test]
fn quadlet_units_pass_podmans_generator_and_systemd_analyze() {
    let quadlet = quadlet();
    let h = Host::new("test-cfgq", &[("TOKEN", "t")]);
    // What the box declares for running it reaches the unit as a direct start passes it:
    // env, confinement, supervisord as init (as root: the user goes to the programs), hooks.
    h.b.candy(
        "test-cfgq",
        "q",
        "q:\n  candy: {description: run-time declarations}\nq-env:\n  env: [LANG=C.UTF-8]\n\
         q-sec:\n  security: {user: \"1000\", cap_drop: [ALL], no_new_privileges: true}\n\
         q-svc:\n  service: [{name: web, command: httpd -f -p 80}]\n\
         q-hook:\n  hook: {post_enable: \"echo $CHARLY_CONTAINER > /tmp/enabled\"}\n",
    );
    // An encrypted volume too: the unit mounts it before the container starts.
    let config = h.config().join("config.yml");
    // Instance 2's own passphrase (charly/enc/<box>/<instance>; the config backend escapes `/`).
    let text = std::fs::read_to_string(&config).unwrap() + "  charly/enc/test-cfgq%2F2: pass\n";
    std::fs::write(&config, text).unwrap();
    let site = h.home().join("site");
    std::fs::create_dir_all(&site).unwrap();
    let bind = format!("site={}", site.display());
    let port = free_port();
    let p = format!("{port}:80");
    let args = [
        "config",
        "setup",
        "test-cfgq",
        "-i",
        "2",
        "--secret",
        "TOKEN",
        "-v",
        "data:/data",
        "-v",
        "site:/www",
        "--bind",
        &bind,
        "-p",
        &p,
        "-e",
        "GREETING=hello world",
        "-e",
        "RATE=100%",
        "-v",
        "vault:/vault",
        "--encrypt",
        "vault",
        "--run-mode",
        "quadlet",
        "--json",
    ];
    let json = h.b.run(&args).status(0).json();
    assert_eq!(json["units"].as_array().unwrap().len(), 2, "{json}");
    let out = Command::new(&quadlet)
        .args(["-dryrun", "-user"])
        .env("QUADLET_UNIT_DIRS", h.units())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && !err.contains("rror"), "quadlet failed:\n{err}\n{text}");
    assert!(
        text.contains("---charly-test-cfgq-2.service---")
            && text.contains("---charly-test-cfgq-2-data-volume.service---"),
        "{text}"
    );
    for part in [
        "--name charly-test-cfgq-2",
        &format!("--publish 127.0.0.1:{port}:80/tcp"),
        "-v charly-test-cfgq-2-data:/data",
        &format!("-v {}:/www", site.display()),
        "--secret charly-test-cfgq-2-TOKEN,type=env,target=TOKEN",
        "--env \"GREETING=hello world\"",
        "--init",
        "localhost/test-cfgq:latest supervisord -n -c /etc/charly/supervisord.conf",
        "--env LANG=C.UTF-8",
        "--cap-drop ALL --security-opt no-new-privileges",
        "ExecStartPost=podman exec --env CHARLY_CONTAINER=charly-test-cfgq-2 charly-test-cfgq-2 sh -c \"echo $$CHARLY_CONTAINER > /tmp/enabled\"",
        "config mount test-cfgq -i 2\n",
        "/.local/share/charly/encrypted/charly-test-cfgq-2-vault/plain:/vault",
    ] {
        assert!(text.contains(part), "{part:?} not in the generated service:\n{text}");
    }
    // supervisord starts as root (it runs the programs as the box's user).
    assert!(!text.contains("--user"), "{text}");
    // The generated services, checked by systemd.
    let generated = h.home().join("gen");
    let out = Command::new(&quadlet)
        .args(["-user", generated.to_str().unwrap()])
        .env("QUADLET_UNIT_DIRS", h.units())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let runtime = h.home().join("run");
    std::fs::create_dir_all(&runtime).unwrap();
    let out = Command::new("systemd-analyze")
        .args([
            "verify",
            "--user",
            "--man=no",
            "charly-test-cfgq-2.service",
            "charly-test-cfgq-2-data-volume.service",
        ])
        .current_dir(&generated)
        .env("XDG_RUNTIME_DIR", &runtime)
        .output()
        .expect("systemd-analyze (systemd) is installed");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success() && !said.contains(".service:"),
        "systemd-analyze verify complained:\n{said}"
    );
    // Once the box is built, the unit runs what the image declares, as a direct start does:
    // a project edit not built yet does not reach it.
    h.b.run(&["box", "build", "test-cfgq"]).status(0);
    let candy = h.b.proj().join("candy/q/charly.yml");
    let text = std::fs::read_to_string(&candy).unwrap().replace("LANG=C.UTF-8", "LANG=edited.but.not.built");
    std::fs::write(&candy, text).unwrap();
    h.b.run(&args).status(0);
    let unit = std::fs::read_to_string(h.units().join("charly-test-cfgq-2.container")).unwrap();
    assert!(unit.contains("Environment=LANG=C.UTF-8\n") && !unit.contains("edited"), "{unit}");
}

/// Whether FUSE mounts work here (gocryptfs needs /dev/fuse and the right to mount).
pub(super) fn fuse_works() -> Result<(), String> {
    if !Path::new("/dev/fuse").exists() {
        return Err("/dev/fuse is missing (a container without the FUSE device)".into());
    }
    if Command::new("gocryptfs").arg("-version").output().is_err() {
        return Err("gocryptfs is not installed: run scripts/runtimes.sh as root".into());
    }
    Ok(())
}

#[test]
fn encrypted_volumes_mount_unmount_and_change_passphrase() {
    if let Err(why) = fuse_works() {
        panic!("encrypted volumes cannot be tested on this machine: {why}");
    }
    let h = Host::new("test-cfgenc", &[]);
    /// Unmounts the plain dir at the end, also when an assertion fails.
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("fusermount3").arg("-u").arg(&self.0).output();
        }
    }
    // No passphrase: an error naming the credential, nothing made.
    let args = ["config", "setup", "test-cfgenc", "-v", "vault:/vault", "--encrypt", "vault", "--json"];
    h.b.run(&args[..7])
        .status(2)
        .stderr_has(&["box test-cfgenc", "charly secrets set charly/enc test-cfgenc"]);
    assert!(h.deploy().is_none());
    let dir = h.home().join(".local/share/charly/encrypted/charly-test-cfgenc-vault");
    assert!(!dir.exists());
    let _unmount = Unmount(dir.join("plain"));
    // The passphrase in the credential store (config backend).
    let config = h.config().join("config.yml");
    std::fs::write(&config, "secret_backend: config\nvnc_passwords:\n  charly/enc/test-cfgenc: first\n")
        .unwrap();
    let json = h.b.run(&args).status(0).json();
    assert_eq!(json["volumes"][0]["kind"], "encrypted");
    assert_eq!(json["volumes"][0]["host"], dir.join("plain").display().to_string());
    assert!(dir.join("cipher/gocryptfs.conf").is_file());
    // Mount, write, unmount: the plain text is only in the mount.
    let m = h.b.run(&["config", "mount", "test-cfgenc", "--json"]).status(0).json();
    assert_eq!(m["volumes"][0]["mounted"], true);
    let unmount = |h: &Host| {
        let _ = Command::new("fusermount3").arg("-u").arg(dir.join("plain")).output();
        let _ = h;
    };
    std::fs::write(dir.join("plain/note"), "hello vault").unwrap();
    let again = h.b.run(&["config", "mount", "test-cfgenc", "--json"]).status(0).json();
    assert_eq!(again["volumes"][0]["changed"], false, "already mounted");
    // passwd is refused while mounted.
    h.b.run(&["config", "passwd", "test-cfgenc", "--new-passphrase", "second"])
        .status(2)
        .stderr_has(&["mounted", "config unmount"]);
    let u = h.b.run(&["config", "unmount", "test-cfgenc", "--json"]).status(0).json();
    assert_eq!(u["volumes"][0]["mounted"], false);
    assert!(!dir.join("plain/note").exists(), "the plain file left the mount");
    // passwd: the volumes and the stored passphrase change together.
    let p =
        h.b.run(&["config", "passwd", "test-cfgenc", "--new-passphrase", "second", "--json"])
            .status(0)
            .json();
    assert_eq!(p["stored"], "charly/enc/test-cfgenc (config)");
    assert!(std::fs::read_to_string(&config).unwrap().contains("second"));
    h.b.run(&["config", "mount", "test-cfgenc"]).status(0);
    let note = std::fs::read_to_string(dir.join("plain/note"));
    unmount(&h);
    assert_eq!(note.unwrap(), "hello vault");
    // The old passphrase no longer opens it.
    let mut cmd = h.b.charly();
    cmd.args(["config", "mount", "test-cfgenc"]).env("GOCRYPTFS_PASSWORD", "first");
    let out = cmd.output().unwrap();
    unmount(&h);
    assert!(!out.status.success(), "the old passphrase mounted it");
    let status = h.b.run(&["config", "status", "test-cfgenc", "--json"]).status(0).json();
    assert_eq!(status["volumes"][0]["present"], true);
}

#[test]
fn the_config_leaves_work_as_mcp_tools_and_read_only_hides_the_writers() {
    let h = Host::new("test-cfgmcp", &[("TOKEN", "over-mcp")]);
    let charly = super::util::CHARLY;
    let mcp = serde_json::json!({"mcpServers": {
        "self": {"command": charly, "args": ["mcp", "serve", "--stdio"]},
        "ro": {"command": charly, "args": ["mcp", "serve", "--stdio", "--read-only"]},
    }});
    std::fs::write(h.b.proj().join(".mcp.json"), mcp.to_string()).unwrap();
    let call = |server: &str, tool: &str, input: serde_json::Value| {
        let input = input.to_string();
        h.b.run(&["check", "mcp", "call", "--server", server, "--tool", tool, "--input", &input])
    };
    let setup = serde_json::json!({"box": "test-cfgmcp", "secret": ["TOKEN"], "volume": ["data:/data"]});
    // Read-only: the writer is not there, the reader is.
    let refused = call("ro", "config.setup", setup.clone());
    assert_ne!(refused.code, Some(0), "{}", refused.dump());
    assert!(h.deploy().is_none() && secrets("charly-test-cfgmcp").is_empty());
    let status = call("ro", "config.status", serde_json::json!({"box": "test-cfgmcp"}));
    status.status(0);
    assert!(status.stdout.contains("not configured"), "{}", status.dump());
    // A bad bind over MCP: an error result naming the argument, nothing made.
    let bad = call(
        "self",
        "config.setup",
        serde_json::json!({"box": "test-cfgmcp", "volume": ["data:/data"], "bind": ["data=relative"]}),
    );
    assert_eq!(bad.code, Some(1), "{}", bad.dump());
    assert!(bad.stdout.contains("--bind data=relative"), "{}", bad.dump());
    assert!(h.deploy().is_none());
    // A host directory outside the project root (issue 14's trial bound `data=/root`): refused
    // as `start`'s bind is, nothing written, nothing made.
    let outside = format!("data={}", h.home().display());
    for (bind, why) in
        [(outside.as_str(), "absolute paths are not allowed"), ("data=../home", "`..` is not allowed")]
    {
        let out = call(
            "self",
            "config.setup",
            serde_json::json!({"box": "test-cfgmcp", "volume": ["data:/data"], "bind": [bind]}),
        );
        assert_eq!(out.code, Some(1), "{}", out.dump());
        assert!(out.stdout.contains(&format!("--bind {bind}")) && out.stdout.contains(why), "{}", out.dump());
        assert!(h.deploy().is_none() && secrets("charly-test-cfgmcp").is_empty());
    }
    // A directory inside the project, named relative to it: bound by its absolute path.
    std::fs::create_dir_all(h.b.proj().join("site")).unwrap();
    let inside = call(
        "self",
        "config.setup",
        serde_json::json!({"box": "test-cfgmcp", "volume": ["data:/data"], "bind": ["data=site"]}),
    );
    inside.status(0);
    let site = h.b.proj().canonicalize().unwrap().join("site");
    assert!(h.deploy().unwrap().contains(&*site.to_string_lossy()), "{:?}", h.deploy());
    call("self", "config.remove", serde_json::json!({"box": "test-cfgmcp"})).status(0);
    assert!(h.deploy().is_none());
    // The real thing.
    let done = call("self", "config.setup", setup);
    done.status(0);
    assert!(done.stdout.contains("podman secret charly-test-cfgmcp-TOKEN"), "{}", done.dump());
    assert_eq!(secret_value("charly-test-cfgmcp-TOKEN"), "over-mcp");
    let status = call("ro", "config.status", serde_json::json!({"box": "test-cfgmcp"}));
    assert!(status.status(0).stdout.contains("configured, complete"), "{}", status.dump());
    call("self", "config.remove", serde_json::json!({"box": "test-cfgmcp", "purge": true})).status(0);
    assert!(h.deploy().is_none() && secrets("charly-test-cfgmcp").is_empty());
    assert!(!volume_exists("charly-test-cfgmcp-data"));
}

/// `--password auto`: a passphrase is generated and stored as `charly/enc/<box>`, the
/// volume opens with it; `remove --purge` unmounts and removes the encrypted directory.
#[test]
fn password_auto_generates_the_passphrase_and_remove_purge_takes_the_directory() {
    if let Err(why) = fuse_works() {
        panic!("encrypted volumes cannot be tested on this machine: {why}");
    }
    let h = Host::new("test-cfgauto", &[]);
    let dir = h.home().join(".local/share/charly/encrypted/charly-test-cfgauto-vault");
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("fusermount3").arg("-u").arg(&self.0).output();
        }
    }
    let _unmount = Unmount(dir.join("plain"));
    let args = ["config", "setup", "test-cfgauto", "-v", "vault:/vault", "--encrypt", "vault"];
    // Without it, the error offers it.
    h.b.run(&args).status(2).stderr_has(&["--password auto"]);
    let mut auto = args.to_vec();
    auto.extend(["--password", "auto", "--json"]);
    let json = h.b.run(&auto).status(0).json();
    assert_eq!(json["passphrase_stored"], "charly/enc/test-cfgauto (config)", "{json}");
    let config = std::fs::read_to_string(h.config().join("config.yml")).unwrap();
    let stored = config
        .lines()
        .find_map(|l| l.trim().strip_prefix("charly/enc/test-cfgauto: "))
        .unwrap_or_else(|| panic!("no stored passphrase in\n{config}"))
        .trim_matches(['\'', '"']);
    assert_eq!(stored.len(), 64, "{stored}");
    assert!(stored.chars().all(|c| c.is_ascii_hexdigit()), "{stored}");
    assert!(!json.to_string().contains(stored), "the report shows the passphrase");
    // A second setup uses the stored one (nothing generated again).
    let again = h.b.run(&auto).status(0).json();
    assert!(again.get("passphrase_stored").is_none(), "{again}");
    h.b.run(&["config", "mount", "test-cfgauto"]).status(0);
    std::fs::write(dir.join("plain/note"), "x").unwrap();
    // remove --purge: unmounted, the directory gone, the entry gone.
    let removed = h.b.run(&["remove", "test-cfgauto", "--purge", "--json"]).status(0).json();
    assert_eq!(removed["encrypted"], serde_json::json!([dir.display().to_string()]), "{removed}");
    assert_eq!(removed["entry_removed"], true);
    assert!(!dir.exists());
    assert!(!h.deploy().unwrap_or_default().contains("test-cfgauto"));
}
