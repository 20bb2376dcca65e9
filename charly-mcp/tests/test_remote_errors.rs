//! Remote failures in words (findings of a fresh-user trial of issue 20), against charly's
//! test server on 127.0.0.1: a redirect to another origin is refused before the headers go
//! there, a 503's explanation reaches the error, a refused `Authorization` header is said as
//! such, and `https://` to a port that speaks plain HTTP says so.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::response::IntoResponse as _;
use charly_mcp::client::{self, ConnectOptions, Endpoint, OAuthOptions, Protocol, TransportKind};
use charly_mcp::server::{BearerToken, HttpOptions};
use tokio_util::sync::CancellationToken;

fn options() -> ConnectOptions {
    ConnectOptions { timeout: Duration::from_secs(10), protocol: Protocol::Initialize, ..Default::default() }
}

/// Serves `router` on 127.0.0.1; the task ends with the test's runtime.
async fn serve(router: Router) -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await });
    port
}

async fn connect_err(endpoint: &Endpoint, options: &ConnectOptions) -> String {
    match client::connect(endpoint, options).await {
        Ok(_) => panic!("{endpoint:?}: connected"),
        Err(e) => e.to_string(),
    }
}

/// Trial finding 5: `--header` values went to the origin a server redirected to.
#[tokio::test]
async fn headers_never_follow_a_redirect_to_another_origin() {
    // The other origin records what reaches it.
    let reached: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = reached.clone();
    let elsewhere = serve(Router::new().fallback(move |request: Request| {
        let seen = seen.clone();
        async move {
            let headers: Vec<String> = request.headers().iter().map(|(k, v)| format!("{k}: {v:?}")).collect();
            seen.lock().unwrap().push(headers.join(", "));
            axum::http::StatusCode::NOT_FOUND
        }
    }))
    .await;
    // The server: charly's endpoint at /mcp, /old/mcp redirecting to it, /moved to the other
    // origin (307 keeps the method and body).
    let target = format!("http://127.0.0.1:{elsewhere}/mcp");
    let redirect = |to: String| {
        move || async move { (axum::http::StatusCode::TEMPORARY_REDIRECT, [("location", to)]).into_response() }
    };
    let router = common::server()
        .http_router(&common::http::loopback(), CancellationToken::new())
        .route("/old/mcp", axum::routing::any(redirect("/mcp".to_owned())))
        .route("/moved", axum::routing::any(redirect(target)));
    let port = serve(router).await;
    let with_key = |path: &str| {
        Endpoint::url(&format!("http://127.0.0.1:{port}{path}"), TransportKind::StreamableHttp)
            .unwrap()
            .with_headers([("X-Api-Key".to_owned(), "k-SECRET-redirect".to_owned())])
    };

    let err = connect_err(&with_key("/moved"), &options()).await;
    assert!(
        err.contains(&format!(
            "the server redirected from http://127.0.0.1:{port} to another origin, http://127.0.0.1:{elsewhere}"
        )),
        "{err}"
    );
    assert!(err.contains("does not follow redirects to another origin"), "{err}");
    assert!(!err.contains("k-SECRET"), "{err}");
    assert!(
        reached.lock().unwrap().is_empty(),
        "the other origin was reached: {:?}",
        reached.lock().unwrap()
    );

    // Within one origin the redirect is followed, headers and all.
    let session = client::connect(&with_key("/old/mcp"), &options()).await.unwrap();
    assert!(session.list_tools().await.unwrap().iter().any(|t| t.name == "echo"));
    session.close().await;
}

/// Trial finding 11: the resource server's 503 said why (it cannot reach its issuer's keys);
/// the client printed only the status.
#[tokio::test]
async fn a_503_says_what_the_server_said() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let issuer = format!("http://127.0.0.1:{closed}");
    let guarded = HttpOptions::default()
        .listen(([127, 0, 0, 1], 0).into())
        .oauth(charly_mcp::server::OAuthOptions::new(&issuer));
    let handle = common::server().serve_http(guarded).await.unwrap();
    let endpoint = Endpoint::url(&handle.url(), TransportKind::StreamableHttp).unwrap().with_headers([(
        "Authorization".to_owned(),
        "Bearer eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ.e30.c2ln".to_owned(),
    )]);
    let err = connect_err(&endpoint, &options()).await;
    assert!(
        err.contains("HTTP status 503 Service Unavailable from the server (Retry-After: 5): it says: "),
        "{err}"
    );
    assert!(
        err.contains("this server cannot check access tokens now: cannot find the issuer's keys")
            && err.contains(&issuer),
        "{err}"
    );
    assert!(!err.contains("eyJ"), "{err}");
    handle.shutdown().await.unwrap();
}

/// Trial findings 12 and 13: a wrong `Authorization` header got "(once on a terminal:
/// `charly check mcp ping --url the server`)"; `https://` to a plain-HTTP port got a cut-off
/// "Send message error Transport error: Client error: ...".
#[tokio::test]
async fn a_refused_header_and_https_to_plain_http_are_said_as_such() {
    let handle =
        common::http::start(common::http::loopback().bearer_token(BearerToken::new("right").unwrap())).await;
    let url = handle.url();
    let wrong = Endpoint::url(&url, TransportKind::StreamableHttp)
        .unwrap()
        .with_headers([("Authorization".to_owned(), "Bearer wr0ng".to_owned())]);
    let err = connect_err(&wrong, &options()).await;
    assert!(err.contains("the server refused the Authorization header given (HTTP 401)"), "{err}");
    assert!(!err.contains("wr0ng") && !err.contains("--url the server"), "{err}");

    let off = ConnectOptions { oauth: OAuthOptions { enabled: false, ..Default::default() }, ..options() };
    let err = connect_err(&Endpoint::url(&url, TransportKind::StreamableHttp).unwrap(), &off).await;
    assert!(
        err.contains("requires authorization (HTTP 401), and OAuth logins are off (--no-oauth)"),
        "{err}"
    );
    assert!(!err.contains("--url the server"), "{err}");

    let https = url.replacen("http://", "https://", 1);
    let err = connect_err(&Endpoint::url(&https, TransportKind::StreamableHttp).unwrap(), &options()).await;
    assert!(
        err.contains(&format!("cannot connect to {https}: TLS: the server did not answer the TLS handshake")),
        "{err}"
    );
    assert!(err.contains("Then use an http:// URL") && !err.contains("Send message error"), "{err}");
    handle.shutdown().await.unwrap();
}

/// Trial finding (low): a bare 401, without `WWW-Authenticate` (as MCP 2025-03-26 servers
/// answer), was not tried for OAuth.
#[tokio::test]
async fn a_bare_401_is_tried_for_oauth() {
    let port = serve(Router::new().fallback(|| async { axum::http::StatusCode::UNAUTHORIZED })).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let err = connect_err(&Endpoint::url(&url, TransportKind::StreamableHttp).unwrap(), &options()).await;
    assert!(
        err.contains(&format!("authorizing at {url}: discovery: the server asks for a bearer token")),
        "{err}"
    );
    assert!(err.contains("publishes no OAuth metadata"), "{err}");
    assert!(err.contains("no resource_metadata in its WWW-Authenticate"), "{err}");
}

/// Trial finding (low): a challenge whose `resource_metadata` itself answers 401 was said to
/// have no `resource_metadata`.
#[tokio::test]
async fn a_resource_metadata_that_answers_401_is_named() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let metadata = format!("http://127.0.0.1:{port}/prm");
    let challenge = format!(r#"Bearer resource_metadata="{metadata}""#);
    let app = Router::new().fallback(move || {
        let challenge = challenge.clone();
        async move { (axum::http::StatusCode::UNAUTHORIZED, [("www-authenticate", challenge)]) }
    });
    tokio::spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://127.0.0.1:{port}/mcp");
    let err = connect_err(&Endpoint::url(&url, TransportKind::StreamableHttp).unwrap(), &options()).await;
    assert!(
        err.contains(&format!(
            "the resource_metadata its WWW-Authenticate names, {metadata}, gave no JSON document"
        )),
        "{err}"
    );
    assert!(!err.contains("no resource_metadata"), "{err}");
}
