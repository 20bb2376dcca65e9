//! The credential store as `check mcp`'s OAuth token cache (findings of a fresh-user trial of
//! issue 20): with gnome-keyring on a private bus, the client (inside its runtime, on a
//! terminal run and in a served tool call alike) reads and writes tokens without a panic; a
//! KDBX file without its password matters only to a server that asks for a login.

use crate::mcp::{Server, Stdio};
use crate::oauth_as::Issuer;
use crate::util::{Bus, Home};

/// Trial finding 1: every `check mcp --url` probe panicked in keyring.rs ("Cannot start a
/// runtime from within a runtime"), in a served `check.mcp.ping` too, and an OAuth login with
/// the keyring never worked.
#[test]
fn oauth_tokens_live_in_the_keyring_without_a_panic() {
    let bus = Bus::with_keyring("login-pw");
    let mut t = Home::new();
    t.set_env("DBUS_SESSION_BUS_ADDRESS", &bus.address);
    let issuer = Issuer::start();
    let plain = Server::start(&t);
    let guarded = Server::start_with(&t, &["--oauth-issuer", &issuer.url]);

    t.run(&["check", "mcp", "ping", "--url", &plain.url]).status(0).stdout_has("ok");
    t.run(&["check", "mcp", "ping", "--url", &guarded.url]).status(0).stdout_has("ok");
    assert_eq!(issuer.authorizations(), 1);
    // The login went to the keyring (secret-tool reads it back), and no token to config.yml.
    let document = bus.secret_tool_lookup("charly/oauth", &guarded.url).expect("no token in the keyring");
    assert!(document.contains("\"access_token\"") && document.contains("client-1"), "{document}");
    assert!(!t.config().contains("access_token"), "{}", t.config());
    // A second run takes the token from the keyring: no new login.
    t.run(&["check", "mcp", "ping", "--url", &guarded.url]).status(0);
    assert_eq!(issuer.authorizations(), 1);

    // Served: the tool runs on the server's runtime and reads the keyring there.
    let mut served = Stdio::start(&t, &[]);
    let result = served.call(1, "check.mcp.ping", serde_json::json!({"url": guarded.url}));
    assert_eq!(result["isError"], false, "{result}");
    let result = served.call(2, "check.mcp.ping", serde_json::json!({"url": plain.url}));
    assert_eq!(result["isError"], false, "{result}");
    let stderr = served.finish();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(issuer.authorizations(), 1);
}

/// Trial finding 2: with a KDBX store whose password is not given, probes of a server that
/// needs no auth failed ("token cache: the credential store (kdbx) cannot be read"). The store
/// is read once a server asks for a login, and then its error names the store and the fix.
#[test]
fn a_kdbx_store_without_its_password_matters_only_to_a_server_that_asks_for_a_login() {
    let mut t = Home::new();
    t.set_env("CHARLY_KDBX_PASSWORD", "kdbx-pw");
    t.run(&["secrets", "init"]).status(0);
    t.run(&["settings", "get", "secret_backend"]).status(0).stdout("kdbx\n");
    let issuer = Issuer::start();
    let plain = Server::start(&t);
    let guarded = Server::start_with(&t, &["--oauth-issuer", &issuer.url]);
    // Logged in while the password was given: the token is in the KDBX file.
    t.run(&["check", "mcp", "ping", "--url", &guarded.url]).status(0);

    let mut t = t;
    t.set_env("CHARLY_KDBX_PASSWORD", "");
    t.run(&["check", "mcp", "ping", "--url", &plain.url]).status(0).stdout_has("ok");
    t.run(&["check", "mcp", "ping", "--url", &guarded.url])
        .status(2)
        .stderr_has(&format!(
            "authorizing at {}: token cache: the server asks for an OAuth login",
            guarded.url
        ))
        .stderr_has("the credential store (kdbx) cannot be read")
        .stderr_has("set CHARLY_KDBX_PASSWORD");
    assert_eq!(issuer.authorizations(), 1, "a login went on without the store");
}

/// Issue 20 LOW 1: a `--url` with a password and query values (`https://user:pw@host/mcp?
/// key=v`) never shows them, in an error, a report, a progress line or the logout report:
/// the URL is printed as `user:***@host/mcp?key=***`.
#[test]
fn credentials_and_query_values_of_a_url_are_never_printed() {
    let t = Home::new();
    let issuer = Issuer::start();
    let plain = Server::start(&t);
    let guarded = Server::start_with(&t, &["--oauth-issuer", &issuer.url]);
    let secret = |url: &str| url.replacen("http://", "http://me:pw-LEAK1@", 1) + "?key=q-LEAK2&flag";
    let shown = |url: &str| url.replacen("http://", "http://me:***@", 1) + "?key=***&***";
    let closed = {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        format!("http://127.0.0.1:{port}/mcp")
    };
    let leaks = |run: &crate::util::Run| {
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(!all.contains("LEAK"), "{}", run.dump());
    };
    for (url, json) in [(&plain.url, false), (&plain.url, true), (&guarded.url, false), (&closed, false)] {
        let mut args = vec!["check", "mcp", "list-tools", "--url"];
        let given = secret(url);
        args.push(&given);
        args.extend(["--timeout", "10s"]);
        if json {
            args.push("--json");
        }
        leaks(&t.run(&args));
    }
    // The legacy SSE transport's errors name the URL they asked (a 404 here).
    let sse = t.run(&["check", "mcp", "ping", "--transport", "sse", "--url", &secret(&plain.url)]);
    sse.status(2);
    leaks(&sse);
    let refused = t.run(&["check", "mcp", "ping", "--url", &secret(&closed)]);
    refused.status(2).stderr_has(&format!("cannot connect to {}", shown(&closed)));
    leaks(&refused);
    let no_oauth = t.run(&["check", "mcp", "ping", "--no-oauth", "--url", &secret(&guarded.url)]);
    leaks(&no_oauth);
    let logout = t.run(&["check", "mcp", "logout", "--url", &secret(&guarded.url)]);
    leaks(&logout);
    let logout = t.run(&["check", "mcp", "logout", "--url", &secret(&guarded.url), "--json"]);
    leaks(&logout);
    // Neither: both ways are named (clap's message named only --url).
    t.run(&["check", "mcp", "logout"]).status(2).stderr_has("give --url URL or --server NAME");
    // As a tool, the arguments are named as a tool call gives them.
    let mut served = Stdio::start(&t, &[]);
    let result = served.call(1, "check.mcp.logout", serde_json::json!({}));
    assert_eq!(result["isError"], true, "{result}");
    let said = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        said.contains("check.mcp.logout: give url (the server's URL) or server (a name in .mcp.json)"),
        "{result}"
    );
    let result = served.call(2, "check.mcp.logout", serde_json::json!({"url": "ftp://x.example/mcp"}));
    let said = result["content"][0]["text"].as_str().unwrap_or_default();
    assert!(
        said.contains("check.mcp.logout: url \"ftp://x.example/mcp\": OAuth logins are kept for http"),
        "{result}"
    );
    served.finish();
    // A URL that does not parse is shown redacted too (it was printed whole).
    let bad = "http://me:pw-LEAK1@127.0.0.1:99999/mcp?key=q-LEAK2";
    let invalid = t.run(&["check", "mcp", "ping", "--url", bad]);
    invalid.status(2).stderr_has("invalid url \"http://me:***@127.0.0.1:99999/mcp?key=***\"");
    leaks(&invalid);
    // A served `check.mcp.*` call: the server's log (rmcp's line about its failed client
    // transport, which names the URL) is masked as well. The stdio server's stderr comes
    // through to the calling charly's.
    let mcp_json = serde_json::json!({"mcpServers": {"self": {
        "command": env!("CARGO_BIN_EXE_charly"),
        "args": ["-C", t.proj().to_str().unwrap(), "mcp", "serve", "--stdio"],
    }}});
    std::fs::write(t.proj().join(".mcp.json"), mcp_json.to_string()).unwrap();
    let input = serde_json::json!({"url": secret(&closed)}).to_string();
    let served = t.run(&[
        "check",
        "mcp",
        "call",
        "--server",
        "self",
        "--tool",
        "check.mcp.list-tools",
        "--input",
        &input,
    ]);
    served.status(1).stdout_has(&format!("cannot connect to {}", shown(&closed)));
    leaks(&served);
}

/// Issue 20 LOWs 2 and 3, with the config backend (no keyring in this HOME): tokens live in
/// config.yml's `oauth_tokens` (not `vnc_passwords`), with the client charly registered; a
/// login kept under `vnc_passwords` by an earlier charly is still used, and moves to
/// `oauth_tokens` on the next write (a refresh here). A server's login is one whatever the spelling of its URL (a trailing `/`, the case of
/// the scheme and host), on login, lookup and logout; `logout --server NAME` forgets the login
/// of a `.mcp.json` server; a logout of what is not logged in says what is.
#[test]
fn oauth_tokens_have_their_own_key_and_one_login_a_server() {
    let t = Home::new();
    let issuer = Issuer::start();
    let guarded = Server::start_with(&t, &["--oauth-issuer", &issuer.url]);
    t.write_config("vnc_passwords:\n  web: vnc-pw\n");
    t.run(&["check", "mcp", "ping", "--url", &guarded.url]).status(0).stdout_has("ok");
    assert_eq!(issuer.authorizations(), 1);
    let config: serde_json::Value = yaml_of(&t.config());
    let document = config["oauth_tokens"][&guarded.url].as_str().expect("no oauth_tokens entry").to_owned();
    assert!(document.contains("access_token"), "{}", t.config());
    assert!(!t.config().contains("charly/oauth"), "{}", t.config());
    assert_eq!(config["vnc_passwords"]["web"], "vnc-pw");
    // The client charly registered is kept in the same entry, for the next login to reuse.
    let kept: serde_json::Value = serde_json::from_str(&document).unwrap();
    assert_eq!(kept["registration"]["client_id"], kept["client_id"], "{document}");
    let redirect = kept["registration"]["redirect_uri"].as_str().unwrap_or_default();
    assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"), "{document}");

    // Another spelling of the same URL takes the same login.
    let shouting = guarded.url.replacen("http://", "HTTP://", 1);
    t.run(&["check", "mcp", "ping", "--url", &shouting]).status(0);
    assert_eq!(issuer.authorizations(), 1, "another spelling logged in again");

    // Kept by an earlier charly under vnc_passwords, its access token expired: used (a
    // refresh, no login), then moved.
    let mut old: serde_json::Value = serde_json::from_str(&document).unwrap();
    old["token_received_at"] = serde_json::json!(1);
    let escaped = format!("charly/oauth/{}", guarded.url.replace('/', "%2F"));
    let legacy = serde_json::json!({"vnc_passwords": {"web": "vnc-pw", escaped.clone(): old.to_string()}});
    t.write_config(&yaml_serde::to_string(&legacy).unwrap());
    t.run(&["check", "mcp", "ping", "--url", &guarded.url]).status(0);
    assert_eq!(issuer.authorizations(), 1, "the login kept under vnc_passwords was not used");
    let config = yaml_of(&t.config());
    assert!(config["vnc_passwords"].get(&escaped).is_none(), "{}", t.config());
    assert_eq!(config["vnc_passwords"]["web"], "vnc-pw");
    let moved = config["oauth_tokens"][&guarded.url].as_str().expect("not moved to oauth_tokens");
    assert_ne!(moved, old.to_string(), "not refreshed");

    // Logout: nothing under another server says what is kept; a trailing slash and another
    // case find the login.
    let elsewhere = "https://mcp.example.com/mcp";
    t.run(&["check", "mcp", "logout", "--url", elsewhere]).status(0).stdout(&format!(
        "No OAuth login cached for {elsewhere} (config): nothing to forget; OAuth logins are cached for {}\n",
        guarded.url
    ));
    t.run(&["check", "mcp", "logout", "--url", &format!("{shouting}/")])
        .status(0)
        .stdout_has("Forgot the OAuth login of")
        .stdout_has("access token, refresh token");
    assert!(!t.config().contains("oauth"), "{}", t.config());
    t.run(&["check", "mcp", "logout", "--url", elsewhere])
        .status(0)
        .stdout(&format!("No OAuth login cached for {elsewhere} (config): nothing to forget\n"));

    // --server: the login of a .mcp.json server.
    let mcp_json = serde_json::json!({"mcpServers": {"guarded": {"type": "http", "url": guarded.url},
                                                      "local": {"command": "true"}}});
    std::fs::write(t.proj().join(".mcp.json"), mcp_json.to_string()).unwrap();
    t.run(&["check", "mcp", "ping", "--server", "guarded"]).status(0);
    assert_eq!(issuer.authorizations(), 2);
    t.run(&["check", "mcp", "logout", "--server", "guarded"])
        .status(0)
        .stdout_has("Forgot the OAuth login of");
    assert!(!t.config().contains("oauth"), "{}", t.config());
    t.run(&["check", "mcp", "logout", "--server", "local"]).status(2).stderr_has("local is a stdio server");
    t.run(&["check", "mcp", "logout"]).status(2);

    // A login kept under another spelling (upper case, written by hand or an earlier charly)
    // goes with the server's logout too (trial LOW: it survived).
    let upper = "HTTPS://MCP.Example.COM/mcp";
    let planted = serde_json::json!({"oauth_tokens": {upper: r#"{"token_response":{"access_token":"x"}}"#}});
    t.write_config(&yaml_serde::to_string(&planted).unwrap());
    t.run(&["check", "mcp", "logout", "--url", elsewhere])
        .status(0)
        .stdout_has("Forgot the OAuth login of https://mcp.example.com/mcp")
        .stdout_has("access token");
    assert!(!t.config().contains("oauth"), "{}", t.config());
}

fn yaml_of(text: &str) -> serde_json::Value {
    yaml_serde::from_str(text).unwrap()
}
