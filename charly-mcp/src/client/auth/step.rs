//! The authorization step of a login: an authorization endpoint that redirects back on its
//! own (unattended: CI, plans, tools), or a person at a browser and the redirect awaited on a
//! loopback listener (a terminal).

use std::sync::atomic::Ordering;

use rmcp::transport::auth::AuthorizationCallback;
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::client::refuses_client;
use super::flow::{OAuthHttp, failure};
use super::login::{callback_from, host_of, open_browser, state_of, wait_for_redirect};
use super::run::Failed;

impl OAuthHttp {
    /// Unattended: the authorization endpoint must answer with a redirect back to
    /// `redirect_uri`, which is read and not followed. A refusal that names the client itself
    /// (`invalid_client`, its redirect_uri) says so in [`Failed::client`].
    pub(super) async fn follow(
        &self,
        auth_url: &str,
        redirect_uri: &str,
    ) -> Result<AuthorizationCallback, Failed> {
        let server = &self.state.server;
        let host = host_of(auth_url);
        let response = self.state.http.get(auth_url).send().await.map_err(|e| {
            failure(
                server,
                "authorization endpoint",
                format!("{host}: {}", crate::client::error::error_chain(&e)),
            )
        })?;
        let status = response.status();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match location.as_deref() {
            Some(location) if status.is_redirection() && location.starts_with(redirect_uri) => {
                Ok(callback_from(server, location)?)
            }
            // A refusal is not a login page: say what the authorization server said.
            _ if status.is_client_error() || status.is_server_error() => {
                let body = response.text().await.unwrap_or_default();
                let said = serde_json::from_str::<serde_json::Value>(&body).ok().and_then(|v| {
                    let error = v.get("error")?.as_str()?.to_owned();
                    let description =
                        v.get("error_description").and_then(serde_json::Value::as_str).unwrap_or_default();
                    Some((error, description.to_owned()))
                });
                let client = said.as_ref().filter(|(e, d)| refuses_client(e, d)).map(|(error, _)| {
                    format!(
                        "its authorization endpoint answered {}",
                        crate::client::error::truncate(error, 40)
                    )
                });
                let said = said
                    .map(|(e, d)| if d.is_empty() { e } else { format!("{e}: {d}") })
                    .map(|s| format!(": {}", crate::client::error::truncate(&s, 200)))
                    .unwrap_or_default();
                let error = failure(
                    server,
                    "authorization",
                    format!(
                        "the authorization endpoint at {host} refused the request (HTTP {}{said})",
                        status.as_u16()
                    ),
                );
                Err(Failed { error, client })
            }
            _ => {
                let how = self.state.options.login_hint.clone().unwrap_or_else(|| {
                    "run the same command once on a terminal to log in; the token is then cached".to_owned()
                });
                let wants = format!(
                    "the authorization endpoint at {host} wants a person to log in (it answered HTTP {} and \
                     not a redirect back to charly), and this run is not on a terminal: {how}",
                    status.as_u16()
                );
                // The login was needed because the refresh was refused: say so first.
                if self.state.refused.load(Ordering::SeqCst) {
                    return Err(Failed::from(failure(
                        server,
                        "token refresh",
                        format!(
                            "the authorization server refused the cached refresh token (invalid_grant: \
                             expired or revoked), so a new login is needed, and {wants}"
                        ),
                    )));
                }
                Err(failure(server, "authorization", wants).into())
            }
        }
    }

    /// On a terminal: print the URL, open a browser, wait for the redirect on loopback.
    pub(super) async fn ask_person(
        &self,
        auth_url: &str,
        redirect_uri: &str,
        listener: &tokio::net::TcpListener,
    ) -> Result<AuthorizationCallback, StreamableHttpError<reqwest::Error>> {
        let server = &crate::client::endpoint::redacted(&self.state.server);
        // While the session starts, a person's login is bounded by the login wait alone (the
        // connect timeout does not count it); a step-up within a request also by that
        // request's timeout.
        let (wait, why) = match self.state.waiting.lock().connected {
            true if self.state.request_timeout < self.state.options.login_wait => {
                (self.state.request_timeout, " (the request's --timeout)")
            }
            _ => (self.state.options.login_wait, ""),
        };
        eprintln!(
            "charly: {server} asks you to log in. Open this URL in a browser (charly waits {}{why} for it \
             to come back to {redirect_uri}):\n  {auth_url}",
            crate::client::format_duration(wait)
        );
        let _person = self.state.waiting.person();
        match &self.state.options.browser {
            Some(open) => open(auth_url),
            None => open_browser(auth_url),
        }
        let state = state_of(auth_url);
        match tokio::time::timeout(wait, wait_for_redirect(listener, state.as_deref())).await {
            Ok(Ok(path)) => callback_from(server, &format!("http://127.0.0.1{path}")),
            Ok(Err(e)) => Err(failure(server, "authorization", format!("the redirect listener failed: {e}"))),
            Err(_) => Err(failure(
                server,
                "authorization",
                format!("no login came back within {}{why}", crate::client::format_duration(wait)),
            )),
        }
    }
}
