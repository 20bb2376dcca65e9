//! `charly mcp serve --oauth-issuer`: the served project behind OAuth access tokens from a
//! small authorization server the test runs on 127.0.0.1 (its metadata and a JWKS with a
//! P-256 key generated for the run; tokens signed by the test), probed with `charly check
//! mcp --header 'Authorization: Bearer ...'`.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use p256::ecdsa::signature::Signer as _;
use serde_json::{Value, json};

use super::util::TestDir;

/// The authorization server: it answers until the test process ends.
struct Issuer {
    url: String,
    key: p256::ecdsa::SigningKey,
}

impl Issuer {
    fn start() -> Issuer {
        let key = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).unwrap();
            if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&bytes) {
                break key;
            }
        };
        let point = key.verifying_key().to_sec1_point(false);
        let jwks = json!({"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "k1",
            "x": B64.encode(&point.as_bytes()[1..33]), "y": B64.encode(&point.as_bytes()[33..65])}]})
        .to_string();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/authorize"), "token_endpoint": format!("{url}/token"),
            "response_types_supported": ["code"]})
        .to_string();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let router = axum::Router::new()
                    .route(
                        "/.well-known/oauth-authorization-server",
                        axum::routing::get(move || async move { metadata }),
                    )
                    .route("/jwks", axum::routing::get(move || async move { jwks }));
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, router).await.unwrap();
            });
        });
        Issuer { url, key }
    }

    /// An ES256 access token for `resource` with `scope`, valid for five minutes.
    fn token(&self, resource: &str, scope: &str) -> String {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let claims =
            json!({"iss": self.url, "aud": resource, "sub": "alice", "scope": scope, "exp": now + 300});
        let header = json!({"alg": "ES256", "typ": "at+jwt", "kid": "k1"});
        let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
        let signature: p256::ecdsa::Signature = self.key.sign(input.as_bytes());
        format!("{input}.{}", B64.encode(signature.to_bytes()))
    }
}

#[test]
fn a_served_project_takes_tokens_of_its_issuer_with_the_scopes_of_each_tool() {
    let t = TestDir::sample();
    let issuer = Issuer::start();
    let server = t.serve_with(&["--oauth-issuer", &issuer.url]);
    let auth = |token: &str| format!("Authorization: Bearer {token}");
    let full = auth(&issuer.token(&server.url, "mcp:read mcp:write"));
    let read = auth(&issuer.token(&server.url, "mcp:read"));
    let elsewhere = auth(&issuer.token("http://127.0.0.1:1/mcp", "mcp:read mcp:write"));

    let list = ["check", "mcp", "call", "--url", &server.url, "--tool", "box.list.boxes", "--input", "{}"];
    let with = |args: &[&str], header: &str| {
        let mut all = args.to_vec();
        all.extend_from_slice(&["--header", header]);
        all.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| t.run(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let listed = run(with(&list, &full));
    listed.status(0);
    assert!(listed.stdout.contains("hello"), "{}", listed.dump());
    run(with(&list, &read)).status(0);
    // No token, or one for another server: refused before anything runs. (Without
    // --no-oauth the client would try to log in at the issuer, which registers no clients.)
    let mut unauthorized = list.to_vec();
    unauthorized.push("--no-oauth");
    let none = t.run(&unauthorized);
    assert_ne!(none.code, Some(0), "{}", none.dump());
    assert!(none.stderr.contains("401"), "{}", none.dump());
    let foreign = run(with(&list, &elsewhere));
    assert_ne!(foreign.code, Some(0), "{}", foreign.dump());

    // A tool that writes needs the write scope.
    let write = ["check", "mcp", "call", "--url", &server.url, "--tool", "box.write", "--input"];
    let args = json!({"path": "notes.txt", "content": "hi\n"}).to_string();
    let mut refused = with(&write, &read);
    refused.insert(8, args.clone());
    let refused = run(refused);
    assert_ne!(refused.code, Some(0), "{}", refused.dump());
    assert!(!t.proj().join("notes.txt").exists(), "a refused call wrote the file");
    let mut allowed = with(&write, &full);
    allowed.insert(8, args);
    run(allowed).status(0);
    assert_eq!(t.read("notes.txt"), "hi\n");

    let log = server.log();
    assert!(
        log.contains(&format!("accepting OAuth access tokens from {} for {}", issuer.url, server.url)),
        "{log}"
    );
    // The metadata names the issuer.
    let origin = server.url.trim_end_matches("/mcp");
    let metadata = get_json(&format!("{origin}/.well-known/oauth-protected-resource/mcp"));
    assert_eq!(metadata["authorization_servers"], json!([issuer.url]));
    assert_eq!(metadata["resource"], server.url.as_str());
}

/// A GET of `url` as JSON (reqwest's async client on a runtime of its own).
fn get_json(url: &str) -> Value {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    charly::client::install_tls_provider();
    runtime.block_on(async { reqwest::get(url).await.unwrap().json().await.unwrap() })
}

#[test]
fn oauth_settings_are_checked_before_serving() {
    let t = TestDir::sample();
    t.run(&["mcp", "serve", "--listen", "127.0.0.1:0", "--oauth-issuer", "auth.example.com"])
        .status(2)
        .stderr("charly: the OAuth issuer (--oauth-issuer) \"auth.example.com\" is not an absolute URL (relative URL without a base), e.g. https://auth.example.com\n");
    let beyond =
        t.run(&["mcp", "serve", "--listen", "0.0.0.0:0", "--oauth-issuer", "https://auth.example.com"]);
    beyond.status(2);
    assert!(beyond.stderr.contains("give --oauth-resource"), "{}", beyond.dump());
    let both = t.run(&["mcp", "serve", "--oauth-issuer", "https://a.example", "--token-env", "T"]);
    assert_eq!(both.code, Some(2), "{}", both.dump());
    // A client ID metadata document must be https: refused before anything is dialed.
    let run = t.run(&[
        "check",
        "mcp",
        "ping",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--oauth-client-metadata-url",
        "http://app.example/client.json",
    ]);
    run.status(2);
    assert!(
        run.stderr.contains("--oauth-client-metadata-url \"http://app.example/client.json\": a client ID metadata document is an https:// URL"),
        "{}",
        run.dump()
    );
    // An issuer behind a private CA: its CA file is read before serving.
    let args = ["mcp", "serve", "--listen", "127.0.0.1:0", "--oauth-issuer", "https://a.example"];
    let missing = t.run(&[&args[..], &["--oauth-ca-file", "no-such-ca.pem"]].concat());
    missing.status(2);
    assert!(missing.stderr.contains("--oauth-ca-file no-such-ca.pem: cannot read it"), "{}", missing.dump());
}

/// `check mcp logout --url URL`: the server's cached OAuth login (the client's document: the
/// client id of its registration and the tokens) removed from the credential store (here
/// config.yml: no keyring in the test's HOME), whichever form its key was written in, saying
/// what was removed and never a token; nothing cached is said as such.
#[test]
fn logout_forgets_a_servers_cached_login() {
    let t = TestDir::new();
    let config = t.proj().parent().unwrap().join("home/.config/charly/config.yml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let url = "https://mcp.example.com:8443/a/mcp?tenant=x";
    let other = "http://127.0.0.1:9/mcp";
    let document = |client: &str, access: &str| {
        json!({"client_id": client, "token_response": {"access_token": access, "token_type": "Bearer",
               "expires_in": 300, "refresh_token": format!("refresh-{access}")},
               "granted_scopes": ["mcp:read"], "token_received_at": 1, "issuer": "https://auth.example.com"})
        .to_string()
    };
    // The key of `url` as charly writes it now, and `other`'s as charly wrote it before keys
    // were escaped.
    let escaped = "charly/oauth/https:%2F%2Fmcp.example.com:8443%2Fa%2Fmcp?tenant=x";
    let written = format!(
        "secret_backend: config\nvnc_passwords:\n  '{escaped}': '{}'\n  'charly/oauth/{other}': '{}'\n  web: vnc-pw\n",
        document("client-7", "eyJsecret-access"),
        document("client-8", "eyJother-access"),
    );
    std::fs::write(&config, &written).unwrap();
    std::fs::set_permissions(&config, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();

    // The query's values are not shown (they may be keys).
    let shown = "https://mcp.example.com:8443/a/mcp?tenant=***";
    let run = t.run(&["check", "mcp", "logout", "--url", url]);
    run.status(0).stdout(&format!(
        "Forgot the OAuth login of {shown} (config): access token, refresh token, client registration client-7\n"
    ));
    assert!(!run.stdout.contains("eyJ") && !run.stderr.contains("eyJ"), "{}", run.dump());
    let left = std::fs::read_to_string(&config).unwrap();
    assert!(!left.contains("secret-access") && !left.contains("mcp.example.com"), "{left}");
    assert!(left.contains("other-access") && left.contains("web: vnc-pw"), "{left}");

    let json = t.run(&["check", "mcp", "logout", "--url", url, "--json"]).status(0).json();
    assert_eq!(
        json,
        json!({"url": shown, "removed": false, "access_token": false, "refresh_token": false, "store": "config",
               "stored": [other]})
    );
    t.run(&["check", "mcp", "logout", "--url", url]).status(0).stdout(&format!(
        "No OAuth login cached for {shown} (config): nothing to forget; OAuth logins are cached for {other}\n"
    ));

    // The entry written unescaped is found and removed too, also when the URL is given with a
    // trailing slash.
    let run = t.run(&["check", "mcp", "logout", "--url", &format!("{other}/")]);
    run.status(0).stdout(&format!(
        "Forgot the OAuth login of {other}/ (config): access token, refresh token, client registration client-8\n"
    ));
    let left = std::fs::read_to_string(&config).unwrap();
    assert!(!left.contains("charly/oauth"), "{left}");
    assert!(left.contains("web: vnc-pw"), "{left}");

    let refused = t.run(&["check", "mcp", "logout", "--url", "ftp://files.example.com/"]);
    refused.status(2);
    assert!(
        refused.stderr.contains(
            "--url \"ftp://files.example.com/\": OAuth logins are kept for http and https servers only"
        ),
        "{}",
        refused.dump()
    );
}
