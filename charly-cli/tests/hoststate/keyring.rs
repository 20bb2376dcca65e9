//! The credential store's keyring backend end to end: a private session bus with
//! gnome-keyring-daemon on it; unlocked, locked, and not answering.

use std::time::Duration;

use crate::util::{Bus, Home, mode};

fn on(bus: &Bus) -> Home {
    let mut t = Home::new();
    t.set_env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    t
}

#[test]
fn vnc_passwords_live_in_the_keyring() {
    let bus = Bus::with_keyring("login-pw");
    let t = on(&bus);
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("keyring\n");
    t.run(&["settings", "set", "vnc.password.web", "pw-1"])
        .status(0)
        .stdout("Set vnc.password.web (stored in keyring)\n");
    // secret-tool, a second client, reads what charly stored, under go-keyring's attributes.
    assert_eq!(bus.secret_tool_lookup("charly/vnc", "web").as_deref(), Some("pw-1"));
    t.run(&["settings", "get", "vnc.password.web"]).status(0).stdout("pw-1\n");
    let json = t.run(&["settings", "get", "vnc.password.web", "--json"]).status(0).json();
    assert_eq!(json["source"], "keyring");
    // The config file holds the index, never the value.
    assert_eq!(t.config(), "keyring_keys:\n- charly/vnc/web\n");
    t.run(&["settings", "reset", "vnc.password.web"]).status(0);
    assert_eq!(bus.secret_tool_lookup("charly/vnc", "web"), None);
    assert_eq!(t.config(), "");
    // A plaintext copy left in config.yml (an earlier backend) goes with the keyring write: it
    // stayed on disk, and migrate-secrets then put the old value over the new (trial H1, H2).
    t.write_config("vnc_passwords:\n  web: old-pw\n");
    t.run(&["settings", "set", "vnc.password.web", "new-pw"]).status(0);
    assert!(!t.config().contains("old-pw"), "{}", t.config());
    t.run(&["settings", "migrate-secrets"]).status(0);
    assert_eq!(bus.secret_tool_lookup("charly/vnc", "web").as_deref(), Some("new-pw"));
}

#[test]
fn a_locked_keyring_is_reported_and_never_bypassed() {
    let bus = Bus::with_keyring("login-pw");
    let t = on(&bus);
    t.run(&["settings", "set", "vnc.password.web", "pw-1"]).status(0);
    bus.lock();
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("keyring (locked)\n");
    // A locked store is an error naming the store and the unlock step, never an empty or fake
    // value with exit 0.
    t.run(&["settings", "get", "vnc.password.web"])
        .status(2)
        .stdout("")
        .stderr_has("vnc.password.web: the credential store (keyring (locked)) cannot be read")
        .stderr_has("gnome-keyring-daemon --unlock");
    let before = t.config();
    let run = t.run(&["settings", "set", "vnc.password.web", "pw-2"]);
    run.status(2).stderr_has("the Secret Service keyring is locked");
    assert!(!run.stderr.contains("pw-2"), "{}", run.dump());
    assert_eq!(t.config(), before, "nothing fell back to the plaintext file");
    t.run(&["settings", "migrate-secrets"])
        .status(0)
        .stdout("No plaintext credentials in the config file.\n");
    // Plaintext passwords stay where they are while the keyring is locked.
    let plaintext = format!("{before}vnc_passwords:\n  other: plain-pw\n");
    t.write_config(&plaintext);
    let run = t.run(&["settings", "migrate-secrets"]);
    run.status(2).stderr_has("which is locked").stderr_has("nothing was changed");
    assert!(!run.stderr.contains("plain-pw"), "{}", run.dump());
    assert_eq!(t.config(), plaintext);
    assert!(!t.config_path().with_file_name("config.yml.bak").exists());
}

#[test]
fn a_keyring_that_does_not_answer_is_bounded() {
    let bus = Bus::with_keyring("login-pw");
    let t = on(&bus);
    t.run(&["settings", "set", "vnc.password.web", "pw-1"]).status(0);
    bus.signal_keyring("-STOP");
    let run = t.run(&["settings", "get", "secret_backend"]);
    let get = t.run(&["settings", "get", "vnc.password.web"]);
    bus.signal_keyring("-CONT");
    run.status(0).stdout("keyring (not answering)\n");
    assert!(run.took < Duration::from_secs(6), "the probe is bounded: {:?}", run.took);
    // The password: an error that says which store and why, not an empty line with exit 0.
    get.status(2)
        .stdout("")
        .stderr_has("vnc.password.web: the credential store (keyring (not answering)) cannot be read")
        .stderr_has("did not answer within 3s");
    t.run(&["settings", "get", "vnc.password.web"]).status(0).stdout("pw-1\n");
}

#[test]
fn no_bus_and_no_provider_mean_the_config_file() {
    let t = Home::new();
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("config\n");
    let bus = Bus::start();
    let t = on(&bus);
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("config\n");
    // Forced, the keyring says why it cannot be used.
    let mut t = t;
    t.set_env("CHARLY_SECRET_BACKEND", "keyring");
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("keyring (unavailable)\n");
    t.run(&["settings", "set", "vnc.password.web", "x"])
        .status(2)
        .stderr_has("no provider of org.freedesktop.secrets");
    t.run(&["settings", "get", "vnc.password.web"])
        .status(2)
        .stdout("")
        .stderr_has("the credential store (keyring (unavailable)) cannot be read")
        .stderr_has("no provider of org.freedesktop.secrets");
    // A plaintext copy in config.yml is not read in the forced store's place (trial 3, H3):
    // the user asked for the keyring. Under `auto` the same copy is the reference's fallback.
    t.write_config("vnc_passwords:\n  web: plain-copy\n");
    let forced = t.run(&["settings", "get", "vnc.password.web"]);
    forced.status(2).stdout("").stderr_has("the credential store (keyring (unavailable)) cannot be read");
    assert!(!forced.stderr.contains("plain-copy"), "{}", forced.dump());
    t.set_env("CHARLY_SECRET_BACKEND", "auto");
    t.run(&["settings", "get", "vnc.password.web"]).status(0).stdout("plain-copy\n");
}

#[test]
fn migrate_secrets_moves_plaintext_passwords_into_the_keyring() {
    let bus = Bus::with_keyring("login-pw");
    let t = on(&bus);
    let plaintext = "run_mode: direct\nvnc_passwords:\n  web: vnc-pw\n  charly/secret/api_token: tok-1\n  charly/enc/data: enc-pw\n";
    t.write_config(plaintext);
    let dry = t.run(&["settings", "migrate-secrets", "--dry-run"]);
    dry.status(0);
    assert!(dry.stdout.contains("charly/vnc/web → keyring (dry run)"), "{}", dry.dump());
    assert_eq!(t.config(), plaintext, "a dry run changes nothing");
    let run = t.run(&["settings", "migrate-secrets"]);
    run.status(0);
    for line in
        ["charly/vnc/web → keyring ✓", "charly/secret/api_token → keyring ✓", "charly/enc/data → keyring ✓"]
    {
        assert!(run.stdout.contains(line), "{line}\n{}", run.dump());
    }
    assert_eq!(bus.secret_tool_lookup("charly/vnc", "web").as_deref(), Some("vnc-pw"));
    assert_eq!(bus.secret_tool_lookup("charly/secret", "api_token").as_deref(), Some("tok-1"));
    assert_eq!(bus.secret_tool_lookup("charly/enc", "data").as_deref(), Some("enc-pw"));
    let config = t.config();
    for value in ["vnc-pw", "tok-1", "enc-pw", "vnc_passwords"] {
        assert!(!config.contains(value), "config.yml still holds {value}:\n{config}");
    }
    assert!(config.contains("run_mode: direct") && config.contains("- charly/vnc/web"), "{config}");
    run.stdout_has("no copy is kept");
    // No plaintext copy anywhere beside it.
    for entry in std::fs::read_dir(t.config_path().parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        for value in ["vnc-pw", "tok-1", "enc-pw"] {
            assert!(!text.contains(value), "{} holds {value}", path.display());
        }
    }
    assert_eq!(mode(&t.config_path()), 0o600);
    t.run(&["settings", "get", "vnc.password.web"]).status(0).stdout("vnc-pw\n");
}

#[test]
fn migrate_secrets_without_a_keyring_changes_nothing() {
    let t = Home::new();
    let plaintext = "vnc_passwords:\n  web: vnc-pw\n";
    t.write_config(plaintext);
    let run = t.run(&["settings", "migrate-secrets"]);
    run.status(2)
        .stderr_has("Secret Service keyring, which is unavailable")
        .stderr_has("nothing was changed");
    assert!(!run.stderr.contains("vnc-pw"));
    assert_eq!(t.config(), plaintext);
    assert!(!t.config_path().with_file_name("config.yml.bak").exists());
}
