//! The parts of a login around rmcp's: metadata checks rmcp lacks (a resource on another origin,
//! the 2025-03-26 root metadata), the redirect back (read from a `Location`, or awaited on a
//! loopback listener), and the browser.

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use rmcp::transport::auth::AuthorizationCallback;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::flow::failure;

/// The protected resource metadata the server publishes (RFC 9728), at the challenge's
/// `resource_metadata`, else the well-known paths (path-suffixed, then the root): where it was
/// found and the document. `None` when none answers with JSON.
pub(super) async fn protected_resource(
    http: &reqwest::Client,
    server: &str,
    challenge: &str,
) -> Option<(url::Url, serde_json::Value)> {
    let base = url::Url::parse(server).ok()?;
    let mut candidates = Vec::new();
    if let Some(url) = challenge_param(challenge, "resource_metadata").and_then(|u| base.join(&u).ok()) {
        candidates.push(url);
    }
    let path = base.path().trim_end_matches('/');
    for suffix in [path, ""] {
        if let Ok(url) = base.join(&format!("/.well-known/oauth-protected-resource{suffix}")) {
            candidates.push(url);
        }
    }
    for url in candidates {
        let Ok(response) = http.get(url.clone()).send().await else { continue };
        if !response.status().is_success() {
            continue;
        }
        let Ok(document) = response.json::<serde_json::Value>().await else { continue };
        return Some((url, document));
    }
    None
}

/// The first authorization server a protected resource metadata document names.
pub(super) fn first_authorization_server(document: &serde_json::Value) -> Option<String> {
    let first = document.get("authorization_servers")?.as_array()?.first()?.as_str()?;
    Some(crate::client::error::truncate(first, 200))
}

/// Why the protected resource metadata `found` (see [`protected_resource`]) cannot be
/// `server`'s: its `resource` is on another origin. `None` when there is none, or it names
/// this origin.
pub(super) fn foreign_resource(
    server: &str,
    found: Option<&(url::Url, serde_json::Value)>,
) -> Option<String> {
    let base = url::Url::parse(server).ok()?;
    let (url, document) = found?;
    let resource = document.get("resource").and_then(serde_json::Value::as_str)?;
    let same = url::Url::parse(resource).is_ok_and(|r| r.origin() == base.origin());
    (!same).then(|| {
        format!(
            "the protected resource metadata at {url} names the resource {}, on another origin than the \
             server: refused (a server may only ask for tokens for itself)",
            crate::client::error::truncate(resource, 200)
        )
    })
}

/// Why discovery failed, in words: a metadata request that failed says at which URL and why
/// (a certificate refused, nothing listening, no answer in time), where rmcp's text names only
/// the URL.
pub(super) fn discovery_failure(error: &rmcp::transport::auth::AuthError) -> String {
    use rmcp::transport::auth::AuthError;
    if let AuthError::DiscoveryRequestFailed { url, source } = error {
        let host = host_of(url.as_str());
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(source.as_ref());
        while let Some(e) = cause {
            if let Some(e) = e.downcast_ref::<reqwest::Error>() {
                return format!(
                    "the OAuth metadata at {url} cannot be fetched: {}",
                    crate::client::plain::request_failure(&host, e)
                );
            }
            cause = e.source();
        }
        return format!(
            "the OAuth metadata at {url} cannot be fetched: {}",
            crate::client::error::error_chain(source.as_ref())
        );
    }
    error.to_string()
}

/// The 2025-03-26 server's own metadata, `/.well-known/oauth-authorization-server` at its root,
/// when every endpoint it names is on the MCP server's origin (the 2025-03-26 spec's server is
/// its own authorization server; another origin is refused, as the issuer check would).
pub(super) async fn legacy_metadata(
    http: &reqwest::Client,
    server: &str,
) -> Option<rmcp::transport::auth::AuthorizationMetadata> {
    let base = url::Url::parse(server).ok()?;
    let url = base.join("/.well-known/oauth-authorization-server").ok()?;
    let response = http.get(url).send().await.ok()?;
    if !response.status().is_success() {
        return None;
    }
    let metadata: rmcp::transport::auth::AuthorizationMetadata =
        serde_json::from_slice(&response.bytes().await.ok()?).ok()?;
    let same_origin = |endpoint: &str| url::Url::parse(endpoint).is_ok_and(|u| u.origin() == base.origin());
    let registration = metadata.registration_endpoint.as_deref().is_none_or(same_origin);
    (same_origin(&metadata.authorization_endpoint) && same_origin(&metadata.token_endpoint) && registration)
        .then_some(metadata)
}

/// The callback's code and state, or the authorization server's own refusal.
pub(super) fn callback_from(
    server: &str,
    url: &str,
) -> Result<AuthorizationCallback, StreamableHttpError<reqwest::Error>> {
    if let Ok(parsed) = url::Url::parse(url) {
        let param = |name: &str| parsed.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        if let Some(error) = param("error") {
            let description = param("error_description").map(|d| format!(": {d}")).unwrap_or_default();
            return Err(failure(
                server,
                "authorization",
                format!("the authorization server refused: {error}{description}"),
            ));
        }
    }
    AuthorizationCallback::from_redirect_url(url).map_err(|e| failure(server, "authorization", e))
}

/// The `scope` of a `WWW-Authenticate` challenge.
pub(super) fn challenge_scope(challenge: &str) -> Option<String> {
    challenge_param(challenge, "scope")
}

/// The parameter `name` of a `WWW-Authenticate: Bearer` challenge (RFC 6750 section 3:
/// `key="quoted value"` or `key=token`, separated by commas), unquoted; `None` when absent.
pub(crate) fn challenge_param(challenge: &str, name: &str) -> Option<String> {
    let text = challenge.trim();
    // The scheme, then the parameters.
    let mut rest = match text.split_once(char::is_whitespace) {
        Some((scheme, params)) if !scheme.contains('=') => params,
        Some(_) => text,
        None => return None,
    };
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        let (key, after) = rest.split_once('=')?;
        let key = key.trim();
        let after = after.trim_start();
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((at, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        end = at + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end.min(quoted.len())..])
        } else {
            let stop = after.find([',', ' ']).unwrap_or(after.len());
            (after[..stop].to_owned(), &after[stop..])
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value);
        }
        if next.is_empty() {
            return None;
        }
        rest = next;
    }
}

pub(super) fn host_of(url: &str) -> String {
    url::Url::parse(url)
        .ok()
        .and_then(|u| {
            u.host_str().map(|h| match u.port() {
                Some(port) => format!("{h}:{port}"),
                None => h.to_owned(),
            })
        })
        .unwrap_or_else(|| "the authorization server".to_owned())
}

/// A listener on 127.0.0.1: on `port` when the client was registered with it, else any.
pub(super) async fn bind_loopback(port: Option<u16>) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).await
}

/// Opens `url` with `$BROWSER`, or in the desktop's browser when there is one (`xdg-open`,
/// `open`); silent otherwise
/// (the URL is printed anyway).
pub(super) fn open_browser(url: &str) {
    if let Some(browser) = std::env::var_os("BROWSER").filter(|b| !b.is_empty()) {
        let _ = std::process::Command::new(browser)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        return;
    }
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    let has_display = cfg!(target_os = "macos")
        || std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if has_display {
        let _ = std::process::Command::new(opener)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// The `state` parameter of an authorization URL (what its redirect must carry back).
pub(super) fn state_of(auth_url: &str) -> Option<String> {
    let url = url::Url::parse(auth_url).ok()?;
    url.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned())
}

/// Waits for `GET /callback?...` carrying `state` on `listener`, answers it with a short page
/// (the login goes on, or the authorization server refused it: the terminal says more), and
/// returns its path and query. A callback with another state (or none) is not this login's
/// redirect (a forged or stale one: anything on this machine can reach the port) and gets a
/// 400 page, and the wait goes on; other requests (a browser's `/favicon.ico`) get a 404; a
/// request line over 8 KiB is refused.
pub(super) async fn wait_for_redirect(
    listener: &tokio::net::TcpListener,
    state: Option<&str>,
) -> std::io::Result<String> {
    loop {
        let (mut stream, _) = listener.accept().await?;
        let mut buffer = Vec::with_capacity(1024);
        let mut chunk = [0u8; 1024];
        while !buffer.windows(4).any(|w| w == b"\r\n\r\n") && buffer.len() < 8192 {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let text = String::from_utf8_lossy(&buffer);
        let target =
            text.lines().next().and_then(|line| line.strip_prefix("GET ")).and_then(|r| r.split(' ').next());
        let Some(path) = target.filter(|path| path.starts_with("/callback?")) else {
            let _ = stream
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
            continue;
        };
        let query = url::form_urlencoded::parse(&path.as_bytes()["/callback?".len()..]);
        let param = |name: &str| query.clone().find(|(k, _)| k == name).map(|(_, v)| v.into_owned());
        let (status, page, done) = if state.is_some() && param("state").as_deref() != state {
            (
                "400 Bad Request",
                "This is not the redirect of charly's login (its state does not match); charly is still waiting for it.",
                false,
            )
        } else if param("error").is_some() {
            (
                "200 OK",
                "The authorization server refused the login; charly says why in the terminal. You can close this window.",
                true,
            )
        } else {
            (
                "200 OK",
                "charly got the authorization and finishes the login in the terminal. You can close this window.",
                true,
            )
        };
        let body = format!("<!doctype html><title>charly</title><p>{page}</p>");
        let reply = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(reply.as_bytes()).await;
        if done {
            return Ok(path.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_scopes_are_read() {
        let challenge =
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="x""#;
        assert_eq!(challenge_scope(challenge).as_deref(), Some("mcp:basic mcp:write"));
        assert_eq!(challenge_scope("Bearer"), None);
        let challenge = r#"Bearer error="invalid_token", error_description="the token has \"expired\", scope=x", resource_metadata=https://a/b"#;
        assert_eq!(challenge_param(challenge, "error").as_deref(), Some("invalid_token"));
        assert_eq!(
            challenge_param(challenge, "error_description").as_deref(),
            Some(r#"the token has "expired", scope=x"#)
        );
        assert_eq!(challenge_param(challenge, "scope"), None);
        assert_eq!(challenge_param(challenge, "resource_metadata").as_deref(), Some("https://a/b"));
    }

    #[tokio::test]
    async fn the_loopback_redirect_is_awaited_and_answered() {
        let listener = bind_loopback(None).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { wait_for_redirect(&listener, Some("s")).await });
        let http = crate::client::http_client(&crate::client::TlsOptions::default(), true).unwrap();
        let miss = http.get(format!("http://127.0.0.1:{port}/favicon.ico")).send().await.unwrap();
        assert_eq!(miss.status(), 404);
        // Another login's redirect (or a forged one) does not end this one (trial finding: it
        // showed "logged in" and aborted the login).
        for forged in
            ["/callback?code=abc&state=WRONG", "/callback?code=abc", "/callback?error=access_denied"]
        {
            let wrong = http.get(format!("http://127.0.0.1:{port}{forged}")).send().await.unwrap();
            assert_eq!(wrong.status(), 400, "{forged}");
            assert!(wrong.text().await.unwrap().contains("not the redirect of charly's login"), "{forged}");
        }
        assert!(!waiting.is_finished());
        let hit = http.get(format!("http://127.0.0.1:{port}/callback?code=c&state=s")).send().await.unwrap();
        assert_eq!(hit.status(), 200);
        assert!(hit.text().await.unwrap().contains("finishes the login in the terminal"));
        let path = waiting.await.unwrap().unwrap();
        assert_eq!(path, "/callback?code=c&state=s");
        let callback = callback_from("S", &format!("http://127.0.0.1{path}")).unwrap();
        assert_eq!((callback.code.as_str(), callback.csrf_token.as_str()), ("c", "s"));
        // The authorization server's refusal, with this login's state: the page does not say
        // "logged in".
        let listener = bind_loopback(None).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { wait_for_redirect(&listener, Some("s")).await });
        let denied = http
            .get(format!("http://127.0.0.1:{port}/callback?error=access_denied&state=s"))
            .send()
            .await
            .unwrap();
        let page = denied.text().await.unwrap();
        assert!(page.contains("refused the login") && !page.contains("logged in"), "{page}");
        assert_eq!(waiting.await.unwrap().unwrap(), "/callback?error=access_denied&state=s");
        let refused =
            callback_from("https://mcp.example/mcp", "http://127.0.0.1/callback?error=access_denied")
                .unwrap_err()
                .to_string();
        assert!(
            refused.contains("https://mcp.example/mcp") && refused.contains("access_denied"),
            "{refused}"
        );
    }
}
