//! The bounds of charly's OAuth client against charly's own resource server and the test's
//! authorization server (tests/oauth_issuer), all on 127.0.0.1 (the findings of a fresh-user
//! trial of issue 20): a token cache read only when a server asks for a login, a server that
//! refuses every token it is given (retries bounded, nothing kept), a person's login that the
//! connect timeout does not cut, and authorization servers that are slow, unreachable, refuse
//! TLS or answer with an error page, each named with what went wrong.

#[path = "oauth_issuer/mod.rs"]
mod oauth_issuer;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use charly_mcp::client::{
    self, ConnectOptions, Endpoint, Interaction, OAuthOptions, Protocol, TokenCache, TransportKind,
};
use charly_mcp::server::HttpOptions;
use oauth_issuer::client::Recorded;
use oauth_issuer::{Grant, Issuer, serve, server, text};

/// A store that cannot be read (a KDBX file without its password), counting the attempts.
#[derive(Default)]
struct Unreadable(AtomicUsize);

impl TokenCache for Unreadable {
    fn load(&self, _: &str) -> Result<Option<String>, String> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Err("the credential store (kdbx) cannot be read: the KeePass database /k.kdbx needs its password: \
             set CHARLY_KDBX_PASSWORD"
            .to_owned())
    }
    fn save(&self, _: &str, _: &str) -> Result<(), String> {
        Err("not writable".to_owned())
    }
    fn clear(&self, _: &str) -> Result<(), String> {
        Err("not writable".to_owned())
    }
}

fn options(cache: Arc<dyn TokenCache>, timeout: Duration) -> ConnectOptions {
    ConnectOptions {
        timeout,
        protocol: Protocol::Initialize,
        oauth: OAuthOptions { cache: Some(cache), ..Default::default() },
        ..Default::default()
    }
}

fn endpoint(url: &str) -> Endpoint {
    Endpoint::url(url, TransportKind::StreamableHttp).unwrap()
}

async fn connect_err(url: &str, options: &ConnectOptions) -> String {
    match client::connect(&endpoint(url), options).await {
        Ok(_) => panic!("{url}: connected"),
        Err(e) => e.to_string(),
    }
}

/// Trial finding 2: a KDBX store without its password broke probes of servers that need no
/// auth, since the cache was read before the first request.
#[tokio::test]
async fn the_token_cache_is_read_only_when_a_server_asks_for_a_login() {
    let cache = Arc::new(Unreadable::default());
    let plain = server().serve_http(HttpOptions::default().listen(([127, 0, 0, 1], 0).into())).await.unwrap();
    let session = client::connect(&endpoint(&plain.url()), &options(cache.clone(), Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(session.list_tools().await.unwrap().len(), 3);
    session.close().await;
    assert_eq!(cache.0.load(Ordering::SeqCst), 0, "a server without auth made the client read the store");
    plain.shutdown().await.unwrap();

    // A server that asks: the store's error, naming it and the fix, and no login went on.
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let err = connect_err(&url, &options(cache.clone(), Duration::from_secs(10))).await;
    assert!(
        err.contains(&format!("authorizing at {url}: token cache: the server asks for an OAuth login")),
        "{err}"
    );
    assert!(
        err.contains("the credential store (kdbx) cannot be read") && err.contains("CHARLY_KDBX_PASSWORD"),
        "{err}"
    );
    assert_eq!(cache.0.load(Ordering::SeqCst), 1);
    assert!(issuer.seen.lock().unwrap().registrations.is_empty());
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

/// Trial finding 3: tokens for another audience were refreshed ~15 times a second until the
/// timeout, which then blamed the connection, and the refused token was written to the store.
#[tokio::test]
async fn a_token_the_server_refuses_ends_the_retries_and_is_not_kept() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    *issuer.grant.lock().unwrap() = Grant::WrongAudience;
    let cache = Arc::new(Recorded::default());
    let started = Instant::now();
    let err = connect_err(&url, &options(cache.clone(), Duration::from_secs(30))).await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(
        err.contains(&format!("authorizing at {url}: step-up: the server refused the access token")),
        "{err}"
    );
    assert!(
        err.contains("HTTP 401 invalid_token; the server says: the access token is for another resource"),
        "{err}"
    );
    assert!(err.contains("giving up (limit 3)") && err.contains("The refused token was not kept"), "{err}");
    assert!(!err.contains("timed out") && !err.contains("did not answer") && !err.contains("eyJ"), "{err}");
    // 3 tries (the limit): the login, then a refresh each time.
    let grants = issuer.seen.lock().unwrap().grants.clone();
    assert_eq!(grants, ["authorization_code", "refresh_token", "refresh_token"]);
    assert!(cache.0.lock().unwrap().is_empty(), "a refused token was written: {:?}", cache.0.lock().unwrap());

    // Tokens the server takes are kept, once it took them.
    *issuer.grant.lock().unwrap() = Grant::AsAsked;
    let session =
        client::connect(&endpoint(&url), &options(cache.clone(), Duration::from_secs(10))).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("alice"));
    session.close().await;
    let kept = cache.0.lock().unwrap().get(&url).cloned().expect("the accepted token was not kept");
    assert!(kept.contains(issuer.seen.lock().unwrap().issued.last().unwrap()));
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

/// Trial finding 4: a login in the browser was cut by the 30 s connect timeout while the
/// terminal said "charly waits 5m". The login wait rules: the connect timeout does not count
/// the time a person takes.
#[tokio::test]
async fn a_person_logging_in_has_the_login_wait_not_the_connect_timeout() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    // The person opens the URL 2.5 s later (the authorization server then redirects back to
    // the loopback listener, as a browser follows it); the connect timeout is 1 s.
    let browser: client::BrowserFn = Arc::new(|auth_url: &str| {
        let auth_url = auth_url.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(2500)).await;
            let _ = reqwest::get(auth_url).await;
        });
    });
    let person = |login_wait: Duration| ConnectOptions {
        oauth: OAuthOptions {
            interaction: Interaction::Terminal,
            browser: Some(browser.clone()),
            login_wait,
            ..options(Arc::new(Recorded::default()), Duration::from_secs(1)).oauth
        },
        ..options(Arc::new(Recorded::default()), Duration::from_secs(1))
    };
    let session = client::connect(&endpoint(&url), &person(Duration::from_secs(20))).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("alice"));
    session.close().await;

    // The login wait is the bound: 1 s, and the person comes after 2.5 s.
    let started = Instant::now();
    let err = connect_err(&url, &person(Duration::from_secs(1))).await;
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(
        err.contains(&format!("authorizing at {url}: authorization: no login came back within 1s")),
        "{err}"
    );
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

/// Trial findings 8, 9, 10: an authorization server that is slow was blamed on the MCP server;
/// one that is down or refuses TLS gave only "OAuth metadata discovery failed for URL"; an HTML
/// error page at the token endpoint gave "expected value at line 1 column 1".
#[tokio::test]
async fn failing_authorization_servers_are_named_with_what_went_wrong() {
    let cache = || Arc::new(Recorded::default()) as Arc<dyn TokenCache>;
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let origin = format!("http://{}", handle.local_addr());

    // Slow metadata: the authorization server is named, not the MCP server.
    issuer.slow_metadata.store(5000, Ordering::SeqCst);
    let err = connect_err(&url, &options(cache(), Duration::from_secs(2))).await;
    assert!(
        err.contains(&format!(
            "discovery: the metadata of its authorization server {} did not answer within 2s",
            issuer.url
        )),
        "{err}"
    );
    assert!(!err.contains(&format!("OAuth metadata at {origin}")), "{err}");
    issuer.slow_metadata.store(0, Ordering::SeqCst);

    // An error page at the token endpoint.
    *issuer.grant.lock().unwrap() = Grant::ErrorPage;
    let err = connect_err(&url, &options(cache(), Duration::from_secs(10))).await;
    assert!(
        err.contains(&format!(
            "token request: the token endpoint {}/token did not answer with JSON",
            issuer.url
        )),
        "{err}"
    );
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();

    // Nothing listens where the authorization server should be.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let gone = format!("http://127.0.0.1:{closed}");
    let handle = guarded_by(&gone).await;
    let err = connect_err(&handle.url(), &options(cache(), Duration::from_secs(10))).await;
    assert!(err.contains(&format!("discovery: the OAuth metadata at {gone}/")), "{err}");
    assert!(err.contains("cannot be fetched: connection refused"), "{err}");
    handle.shutdown().await.unwrap();

    // An authorization server whose certificate no CA of this machine signed.
    let tls = tls_listener().await;
    let issuer = format!("https://127.0.0.1:{tls}");
    let handle = guarded_by(&issuer).await;
    let err = connect_err(&handle.url(), &options(cache(), Duration::from_secs(10))).await;
    assert!(err.contains(&format!("the OAuth metadata at {issuer}/")), "{err}");
    assert!(
        err.contains("TLS: the certificate of 127.0.0.1 was refused") && err.contains("unknown issuer"),
        "{err}"
    );
    handle.shutdown().await.unwrap();
}

/// Trial findings (low): a step-up after a login that asked for no scope asked for
/// " mcp:write"; an authorization server without PKCE S256 was reported under "client
/// registration"; a refused registration gave no hint of --oauth-client-id.
#[tokio::test]
async fn step_up_scopes_and_what_an_authorization_server_lacks() {
    // A resource server that needs no scope to read and names none in its metadata: the first
    // login asks for no scope; the write tool's 403 then asks for mcp:write.
    let issuer = Issuer::start().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let options = HttpOptions::default().listen(listener.local_addr().unwrap()).oauth(
        charly_mcp::server::OAuthOptions::new(&issuer.url)
            .resource(url.clone())
            .scopes(None, Some("mcp:write".to_owned())),
    );
    let stop = tokio_util::sync::CancellationToken::new();
    let router = server()
        .http_router(&options, stop.clone())
        .layer(axum::middleware::map_response(without_scopes_supported));
    tokio::spawn(async move { axum::serve(listener, router).await });
    let cache = Arc::new(Recorded::default());
    let session = client::connect(&endpoint(&url), &options_for(&cache)).await.unwrap();
    assert_eq!(text(&session.call_tool("wipe", None).await.unwrap()), "wiped");
    session.close().await;
    let scopes: Vec<String> =
        issuer.seen.lock().unwrap().authorizations.iter().map(|a| a.scope.clone()).collect();
    assert_eq!(scopes, ["", "mcp:write"]);
    stop.cancel();
    issuer.stop.cancel();

    // Authorization servers that lack something, beside charly's resource server.
    for (pkce, step, says) in [
        (false, "authorization server metadata", "does not offer PKCE with S256"),
        (true, "client registration", "give --oauth-client-id ID"),
    ] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let methods = if pkce { vec!["S256"] } else { vec!["plain"] };
        let metadata =
            serde_json::json!({"issuer": url, "authorization_endpoint": format!("{url}/authorize"),
            "token_endpoint": format!("{url}/token"), "registration_endpoint": format!("{url}/register"),
            "response_types_supported": ["code"], "code_challenge_methods_supported": methods})
            .to_string();
        let router = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || async move { metadata }),
            )
            .route(
                "/register",
                axum::routing::post(|| async {
                    (
                        axum::http::StatusCode::FORBIDDEN,
                        r#"{"error":"access_denied","error_description":"no self-registration"}"#,
                    )
                }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await });
        let handle = guarded_by(&url).await;
        let err = connect_err(&handle.url(), &options_for(&cache)).await;
        assert!(err.contains(&format!("authorizing at {}: {step}: ", handle.url())), "{err}");
        assert!(err.contains(says), "{err}");
        handle.shutdown().await.unwrap();
    }
}

/// A JSON answer without `scopes_supported` (the protected resource metadata of a server that
/// names no scopes).
async fn without_scopes_supported(response: axum::response::Response) -> axum::response::Response {
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap_or_default();
    let body = match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(serde_json::Value::Object(mut document)) if document.contains_key("scopes_supported") => {
            document.remove("scopes_supported");
            serde_json::Value::Object(document).to_string().into()
        }
        _ => bytes,
    };
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    axum::response::Response::from_parts(parts, axum::body::Body::from(body))
}

fn options_for(cache: &Arc<Recorded>) -> ConnectOptions {
    options(cache.clone(), Duration::from_secs(10))
}

/// charly's resource server trusting `issuer`.
async fn guarded_by(issuer: &str) -> charly_mcp::server::ServerHandle {
    let options = HttpOptions::default()
        .listen(([127, 0, 0, 1], 0).into())
        .oauth(charly_mcp::server::OAuthOptions::new(issuer));
    server().serve_http(options).await.unwrap()
}

/// A TLS listener on 127.0.0.1 with a self-signed certificate (no CA of this machine knows
/// it); its port. Handshakes only: a client that trusts nobody's certificate stops there.
async fn tls_listener() -> u16 {
    use tokio_rustls::rustls::{self, pki_types};
    let key = rcgen::KeyPair::generate().unwrap();
    let cert =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()]).unwrap().self_signed(&key).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki_types::CertificateDer::from(cert.der().to_vec())],
            pki_types::PrivateKeyDer::Pkcs8(pki_types::PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move { acceptor.accept(tcp).await });
        }
    });
    port
}
