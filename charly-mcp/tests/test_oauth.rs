//! The HTTP endpoint as an OAuth resource server (`HttpOptions::oauth`), end to end on
//! 127.0.0.1: a small authorization server run by the test publishes its metadata (RFC 8414)
//! and a JWKS of keys generated for the run (P-256 and RSA 2048), and signs access tokens
//! with them (RustCrypto directly, not the server's code); charly's own client and raw HTTP
//! requests call a charly server that checks them.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use charly_mcp::client::{ConnectOptions, Endpoint, TransportKind, connect};
use charly_mcp::server::{AUTH_META_KEY, BearerToken, HttpOptions, OAuthOptions};
use reqwest::StatusCode;
use serde_json::{Value, json};

#[path = "oauth_issuer/mod.rs"]
mod oauth_issuer;

use oauth_issuer::*;

#[tokio::test]
async fn a_valid_token_calls_every_tool_and_the_tool_sees_who_called() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    for token in [
        issuer.token(&issuer.claims(&url, "mcp:read mcp:write")),
        issuer.rs256(&issuer.claims(&url, "mcp:read mcp:write")),
    ] {
        let client = client(&url, &token).await;
        let names: Vec<String> =
            client.list_tools().await.unwrap().into_iter().map(|t| t.name.to_string()).collect();
        assert_eq!(names, ["whoami", "wipe", "note"]);
        let meta: Value =
            serde_json::from_str(&text(&client.call_tool("whoami", None).await.unwrap())).unwrap();
        assert_eq!(
            meta[AUTH_META_KEY],
            json!({"subject": "alice", "scopes": ["mcp:read", "mcp:write"], "issuer": issuer.url, "clientId": "test-client"})
        );
        assert_eq!(text(&client.call_tool("wipe", None).await.unwrap()), "wiped");
        assert_eq!(text(&client.call_tool("note", None).await.unwrap()), "noted");
        client.close().await;
    }
    // One fetch served both keys.
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn no_token_is_401_pointing_at_the_protected_resource_metadata() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let origin = format!("http://{}", handle.local_addr());
    let metadata_url = format!("{origin}/.well-known/oauth-protected-resource/mcp");
    let response = post(&url, None, INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge(&response),
        format!(r#"Bearer resource_metadata="{metadata_url}", scope="mcp:read""#)
    );
    let body: Value = response.json().await.unwrap();
    assert!(body["error_description"].as_str().unwrap().contains(&issuer.url), "{body}");
    // Another scheme is no token either.
    let basic = post(&url, None, INIT).header("authorization", "Basic YTpi").send().await.unwrap();
    assert_eq!(basic.status(), StatusCode::UNAUTHORIZED);
    assert!(!challenge(&basic).contains("error="), "{}", challenge(&basic));

    // The metadata, at the path-suffixed URL the challenge names and at the bare one.
    for at in [metadata_url.clone(), format!("{origin}/.well-known/oauth-protected-resource")] {
        let response = reqwest::get(&at).await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{at}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let document: Value = response.json().await.unwrap();
        assert_eq!(
            document,
            json!({"resource": url, "authorization_servers": [issuer.url],
                   "scopes_supported": ["mcp:read", "mcp:write"], "bearer_methods_supported": ["header"],
                   "resource_name": "guarded test server"})
        );
    }
    // charly's client without a token and without OAuth does not get in (with OAuth it logs
    // in at the issuer: tests/test_oauth_login.rs).
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();
    let no_oauth = ConnectOptions {
        oauth: charly_mcp::client::OAuthOptions { enabled: false, ..Default::default() },
        ..Default::default()
    };
    let err = connect(&endpoint, &no_oauth).await.err().unwrap().to_string();
    assert!(err.contains("requires authorization (HTTP 401)"), "{err}");
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn bad_tokens_are_401_saying_what_is_wrong() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let good = issuer.claims(&url, "mcp:read mcp:write");
    let with = |key: &str, value: Value| {
        let mut claims = good.clone();
        claims[key] = value;
        claims
    };
    let stranger = ec_key();
    let cases = [
        (
            "wrong audience",
            issuer.token(&with("aud", json!("http://127.0.0.1:1/mcp"))),
            "audience (aud) is not",
        ),
        ("expired", issuer.token(&with("exp", json!(now() - 3600))), "has expired"),
        ("not yet valid", issuer.token(&with("nbf", json!(now() + 3600))), "not valid yet"),
        (
            "wrong issuer",
            issuer.token(&with("iss", json!("http://127.0.0.1:1"))),
            "not from the trusted issuer",
        ),
        (
            "no audience",
            issuer.token(&{
                let mut c = good.clone();
                c.as_object_mut().unwrap().remove("aud");
                c
            }),
            "no `aud` claim",
        ),
        ("bad signature", es256(&stranger, "ec-1", &good), "signature does not verify"),
        ("unknown key", es256(&stranger, "ec-9", &good), "no ES256 signing key with key id (kid) `ec-9`"),
        (
            "HMAC",
            jwt(&json!({"alg": "HS256", "kid": "ec-1"}), &good, |_| vec![1; 32]),
            "signed with HS256; this server accepts RS256 and ES256",
        ),
        ("not a JWT", "not-a-jwt".to_owned(), "not a JWT"),
        // jsonwebtoken has no `none`: its header parse failed with a serde message (trial).
        ("unsigned", jwt(&json!({"alg": "none"}), &good, |_| Vec::new()), "unsigned (alg none)"),
        ("unknown alg", jwt(&json!({"alg": "XY\"9"}), &good, |_| vec![1]), "signed with XY9;"),
        // Claims of another type than RFC 9068's: no parser words (trial finding).
        ("scope array", issuer.token(&with("scope", json!(["mcp:read"]))), "claims are malformed"),
        ("string exp", issuer.token(&with("exp", json!("soon"))), "malformed"),
    ];
    for (case, token, says) in cases {
        let response = post(&url, Some(&token), INIT).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{case}");
        let header = challenge(&response);
        assert!(
            header.starts_with(r#"Bearer error="invalid_token", error_description=""#),
            "{case}: {header}"
        );
        assert!(header.contains(says), "{case}: {header}");
        assert!(
            !header.contains("unknown variant")
                && !header.contains("expected one of")
                && !header.contains("invalid type"),
            "{case}: {header}"
        );
        assert!(header.contains("resource_metadata=\"http://127.0.0.1:"), "{case}: {header}");
        let body: Value = response.json().await.unwrap();
        assert!(body["error_description"].as_str().unwrap().contains(says), "{case}: {body}");
    }
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn a_read_only_token_reads_and_gets_403_for_tools_that_write() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let token = issuer.token(&issuer.claims(&url, "mcp:read"));
    let client = client(&url, &token).await;
    let meta: Value = serde_json::from_str(&text(&client.call_tool("whoami", None).await.unwrap())).unwrap();
    assert_eq!(meta[AUTH_META_KEY]["scopes"], json!(["mcp:read"]));
    assert!(client.call_tool("wipe", None).await.is_err());
    client.close().await;

    // Raw: the status and the challenge a client steps up from.
    let session = {
        let response = post(&url, Some(&token), INIT).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.headers()["mcp-session-id"].to_str().unwrap().to_owned()
    };
    for tool in ["wipe", "note"] {
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": tool, "arguments": {}}});
        let response = post(&url, Some(&token), &call.to_string())
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::FORBIDDEN, "{tool}");
        let header = challenge(&response);
        assert!(
            header.starts_with(
                r#"Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata=""#
            ),
            "{tool}: {header}"
        );
        assert!(
            header.contains(&format!("tool `{tool}` is not read-only: calling it needs scope mcp:write")),
            "{header}"
        );
    }
    // A token without the read scope gets nothing.
    let none = issuer.token(&issuer.claims(&url, "profile"));
    let response = post(&url, Some(&none), INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let header = challenge(&response);
    assert!(header.starts_with(r#"Bearer error="insufficient_scope", scope="mcp:read""#), "{header}");
    assert!(header.contains("the token has profile"), "{header}");
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn an_identity_claimed_in_meta_is_ignored() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let token = issuer.token(&issuer.claims(&url, "mcp:read"));
    let response = post(&url, Some(&token), INIT).send().await.unwrap();
    let session = response.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "whoami", "arguments": {},
        "_meta": {AUTH_META_KEY: {"subject": "mallory", "scopes": ["mcp:write"]}, "trace": "t"}}});
    let response = post(&url, Some(&token), &call.to_string())
        .header("mcp-session-id", &session)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let body = response.text().await.unwrap();
    let data =
        body.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim).rfind(|d| !d.is_empty()).unwrap();
    let answer: Value = serde_json::from_str(data).unwrap();
    let meta: Value = serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(meta[AUTH_META_KEY]["subject"], "alice");
    assert_eq!(meta[AUTH_META_KEY]["scopes"], json!(["mcp:read"]));
    assert_eq!(meta["trace"], "t");
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();

    // Without OAuth, a client's claim is dropped all the same.
    let plain = server().serve_http(HttpOptions::default().listen(([127, 0, 0, 1], 0).into())).await.unwrap();
    let endpoint = Endpoint::url(&plain.url(), TransportKind::StreamableHttp).unwrap();
    let client = connect(&endpoint, &ConnectOptions::default()).await.unwrap();
    let meta: Value = serde_json::from_str(&text(&client.call_tool("whoami", None).await.unwrap())).unwrap();
    assert!(meta.get(AUTH_META_KEY).is_none(), "{meta}");
    client.close().await;
    plain.shutdown().await.unwrap();
}

/// Trial finding (low): a session opened with alice's token took bob's (the MCP security best
/// practices: servers SHOULD bind session IDs to user-specific information).
#[tokio::test]
async fn a_session_takes_the_tokens_of_its_opener_only() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let token = |sub: &str| {
        let mut claims = issuer.claims(&url, "mcp:read");
        claims["sub"] = json!(sub);
        issuer.token(&claims)
    };
    let (alice, bob) = (token("alice"), token("bob"));
    let opened = post(&url, Some(&alice), INIT).send().await.unwrap();
    assert_eq!(opened.status(), StatusCode::OK);
    let session = opened.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    let call = |token: &str| {
        post(&url, Some(token), list)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
    };
    assert_eq!(call(&alice).send().await.unwrap().status(), StatusCode::OK);
    let refused = call(&bob).send().await.unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(refused.headers().get("www-authenticate").is_none());
    let body: Value = refused.json().await.unwrap();
    assert!(
        body["error_description"].as_str().unwrap().contains("opened with another subject's access token"),
        "{body}"
    );
    // Bob's own session is his.
    let own = post(&url, Some(&bob), INIT).send().await.unwrap();
    assert_eq!(own.status(), StatusCode::OK);
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn a_rotated_key_is_fetched_and_unknown_keys_cost_one_fetch() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let claims = issuer.claims(&url, "mcp:read");
    let verified = issuer.token(&claims);
    let first = post(&url, Some(&verified), INIT).send().await.unwrap();
    assert_eq!(first.status(), StatusCode::OK);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    // The issuer rotates to a new key: the first token naming it makes the server fetch again.
    let rotated = ec_key();
    *issuer.jwks.lock().unwrap() = json!({"keys": [ec_jwk(&rotated, "ec-2")]});
    let response = post(&url, Some(&es256(&rotated, "ec-2", &claims)), INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
    // Tokens naming keys nobody has: refused, after one fetch for the first, none for the rest.
    for kid in ["ec-404", "ec-405", "ec-404", "ec-406"] {
        let response = post(&url, Some(&es256(&rotated, kid, &claims)), INIT).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    }
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 3);
    // The key the issuer dropped no longer verifies once the keys were fetched again: neither
    // a token not seen before, nor one verified with it before the keys changed (trial
    // finding: that one was taken for up to five minutes more).
    let mut fresh = claims.clone();
    fresh["jti"] = json!("not-seen-before");
    for token in [issuer.token(&fresh), verified] {
        let old = post(&url, Some(&token), INIT).send().await.unwrap();
        assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
        assert!(
            challenge(&old).contains("no ES256 signing key with key id (kid) `ec-1`"),
            "{}",
            challenge(&old)
        );
    }
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 3);
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn an_unreachable_issuer_is_503_and_settings_are_checked() {
    // Nothing listens on the issuer's port once its listener is dropped.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let issuer = format!("http://127.0.0.1:{port}");
    let options = HttpOptions::default().listen(([127, 0, 0, 1], 0).into()).oauth(OAuthOptions::new(&issuer));
    let handle = server().serve_http(options).await.unwrap();
    let token = es256(&ec_key(), "k", &json!({"iss": issuer, "aud": handle.url(), "exp": now() + 60}));
    let response = post(&handle.url(), Some(&token), INIT).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(response.headers()["retry-after"], "5");
    let body: Value = response.json().await.unwrap();
    let why = body["error_description"].as_str().unwrap();
    assert!(why.contains("cannot find the issuer's keys") && why.contains(&issuer), "{why}");
    handle.shutdown().await.unwrap();

    let both = HttpOptions::default()
        .bearer_token(BearerToken::new("t").unwrap())
        .oauth(OAuthOptions::new("https://auth.example.com"));
    assert!(both.check().unwrap_err().to_string().contains("exclude each other"));
    // A plain-http issuer (or JWKS) beyond loopback is refused: its keys could be swapped.
    for (issuer, jwks, says) in [
        (
            "http://auth.example.com",
            None,
            "the OAuth issuer (--oauth-issuer) \"http://auth.example.com/\" is plain http",
        ),
        ("https://a.example", Some("http://10.0.0.1/jwks"), "the JWKS URL (--oauth-jwks-uri)"),
    ] {
        let mut options = OAuthOptions::new(issuer);
        if let Some(jwks) = jwks {
            options = options.jwks_uri(jwks.to_owned());
        }
        let err = HttpOptions::default().oauth(options).check().unwrap_err().to_string();
        assert!(err.contains(says) && err.contains("use https://"), "{err}");
    }
    for loopback in ["http://127.0.0.1:9", "http://[::1]:9", "http://localhost:9"] {
        HttpOptions::default().oauth(OAuthOptions::new(loopback)).check().unwrap();
    }
    let bad = HttpOptions::default().oauth(OAuthOptions::new("auth.example.com"));
    assert!(bad.check().unwrap_err().to_string().contains("--oauth-issuer"));
    // The example fits the setting (trial finding: a resource URL's was an issuer's).
    let bad = HttpOptions::default().oauth(OAuthOptions::new("https://a.example").resource("/mcp"));
    let err = bad.check().unwrap_err().to_string();
    assert!(err.contains("--oauth-resource") && err.contains("e.g. https://mcp.example.com/mcp"), "{err}");
    let bad = HttpOptions::default()
        .oauth(OAuthOptions::new("https://a.example").scopes(Some("mcp read".into()), None));
    assert!(bad.check().unwrap_err().to_string().contains("is not a scope"));
}

/// Trial finding 14: an issuer behind a private CA could only be trusted through
/// `SSL_CERT_FILE`, undocumented; without it every request got 503. `OAuthOptions::ca_file`
/// (`--oauth-ca-file`) trusts its CA, and the 503 without it says how.
#[tokio::test]
async fn an_issuer_behind_a_private_ca_is_trusted_with_its_ca_file() {
    use tokio_rustls::rustls::{self, pki_types};
    // A CA made for the test, and the issuer's certificate for 127.0.0.1 signed by it.
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name.push(rcgen::DnType::CommonName, "charly test CA");
    let ca_pem = ca.self_signed(&ca_key).unwrap().pem();
    let signer = rcgen::Issuer::new(ca, ca_key);
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .unwrap()
        .signed_by(&key, &signer)
        .unwrap();
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![pki_types::CertificateDer::from(cert.der().to_vec())],
                pki_types::PrivateKeyDer::Pkcs8(pki_types::PrivatePkcs8KeyDer::from(key.serialize_der())),
            )
            .unwrap();
    // The issuer's metadata and JWKS over TLS.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("https://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let signing = ec_key();
    let metadata = json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
        "authorization_endpoint": format!("{issuer}/authorize"), "token_endpoint": format!("{issuer}/token"),
        "response_types_supported": ["code"]})
    .to_string();
    let jwks = json!({"keys": [ec_jwk(&signing, "k1")]}).to_string();
    let router = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", axum::routing::get(move || async move { metadata }))
        .route("/jwks", axum::routing::get(move || async move { jwks }));
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                if let Ok(tls) = acceptor.accept(tcp).await {
                    let service = hyper_util::service::TowerToHyperService::new(router);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                }
            });
        }
    });
    let dir = tempfile_dir();
    let ca_file = dir.join("ca.pem");
    std::fs::write(&ca_file, &ca_pem).unwrap();

    for trusted in [false, true] {
        let mut oauth = OAuthOptions::new(&issuer);
        if trusted {
            oauth = oauth.ca_file(&ca_file);
        }
        let handle = server()
            .serve_http(HttpOptions::default().listen(([127, 0, 0, 1], 0).into()).oauth(oauth))
            .await
            .unwrap();
        let claims = json!({"iss": issuer, "aud": handle.url(), "sub": "alice", "scope": "mcp:read", "exp": now() + 60});
        let response = post(&handle.url(), Some(&es256(&signing, "k1", &claims)), INIT).send().await.unwrap();
        if trusted {
            assert_eq!(response.status(), StatusCode::OK);
        } else {
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            let body: Value = response.json().await.unwrap();
            let why = body["error_description"].as_str().unwrap();
            assert!(why.contains("UnknownIssuer") && why.contains("give --oauth-ca-file CA.pem"), "{why}");
        }
        handle.shutdown().await.unwrap();
    }

    // A file that holds no certificate is refused before serving.
    let bad = dir.join("bad.pem");
    std::fs::write(&bad, "not a certificate").unwrap();
    let err = HttpOptions::default()
        .oauth(OAuthOptions::new(&issuer).ca_file(&bad))
        .check()
        .unwrap_err()
        .to_string();
    assert!(err.contains(&format!("--oauth-ca-file {}", bad.display())), "{err}");
}

/// A directory of this test process's own under the system's temporary directory.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("charly-oauth-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
