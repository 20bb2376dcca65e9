//! Whether a login reuses the client charly registered in an earlier run (kept in the cached
//! document with its redirect URI's loopback port), against charly's own resource server and
//! the test's authorization server (tests/oauth_issuer), all on 127.0.0.1: a new registration
//! only when that port is taken (said in one line naming it), when the authorization server
//! refuses the client (invalid_client, its redirect_uri: once, then the login is tried once
//! more), or when the document is an earlier charly's, without the client.

#[path = "oauth_issuer/mod.rs"]
mod oauth_issuer;

use std::time::Duration;

use charly_mcp::client;
use oauth_issuer::client::{LoggedIn, endpoint, noticed, options};
use oauth_issuer::text;

/// The loopback port of a redirect URI.
fn port_of(redirect_uri: &str) -> u16 {
    url::Url::parse(redirect_uri).unwrap().port().unwrap()
}

/// The client's redirect port is held by another program: the step-up registers a new client
/// on a free port, says why in one line naming the port, and logs in; the new client is kept.
#[tokio::test]
async fn a_taken_redirect_port_registers_a_new_client_and_says_so() {
    let run = LoggedIn::start().await;
    let (issuer, url, cache) = (&run.issuer, run.url.clone(), &run.cache);
    let first = issuer.seen.lock().unwrap().registrations[0].clone();
    let port = port_of(&first.redirect_uris[0]);
    let held = std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port run 1 let go of");

    let (options, notices) = noticed(options(cache, Duration::from_secs(20)));
    let session = client::connect(&endpoint(&url), &options).await.unwrap();
    assert_eq!(text(&session.call_tool("wipe", None).await.unwrap()), "wiped");
    session.close().await;
    drop(held);
    let seen = std::mem::take(&mut *issuer.seen.lock().unwrap());
    assert_eq!(seen.registrations.len(), 2, "{seen:?}");
    let second = &seen.registrations[1];
    assert_ne!(port_of(&second.redirect_uris[0]), port, "{seen:?}");
    let asked = seen.authorizations.last().unwrap();
    assert!(asked.accepted && asked.client_id == second.client_id, "{seen:?}");
    let notices = notices.lock().unwrap().clone();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with(&format!(
            "{url}: the loopback port {port} of the redirect URI that its OAuth client {} was registered \
             with is taken (",
            first.client_id
        )) && notices[0].ends_with("): registering a new client"),
        "{notices:?}"
    );
    let kept = cache.registration(&url);
    assert_eq!(kept["client_id"], second.client_id.as_str(), "{kept}");
    assert_eq!(kept["redirect_uri"], second.redirect_uris[0].as_str(), "{kept}");
    run.stop().await;
}

/// The authorization server forgets the client charly registered: at the authorization
/// endpoint (400 invalid_client) the login registers once more and tries once more; at a
/// refresh (401 invalid_client) the login registers anew before asking.
#[tokio::test]
async fn a_client_the_authorization_server_forgot_is_registered_again_once() {
    let run = LoggedIn::start().await;
    let (issuer, url, cache) = (&run.issuer, run.url.clone(), &run.cache);
    let first = issuer.seen.lock().unwrap().registrations[0].clone();
    issuer.seen.lock().unwrap().forgotten.push(first.client_id.clone());

    // The step-up asks with the kept client, which the authorization endpoint refuses.
    let (options, notices) = noticed(options(cache, Duration::from_secs(20)));
    let session = client::connect(&endpoint(&url), &options).await.unwrap();
    assert_eq!(text(&session.call_tool("wipe", None).await.unwrap()), "wiped");
    session.close().await;
    let second = {
        let seen = issuer.seen.lock().unwrap();
        assert_eq!(seen.registrations.len(), 2, "{seen:?}");
        let second = seen.registrations[1].clone();
        // The new client is registered with the port that was bound for the login.
        assert_eq!(second.redirect_uris, first.redirect_uris, "{seen:?}");
        let asked: Vec<(&str, bool)> =
            seen.authorizations.iter().map(|a| (a.client_id.as_str(), a.accepted)).collect();
        assert_eq!(
            asked,
            [
                (first.client_id.as_str(), true),
                (first.client_id.as_str(), false),
                (second.client_id.as_str(), true)
            ],
            "{seen:?}"
        );
        second
    };
    let said = notices.lock().unwrap().clone();
    assert_eq!(
        said,
        [format!(
            "{url}: its authorization server no longer accepts the OAuth client {} that charly registered \
             (its authorization endpoint answered invalid_client): registering a new client",
            first.client_id
        )]
    );
    assert_eq!(cache.registration(&url)["client_id"], second.client_id.as_str());

    // Forgotten again, and the cached token expired: the refresh is refused with
    // invalid_client, and the login registers a new client without trying the old one.
    issuer.seen.lock().unwrap().forgotten.push(second.client_id.clone());
    cache.age(&url);
    notices.lock().unwrap().clear();
    let session = client::connect(&endpoint(&url), &options).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("mcp:read"));
    session.close().await;
    let seen = std::mem::take(&mut *issuer.seen.lock().unwrap());
    assert_eq!(seen.registrations.len(), 3, "{seen:?}");
    let last = seen.authorizations.last().unwrap();
    assert!(last.accepted && last.client_id == seen.registrations[2].client_id, "{seen:?}");
    assert_eq!(seen.authorizations.len(), 4, "the forgotten client was tried: {seen:?}");
    assert_eq!(seen.grants[seen.grants.len() - 2..], ["refresh_token", "authorization_code"], "{seen:?}");
    let said = notices.lock().unwrap().clone();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("(its token endpoint answered a refresh with invalid_client)"), "{said:?}");
    run.stop().await;
}

/// The authorization server no longer takes the redirect URI the kept client was registered
/// with (its record of the client changed): one new registration, one more try. A server
/// that refuses the new client too ends the login with its answer, after that one
/// registration.
#[tokio::test]
async fn a_refused_redirect_uri_registers_again_once_and_only_once() {
    let run = LoggedIn::start().await;
    let (issuer, url, cache) = (&run.issuer, run.url.clone(), &run.cache);
    issuer.seen.lock().unwrap().registrations[0].redirect_uris = vec!["http://127.0.0.1:1/elsewhere".into()];

    let (options, notices) = noticed(options(cache, Duration::from_secs(20)));
    let session = client::connect(&endpoint(&url), &options).await.unwrap();
    assert_eq!(text(&session.call_tool("wipe", None).await.unwrap()), "wiped");
    session.close().await;
    {
        let seen = issuer.seen.lock().unwrap();
        assert_eq!(seen.registrations.len(), 2, "{seen:?}");
        let accepted: Vec<bool> = seen.authorizations.iter().map(|a| a.accepted).collect();
        assert_eq!(accepted, [true, false, true], "{seen:?}");
    }
    let said = notices.lock().unwrap().clone();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("(its authorization endpoint answered invalid_request)"), "{said:?}");

    // Both the kept client and the next one it registers are refused: one new registration.
    let kept = cache.registration(&url)["client_id"].as_str().unwrap().to_owned();
    issuer.seen.lock().unwrap().forgotten.extend([kept, "client-3".to_owned()]);
    cache.age(&url);
    let refused = client::connect(&endpoint(&url), &options).await.err().unwrap().to_string();
    let seen = std::mem::take(&mut *issuer.seen.lock().unwrap());
    assert_eq!(seen.registrations.len(), 3, "{seen:?}");
    assert_eq!(seen.registrations[2].client_id, "client-3", "{seen:?}");
    assert!(
        refused.contains(&format!("authorizing at {url}: authorization: the authorization endpoint at "))
            && refused.contains("refused the request (HTTP 400: invalid_client: unknown client)"),
        "{refused}"
    );
    run.stop().await;
}

/// A document an earlier charly cached (tokens and client id, no registration) still logs in:
/// the step-up registers anew, as before, and from then on the client is kept.
#[tokio::test]
async fn an_earlier_charlys_cached_document_still_logs_in() {
    let run = LoggedIn::start().await;
    let (issuer, url, cache) = (&run.issuer, run.url.clone(), &run.cache);
    cache.edit(&url, |value| {
        assert!(value.as_object_mut().unwrap().remove("registration").is_some(), "{value}");
    });
    let (options, notices) = noticed(options(cache, Duration::from_secs(20)));
    let session = client::connect(&endpoint(&url), &options).await.unwrap();
    assert!(text(&session.call_tool("whoami", None).await.unwrap()).contains("\"mcp:read\""));
    assert_eq!(text(&session.call_tool("wipe", None).await.unwrap()), "wiped");
    session.close().await;
    let seen = std::mem::take(&mut *issuer.seen.lock().unwrap());
    assert_eq!(seen.registrations.len(), 2, "{seen:?}");
    let asked = seen.authorizations.last().unwrap();
    assert!(asked.accepted && asked.client_id == seen.registrations[1].client_id, "{seen:?}");
    assert!(notices.lock().unwrap().is_empty(), "{:?}", notices.lock().unwrap());
    let kept = cache.registration(&url);
    assert_eq!(kept["client_id"], seen.registrations[1].client_id.as_str(), "{kept}");
    assert_eq!(kept["redirect_uri"], seen.registrations[1].redirect_uris[0].as_str(), "{kept}");
    run.stop().await;
}
