//! "Over MCP every path an argument names stays inside the project root" (README): the KDBX
//! file (`kdbx`, `secrets.init`'s `db_path`), the key directories of `secrets.gpg.*-key`,
//! `alias.*`'s `dest` and `udev.*`'s `root`. A given path outside is refused naming the
//! argument, and nothing is read or written; the defaults (the configured KDBX path,
//! `~/.local/bin`, `/`) stay allowed.

use crate::util::Home;

#[test]
fn served_path_arguments_outside_the_project_are_refused_and_nothing_is_written() {
    let mut t = Home::new();
    t.set_env("CHARLY_KDBX_PASSWORD", "pw");
    let outside = t.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let out = outside.to_string_lossy().into_owned();
    let server = crate::mcp::Server::start(&t);
    let call = |tool: &str, input: serde_json::Value| {
        t.run(&["check", "mcp", "call", "--tool", tool, "--input", &input.to_string(), "--url", &server.url])
    };
    let refused = |tool: &str, input: serde_json::Value, argument: &str| {
        let run = call(tool, input);
        run.status(1);
        assert!(run.stdout.contains(&format!("argument `{argument}`")), "{tool}\n{}", run.dump());
    };
    let db = format!("{out}/mcp.kdbx");
    refused("secrets.init", serde_json::json!({"db_path": db}), "db_path");
    refused("secrets.init", serde_json::json!({"db_path": "../outside/mcp.kdbx"}), "db_path");
    refused("secrets.init", serde_json::json!({"kdbx": db}), "kdbx");
    refused(
        "secrets.set",
        serde_json::json!({"service": "charly/secret", "key": "k", "value": "v", "kdbx": db}),
        "kdbx",
    );
    refused(
        "secrets.get",
        serde_json::json!({"service": "charly/secret", "key": "k", "kdbx": "../outside/mcp.kdbx"}),
        "kdbx",
    );
    refused("secrets.list", serde_json::json!({"kdbx": db}), "kdbx");
    refused("secrets.gpg.export-key", serde_json::json!({"path": out}), "path");
    refused("secrets.gpg.import-key", serde_json::json!({"path": out}), "path");
    refused("alias.add", serde_json::json!({"name": "ls", "box": "localhost/x:1", "dest": out}), "dest");
    refused("alias.remove", serde_json::json!({"name": "ls", "dest": "../outside"}), "dest");
    refused("udev.install", serde_json::json!({"root": out}), "root");
    refused("udev.remove", serde_json::json!({"root": "../outside"}), "root");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "nothing written outside");
    assert!(!t.config_path().exists(), "config.yml not re-pointed");

    // Inside the project they work; the default root `/` is allowed (generate only reads).
    call("udev.install", serde_json::json!({"root": "fakeroot"})).status(0);
    assert!(t.proj().join("fakeroot/etc/udev/rules.d/99-charly-container-access.rules").is_file());
    call("udev.generate", serde_json::json!({})).status(0);
    call("secrets.init", serde_json::json!({"db_path": "inside.kdbx"})).status(0);
    assert!(t.proj().join("inside.kdbx").is_file());
    call("secrets.list", serde_json::json!({"kdbx": "inside.kdbx"})).status(0);
    // On a terminal the same paths mean what they say.
    t.run(&["udev", "install", "--root", &out]).status(0);
    assert!(outside.join("etc/udev/rules.d/99-charly-container-access.rules").is_file());
}
