//! `charly secrets ...` on a KDBX 4 file, read back by keepassxc-cli (an independent reader),
//! the credential store's kdbx backend, the kernel keyring cache, and a round trip over MCP.

use std::path::{Path, PathBuf};

use crate::util::{Home, mode, require};

const PW: &str = "db-password";

fn with_db() -> (Home, PathBuf) {
    let mut t = Home::new();
    t.set_env("CHARLY_KDBX_PASSWORD", PW);
    let run = t.run(&["secrets", "init"]);
    run.status(0);
    let db = t.path().join("cfg/charly/secrets.kdbx");
    assert!(
        run.stdout.starts_with(&format!("Created KeePass database at {}\n", db.display())),
        "{}",
        run.dump()
    );
    (t, db)
}

/// `keepassxc-cli <verb> <args..>` with the database password on stdin (and `more` lines after).
fn keepassxc(t: &Home, args: &[&str], more: &str) -> crate::util::Run {
    require("keepassxc-cli");
    t.tool("keepassxc-cli", args, Some(format!("{PW}\n{more}").as_bytes()))
}

#[test]
fn init_writes_a_kdbx4_file_keepassxc_opens() {
    let (t, db) = with_db();
    assert_eq!(mode(&db), 0o600);
    assert_eq!(&std::fs::read(&db).unwrap()[..4], &[0x03, 0xd9, 0xa2, 0x9a], "KeePass signature");
    let ls = keepassxc(&t, &["ls", "-R", "-f", &db.to_string_lossy()], "");
    ls.status(0);
    for group in ["charly/", "charly/vnc/", "charly/secret/", "charly/enc/"] {
        assert!(ls.stdout.lines().any(|l| l == group), "{group} missing\n{}", ls.dump());
    }
    assert!(t.config().contains(&format!("secrets_kdbx_path: {}", db.display())), "{}", t.config());
    t.run(&["secrets", "path"]).status(0).stdout(&format!("{}\n", db.display()));
    let before = std::fs::read(&db).unwrap();
    t.run(&["secrets", "init"]).status(2).stderr_has("exists already: pass --force");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    t.run(&["secrets", "init", "--force"]).status(0);
    let info = keepassxc(&t, &["db-info", "-q", &db.to_string_lossy()], "");
    assert!(info.status(0).stdout.contains("KDF: Argon2id (2 rounds, 6144 KB)"), "{}", info.dump());
    t.run(&["secrets", "init", "--force", "--strong-kdf"]).status(0);
    let info = keepassxc(&t, &["db-info", "-q", &db.to_string_lossy()], "");
    assert!(info.status(0).stdout.contains("KDF: Argon2id (3 rounds, 65536 KB)"), "{}", info.dump());
}

#[test]
fn a_database_keepassxc_created_keeps_its_key_derivation() {
    let mut t = Home::new();
    t.set_env("CHARLY_KDBX_PASSWORD", PW);
    let db = t.path().join("theirs.kdbx");
    let db_arg = db.to_string_lossy().into_owned();
    keepassxc(&t, &["db-create", "-q", "-p", "-t", "200", &db_arg], &format!("{PW}\n")).status(0);
    let before = keepassxc(&t, &["db-info", "-q", &db_arg], "").stdout.clone();
    let kdf = before.lines().find(|l| l.starts_with("KDF:")).unwrap().to_owned();
    t.run(&["secrets", "set", "--kdbx", &db_arg, "charly/secret", "k", "v"]).status(0);
    let after = keepassxc(&t, &["db-info", "-q", &db_arg], "");
    assert!(after.status(0).stdout.contains(&kdf), "{kdf}\n{}", after.dump());
    keepassxc(&t, &["show", "-q", "-s", "-a", "Password", &db_arg, "charly/secret/k"], "")
        .status(0)
        .stdout("v\n");
}

#[test]
fn set_get_list_delete_export_and_keepassxc_reads_the_same() {
    let (t, db) = with_db();
    let db_arg = db.to_string_lossy().into_owned();
    t.run(&["secrets", "set", "charly/secret", "api_token", "tok-123"]).status(0);
    t.run(&["secrets", "set", "charly/vnc", "web", "vnc pw with 'quotes'"]).status(0);
    t.run(&["secrets", "set", "charly/secret", "api_token", "tok-456"]).status(0);
    t.run(&["secrets", "get", "charly/secret", "api_token"]).status(0).stdout("tok-456\n");
    let show = keepassxc(&t, &["show", "-q", "-s", "-a", "Password", &db_arg, "charly/secret/api_token"], "");
    show.status(0).stdout("tok-456\n");
    keepassxc(&t, &["show", "-q", "-s", "-a", "Password", &db_arg, "charly/vnc/web"], "")
        .status(0)
        .stdout("vnc pw with 'quotes'\n");
    // And the other way: an entry keepassxc-cli adds, charly reads.
    keepassxc(&t, &["add", "-q", "-p", &db_arg, "charly/enc/data"], "from-keepassxc\n").status(0);
    t.run(&["secrets", "get", "charly/enc", "data"]).status(0).stdout("from-keepassxc\n");
    t.run(&["secrets", "list"])
        .status(0)
        .stdout("charly/enc/data\ncharly/secret/api_token\ncharly/vnc/web\n");
    t.run(&["secrets", "list", "charly/vnc"]).status(0).stdout("charly/vnc/web\n");
    let export = t.run(&["secrets", "export", "--format", "json"]);
    export.status(0).stderr_has("plaintext");
    let map: serde_json::Value = serde_json::from_str(&export.stdout).unwrap();
    assert_eq!(map["charly/secret"]["api_token"], "tok-456");
    assert_eq!(map["charly/enc"]["data"], "from-keepassxc");
    let yaml = t.run(&["secrets", "export"]).status(0).stdout.clone();
    assert!(yaml.contains("charly/secret:\n  api_token: tok-456\n"), "{yaml}");
    t.run(&["secrets", "delete", "charly/secret", "api_token"]).status(0);
    t.run(&["secrets", "delete", "charly/secret", "api_token"])
        .status(0)
        .stdout(&format!("No entry charly/secret/api_token in {} (nothing to delete)\n", db.display()));
    t.run(&["secrets", "get", "charly/secret", "api_token"])
        .status(2)
        .stderr_has("no entry found for charly/secret/api_token");
    keepassxc(&t, &["show", "-q", "-s", "-a", "Password", &db_arg, "charly/secret/api_token"], "").status(1);
    // --generate: 16 random bytes in hex, shown on the terminal.
    let generated = t.run(&["secrets", "set", "charly/secret", "gen", "--generate"]);
    generated.status(0);
    let value = generated.stdout.lines().next().unwrap().to_owned();
    assert!(value.len() == 32 && value.chars().all(|c| c.is_ascii_hexdigit()), "{}", generated.dump());
    t.run(&["secrets", "get", "charly/secret", "gen"]).status(0).stdout(&format!("{value}\n"));
}

#[test]
fn a_wrong_password_or_a_corrupt_file_changes_nothing_and_says_which() {
    let (mut t, db) = with_db();
    t.run(&["secrets", "set", "charly/secret", "k", "v"]).status(0);
    let before = std::fs::read(&db).unwrap();
    t.set_env("CHARLY_KDBX_PASSWORD", "not-the-password");
    let run = t.run(&["secrets", "set", "charly/secret", "k", "new-value"]);
    run.status(2).stderr_has("wrong password for the KeePass database").stderr_has("the file is unchanged");
    assert!(!run.stderr.contains("not-the-password") && !run.stderr.contains("new-value"), "{}", run.dump());
    assert_eq!(std::fs::read(&db).unwrap(), before);
    t.run(&["secrets", "get", "charly/secret", "k"]).status(2).stderr_has("wrong password");

    t.set_env("CHARLY_KDBX_PASSWORD", PW);
    let mut corrupt = before.clone();
    let mid = corrupt.len() / 2;
    corrupt.truncate(mid);
    std::fs::write(&db, &corrupt).unwrap();
    t.run(&["secrets", "set", "charly/secret", "k", "x"])
        .status(2)
        .stderr_has("is not a readable KeePass KDBX database");
    assert_eq!(std::fs::read(&db).unwrap(), corrupt);
    std::fs::write(&db, b"not a database at all").unwrap();
    t.run(&["secrets", "list"]).status(2).stderr_has("is not a readable KeePass KDBX database");
}

#[test]
fn no_password_and_no_terminal_name_the_variable() {
    let (mut t, db) = with_db();
    t.set_env("CHARLY_KDBX_PASSWORD", "");
    let mut cmd = t.charly();
    cmd.env_remove("CHARLY_KDBX_PASSWORD").args(["secrets", "get", "charly/secret", "k"]);
    let run = crate::util::Run::of(&mut cmd, "secrets get");
    run.status(2).stderr_has("needs its password: set CHARLY_KDBX_PASSWORD");
    t.set_env("CHARLY_KDBX_PASSWORD", PW);
    t.run(&["secrets", "set", "charly/secret", "k"])
        .status(2)
        .stderr_has("pass it as the `value` argument, or --generate");
    let missing = Home::new();
    let run = missing.run(&["secrets", "list", "--kdbx", &db.with_file_name("nope.kdbx").to_string_lossy()]);
    run.status(2).stderr_has("no KeePass database at").stderr_has("charly secrets init");
    missing.run(&["secrets", "path"]).status(0).stdout(&format!(
        "{} (default, not yet created)\n",
        missing.path().join("cfg/charly/secrets.kdbx").display()
    ));
}

#[test]
fn the_credential_store_uses_the_kdbx_file_when_asked() {
    let (t, db) = with_db();
    t.run(&["settings", "set", "secret_backend", "kdbx"]).status(0);
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("kdbx\n");
    t.run(&["settings", "set", "vnc.password.web", "kdbx-vnc"])
        .status(0)
        .stdout("Set vnc.password.web (stored in kdbx)\n");
    keepassxc(&t, &["show", "-q", "-s", "-a", "Password", &db.to_string_lossy(), "charly/vnc/web"], "")
        .status(0)
        .stdout("kdbx-vnc\n");
    t.run(&["settings", "get", "vnc.password.web"]).status(0).stdout("kdbx-vnc\n");
    assert!(!t.config().contains("kdbx-vnc"));
    // A wrong database password: an error naming the store and the variable, no empty value.
    let mut wrong = t.charly();
    wrong.env("CHARLY_KDBX_PASSWORD", "not-it").args(["settings", "get", "vnc.password.web"]);
    crate::util::Run::of(&mut wrong, "settings get with a wrong password")
        .status(2)
        .stdout("")
        .stderr_has("vnc.password.web: the credential store (kdbx) cannot be read")
        .stderr_has("wrong password for the KeePass database");
    // auto, no keyring: the configured file that exists.
    t.run(&["settings", "set", "secret_backend", "auto"]).status(0);
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("kdbx\n");
    // import: the config file's plaintext credentials into the database.
    let mut config = t.config();
    config.push_str("vnc_passwords:\n  box2: from-config\n");
    t.write_config(&config);
    t.run(&["secrets", "import", "--dry-run"])
        .status(0)
        .stdout("charly/vnc/box2 → kdbx (dry run) (from config)\n");
    t.run(&["secrets", "import"]).status(0).stdout("charly/vnc/box2 → kdbx ✓ (from config)\n");
    t.run(&["secrets", "get", "charly/vnc", "box2"]).status(0).stdout("from-config\n");
}

/// The cache in the kernel's user keyring, in a user namespace of its own (so its user
/// keyring is not the one of the user running the tests): a cached password opens the file;
/// a wrong one is dropped.
#[test]
fn the_kernel_keyring_caches_the_database_password() {
    let (t, db) = with_db();
    t.run(&["secrets", "set", "charly/secret", "k", "cached-value"]).status(0);
    let charly = crate::util::CHARLY;
    let key = format!("charly-kdbx-password:{}", db.display());
    let script = format!(
        "keyctl add user '{key}' '{PW}' @u >/dev/null && \
         CHARLY_KDBX_CACHE=true {charly} secrets get charly/secret k && \
         keyctl add user '{key}' wrong @u >/dev/null && \
         (CHARLY_KDBX_CACHE=true {charly} secrets get charly/secret k; echo \"status $?\") && \
         (keyctl search @u user '{key}' >/dev/null 2>&1 && echo still-cached || echo dropped)"
    );
    let mut cmd = std::process::Command::new(require("unshare"));
    t.apply(&mut cmd);
    cmd.env_remove("CHARLY_KDBX_PASSWORD").args(["--user", "--map-root-user", "sh", "-c", &script]);
    require("keyctl");
    let run = crate::util::Run::of(&mut cmd, "unshare ... secrets get");
    run.status(0);
    assert_eq!(run.stdout, "cached-value\nstatus 2\ndropped\n", "{}", run.dump());
    run.stderr_has("the cached password was wrong and has been dropped");
}

#[test]
fn secrets_set_over_mcp_is_read_back_by_keepassxc() {
    let (t, db) = with_db();
    let server = crate::mcp::Server::start(&t);
    let input = r#"{"service": "charly/secret", "key": "mcp_token", "value": "over-mcp-1"}"#;
    let call = t.run(&[
        "check",
        "mcp",
        "call",
        "--tool",
        "secrets.set",
        "--input",
        input,
        "--url",
        &server.url,
        "--json",
    ]);
    call.status(0);
    let result = call.json();
    assert!(!result.to_string().contains("over-mcp-1"), "the result does not echo the value: {result}");
    keepassxc(
        &t,
        &["show", "-q", "-s", "-a", "Password", &db.to_string_lossy(), "charly/secret/mcp_token"],
        "",
    )
    .status(0)
    .stdout("over-mcp-1\n");
    // Without a value, the tool asks for the argument instead of prompting.
    let input = r#"{"service": "charly/secret", "key": "k2"}"#;
    let call =
        t.run(&["check", "mcp", "call", "--tool", "secrets.set", "--input", input, "--url", &server.url]);
    call.status(1);
    assert!(call.stdout.contains("`value` argument"), "{}", call.dump());
    // --generate over MCP does not return the value; secrets.get reads it on purpose.
    let input = r#"{"service": "charly/secret", "key": "gen", "generate": true}"#;
    let call = t.run(&[
        "check",
        "mcp",
        "call",
        "--tool",
        "secrets.set",
        "--input",
        input,
        "--url",
        &server.url,
        "--json",
    ]);
    call.status(0);
    let input = r#"{"service": "charly/secret", "key": "gen"}"#;
    let got =
        t.run(&["check", "mcp", "call", "--tool", "secrets.get", "--input", input, "--url", &server.url]);
    got.status(0);
    let value = got.stdout.trim();
    assert_eq!(value.len(), 32, "{}", got.dump());
    assert!(!call.stdout.contains(value), "{}", call.dump());
    let _ = Path::new("");
}

/// A database with a key file (keepassxc-cli makes one, KeePassXC's XML v2 format): charly
/// opens and saves it with `CHARLY_KDBX_KEY_FILE`, and keepassxc-cli reads charly's entry back
/// with the same key file. A missing key file, a wrong one, or none for a database that needs
/// one: each says which, and the file is byte for byte unchanged.
#[test]
fn a_key_file_is_part_of_the_key() {
    let mut t = Home::new();
    t.set_env("CHARLY_KDBX_PASSWORD", PW);
    let db = t.path().join("keyed.kdbx");
    let key = t.path().join("keyed.keyx");
    let (db_arg, key_arg) = (db.to_string_lossy().into_owned(), key.to_string_lossy().into_owned());
    keepassxc(
        &t,
        &["db-create", "-q", "-p", "--set-key-file", &key_arg, "-t", "100", &db_arg],
        &format!("{PW}\n"),
    )
    .status(0);
    t.set_env("CHARLY_KDBX_KEY_FILE", &key);
    t.run(&["secrets", "set", "--kdbx", &db_arg, "charly/secret", "k", "keyed-value"]).status(0);
    keepassxc(&t, &["show", "-q", "-s", "-a", "Password", "-k", &key_arg, &db_arg, "charly/secret/k"], "")
        .status(0)
        .stdout("keyed-value\n");
    t.run(&["secrets", "get", "--kdbx", &db_arg, "charly/secret", "k"]).status(0).stdout("keyed-value\n");
    let before = std::fs::read(&db).unwrap();

    // The key file is missing.
    let gone = t.path().join("gone.keyx");
    t.set_env("CHARLY_KDBX_KEY_FILE", &gone);
    let run = t.run(&["secrets", "set", "--kdbx", &db_arg, "charly/secret", "k", "new-secret-value"]);
    run.status(2)
        .stderr_has(&format!("cannot read the KeePass key file {}", gone.display()))
        .stderr_has("secrets.kdbx_key_file");
    // Another key file.
    let other_db = t.path().join("other.kdbx");
    let other_key = t.path().join("other.keyx");
    keepassxc(
        &t,
        &[
            "db-create",
            "-q",
            "-p",
            "--set-key-file",
            &other_key.to_string_lossy(),
            "-t",
            "100",
            &other_db.to_string_lossy(),
        ],
        &format!("{PW}\n"),
    )
    .status(0);
    t.set_env("CHARLY_KDBX_KEY_FILE", &other_key);
    t.run(&["secrets", "set", "--kdbx", &db_arg, "charly/secret", "k", "new-secret-value"])
        .status(2)
        .stderr_has("wrong password for the KeePass database")
        .stderr_has("and the key file in secrets.kdbx_key_file");
    // No key file for a database that needs one.
    let mut cmd = t.charly();
    cmd.env_remove("CHARLY_KDBX_KEY_FILE").args([
        "secrets",
        "set",
        "--kdbx",
        &db_arg,
        "charly/secret",
        "k",
        "new-secret-value",
    ]);
    let run = crate::util::Run::of(&mut cmd, "secrets set without the key file");
    run.status(2).stderr_has("wrong password for the KeePass database").stderr_has("needs a key file");
    assert!(!run.stderr.contains("new-secret-value") && !run.stderr.contains(PW), "{}", run.dump());
    assert_eq!(std::fs::read(&db).unwrap(), before, "the database is unchanged");

    // secrets init with a key file: keepassxc-cli needs both to open it.
    let made = t.path().join("made.kdbx");
    t.set_env("CHARLY_KDBX_KEY_FILE", &key);
    t.run(&["secrets", "init", &made.to_string_lossy()]).status(0);
    keepassxc(&t, &["ls", "-q", "-k", &key_arg, &made.to_string_lossy(), "charly"], "").status(0);
    keepassxc(&t, &["ls", "-q", &made.to_string_lossy(), "charly"], "").status(1);
}

/// `secrets init` reads config.yml (where it names the new file) before it writes anything: a
/// config file it cannot edit leaves no database behind.
#[test]
fn init_with_a_broken_config_file_writes_no_database() {
    let mut t = Home::new();
    t.set_env("CHARLY_KDBX_PASSWORD", PW);
    t.write_config("engine: [unclosed\n");
    t.run(&["secrets", "init"]).status(2).stderr_has("is not a valid settings file");
    assert!(!t.path().join("cfg/charly/secrets.kdbx").exists());
    assert_eq!(t.config(), "engine: [unclosed\n");
}

/// `secrets init` finds its file as every other leaf does: CHARLY_KDBX_PATH, then
/// secrets.kdbx_path, then the default. `--force` with the variable set replaces the file it
/// names, never the default database.
#[test]
fn init_resolves_the_path_like_every_other_leaf() {
    let (mut t, default_db) = with_db();
    t.run(&["secrets", "set", "charly/secret", "api-token", "keep-me"]).status(0);
    let before = std::fs::read(&default_db).unwrap();
    let env_db = t.path().join("envdb/env.kdbx");
    t.set_env("CHARLY_KDBX_PATH", &env_db);
    let run = t.run(&["secrets", "init", "--force"]);
    run.status(0);
    assert!(
        run.stdout.starts_with(&format!("Created KeePass database at {}\n", env_db.display())),
        "{}",
        run.dump()
    );
    assert!(env_db.is_file());
    assert_eq!(std::fs::read(&default_db).unwrap(), before, "the default database is untouched");
    t.run(&["secrets", "list"]).status(0).stdout("No entries found.\n");
    // Without --force, the file the variable names is the one that exists already.
    t.run(&["secrets", "init"]).status(2).stderr_has(&format!("{} exists already", env_db.display()));

    // secrets.kdbx_path in config.yml (no variable).
    let mut t = t;
    t.set_env("CHARLY_KDBX_PATH", "");
    let cfg_db = t.path().join("cfgdb/cfg.kdbx");
    t.write_config(&format!("secrets_kdbx_path: {}\n", cfg_db.display()));
    t.run(&["secrets", "init"]).status(0).stdout(&format!(
        "Created KeePass database at {}\nsecrets.kdbx_path now names it; `charly settings set secret_backend kdbx` makes it the credential store\n",
        cfg_db.display()
    ));
    assert!(cfg_db.is_file());
    t.run(&["secrets", "get", "charly/secret", "api-token", "--kdbx", &default_db.to_string_lossy()])
        .status(0)
        .stdout("keep-me\n");
}

/// `CHARLY_LOG=trace charly mcp serve --stdio`: secrets go in (`secrets.set`,
/// `settings.set vnc.password.*`) and out (`secrets.get`, `settings.get`) over MCP, and no
/// value reaches the log on stderr, which does hold the debug lines of the calls.
#[test]
fn no_secret_value_reaches_the_server_log() {
    let (t, _db) = with_db();
    let mut server = crate::mcp::Stdio::start(&t, &[("CHARLY_LOG", "trace")]);
    let set = server.call(
        1,
        "secrets.set",
        serde_json::json!({"service": "charly/secret", "key": "tok", "value": "MCP-SECRET-777"}),
    );
    assert_ne!(set["isError"], true, "{set}");
    let set =
        server.call(2, "settings.set", serde_json::json!({"key": "vnc.password.x", "value": "VNCmcp77"}));
    assert_ne!(set["isError"], true, "{set}");
    let got = server.call(3, "secrets.get", serde_json::json!({"service": "charly/secret", "key": "tok"}));
    assert!(got.to_string().contains("MCP-SECRET-777"), "{got}");
    let got = server.call(4, "settings.get", serde_json::json!({"key": "vnc.password.x"}));
    assert!(got.to_string().contains("VNCmcp77"), "{got}");
    let log = server.finish();
    assert!(log.contains("DEBUG") && log.contains("call tool=secrets.set"), "the log has the calls:\n{log}");
    for secret in ["MCP-SECRET-777", "VNCmcp77", PW] {
        assert!(!log.contains(secret), "the log holds {secret}:\n{log}");
    }
}

/// `CHARLY_KDBX_PASSWORD=` (set, empty) is no password: the database asks for one, as with
/// the variable unset, instead of calling the file unreadable.
#[test]
fn an_empty_password_variable_counts_as_unset() {
    let (mut t, db) = with_db();
    t.run(&["secrets", "set", "charly/secret", "api-token", "v"]).status(0);
    let before = std::fs::read(&db).unwrap();
    t.set_env("CHARLY_KDBX_PASSWORD", "");
    for args in [
        &["secrets", "get", "charly/secret", "api-token"][..],
        &["secrets", "set", "charly/secret", "k", "x"],
    ] {
        let run = t.run(args);
        run.status(2).stderr_has("needs its password: set CHARLY_KDBX_PASSWORD");
        assert!(!run.stderr.contains("not a readable"), "{}", run.dump());
    }
    t.run(&["secrets", "init", "--force"]).status(2).stderr_has("set CHARLY_KDBX_PASSWORD");
    assert_eq!(std::fs::read(&db).unwrap(), before);
}

/// The files in `dir` whose name starts with `.` (lock files, temporary files).
fn dot_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// A write that fails leaves nothing behind: a database in a directory that does not exist
/// creates neither the directory nor a lock file; a wrong password leaves no lock file beside
/// the database. A write that works leaves none either.
#[test]
fn failed_writes_leave_no_files() {
    let (mut t, db) = with_db();
    let dir = db.parent().unwrap().to_owned();
    let nodir = t.path().join("x/nodir");
    let missing = nodir.join("none.kdbx");
    t.run(&["secrets", "set", "--kdbx", &missing.to_string_lossy(), "charly/secret", "k", "v"])
        .status(2)
        .stderr_has("no KeePass database at");
    t.run(&["secrets", "delete", "--kdbx", &missing.to_string_lossy(), "charly/secret", "k"])
        .status(2)
        .stderr_has("no KeePass database at");
    t.run(&["secrets", "import", "--kdbx", &missing.to_string_lossy()])
        .status(2)
        .stderr_has("no KeePass database at");
    assert!(!t.path().join("x").exists(), "no directory was created");
    t.run(&["secrets", "set", "charly/secret", "k", "v"]).status(0);
    t.run(&["settings", "set", "vm.ram", "2G"]).status(0);
    assert_eq!(dot_files(&dir), Vec::<String>::new(), "a write that worked leaves no lock file");
    t.set_env("CHARLY_KDBX_PASSWORD", "not-the-password");
    t.run(&["secrets", "set", "charly/secret", "k", "w"]).status(2).stderr_has("wrong password");
    t.run(&["secrets", "delete", "charly/secret", "k"]).status(2).stderr_has("wrong password");
    assert_eq!(dot_files(&dir), Vec::<String>::new(), "a failed write leaves no lock file");
}

/// `secrets *` warns about a config.yml or a database its group or others can read, with
/// the same text as `settings *`.
#[test]
fn secrets_warn_about_files_others_can_read() {
    use std::os::unix::fs::PermissionsExt as _;
    let (t, db) = with_db();
    t.run(&["secrets", "set", "charly/secret", "k", "v"]).status(0);
    let run = t.run(&["secrets", "get", "charly/secret", "k"]);
    run.status(0).stdout("v\n");
    assert!(!run.stderr.contains("warning"), "{}", run.dump());
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(t.config_path(), std::fs::Permissions::from_mode(0o640)).unwrap();
    let run = t.run(&["secrets", "list"]);
    run.status(0)
        .stderr_has(&format!("charly: warning: {} is readable by others (mode 0644)", db.display()))
        .stderr_has(&format!(
            "charly: warning: {} is readable by others (mode 0640)",
            t.config_path().display()
        ));
    t.run(&["settings", "get", "run_mode"]).status(0).stderr_has(&format!(
        "charly: warning: {} is readable by others (mode 0640)",
        t.config_path().display()
    ));
}

/// OAuth tokens are kept under their server's URL (`charly/oauth`, key `https://...`): such a
/// key is stored, read back, listed and imported as it is, path, port and query included.
#[test]
fn url_keys_round_trip() {
    let (t, _db) = with_db();
    let urls = ["http://127.0.0.1:8080/mcp", "https://mcp.example.com:8443/a/b/mcp?tenant=x&y=%2F"];
    for (i, url) in urls.iter().enumerate() {
        t.run(&["secrets", "set", "charly/oauth", url, &format!("doc-{i}")]).status(0);
    }
    for (i, url) in urls.iter().enumerate() {
        t.run(&["secrets", "get", "charly/oauth", url]).status(0).stdout(&format!("doc-{i}\n"));
    }
    // The listing escapes `/` and `%` in keys, so each entry has one reading.
    t.run(&["secrets", "list", "charly/oauth"]).status(0).stdout(
        "charly/oauth/http:%2F%2F127.0.0.1:8080%2Fmcp\n\
         charly/oauth/https:%2F%2Fmcp.example.com:8443%2Fa%2Fb%2Fmcp?tenant=x&y=%252F\n",
    );
    // config.yml entries, escaped as charly writes them now and unescaped as it did before,
    // import under their URLs.
    let mut config = t.config();
    config.push_str(
        "vnc_passwords:\n  'charly/oauth/http:%2F%2Fh:1%2Fmcp%3Fq': a\n  'charly/oauth/https://old.example/x/mcp?k=1': b\n",
    );
    t.write_config(&config);
    t.run(&["secrets", "import"]).status(0).stdout(
        "charly/oauth/http://h:1/mcp%3Fq → kdbx ✓ (from config)\n\
         charly/oauth/https://old.example/x/mcp?k=1 → kdbx ✓ (from config)\n",
    );
    t.run(&["secrets", "get", "charly/oauth", "http://h:1/mcp%3Fq"]).status(0).stdout("a\n");
    t.run(&["secrets", "get", "charly/oauth", "https://old.example/x/mcp?k=1"]).status(0).stdout("b\n");
}

/// Over MCP a path setting is not set (trial 29, H2): `settings.set secrets.kdbx_path` aimed
/// `secrets.init --force` at any host file, around the rule that a tool's paths stay in the
/// project. The host's terminal still sets it; other settings still set over MCP.
#[test]
fn path_settings_are_set_on_the_host_only() {
    let (t, _db) = with_db();
    let victim = t.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let before = t.config();
    let mut server = crate::mcp::Stdio::start(&t, &[]);
    for key in ["secrets.kdbx_path", "secrets.kdbx_key_file", "volumes_path", "encrypted_storage_path"] {
        let set = server.call(
            1,
            "settings.set",
            serde_json::json!({"key": key, "value": victim.display().to_string()}),
        );
        assert_eq!(set["isError"], true, "{set}");
        assert!(
            set.to_string().contains(&format!(
                "{key} is a path on the host, and a tool's paths stay inside the project"
            )),
            "{set}"
        );
    }
    // Nor where credentials are kept (trial 30, M2: `secret_backend config` meant plaintext).
    for (key, value) in [("secret_backend", "config"), ("secrets.kdbx_cache", "false")] {
        let set = server.call(1, "settings.set", serde_json::json!({"key": key, "value": value}));
        assert_eq!(set["isError"], true, "{set}");
        assert!(set.to_string().contains("where this host keeps its credentials"), "{set}");
    }
    // Nor the interfaces ports are published on (trial 31, MED-3).
    let set = server.call(1, "settings.set", serde_json::json!({"key": "bind_address", "value": "0.0.0.0"}));
    assert_eq!(set["isError"], true, "{set}");
    assert!(set.to_string().contains("bind_address is which of this host's network interfaces"), "{set}");
    // A reset of those keys, or of the whole file, is the host's too (trial 31, HIGH-2).
    let reset = server.call(1, "settings.reset", serde_json::json!({"key": "secret_backend"}));
    assert!(
        reset["isError"] == true && reset.to_string().contains("settings.reset: secret_backend is"),
        "{reset}"
    );
    let reset = server.call(1, "settings.reset", serde_json::json!({}));
    assert!(reset["isError"] == true && reset.to_string().contains("as a tool, name one key"), "{reset}");
    let ok = server.call(2, "settings.set", serde_json::json!({"key": "vm.cpus", "value": "3"}));
    assert_ne!(ok["isError"], true, "{ok}");
    server.finish();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(!t.config().contains("victim") && before != t.config(), "{}", t.config());
    assert!(!t.config().contains("0.0.0.0"), "{}", t.config());
}

/// With `secrets.kdbx_path` reset, the credential store uses the default database as the
/// `secrets` leaves do (trial 29, M2: the store said none was configured, and the advice,
/// `secrets init --force`, would have emptied the file both read).
#[test]
fn the_store_and_the_secrets_leaves_use_the_same_default_database() {
    let (mut t, db) = with_db();
    t.run(&["secrets", "set", "charly/secret", "keep", "v1"]).status(0);
    t.run(&["settings", "reset", "secrets.kdbx_path"]).status(0);
    assert!(!t.config().contains("secrets_kdbx_path"), "{}", t.config());
    t.set_env("CHARLY_SECRET_BACKEND", "kdbx");
    t.run(&["settings", "set", "vnc.password.web", "pw-9"])
        .status(0)
        .stdout("Set vnc.password.web (stored in kdbx)\n");
    t.run(&["secrets", "get", "charly/vnc", "web"]).status(0).stdout("pw-9\n");
    t.run(&["secrets", "get", "charly/secret", "keep"]).status(0).stdout("v1\n");
    assert!(db.is_file());
}

/// A key with `/` is listed escaped (`charly/secret/a%2Fb`, so service and key split one way),
/// and the spelling shown finds it and deletes it (trial 29: `get` of what `list` showed found
/// nothing).
#[test]
fn a_key_is_found_as_list_shows_it() {
    let (t, _db) = with_db();
    t.run(&["secrets", "set", "charly/secret", "a/b", "v"]).status(0);
    t.run(&["secrets", "list"]).status(0).stdout("charly/secret/a%2Fb\n");
    t.run(&["secrets", "get", "charly/secret", "a%2Fb"]).status(0).stdout("v\n");
    t.run(&["secrets", "get", "charly/secret", "a/b"]).status(0).stdout("v\n");
    t.run(&["secrets", "delete", "charly/secret", "a%2Fb"]).status(0);
    t.run(&["secrets", "get", "charly/secret", "a/b"]).status(2);
}
