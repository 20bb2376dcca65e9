//! `secrets gpg ...` against the cases a fresh-user trial found: key ids that gpg would read
//! as options, a key spec that matches several keys, a passphrase-protected key whose
//! passphrase the agent has not cached, a symmetric file, a wrong passphrase.

use crate::util::Home;

fn two_keys() -> (Home, String, String) {
    let t = Home::new();
    let alice = t.gpg_key("alice@example.invalid");
    let bob = t.gpg_key("bob@example.invalid");
    std::fs::write(t.proj().join(".env"), "K=v\n").unwrap();
    t.run(&["secrets", "gpg", "encrypt", "-r", &alice]).status(0);
    (t, alice, bob)
}

/// `add-recipient -- --yes` used to run `gpg --list-keys --yes` (every key) and answer
/// "already a recipient"; now a spec starting with `-` is refused, naming the argument, and
/// the file is unchanged.
#[test]
fn a_key_spec_that_gpg_would_read_as_an_option_is_refused() {
    let (t, _, _) = two_keys();
    let secrets = t.proj().join(".secrets");
    let before = std::fs::read(&secrets).unwrap();
    for spec in ["--yes", "--with-secret", "-a"] {
        t.run(&["secrets", "gpg", "add-recipient", "--", spec])
            .status(2)
            .stderr_has("argument `key_id`")
            .stderr_has("starts with `-`");
    }
    t.run(&["secrets", "gpg", "encrypt", "--recipient=--yes", "-o", "new.secrets"])
        .status(2)
        .stderr_has("argument `recipient`");
    t.run(&["secrets", "gpg", "set", "A", "b", "-f", "new.secrets", "--recipient=-x"])
        .status(2)
        .stderr_has("argument `recipient`");
    t.run(&["secrets", "gpg", "export-key", "--to-keystore", "--key-id=--yes"])
        .status(2)
        .stderr_has("argument `key_id`");
    assert!(!t.proj().join("new.secrets").exists());
    assert_eq!(std::fs::read(&secrets).unwrap(), before);
    assert_eq!(t.run(&["secrets", "gpg", "recipients"]).status(0).stdout.lines().count(), 1);
}

/// `example.invalid` matches alice and bob: add-recipient (only alice is a recipient) used to
/// answer "already a recipient"; encrypt and export-key took the first match. Now each says
/// which keys it matches (fingerprint and uid) and asks for a fingerprint; nothing changes.
#[test]
fn a_key_spec_that_matches_several_keys_is_an_error_listing_them() {
    let (t, alice, bob) = two_keys();
    let secrets = t.proj().join(".secrets");
    let before = std::fs::read(&secrets).unwrap();
    let run = t.run(&["secrets", "gpg", "add-recipient", "example.invalid"]);
    run.status(2)
        .stderr_has("argument `key_id`: \"example.invalid\" matches 2 keys")
        .stderr_has(&format!("{alice} Test alice@example.invalid <alice@example.invalid>"))
        .stderr_has(&format!("{bob} Test bob@example.invalid <bob@example.invalid>"))
        .stderr_has("give the fingerprint");
    assert_eq!(std::fs::read(&secrets).unwrap(), before);
    t.run(&["secrets", "gpg", "encrypt", "-r", "example.invalid", "-o", "new.secrets"])
        .status(2)
        .stderr_has("argument `recipient`: \"example.invalid\" matches 2 keys");
    t.run(&["secrets", "gpg", "set", "A", "b", "-f", "new.secrets", "-r", "example.invalid"])
        .status(2)
        .stderr_has("matches 2 keys");
    assert!(!t.proj().join("new.secrets").exists());
    let keys = t.path().join("keys");
    t.run(&["secrets", "gpg", "export-key", &keys.to_string_lossy(), "--key-id", "example.invalid"])
        .status(2)
        .stderr_has("argument `key_id`: \"example.invalid\" matches 2 keys");
    assert!(!keys.exists());
    // One match adds it: the file is then encrypted to both.
    t.run(&["secrets", "gpg", "add-recipient", "bob@example.invalid"]).status(0);
    assert_eq!(t.run(&["secrets", "gpg", "recipients"]).status(0).stdout.lines().count(), 2);
    t.run(&["secrets", "gpg", "add-recipient", &bob])
        .status(0)
        .stdout(&format!("{}: key {bob} is already a recipient\n", secrets.display()));
}

/// A key `Test <email>` (ed25519 + cv25519) protected by `passphrase`; its fingerprint.
fn protected_key(t: &Home, email: &str, passphrase: &str) -> String {
    let uid = format!("Test {email} <{email}>");
    let loopback = ["--batch", "--pinentry-mode", "loopback", "--passphrase", passphrase];
    let generate = [&loopback[..], &["--quick-gen-key", &uid, "ed25519", "sign,cert", "never"]].concat();
    t.tool("gpg", &generate, None).status(0);
    let list = t.tool("gpg", &["--batch", "--with-colons", "--list-keys", email], None);
    let fpr = list.stdout.lines().find_map(|l| l.strip_prefix("fpr:")).unwrap().trim_matches(':').to_owned();
    let sub = [&loopback[..], &["--quick-add-key", &fpr, "cv25519", "encr", "never"]].concat();
    t.tool("gpg", &sub, None).status(0);
    fpr
}

/// Forgets every cached passphrase (a reboot, a new login).
fn restart_agent(t: &Home) {
    t.tool("gpgconf", &["--kill", "gpg-agent"], None).status(0);
}

/// `charly ARGS` with `env` added (and `remove` taken away) for this one run.
fn run_with(t: &Home, env: &[(&str, &str)], remove: &[&str], args: &[&str]) -> crate::util::Run {
    let mut cmd = t.charly();
    cmd.args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    for k in remove {
        cmd.env_remove(k);
    }
    crate::util::Run::of(&mut cmd, &args.join(" "))
}

/// A protected secret key that is in the keyring, its passphrase not cached: show, env, set,
/// decrypt and doctor used to say "none of their secret keys is in this keyring". Now they say
/// the key is here and needs its passphrase, which `--passphrase-env VAR` or
/// `CHARLY_GPG_PASSPHRASE` gives (through a pipe); a wrong one is called wrong.
#[test]
fn a_protected_key_that_is_here_needs_its_passphrase_and_can_be_given_one() {
    let t = Home::new();
    let pp = "carol-pass-phrase";
    let fpr = protected_key(&t, "carol@example.invalid", pp);
    std::fs::write(t.proj().join(".env"), "K=v\n").unwrap();
    t.run(&["secrets", "gpg", "encrypt", "-r", &fpr]).status(0);
    let secrets = t.proj().join(".secrets");
    let before = std::fs::read(&secrets).unwrap();
    restart_agent(&t);
    for argv in [
        &["secrets", "gpg", "show"][..],
        &["secrets", "gpg", "env"],
        &["secrets", "gpg", "set", "A", "b"],
        &["secrets", "gpg", "decrypt", "-o", "plain.env"],
    ] {
        let run = t.run(argv);
        run.status(2).stderr_has("is in this GnuPG keyring but needs its passphrase").stderr_has(&fpr);
        assert!(!run.stderr.contains("none of their secret keys"), "{}", run.dump());
    }
    let doctor = t.run(&["secrets", "gpg", "doctor"]);
    doctor.status(1);
    let all = format!("{}{}", doctor.stdout, doctor.stderr);
    assert!(all.contains("needs its passphrase") && !all.contains("none of"), "{}", doctor.dump());
    t.run(&["secrets", "gpg", "show", "--passphrase-env", "NO_SUCH_VAR"])
        .status(2)
        .stderr_has("argument `passphrase_env`: the environment variable NO_SUCH_VAR is not set");
    let wrong = run_with(&t, &[("CHARLY_GPG_PASSPHRASE", "not-it")], &[], &["secrets", "gpg", "show"]);
    wrong.status(2).stderr_has("the passphrase from CHARLY_GPG_PASSPHRASE is wrong");
    let wrong = run_with(
        &t,
        &[("MY_PP", "not-it")],
        &[],
        &["secrets", "gpg", "set", "A", "b", "--passphrase-env", "MY_PP"],
    );
    wrong.status(2).stderr_has("the passphrase from --passphrase-env MY_PP is wrong");
    assert_eq!(std::fs::read(&secrets).unwrap(), before);
    assert!(!t.proj().join("plain.env").exists());
    let show = run_with(&t, &[("MY_PP", pp)], &[], &["secrets", "gpg", "show", "--passphrase-env", "MY_PP"]);
    show.status(0).stdout("K=v\n");
    assert!(!show.stderr.contains(pp));
    restart_agent(&t);
    run_with(&t, &[("CHARLY_GPG_PASSPHRASE", pp)], &[], &["secrets", "gpg", "set", "A", "b"]).status(0);
    restart_agent(&t);
    run_with(&t, &[("CHARLY_GPG_PASSPHRASE", pp)], &[], &["secrets", "gpg", "show"])
        .status(0)
        .stdout("K=v\nA=b\n");
    restart_agent(&t);
    let doctor = run_with(&t, &[("CHARLY_GPG_PASSPHRASE", pp)], &[], &["secrets", "gpg", "doctor"]);
    assert!(doctor.stdout.contains("✓ decrypt"), "{}", doctor.dump());
}

/// After `secrets gpg setup --passphrase PP` (which stores PP in the Secret Service under
/// org.gnupg.Passphrase per keygrip) and an agent restart, show uses the stored passphrase;
/// without the Secret Service it says the key needs its passphrase.
#[test]
fn the_passphrase_setup_stored_in_the_secret_service_opens_the_key() {
    let bus = crate::util::Bus::with_keyring("login-pw");
    let mut t = Home::new();
    t.set_env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    let pp = "tess-pass-phrase";
    let setup = t.run(&[
        "secrets",
        "gpg",
        "setup",
        "--passphrase",
        pp,
        "--algo",
        "ed25519",
        "--name",
        "Tess",
        "--email",
        "tess@example.invalid",
    ]);
    setup.status(0);
    assert!(setup.stdout.contains("✓ Secret Service"), "{}", setup.dump());
    std::fs::write(t.proj().join(".env"), "K=v\n").unwrap();
    t.run(&["secrets", "gpg", "encrypt", "-r", "tess@example.invalid"]).status(0);
    restart_agent(&t);
    run_with(&t, &[], &["DBUS_SESSION_BUS_ADDRESS"], &["secrets", "gpg", "show"])
        .status(2)
        .stderr_has("needs its passphrase");
    let show = t.run(&["secrets", "gpg", "show"]);
    show.status(0).stdout("K=v\n");
    assert!(!show.stderr.contains(pp));
}

/// A `gpg -c` file: show and set used to say "encrypted to no readable recipient, and none of
/// their secret keys...", recipients returned rc 0 with an empty list. Now each says such
/// files are not supported and to re-encrypt to a recipient, even while gpg-agent has the
/// passphrase cached; the file is unchanged.
#[test]
fn a_symmetric_file_is_refused_as_not_supported() {
    let t = Home::new();
    t.gpg_key("alice@example.invalid");
    let sym = t.proj().join("sym.secrets");
    let args = ["--batch", "--pinentry-mode", "loopback", "--passphrase", "sym-pp", "--armor", "--symmetric"];
    let out = t.tool("gpg", &[&args[..], &["-o", &sym.to_string_lossy()]].concat(), Some(b"K=v\n"));
    out.status(0);
    let before = std::fs::read(&sym).unwrap();
    for argv in [
        &["secrets", "gpg", "show", "-f", "sym.secrets"][..],
        &["secrets", "gpg", "env", "-f", "sym.secrets"],
        &["secrets", "gpg", "set", "A", "b", "-f", "sym.secrets"],
        &["secrets", "gpg", "unset", "K", "-f", "sym.secrets"],
        &["secrets", "gpg", "recipients", "-f", "sym.secrets"],
        &["secrets", "gpg", "add-recipient", "alice@example.invalid", "-f", "sym.secrets"],
    ] {
        let run = t.run(argv);
        run.status(2)
            .stderr_has("passphrase-encrypted (symmetric, `gpg -c`)")
            .stderr_has("passphrase-encrypted files are not supported; re-encrypt it to a recipient");
        assert!(!run.stderr.contains("none of their secret keys"), "{}", run.dump());
    }
    let doctor = t.run(&["secrets", "gpg", "doctor", "-f", "sym.secrets"]);
    doctor.status(1);
    assert!(doctor.stdout.contains("are not supported"), "{}", doctor.dump());
    assert_eq!(std::fs::read(&sym).unwrap(), before);
}

/// `export-key --passphrase WRONG` used to say the key "needs --passphrase"; `import-key
/// --passphrase WRONG` succeeded silently. Now both say the passphrase is wrong, and the
/// import (checked in a scratch GnuPG home first) imports nothing; the right one works.
#[test]
fn a_wrong_passphrase_for_export_and_import_is_called_wrong() {
    let t = Home::new();
    let pp = "erin-pass-phrase";
    let fpr = protected_key(&t, "erin@example.invalid", pp);
    restart_agent(&t);
    let keys = t.path().join("keys");
    let dir = keys.to_string_lossy().into_owned();
    let run = t.run(&["secrets", "gpg", "export-key", &dir, "--passphrase", "WRONG"]);
    run.status(2).stderr_has("the passphrase from --passphrase (CHARLY_GPG_PASSPHRASE) is wrong");
    assert!(!run.stderr.contains("needs --passphrase"), "{}", run.dump());
    assert!(!keys.join("secret.asc").exists());
    t.run(&["secrets", "gpg", "export-key", &dir, "--passphrase", pp]).status(0);

    let other = Home::new();
    let run = other.run(&["secrets", "gpg", "import-key", &dir, "--passphrase", "WRONG"]);
    run.status(2).stderr_has("could not import").stderr_has("is wrong");
    let listed = other.tool("gpg", &["--batch", "--with-colons", "--list-secret-keys"], None);
    assert!(!listed.stdout.contains(&fpr), "nothing imported\n{}", listed.dump());
    let ok = other.run(&["secrets", "gpg", "import-key", &dir, "--passphrase", pp, "--json"]);
    ok.status(0);
    assert!(
        ok.json()["keys"].as_array().unwrap().iter().any(|k| k == &serde_json::json!(fpr)),
        "{}",
        ok.dump()
    );
    // Without a passphrase the import is not checked (the key stays protected as it was).
    let third = Home::new();
    third.run(&["secrets", "gpg", "import-key", &dir]).status(0);
}
