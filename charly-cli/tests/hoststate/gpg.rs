//! `charly secrets gpg ...` driving the real gpg 2.2 in a temporary GNUPGHOME.

use crate::util::{Bus, Home, mode};

const ENV: &str = "# the project's secrets\nAPI_TOKEN=tok-1\nDB_URL=\"postgres://u:p@h/db\"\n\n";

fn with_key() -> (Home, String) {
    let t = Home::new();
    let fpr = t.gpg_key("alice@example.invalid");
    std::fs::write(t.proj().join(".env"), ENV).unwrap();
    (t, fpr)
}

#[test]
fn encrypt_show_env_recipients_decrypt() {
    let (t, fpr) = with_key();
    t.run(&["secrets", "gpg", "encrypt", "-r", "alice@example.invalid"]).status(0);
    let secrets = t.proj().join(".secrets");
    let text = std::fs::read_to_string(&secrets).unwrap();
    assert!(text.starts_with("-----BEGIN PGP MESSAGE-----"), "{text}");
    assert!(!text.contains("tok-1"));
    t.run(&["secrets", "gpg", "show"]).status(0).stdout(ENV);
    t.run(&["secrets", "gpg", "env"])
        .status(0)
        .stdout("export API_TOKEN='tok-1'\nexport DB_URL='postgres://u:p@h/db'\n");
    let recipients = t.run(&["secrets", "gpg", "recipients"]);
    recipients.status(0);
    assert_eq!(recipients.stdout.lines().count(), 1);
    // The recipient is alice's encryption subkey.
    let keys = t.tool("gpg", &["--batch", "--with-colons", "--list-keys", &fpr], None);
    let sub =
        keys.stdout.lines().find(|l| l.starts_with("sub:")).unwrap().split(':').nth(4).unwrap().to_owned();
    assert_eq!(recipients.stdout.trim(), sub);
    t.run(&["secrets", "gpg", "decrypt", "-o", "plain.env"]).status(0);
    assert_eq!(std::fs::read_to_string(t.proj().join("plain.env")).unwrap(), ENV);
    assert_eq!(mode(&t.proj().join("plain.env")), 0o600);
    t.run(&["secrets", "gpg", "decrypt"]).status(0).stdout(ENV);
    // A missing file: no variables, no error.
    t.run(&["secrets", "gpg", "env", "-f", "missing.secrets"]).status(0).stdout("");
}

#[test]
fn set_unset_and_add_recipient_rewrite_the_file() {
    let (t, _) = with_key();
    // Created for the recipient on first set.
    t.run(&["secrets", "gpg", "set", "A", "one", "-r", "alice@example.invalid"]).status(0);
    t.run(&["secrets", "gpg", "set", "B", "it's two"]).status(0);
    t.run(&["secrets", "gpg", "set", "A", "uno"]).status(0);
    t.run(&["secrets", "gpg", "show"]).status(0).stdout("A=uno\nB=\"it's two\"\n");
    t.run(&["secrets", "gpg", "env"]).status(0).stdout("export A='uno'\nexport B='it'\\''s two'\n");
    t.run(&["secrets", "gpg", "unset", "A"]).status(0);
    t.run(&["secrets", "gpg", "unset", "A"])
        .status(0)
        .stdout(&format!("{}: A was not set\n", t.proj().join(".secrets").display()));
    t.run(&["secrets", "gpg", "show"]).status(0).stdout("B=\"it's two\"\n");

    t.gpg_key("bob@example.invalid");
    t.run(&["secrets", "gpg", "add-recipient", "bob@example.invalid"]).status(0);
    assert_eq!(t.run(&["secrets", "gpg", "recipients"]).status(0).stdout.lines().count(), 2);
    let again = t.run(&["secrets", "gpg", "add-recipient", "bob@example.invalid"]);
    again.status(0);
    assert!(again.stdout.contains("is already a recipient"), "{}", again.dump());
    t.run(&["secrets", "gpg", "show"]).status(0).stdout("B=\"it's two\"\n");
}

#[test]
fn bad_input_leaves_the_file_as_it_was() {
    let (t, _) = with_key();
    // Not GPG.
    std::fs::write(t.proj().join("plain.secrets"), "API_TOKEN=x\n").unwrap();
    for argv in [
        &["secrets", "gpg", "show", "-f", "plain.secrets"][..],
        &["secrets", "gpg", "set", "K", "v", "-f", "plain.secrets"],
        &["secrets", "gpg", "recipients", "-f", "plain.secrets"],
    ] {
        t.run(argv).status(2).stderr_has("is not a GPG-encrypted file");
    }
    assert_eq!(std::fs::read_to_string(t.proj().join("plain.secrets")).unwrap(), "API_TOKEN=x\n");
    // An unknown recipient: no file written.
    let run = t.run(&["secrets", "gpg", "encrypt", "-r", "nobody@example.invalid"]);
    run.status(2).stderr_has("no usable public key for recipient \"nobody@example.invalid\"");
    assert!(!t.proj().join(".secrets").exists());
    // A new file without recipients; a bad variable name.
    t.run(&["secrets", "gpg", "set", "K", "v"]).status(2).stderr_has("pass --recipient KEY");
    t.run(&["secrets", "gpg", "encrypt", "-r", "alice@example.invalid"]).status(0);
    let before = std::fs::read(t.proj().join(".secrets")).unwrap();
    t.run(&["secrets", "gpg", "set", "1BAD", "v"]).status(2).stderr_has("invalid variable name");
    t.run(&["secrets", "gpg", "add-recipient", "nobody@example.invalid"]).status(2);
    assert_eq!(std::fs::read(t.proj().join(".secrets")).unwrap(), before);
    // A keyring without the secret key: says which keys it needs.
    let other = Home::new();
    std::fs::copy(t.proj().join(".secrets"), other.proj().join(".secrets")).unwrap();
    let run = other.run(&["secrets", "gpg", "show"]);
    run.status(2).stderr_has("none of their secret keys is in this GnuPG keyring").stderr_has("import-key");
    assert!(!run.stderr.contains("tok-1"));
    other.run(&["secrets", "gpg", "doctor"]).status(1);
    // edit needs a terminal.
    t.run(&["secrets", "gpg", "edit"]).status(2).stderr_has("runs on a terminal only");
}

#[test]
fn export_key_and_import_key_move_a_key_between_homes() {
    let (t, fpr) = with_key();
    t.run(&["secrets", "gpg", "encrypt", "-r", "alice@example.invalid"]).status(0);
    let keys = t.path().join("keys");
    let run = t.run(&["secrets", "gpg", "export-key", &keys.to_string_lossy()]);
    run.status(0);
    assert_eq!(mode(&keys.join("public.asc")), 0o644);
    assert_eq!(mode(&keys.join("secret.asc")), 0o600);
    assert_eq!(mode(&keys.join("ownertrust.txt")), 0o600);
    let other = Home::new();
    std::fs::copy(t.proj().join(".secrets"), other.proj().join(".secrets")).unwrap();
    let import = other.run(&["secrets", "gpg", "import-key", &keys.to_string_lossy(), "--json"]);
    import.status(0);
    let json = import.json();
    assert!(json["keys"].as_array().unwrap().iter().any(|k| k == &serde_json::json!(fpr)), "{json}");
    assert_eq!(json["ownertrust"], true);
    other.run(&["secrets", "gpg", "show"]).status(0).stdout(ENV);
}

#[test]
fn keys_go_through_the_secret_service_keystore() {
    let bus = Bus::with_keyring("login-pw");
    let (mut t, fpr) = with_key();
    t.set_env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    t.run(&["secrets", "gpg", "encrypt", "-r", "alice@example.invalid"]).status(0);
    t.run(&["secrets", "gpg", "export-key", "--to-keystore"]).status(0);
    let mut other = Home::new();
    other.set_env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    std::fs::copy(t.proj().join(".secrets"), other.proj().join(".secrets")).unwrap();
    let import = other.run(&["secrets", "gpg", "import-key", "--from-keystore", "--json"]);
    import.status(0);
    assert!(
        import.json()["keys"].as_array().unwrap().iter().any(|k| k == &serde_json::json!(fpr)),
        "{}",
        import.dump()
    );
    other.run(&["secrets", "gpg", "show"]).status(0).stdout(ENV);
}

#[test]
fn setup_generates_a_key_and_doctor_checks_it() {
    let t = Home::new();
    let args = [
        "secrets",
        "gpg",
        "setup",
        "--passphrase",
        "",
        "--algo",
        "ed25519",
        "--name",
        "Carol",
        "--email",
        "carol@example.invalid",
        "--skip-secret-service",
    ];
    let run = t.run(&args);
    run.status(0);
    for step in ["✓ gpg-agent.conf", "✓ key: generated", "✓ verify"] {
        assert!(run.stdout.contains(step), "{step}\n{}", run.dump());
    }
    let conf = std::fs::read_to_string(t.gnupg().join("gpg-agent.conf")).unwrap();
    assert!(conf.contains("allow-loopback-pinentry") && conf.contains("default-cache-ttl 28800"), "{conf}");
    // Run again: the key is reused, the conf is up to date.
    let again = t.run(&args);
    again.status(0);
    assert!(
        again.stdout.contains("is up to date") && again.stdout.contains("✓ key: using"),
        "{}",
        again.dump()
    );
    std::fs::write(t.proj().join(".env"), "K=v\n").unwrap();
    t.run(&["secrets", "gpg", "encrypt", "-r", "carol@example.invalid"]).status(0);
    let doctor = t.run(&["secrets", "gpg", "doctor"]);
    doctor.status(0);
    assert!(
        doctor.stdout.ends_with("All checks passed.\n") && doctor.stdout.contains("✓ decrypt"),
        "{}",
        doctor.dump()
    );
}

/// With a passphrase and an unlocked keyring, setup stores the passphrase of every keygrip
/// under GnuPG's own schema (`org.gnupg.Passphrase`, `keygrip`), which secret-tool reads back;
/// doctor then counts them. The passphrase is in no output.
#[test]
fn setup_stores_the_passphrase_in_the_secret_service() {
    let bus = Bus::with_keyring("login-pw");
    let mut t = Home::new();
    t.set_env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    let passphrase = "pass-phrase-42";
    let run = t.run(&[
        "secrets",
        "gpg",
        "setup",
        "--passphrase",
        passphrase,
        "--algo",
        "ed25519",
        "--name",
        "Dan",
        "--email",
        "dan@example.invalid",
    ]);
    run.status(0);
    assert!(run.stdout.contains("✓ Secret Service") && run.stdout.contains("✓ verify"), "{}", run.dump());
    assert!(!run.stdout.contains(passphrase) && !run.stderr.contains(passphrase), "{}", run.dump());
    let keys = t.tool("gpg", &["--batch", "--with-colons", "--with-keygrip", "-K"], None);
    let grips: Vec<&str> = keys
        .status(0)
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("grp:"))
        .map(|g| g.trim_matches(':'))
        .collect();
    assert_eq!(grips.len(), 2, "primary and subkey\n{}", keys.dump());
    for grip in &grips {
        let stored = bus.secret_tool(&["xdg:schema", "org.gnupg.Passphrase", "keygrip", grip]);
        assert_eq!(stored.as_deref(), Some(passphrase), "keygrip {grip}");
    }
    let doctor = t.run(&["secrets", "gpg", "doctor"]);
    doctor.status(0);
    assert!(doctor.stdout.contains("2 of 2 keygrip(s) have a stored passphrase"), "{}", doctor.dump());
    assert!(!doctor.stdout.contains(passphrase));
}

#[test]
fn as_tools_plaintext_goes_to_files_inside_the_project_only() {
    let (t, _) = with_key();
    t.run(&["secrets", "gpg", "encrypt", "-r", "alice@example.invalid"]).status(0);
    let server = crate::mcp::Server::start(&t);
    let call = |tool: &str, input: &str| {
        t.run(&["check", "mcp", "call", "--tool", tool, "--input", input, "--url", &server.url])
    };
    call("secrets.gpg.show", "{}").status(0).stdout(ENV);
    let run = call("secrets.gpg.decrypt", "{}");
    run.status(1);
    assert!(run.stdout.contains("give `output`") && !run.stdout.contains("tok-1"), "{}", run.dump());
    let run = call("secrets.gpg.decrypt", r#"{"output": "../outside.env"}"#);
    run.status(1);
    assert!(run.stdout.contains("`..` is not allowed"), "{}", run.dump());
    assert!(!t.path().join("outside.env").exists());
    call("secrets.gpg.decrypt", r#"{"output": "inside.env"}"#).status(0);
    assert_eq!(std::fs::read_to_string(t.proj().join("inside.env")).unwrap(), ENV);
    let run = call("secrets.gpg.edit", "{}");
    run.status(1);
    assert!(run.stdout.contains("terminal only"), "{}", run.dump());
}
