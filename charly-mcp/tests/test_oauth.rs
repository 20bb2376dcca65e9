//! The HTTP endpoint as an OAuth resource server (`HttpOptions::oauth`), end to end on
//! 127.0.0.1: a small authorization server run by the test publishes its metadata (RFC 8414)
//! and a JWKS of keys generated for the run (P-256 and RSA 2048), and signs access tokens
//! with them (RustCrypto directly, not the server's code); charly's own client and raw HTTP
//! requests call a charly server that checks them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use charly_mcp::Annotations;
use charly_mcp::client::{ConnectOptions, Endpoint, TransportKind, connect};
use charly_mcp::server::{
    AUTH_META_KEY, BearerToken, HttpOptions, OAuthOptions, Server, ServerHandle, ServerOptions, Tool,
    ToolOutput,
};
use p256::ecdsa::signature::Signer as _;
use reqwest::StatusCode;
use rsa::traits::PublicKeyParts as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// The test's authorization server: metadata, a JWKS it can change, and its signing keys.
struct Issuer {
    url: String,
    ec: p256::ecdsa::SigningKey,
    rsa: Arc<rsa::PrivateKey>,
    /// The JWKS served at `/jwks`.
    jwks: Arc<Mutex<Value>>,
    /// How often `/jwks` was fetched.
    fetches: Arc<AtomicUsize>,
    stop: CancellationToken,
}

fn ec_key() -> p256::ecdsa::SigningKey {
    loop {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).unwrap();
        if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&bytes) {
            return key;
        }
    }
}

/// One RSA key per test process: generating one takes seconds in a debug build.
fn rsa_key() -> Arc<rsa::PrivateKey> {
    static KEY: std::sync::OnceLock<Arc<rsa::PrivateKey>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| Arc::new(<rsa::PrivateKey as rsa::Generate>::generate())).clone()
}

fn ec_jwk(key: &p256::ecdsa::SigningKey, kid: &str) -> Value {
    let point = key.verifying_key().to_sec1_point(false);
    let bytes = point.as_bytes();
    json!({"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
           "x": B64.encode(&bytes[1..33]), "y": B64.encode(&bytes[33..65])})
}

fn rsa_jwk(key: &rsa::PrivateKey, kid: &str) -> Value {
    json!({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
           "n": B64.encode(key.n().to_be_bytes_trimmed_vartime()),
           "e": B64.encode(key.e().to_be_bytes_trimmed_vartime())})
}

/// A JWT of `claims`: `header` (with `alg`) and the signature `sign` makes of the input.
fn jwt(header: &Value, claims: &Value, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = sign(input.as_bytes());
    format!("{input}.{}", B64.encode(signature))
}

fn es256(key: &p256::ecdsa::SigningKey, kid: &str, claims: &Value) -> String {
    let header = json!({"alg": "ES256", "typ": "at+jwt", "kid": kid});
    jwt(&header, claims, |input| {
        let signature: p256::ecdsa::Signature = key.sign(input);
        signature.to_bytes().to_vec()
    })
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

impl Issuer {
    async fn start() -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let ec = ec_key();
        let rsa = rsa_key();
        let jwks = Arc::new(Mutex::new(json!({"keys": [ec_jwk(&ec, "ec-1"), rsa_jwk(&rsa, "rsa-1")]})));
        let fetches = Arc::new(AtomicUsize::new(0));
        let metadata = json!({
            "issuer": url, "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/authorize"), "token_endpoint": format!("{url}/token"),
            "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
        })
        .to_string();
        let (served, counted) = (jwks.clone(), fetches.clone());
        let router = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || async move { metadata }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    served.lock().unwrap().to_string()
                }),
            );
        let stop = CancellationToken::new();
        let stopped = stop.clone().cancelled_owned();
        tokio::spawn(async move { axum::serve(listener, router).with_graceful_shutdown(stopped).await });
        Issuer { url, ec, rsa, jwks, fetches, stop }
    }

    /// Claims for `resource` with `scope`, valid for five minutes.
    fn claims(&self, resource: &str, scope: &str) -> Value {
        json!({"iss": self.url, "aud": resource, "sub": "alice", "client_id": "test-client",
               "scope": scope, "iat": now(), "exp": now() + 300})
    }

    fn token(&self, claims: &Value) -> String {
        es256(&self.ec, "ec-1", claims)
    }

    fn rs256(&self, claims: &Value) -> String {
        let header = json!({"alg": "RS256", "typ": "at+jwt", "kid": "rsa-1"});
        let signer = rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(self.rsa.as_ref().clone());
        jwt(&header, claims, |input| {
            use rsa::signature::SignatureEncoding as _;
            rsa::signature::Signer::sign(&signer, input).to_vec()
        })
    }
}

/// A read-only tool showing its meta, a destructive one, and one that writes without
/// destroying.
fn server() -> Server {
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let whoami = Tool::new(
        "whoami",
        "Shows the call's meta",
        empty.clone(),
        Annotations { read_only_hint: true, ..Default::default() },
        |_, cx| async move { Ok(ToolOutput::text(Value::Object(cx.meta().clone()).to_string())) },
    );
    let wipe = Tool::new(
        "wipe",
        "Deletes everything",
        empty.clone(),
        Annotations { destructive_hint: true, ..Default::default() },
        |_, _| async move { Ok(ToolOutput::text("wiped")) },
    );
    let note = Tool::new("note", "Adds a note", empty, Annotations::default(), |_, _| async move {
        Ok(ToolOutput::text("noted"))
    });
    Server::new(ServerOptions::new("guarded", "0").tool(whoami).tool(wipe).tool(note))
}

async fn serve(issuer: &Issuer) -> ServerHandle {
    let options = HttpOptions::default()
        .listen(([127, 0, 0, 1], 0).into())
        .oauth(OAuthOptions::new(&issuer.url).resource_name("guarded test server"));
    server().serve_http(options).await.unwrap()
}

fn post(url: &str, token: Option<&str>, body: &str) -> reqwest::RequestBuilder {
    let request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}

/// The `WWW-Authenticate` header of `response`.
fn challenge(response: &reqwest::Response) -> String {
    response.headers()["www-authenticate"].to_str().unwrap().to_owned()
}

async fn client(url: &str, token: &str) -> charly_mcp::client::Client {
    let endpoint = Endpoint::url(url, TransportKind::StreamableHttp)
        .unwrap()
        .with_headers([("Authorization".to_owned(), format!("Bearer {token}"))]);
    connect(&endpoint, &ConnectOptions::default()).await.unwrap()
}

fn text(result: &charly_mcp::server::rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

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
    // charly's client without a token does not get in.
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();
    assert!(connect(&endpoint, &ConnectOptions::default()).await.is_err());
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

#[tokio::test]
async fn a_rotated_key_is_fetched_and_unknown_keys_cost_one_fetch() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let claims = issuer.claims(&url, "mcp:read");
    let first = post(&url, Some(&issuer.token(&claims)), INIT).send().await.unwrap();
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
    // The key the issuer dropped no longer verifies once the keys were fetched again (a token
    // not seen before: one verified earlier is taken for up to five minutes).
    let mut fresh = claims.clone();
    fresh["jti"] = json!("not-seen-before");
    let old = post(&url, Some(&issuer.token(&fresh)), INIT).send().await.unwrap();
    assert_eq!(old.status(), StatusCode::UNAUTHORIZED);
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
    let bad = HttpOptions::default().oauth(OAuthOptions::new("auth.example.com"));
    assert!(bad.check().unwrap_err().to_string().contains("--oauth-issuer"));
    let bad = HttpOptions::default()
        .oauth(OAuthOptions::new("https://a.example").scopes(Some("mcp read".into()), None));
    assert!(bad.check().unwrap_err().to_string().contains("is not a scope"));
}
