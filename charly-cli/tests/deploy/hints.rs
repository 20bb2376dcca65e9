//! The fixes `config mount|unmount|passwd` and `config setup` print, run as printed: the `-i`
//! hints of an instance's encrypted volumes (gocryptfs, as root here), and the `secret-tool`
//! hint of a secret missing from the Secret Service keyring (gnome-keyring-daemon on a private
//! bus, as tests/hoststate starts it).

use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::config::{Host, secret_value};
use crate::util::Run;

/// The backquoted part of `run`'s stderr that starts with `prefix`.
#[track_caller]
fn printed(run: &Run, prefix: &str) -> String {
    run.stderr
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|q| q.starts_with(prefix))
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("no `{prefix}...` in the hint\n{}", run.dump()))
}

/// Runs a printed `charly ...` command (split at spaces) in `h`'s project.
#[track_caller]
fn run_printed(h: &Host, line: &str) -> Run {
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words.first(), Some(&"charly"), "{line}");
    h.b.run(&words[1..])
}

/// Unmounts the plain dir at the end, also when an assertion fails.
struct Unmount(PathBuf);

impl Drop for Unmount {
    fn drop(&mut self) {
        let _ = Command::new("fusermount3").arg("-u").arg(&self.0).output();
    }
}

#[test]
fn the_instance_hints_of_encrypted_volumes_work_as_printed() {
    if !std::path::Path::new("/dev/fuse").exists()
        || Command::new("gocryptfs").arg("-version").output().is_err()
    {
        panic!(
            "encrypted volumes cannot be tested on this machine: no /dev/fuse or no gocryptfs (scripts/runtimes.sh)"
        );
    }
    let name = "test-fx-enc";
    let h = Host::new(name, &[]);
    std::fs::write(
        h.config().join("config.yml"),
        // Instance 2's own passphrase, charly/enc/<box>/2 (the config backend escapes the `/`).
        format!("secret_backend: config\nvnc_passwords:\n  charly/enc/{name}%2F2: first\n"),
    )
    .unwrap();
    let dir = h.home().join(format!(".local/share/charly/encrypted/charly-{name}-2-vault"));
    let _unmount = Unmount(dir.join("plain"));

    // No encrypted volume yet: the setup that adds one, for this instance.
    let r = h.b.run(&["config", "mount", name, "-i", "2"]);
    r.status(2);
    let setup = printed(&r, "charly config setup");
    assert_eq!(
        setup,
        format!("charly config setup {name} -i 2 -v NAME:/path --encrypt NAME"),
        "{}",
        r.dump()
    );
    run_printed(&h, &setup.replace("NAME:/path", "vault:/vault").replace("NAME", "vault")).status(0);
    assert!(h.deploy().unwrap().contains(&format!("{name}/2:")), "{:?}", h.deploy());
    h.b.run(&["config", "mount", name, "-i", "2"]).status(0);
    std::fs::write(dir.join("plain/note"), "kept").unwrap();

    // passwd while mounted: the unmount it prints, for this instance, then passwd works.
    let r = h.b.run(&["config", "passwd", name, "-i", "2", "--new-passphrase", "second"]);
    r.status(2);
    let unmount = printed(&r, "charly config unmount");
    assert_eq!(unmount, format!("charly config unmount {name} -i 2"));
    run_printed(&h, &unmount).status(0);
    assert!(!dir.join("plain/note").exists());
    h.b.run(&["config", "passwd", name, "-i", "2", "--new-passphrase", "second"]).status(0);

    // An entry whose volume lost its cipher directory: the setup it prints initialises it again.
    std::fs::remove_dir_all(dir.join("cipher")).unwrap();
    let r = h.b.run(&["config", "mount", name, "-i", "2"]);
    r.status(2);
    let setup = printed(&r, "charly config setup");
    assert_eq!(setup, format!("charly config setup {name} -i 2"));
    run_printed(&h, &setup).status(0);
    assert!(dir.join("cipher/gocryptfs.conf").is_file());
    h.b.run(&["config", "mount", name, "-i", "2"]).status(0);
}

/// The Secret Service hint of `config setup` for a secret that is not stored:
/// `secret-tool store ...`, run as printed (the value on stdin) on the same private bus, makes
/// the next setup find it.
#[test]
fn the_secret_tool_hint_stores_the_missing_secret() {
    let name = "test-fx-kr";
    let h = Host::new(name, &[]);
    // The credential store chooses the keyring (`auto`) when one answers, unlocked.
    std::fs::write(h.config().join("config.yml"), "").unwrap();
    let bus = crate::hoststate::Bus::with_keyring("login-pw");
    let setup = |h: &Host| {
        let mut cmd = h.b.charly();
        cmd.args(["config", "setup", name, "--secret", "TOKEN"])
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
        Run::of(&mut cmd, &["config", "setup", name, "--secret", "TOKEN"])
    };
    let r = setup(&h);
    r.status(2).stderr_has(&["TOKEN (charly/secret/TOKEN)", "keyring"]);
    let store = printed(&r, "secret-tool store");
    assert!(r.stderr.contains("(it reads the value from stdin)"), "{}", r.dump());
    let words: Vec<&str> = store.split_whitespace().collect();
    let mut child = Command::new(words[0])
        .args(&words[1..])
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("secret-tool (libsecret-tools)");
    {
        use std::io::Write as _;
        child.stdin.take().unwrap().write_all(b"tok-from-secret-tool").unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{store}: {}", String::from_utf8_lossy(&out.stderr));
    setup(&h).status(0);
    assert_eq!(secret_value(&format!("charly-{name}-TOKEN")), "tok-from-secret-tool");
}
