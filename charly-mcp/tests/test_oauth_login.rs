//! charly's OAuth client logging in to charly's own resource server (`HttpOptions::oauth`) at
//! the test's authorization server (tests/oauth_issuer: dynamic registration, an authorization
//! endpoint that redirects on its own and refuses a redirect_uri the client did not register,
//! ES256 access tokens), all on 127.0.0.1: the scopes a first login asks for, the step-up of a
//! later run whose token came from the cache (with the client registered before, on its
//! loopback port: tests/test_oauth_reuse.rs has when it registers anew), and the errors of what cannot be fixed by logging in (the server's
//! `error_description` shown, never the token).

#[path = "oauth_issuer/mod.rs"]
mod oauth_issuer;

use std::sync::Arc;
use std::time::Duration;

use charly_mcp::client::{self, ConnectOptions, Protocol};
use oauth_issuer::client::{Recorded, endpoint, noticed, options};
use oauth_issuer::{Grant, Issuer, serve, text};

#[tokio::test]
async fn a_later_run_steps_up_from_a_cached_token_with_its_own_redirect() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let cache = Arc::new(Recorded::default());

    // Run 1 reads: the challenge asks for mcp:read, and so does the login (the resource also
    // supports mcp:write, which rmcp's default selection added: trial finding).
    let session = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20))).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("\"mcp:read\""));
    session.close().await;
    let registered = {
        let seen = issuer.seen.lock().unwrap();
        assert_eq!(seen.registrations.len(), 1, "{seen:?}");
        assert_eq!(seen.authorizations.len(), 1, "{seen:?}");
        assert_eq!(seen.authorizations[0].scope, "mcp:read", "{seen:?}");
        seen.registrations[0].clone()
    };
    // The cached document keeps the client with its redirect URI (and authorization server).
    let kept = cache.registration(&url);
    assert_eq!(kept["client_id"], registered.client_id.as_str(), "{kept}");
    assert_eq!(kept["redirect_uri"], registered.redirect_uris[0].as_str(), "{kept}");
    assert_eq!(kept["token_endpoint"], format!("{}/token", issuer.url), "{kept}");

    // Run 2 starts on the cached token and calls a destructive tool: 403 insufficient_scope,
    // step-up. It reuses run 1's client on the loopback port that client was registered with:
    // no registration, the same client_id and redirect_uri.
    let (options, notices) = noticed(options(&cache, Duration::from_secs(20)));
    let session = client::connect(&endpoint(&url), &options).await.unwrap();
    assert_eq!(issuer.seen.lock().unwrap().authorizations.len(), 1, "the cached token was not used");
    assert_eq!(text(&session.call_tool("wipe", None).await.unwrap()), "wiped");
    session.close().await;
    let seen = std::mem::take(&mut *issuer.seen.lock().unwrap());
    assert_eq!(seen.registrations.len(), 1, "the step-up registered a new client: {seen:?}");
    assert_eq!(seen.authorizations.len(), 2, "{seen:?}");
    let asked = &seen.authorizations[1];
    assert!(asked.accepted, "{seen:?}");
    assert_eq!(asked.client_id, registered.client_id, "{seen:?}");
    assert_eq!(asked.redirect_uri, registered.redirect_uris[0], "{seen:?}");
    let mut scopes: Vec<&str> = asked.scope.split(' ').collect();
    scopes.sort_unstable();
    assert_eq!(scopes, ["mcp:read", "mcp:write"], "{seen:?}");
    assert!(notices.lock().unwrap().is_empty(), "{:?}", notices.lock().unwrap());
    assert_eq!(cache.registration(&url)["client_id"], registered.client_id.as_str());
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn what_logging_in_cannot_fix_is_said_with_the_servers_words() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();

    // The authorization server never grants mcp:write: the step-up gives up, naming the server
    // and the scope the request needs.
    *issuer.grant.lock().unwrap() = Grant::Only("mcp:read");
    let cache = Arc::new(Recorded::default());
    let session = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20))).await.unwrap();
    let err = session.call_tool("wipe", None).await.unwrap_err().to_string();
    session.close().await;
    assert!(err.contains(&format!("authorizing at {url}: step-up")), "{err}");
    assert!(
        err.contains("needs scope mcp:read mcp:write, which the authorization server did not grant"),
        "{err}"
    );
    assert!(err.contains("calling it needs scope mcp:write"), "{err}");
    assert!(!err.contains("OAuth: OAuth") && !err.contains("eyJ"), "{err}");

    // Tokens for another resource: the server's description of the 401 reaches the error.
    *issuer.grant.lock().unwrap() = Grant::WrongAudience;
    let cache = Arc::new(Recorded::default());
    let err = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20)))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains(&format!("authorizing at {url}")), "{err}");
    assert!(err.contains("the server says: the access token is for another resource"), "{err}");
    assert!(!err.contains("eyJ"), "{err}");

    // A token given with --header: the server's 401 and 403 descriptions, and the URL.
    let claims = |scope: &str, exp: i64| {
        let mut claims = issuer.claims(&url, scope);
        claims["exp"] = serde_json::json!(oauth_issuer::now() as i64 + exp);
        claims
    };
    let with_token =
        |token: &str| endpoint(&url).with_headers([("Authorization".to_owned(), format!("Bearer {token}"))]);
    let expired = issuer.token(&claims("mcp:read", -3600));
    let plain = ConnectOptions { protocol: Protocol::Initialize, ..Default::default() };
    let err = client::connect(&with_token(&expired), &plain).await.err().unwrap().to_string();
    assert!(
        err.contains(&format!(
            "cannot connect to {url}: the server refused the token it was sent (HTTP 401 invalid_token"
        )),
        "{err}"
    );
    assert!(err.contains("the access token has expired (exp)"), "{err}");
    assert!(!err.contains(&expired) && !err.contains("eyJ"), "{err}");
    let reader = issuer.token(&claims("mcp:read", 300));
    let session = client::connect(&with_token(&reader), &plain).await.unwrap();
    let err = session.call_tool("wipe", None).await.unwrap_err().to_string();
    session.close().await;
    assert!(
        err.contains(&format!(
            "{url} refused the credentials given (HTTP 403 insufficient_scope): the request needs scope \
             mcp:read mcp:write"
        )),
        "{err}"
    );
    assert!(!err.contains("eyJ"), "{err}");
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn a_hanging_authorization_endpoint_is_named_not_the_mcp_server() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    *issuer.grant.lock().unwrap() = Grant::Hang;
    let cache = Arc::new(Recorded::default());
    let started = std::time::Instant::now();
    let err = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(2)))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(
        err.contains(&format!(
            "authorizing at {url}: its authorization server's authorization endpoint {}/authorize",
            issuer.url
        )),
        "{err}"
    );
    assert!(err.contains("did not answer within 2s"), "{err}");
    assert!(!err.contains(&format!("no answer from {url}")), "{err}");
    assert!(cache.0.lock().unwrap().is_empty());
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

/// The access and refresh tokens of the cached document for `url`.
fn cached_tokens(cache: &Recorded, url: &str) -> (String, String) {
    let document = cache.0.lock().unwrap().get(url).cloned().expect("a cached document");
    let document: serde_json::Value = serde_json::from_str(&document).unwrap();
    let field = |name: &str| document["token_response"][name].as_str().unwrap_or_default().to_owned();
    (field("access_token"), field("refresh_token"))
}

/// How many token requests of `grant_type` the authorization server took.
fn grants(issuer: &Issuer, grant_type: &str) -> usize {
    issuer.seen.lock().unwrap().grants.iter().filter(|g| *g == grant_type).count()
}

#[tokio::test]
async fn an_expired_token_is_refreshed_not_logged_in_again() {
    let issuer = Issuer::start().await;
    issuer.lifetime.store(3, std::sync::atomic::Ordering::SeqCst);
    let handle = serve(&issuer).await;
    let url = handle.url();
    let cache = Arc::new(Recorded::default());

    // Run 1 logs in and gets a 3 s token with a refresh token.
    let session = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20))).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("\"mcp:read\""));
    assert_eq!(grants(&issuer, "authorization_code"), 1);
    let (first, first_refresh) = cached_tokens(&cache, &url);
    assert!(first_refresh.starts_with("refresh-"), "no refresh token was cached");

    // The token expires during the session: the next call refreshes it.
    let before = grants(&issuer, "refresh_token");
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("\"mcp:read\""));
    session.close().await;
    assert!(grants(&issuer, "refresh_token") > before, "{:?}", issuer.seen.lock().unwrap().grants);
    let (second, second_refresh) = cached_tokens(&cache, &url);
    assert_ne!(second, first, "the refreshed token did not replace the cached one");
    assert_ne!(second_refresh, first_refresh, "the rotated refresh token was not kept");

    // Run 2 starts from the cache with an expired token: refresh, not a login.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let before = grants(&issuer, "refresh_token");
    let session = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20))).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("\"mcp:read\""));
    session.close().await;
    assert!(grants(&issuer, "refresh_token") > before, "{:?}", issuer.seen.lock().unwrap().grants);
    let (third, _) = cached_tokens(&cache, &url);
    {
        let seen = issuer.seen.lock().unwrap();
        assert_eq!(seen.registrations.len(), 1, "{seen:?}");
        assert_eq!(seen.authorizations.len(), 1, "{seen:?}");
        assert_eq!(seen.grants.iter().filter(|g| *g == "authorization_code").count(), 1, "{seen:?}");
        assert_eq!(seen.issued.last(), Some(&third), "the cache does not hold the last token issued");
    }
    assert!(third != first && third != second);
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

#[tokio::test]
async fn a_refused_refresh_logs_in_again_or_says_why_it_cannot() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    let cache = Arc::new(Recorded::default());
    let session = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20))).await.unwrap();
    session.close().await;
    let (first, _) = cached_tokens(&cache, &url);

    // The cached token is an hour old (expired for the client) and the authorization server
    // revoked its refresh token; the endpoint redirects on its own: one refused refresh, then
    // a new login.
    issuer.refuse_refresh.store(true, std::sync::atomic::Ordering::SeqCst);
    cache.age(&url);
    let session = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20))).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("\"mcp:read\""));
    session.close().await;
    {
        let seen = issuer.seen.lock().unwrap();
        assert_eq!(seen.grants, ["authorization_code", "refresh_token", "authorization_code"], "{seen:?}");
        assert_eq!(seen.authorizations.len(), 2, "{seen:?}");
        let (second, _) = cached_tokens(&cache, &url);
        assert_ne!(second, first);
        assert_eq!(seen.issued.last(), Some(&second), "the new login's token was not cached");
    }

    // Refused again, and now the authorization endpoint wants a person: the error names the
    // server, the refused refresh and what to do.
    *issuer.grant.lock().unwrap() = Grant::Person;
    cache.age(&url);
    let err = client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20)))
        .await
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains(&format!("authorizing at {url}: token refresh: ")), "{err}");
    assert!(err.contains("refused the cached refresh token (invalid_grant: expired or revoked)"), "{err}");
    assert!(err.contains("wants a person to log in"), "{err}");
    assert!(err.contains("run the same command once on a terminal"), "{err}");
    assert!(!err.contains("eyJ") && !err.contains("refresh-"), "{err}");
    assert_eq!(grants(&issuer, "refresh_token"), 2);
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}

/// Issue 20 LOW 5: a pre-registered client with a secret authenticates at the token endpoint
/// as the authorization server's metadata offers (RFC 8414 section 2): this one offers only
/// `none`, so the secret is not sent (rmcp sent it with HTTP Basic).
#[tokio::test]
async fn a_client_secret_is_sent_only_as_the_metadata_offers() {
    let issuer = Issuer::start().await;
    let handle = serve(&issuer).await;
    let url = handle.url();
    issuer.seen.lock().unwrap().preregistered.push("pre-1".to_owned());
    let cache = Arc::new(Recorded::default());
    let mut options = options(&cache, Duration::from_secs(20));
    options.oauth.client_id = Some("pre-1".to_owned());
    options.oauth.client_secret = Some("pre-secret".to_owned());
    let session = client::connect(&endpoint(&url), &options).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("\"mcp:read\""));
    session.close().await;
    {
        let seen = issuer.seen.lock().unwrap();
        assert!(seen.registrations.is_empty(), "{seen:?}");
        assert_eq!(seen.authorizations.len(), 1, "{seen:?}");
        assert_eq!(seen.token_auth, ["none"], "{seen:?}");
    }
    handle.shutdown().await.unwrap();
    issuer.stop.cancel();
}
