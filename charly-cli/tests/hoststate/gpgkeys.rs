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
