//! Remote servers through charly's client: TLS against a server whose certificate a CA made
//! in the test signs (served over tokio-rustls on 127.0.0.1), extra headers on every request
//! (POST, the GET stream, DELETE) as a real server records them, and OAuth's bad input against
//! a small authorization server in the test (charly's own server checks the token it issues).

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::IntoResponse;
use charly_mcp::client::{
    self, ConnectOptions, Endpoint, OAuthOptions, Protocol, TlsOptions, TokenCache, TransportKind,
};
use charly_mcp::server::{BearerToken, HttpOptions};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// charly's test server as an axum router (any Host of 127.0.0.1, every request's method and
/// `x-api-key` recorded).
/// Each request's method and `x-api-key`, as the server saw them.
type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;

fn mcp_router(options: &HttpOptions, seen: Seen) -> Router {
    common::server().http_router(options, CancellationToken::new()).layer(axum::middleware::from_fn(
        move |request: Request, next: Next| {
            let seen = seen.clone();
            async move {
                let key = request.headers().get("x-api-key").and_then(|v| v.to_str().ok()).map(str::to_owned);
                seen.lock().unwrap().push((request.method().to_string(), key));
                next.run(request).await
            }
        },
    ))
}

/// Serves `router` on 127.0.0.1 (plain HTTP); the task ends with the test's runtime.
async fn serve(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

/// A CA, and a server certificate it signs for `names`: (CA PEM, server cert DER, key DER).
fn certificates(names: &[&str]) -> (String, Vec<u8>, Vec<u8>) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "charly test CA");
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    (ca_cert.pem(), cert.der().to_vec(), key.serialize_der())
}

/// Serves `router` over TLS on 127.0.0.1 with the certificate and key given.
async fn serve_tls(router: Router, cert: Vec<u8>, key: Vec<u8>) -> SocketAddr {
    use tokio_rustls::rustls::{self, pki_types};
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki_types::CertificateDer::from(cert)],
            pki_types::PrivateKeyDer::Pkcs8(pki_types::PrivatePkcs8KeyDer::from(key)),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { return };
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                // A client that refuses the certificate ends the handshake: nothing to serve.
                if let Ok(tls) = acceptor.accept(tcp).await {
                    let service = hyper_util::service::TowerToHyperService::new(router);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                        .await;
                }
            });
        }
    });
    addr
}

fn options(tls: TlsOptions) -> ConnectOptions {
    ConnectOptions {
        timeout: Duration::from_secs(10),
        tls,
        protocol: Protocol::Initialize,
        ..Default::default()
    }
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("charly-remote-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test]
async fn https_with_a_private_ca_and_certificate_errors_that_name_the_host() {
    let (ca_pem, cert, key) = certificates(&["127.0.0.1", "localhost"]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let addr = serve_tls(mcp_router(&common::http::loopback(), seen), cert, key).await;
    let url = format!("https://127.0.0.1:{}/mcp", addr.port());
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();

    // The system's roots do not know the test's CA.
    let err = client::connect(&endpoint, &options(TlsOptions::default())).await.err().unwrap().to_string();
    assert!(err.contains("TLS: the certificate of 127.0.0.1 was refused"), "{err}");
    assert!(err.contains("unknown issuer") && err.contains("--ca-file"), "{err}");

    // --ca-file: the CA is trusted besides the system's roots.
    let ca = temp_file("ca.pem", &ca_pem);
    let session =
        client::connect(&endpoint, &options(TlsOptions::new(Some(ca.clone()), false))).await.unwrap();
    assert!(session.list_tools().await.unwrap().iter().any(|t| t.name == "echo"));
    session.close().await;

    // --insecure: no verification at all.
    let session = client::connect(&endpoint, &options(TlsOptions::new(None, true))).await.unwrap();
    assert!(!session.list_tools().await.unwrap().is_empty());
    session.close().await;

    // --ca-file with another CA (of the same name: rustls finds it, and its signature does not
    // verify): the hint says that CA did not sign it, not to give --ca-file.
    let (other_ca, _, _) = certificates(&["127.0.0.1"]);
    let other = temp_file("other-ca.pem", &other_ca);
    let err = client::connect(&endpoint, &options(TlsOptions::new(Some(other.clone()), false)))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains(&format!("the CA in --ca-file {} did not sign it either", other.display()))
            && !err.contains("for a private CA give --ca-file"),
        "{err}"
    );

    // A file that is not PEM is named, not used.
    let bad = temp_file("bad.pem", "not a certificate");
    let err = client::connect(&endpoint, &options(TlsOptions::new(Some(bad.clone()), false)))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("--ca-file") && err.contains("bad.pem"), "{err}");
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused_by_name() {
    let (ca_pem, cert, key) = certificates(&["mcp.example.com"]);
    let addr = serve_tls(mcp_router(&common::http::loopback(), Arc::default()), cert, key).await;
    let url = format!("https://127.0.0.1:{}/mcp", addr.port());
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();
    let ca = temp_file("ca-other.pem", &ca_pem);
    let err = client::connect(&endpoint, &options(TlsOptions::new(Some(ca), false)))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("TLS: the certificate of 127.0.0.1 was refused"), "{err}");
    assert!(err.contains("not valid for the name 127.0.0.1"), "{err}");
    assert!(
        err.contains("connect by a name the certificate holds") && !err.contains("give --ca-file"),
        "{err}"
    );
}

#[tokio::test]
async fn headers_go_on_every_request_and_never_into_errors() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let addr = serve(mcp_router(&common::http::loopback(), seen.clone())).await;
    let url = format!("http://127.0.0.1:{}/mcp", addr.port());
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp)
        .unwrap()
        .with_headers([("X-Api-Key".to_owned(), "k3y-value".to_owned())]);
    let session = client::connect(&endpoint, &options(TlsOptions::default())).await.unwrap();
    session.list_tools().await.unwrap();
    // The GET stream opens in the background after `initialize`: wait for it (bounded).
    for _ in 0..50 {
        if seen.lock().unwrap().iter().any(|(m, _)| m == "GET") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    session.close().await;
    let seen = seen.lock().unwrap().clone();
    for method in ["POST", "GET", "DELETE"] {
        assert!(seen.iter().any(|(m, _)| m == method), "no {method} in {seen:?}");
    }
    assert!(seen.iter().all(|(_, key)| key.as_deref() == Some("k3y-value")), "{seen:?}");

    // Host and Content-Type are charly's: a header of that name is refused, its value unquoted.
    for name in ["Host", "content-type"] {
        let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp)
            .unwrap()
            .with_headers([(name.to_owned(), "evil.example".to_owned())]);
        let err =
            client::connect(&endpoint, &options(TlsOptions::default())).await.err().unwrap().to_string();
        assert!(
            err.contains("cannot be given: charly sets Host, Content-Type, Content-Length itself"),
            "{err}"
        );
        assert!(!err.contains("evil.example"), "{err}");
    }

    // A wrong bearer token in a header: the 401 is an answer (no OAuth for headers that carry
    // their own Authorization), and its error does not quote the value.
    let guarded = serve(mcp_router(
        &common::http::loopback().bearer_token(BearerToken::new("right-token").unwrap()),
        Arc::default(),
    ))
    .await;
    let url = format!("http://127.0.0.1:{}/mcp", guarded.port());
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp)
        .unwrap()
        .with_headers([("Authorization".to_owned(), "Bearer wr0ng-s3cret".to_owned())]);
    let err = client::connect(&endpoint, &options(TlsOptions::default())).await.err().unwrap().to_string();
    assert!(err.contains("401") && !err.contains("wr0ng-s3cret"), "{err}");
}

/// What the test's authorization server gets wrong.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    RejectRegistration,
    TokenError,
    ResourceElsewhere,
    /// The authorization endpoint shows a login page; a "person" (a task of the test) then
    /// completes the login in the browser, which comes back to the loopback redirect.
    LoginPage,
}

#[derive(Clone)]
struct As {
    base: String,
    fault: Fault,
    authorizations: Arc<Mutex<u32>>,
}

/// The authorization server's routes and its protected resource metadata (RFC 9728, RFC 8414,
/// RFC 7591, the code flow), beside charly's MCP endpoint on one origin.
fn authorization_server(state: As) -> Router {
    use axum::routing::{get, post};
    async fn prm(State(s): State<As>) -> impl IntoResponse {
        let resource = if s.fault == Fault::ResourceElsewhere {
            "http://other.example/mcp".to_owned()
        } else {
            format!("{}/mcp", s.base)
        };
        axum::Json(json!({"resource": resource, "authorization_servers": [s.base]}))
    }
    async fn metadata(State(s): State<As>) -> impl IntoResponse {
        let b = &s.base;
        axum::Json(json!({
            "issuer": b, "authorization_endpoint": format!("{b}/authorize"), "token_endpoint": format!("{b}/token"),
            "registration_endpoint": format!("{b}/register"), "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
            "grant_types_supported": ["authorization_code", "refresh_token"]
        }))
    }
    async fn register(State(s): State<As>, axum::Json(body): axum::Json<Value>) -> axum::response::Response {
        if s.fault == Fault::RejectRegistration {
            let error = json!({"error": "invalid_client_metadata", "error_description": "no new clients"});
            return (axum::http::StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
        }
        let reply = json!({"client_id": "test-client", "redirect_uris": body["redirect_uris"], "token_endpoint_auth_method": "none"});
        (axum::http::StatusCode::CREATED, axum::Json(reply)).into_response()
    }
    async fn authorize(
        State(s): State<As>,
        axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>,
    ) -> axum::response::Response {
        *s.authorizations.lock().unwrap() += 1;
        let location = format!("{}?code=the-code&state={}", q["redirect_uri"], q["state"]);
        if s.fault == Fault::LoginPage {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(200)).await;
                // The browser follows the redirect after the person logged in.
                let _ = reqwest::Client::new().get(location).send().await;
            });
            return axum::response::Html("<form>log in</form>").into_response();
        }
        (axum::http::StatusCode::FOUND, [(axum::http::header::LOCATION, location)]).into_response()
    }
    async fn token(State(s): State<As>) -> axum::response::Response {
        if s.fault == Fault::TokenError {
            let error = json!({"error": "invalid_grant", "error_description": "the code expired"});
            return (axum::http::StatusCode::BAD_REQUEST, axum::Json(error)).into_response();
        }
        axum::Json(json!({"access_token": "issued-t0ken", "token_type": "Bearer", "expires_in": 3600}))
            .into_response()
    }
    Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(prm))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(state)
}

/// A token cache that remembers what was written.
#[derive(Default)]
struct Recorded(Mutex<HashMap<String, String>>);

impl TokenCache for Recorded {
    fn load(&self, server: &str) -> Result<Option<String>, String> {
        Ok(self.0.lock().unwrap().get(server).cloned())
    }
    fn save(&self, server: &str, document: &str) -> Result<(), String> {
        self.0.lock().unwrap().insert(server.to_owned(), document.to_owned());
        Ok(())
    }
    fn clear(&self, server: &str) -> Result<(), String> {
        self.0.lock().unwrap().remove(server);
        Ok(())
    }
}

/// charly's MCP endpoint requiring the token the test's authorization server issues, with that
/// server beside it (or no authorization server at all).
async fn protected(fault: Option<Fault>) -> (String, Arc<Mutex<u32>>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    drop(listener);
    let authorizations = Arc::new(Mutex::new(0));
    let mcp = mcp_router(
        &common::http::loopback().bearer_token(BearerToken::new("issued-t0ken").unwrap()),
        Arc::default(),
    );
    let router = match fault {
        Some(fault) => mcp.merge(authorization_server(As {
            base: base.clone(),
            fault,
            authorizations: authorizations.clone(),
        })),
        None => mcp,
    };
    let addr: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    (format!("{base}/mcp"), authorizations)
}

fn oauth(cache: &Arc<Recorded>) -> ConnectOptions {
    let oauth = OAuthOptions { cache: Some(cache.clone() as Arc<dyn TokenCache>), ..Default::default() };
    ConnectOptions { oauth, ..options(TlsOptions::default()) }
}

#[tokio::test]
async fn oauth_logs_in_unattended_and_keeps_the_token_per_server() {
    let (url, authorizations) = protected(Some(Fault::None)).await;
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();
    let cache = Arc::new(Recorded::default());
    let session = client::connect(&endpoint, &oauth(&cache)).await.unwrap();
    assert!(session.list_tools().await.unwrap().iter().any(|t| t.name == "echo"));
    session.close().await;
    assert_eq!(*authorizations.lock().unwrap(), 1);
    let kept = cache.0.lock().unwrap().get(&url).cloned().expect("a token kept for the server");
    assert!(kept.contains("issued-t0ken") && kept.contains("test-client"), "{kept}");
    // A second run uses the kept token: no new authorization.
    let session = client::connect(&endpoint, &oauth(&cache)).await.unwrap();
    session.list_tools().await.unwrap();
    session.close().await;
    assert_eq!(*authorizations.lock().unwrap(), 1);
    // --no-oauth: the 401 is reported, saying how to log in.
    let off =
        ConnectOptions { oauth: OAuthOptions { enabled: false, ..Default::default() }, ..oauth(&cache) };
    let err = client::connect(&endpoint, &off).await.err().unwrap().to_string();
    assert!(err.contains("requires authorization (HTTP 401)"), "{err}");
}

#[tokio::test]
async fn oauth_bad_input_names_the_server_and_the_step_and_writes_no_token() {
    let cases = [
        // A bearer token without OAuth metadata (the static --token of `mcp serve`).
        (None, "discovery"),
        (Some(Fault::RejectRegistration), "client registration"),
        (Some(Fault::TokenError), "token request"),
        (Some(Fault::ResourceElsewhere), "discovery"),
    ];
    for (fault, step) in cases {
        let (url, _) = protected(fault).await;
        let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();
        let cache = Arc::new(Recorded::default());
        let started = std::time::Instant::now();
        let err = match client::connect(&endpoint, &oauth(&cache)).await {
            Ok(_) => panic!("{fault:?}: connected"),
            Err(e) => e.to_string(),
        };
        assert!(started.elapsed() < Duration::from_secs(10), "{fault:?} took {:?}", started.elapsed());
        assert!(err.contains(&format!("authorizing at {url}: {step}")), "{fault:?}: {err}");
        assert!(!err.contains("issued-t0ken") && !err.contains("the-code"), "{fault:?}: {err}");
        assert!(cache.0.lock().unwrap().is_empty(), "{fault:?}: a token was written");
        // rmcp's labels once at most, never stacked (trial: "OAuth: OAuth ... Registration failed: ...
        // Registration failed").
        assert!(!err.contains("OAuth: OAuth") && !err.contains("Registration failed"), "{fault:?}: {err}");
        match fault {
            Some(Fault::TokenError) => assert!(err.contains("invalid_grant"), "{err}"),
            Some(Fault::RejectRegistration) => assert!(err.contains("invalid_client_metadata"), "{err}"),
            Some(Fault::ResourceElsewhere) => assert!(err.contains("other.example"), "{err}"),
            None => assert!(
                err.contains("the server asks for a bearer token but publishes no OAuth metadata")
                    && err.contains("give --header 'Authorization: Bearer TOKEN'"),
                "{err}"
            ),
            _ => {}
        }
    }
}

#[tokio::test]
async fn a_login_page_needs_a_person_unattended_and_waits_for_the_browser_on_a_terminal() {
    client::install_tls_provider();
    let (url, authorizations) = protected(Some(Fault::LoginPage)).await;
    let endpoint = Endpoint::url(&url, TransportKind::StreamableHttp).unwrap();
    let cache = Arc::new(Recorded::default());
    let hint = "log in once on a terminal (`charly check mcp ping --url U`)".to_owned();
    let unattended = ConnectOptions {
        oauth: OAuthOptions { login_hint: Some(hint), ..oauth(&cache).oauth },
        ..oauth(&cache)
    };
    let err = client::connect(&endpoint, &unattended).await.err().unwrap().to_string();
    assert!(err.contains(&format!("authorizing at {url}: authorization:")), "{err}");
    assert!(
        err.contains("wants a person to log in") && err.contains("charly check mcp ping --url U"),
        "{err}"
    );
    assert!(cache.0.lock().unwrap().is_empty());

    let terminal = ConnectOptions {
        oauth: OAuthOptions {
            interaction: client::Interaction::Terminal,
            // The person's browser: it opens the authorization URL (a login page here).
            browser: Some(Arc::new(|url: &str| {
                let url = url.to_owned();
                tokio::spawn(async move { reqwest::Client::new().get(url).send().await });
            })),
            ..oauth(&cache).oauth
        },
        ..oauth(&cache)
    };
    let session = client::connect(&endpoint, &terminal).await.unwrap();
    assert!(session.list_tools().await.unwrap().iter().any(|t| t.name == "echo"));
    session.close().await;
    assert_eq!(*authorizations.lock().unwrap(), 2);
    assert!(cache.0.lock().unwrap().contains_key(&url));
}
