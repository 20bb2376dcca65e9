//! [`OAuthHttp`]: the transport's HTTP client that sends the token and, on a challenge,
//! authorizes (the cached login, a refresh, or discovery, registration, the authorization
//! step and the token request) and sends again, boundedly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource, OAuthClientConfig,
};
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::client::{Kept, KeptClient, token_error_code};
use super::login::{
    challenge_scope, discovery_failure, first_authorization_server, foreign_resource, legacy_metadata,
    protected_resource,
};
use super::waiting::Waiting;
use super::{CacheStore, OAuthOptions, Unconfirmed};

/// The Streamable HTTP client of an OAuth-protected endpoint: `reqwest` plus the token, and the
/// authorization when the server asks for one (see the module's text).
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    pub(super) inner: reqwest::Client,
    pub(super) state: Arc<State>,
}

pub(super) struct State {
    /// The MCP endpoint's URL: the resource, and the token cache's key.
    pub(super) server: String,
    /// For OAuth requests: same TLS, no redirects followed.
    pub(super) http: reqwest::Client,
    pub(super) options: OAuthOptions,
    manager: tokio::sync::Mutex<Slot>,
    pub(super) authorizations: AtomicU32,
    pub(super) waiting: Waiting,
    /// Whether the authorization server refused the refresh token since the last login.
    pub(super) refused: Arc<AtomicBool>,
    /// Tokens the server has not taken yet (written to the cache once it has).
    pub(super) unconfirmed: Arc<Unconfirmed>,
    /// Each request's timeout, which bounds a person's login in a step-up.
    pub(super) request_timeout: std::time::Duration,
    /// The client charly registered, kept in the token cache for the next login.
    pub(super) kept: Arc<Kept>,
}

#[derive(Default)]
pub(super) struct Slot {
    /// Whether the token cache was looked at (on the first challenge: a server that asks for
    /// no login never touches the credential store).
    loaded: bool,
    manager: Option<AuthorizationManager>,
    /// Whether `manager` has a client (registered, pre-registered or a metadata document).
    pub(super) registered: bool,
    /// The loopback port of the redirect URI the client was registered with (this session,
    /// or the kept client of an earlier run's registration); `None`: unknown.
    pub(super) port: Option<u16>,
    /// The authorization server the client is registered with: (issuer, token endpoint).
    pub(super) authorization_server: Option<(String, String)>,
    /// Why the authorization server refused the client at a refresh (`invalid_client`): the
    /// next login registers anew.
    pub(super) client_refused: Option<String>,
}

/// `scheme://host[:port]` of `url` (the URL itself when it does not parse).
fn origin_of(url: &str) -> String {
    url::Url::parse(url).map(|u| u.origin().ascii_serialization()).unwrap_or_else(|_| url.to_owned())
}

/// An OAuth failure: `authorizing at SERVER: STEP: DETAIL`.
pub(super) fn failure(
    server: &str,
    step: &str,
    detail: impl std::fmt::Display,
) -> StreamableHttpError<reqwest::Error> {
    // The detail may name the server's URL or one derived from it (its metadata's, with the
    // user info kept): shown redacted as every server URL is.
    let detail = crate::client::endpoint::redact_urls(&super::without_rmcp_labels(&detail.to_string()));
    let server = crate::client::endpoint::redacted(server);
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(format!(
        "authorizing at {server}: {step}: {detail}"
    )))
}

/// Why the token request to `endpoint` failed, in words: rmcp keeps only the text of a body
/// that did not parse (`expected value at line 1 column 1`) and says `Request failed` for a
/// request that got no answer.
pub(super) fn token_failure(endpoint: &str, error: &AuthError) -> String {
    match error {
        AuthError::TokenExchangeFailed(text) if text.contains(" at line ") && text.contains(" column ") => {
            format!(
                "the token endpoint {endpoint} did not answer with JSON, neither tokens nor an OAuth error \
                 ({text}): the authorization server is failing (an error page?)"
            )
        }
        AuthError::TokenExchangeFailed(text) if text.starts_with("Request failed") => {
            format!("the token endpoint {endpoint} cannot be reached (the request failed without an answer)")
        }
        other => other.to_string(),
    }
}

/// Why a refresh failed, when the authorization server refused the client itself
/// (`invalid_client`, RFC 6749 section 5.2): a new registration may mend it.
fn refused_client(error: &AuthError) -> Option<String> {
    match error {
        AuthError::TokenRefreshFailed(text) if token_error_code(text) == Some("invalid_client") => {
            Some("its token endpoint answered a refresh with invalid_client".to_owned())
        }
        _ => None,
    }
}

impl OAuthHttp {
    pub(crate) fn new(
        server: &str,
        inner: reqwest::Client,
        http: reqwest::Client,
        options: OAuthOptions,
        waiting: Waiting,
        request_timeout: std::time::Duration,
    ) -> Self {
        let state = State {
            server: server.to_owned(),
            http,
            options,
            manager: tokio::sync::Mutex::new(Slot::default()),
            authorizations: AtomicU32::new(0),
            waiting,
            refused: Arc::new(AtomicBool::new(false)),
            unconfirmed: Arc::default(),
            request_timeout,
            kept: Arc::default(),
        };
        OAuthHttp { inner, state: Arc::new(state) }
    }

    pub(super) async fn new_manager(
        &self,
    ) -> Result<AuthorizationManager, StreamableHttpError<reqwest::Error>> {
        let server = &self.state.server;
        let mut manager =
            AuthorizationManager::new(server.as_str()).await.map_err(|e| failure(server, "setup", e))?;
        manager.with_client(self.state.http.clone()).map_err(|e| failure(server, "setup", e))?;
        manager.set_credential_store(CacheStore {
            cache: self.state.options.cache.clone(),
            server: server.clone(),
            memory: std::sync::Mutex::new(None),
            refused: self.state.refused.clone(),
            unconfirmed: self.state.unconfirmed.clone(),
            kept: self.state.kept.clone(),
        });
        Ok(manager)
    }

    /// The token to send: the session's (refreshed when it is about to expire), else none
    /// (the server's 401 starts the authorization, which looks in the cache first).
    pub(super) async fn token(&self) -> Result<Option<String>, StreamableHttpError<reqwest::Error>> {
        if !self.state.options.enabled {
            return Ok(None);
        }
        let slot = self.state.manager.lock().await;
        let Some(manager) = &slot.manager else { return Ok(None) };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            // The authorization server no longer knows the client: the challenge that follows
            // logs in again (with a new registration).
            Err(e) if refused_client(&e).is_some() => Ok(None),
            Err(e) => Err(failure(&self.state.server, "token refresh", e)),
        }
    }

    /// The cached login of this server, read once, when the server first asks for a token:
    /// its manager goes into `slot` (cached tokens need the server's metadata, for refresh: a
    /// server that no longer publishes it gets a new authorization).
    ///
    /// # Errors
    ///
    /// `token cache: ...` when the store cannot be read: the error names the store and how to
    /// make it readable (a locked keyring, a KDBX file without its password).
    async fn load_cached(&self, slot: &mut Slot) -> Result<(), StreamableHttpError<reqwest::Error>> {
        if slot.loaded {
            return Ok(());
        }
        slot.loaded = true;
        let cached = match &self.state.options.cache {
            Some(cache) => cache.load(&self.state.server).map_err(|e| {
                failure(
                    &self.state.server,
                    "token cache",
                    format!(
                        "the server asks for an OAuth login (HTTP 401), and its cached login cannot be \
                         looked up: {e}"
                    ),
                )
            })?,
            None => None,
        };
        let Some(document) = cached else { return Ok(()) };
        let mut manager = self.new_manager().await?;
        if !manager.initialize_from_store().await.unwrap_or(false) {
            return Ok(());
        }
        slot.registered = true;
        // The client charly registered in an earlier run, with the redirect URI and secret it
        // was registered with (rmcp restores the client id alone, with the MCP server's URL
        // as its redirect URI: trial finding), unless this run names a client of its own.
        // An earlier charly's document has none: the next login registers anew.
        let kept = KeptClient::in_document(&document).filter(|_| self.state.options.client_id.is_none());
        if let Some(kept) = kept {
            let mut config = OAuthClientConfig::new(kept.client_id.clone(), kept.redirect_uri.clone());
            if let Some(secret) = &kept.client_secret {
                config = config.with_client_secret(secret.clone());
            }
            if manager.configure_client(config).is_ok() {
                slot.port = kept.port();
                slot.authorization_server = Some(kept.authorization_server());
                self.state.kept.set(Some(kept));
            }
        }
        slot.manager = Some(manager);
        Ok(())
    }

    /// Says `text` in one line (see [`OAuthOptions::notice`]), its URLs redacted.
    pub(super) fn notice(&self, text: &str) {
        let text = crate::client::endpoint::redact_urls(text);
        match &self.state.options.notice {
            Some(notice) => notice(&text),
            None => eprintln!("charly: {text}"),
        }
    }

    /// Writes the tokens the server just took to the cache.
    fn confirm(&self) -> Result<(), StreamableHttpError<reqwest::Error>> {
        super::write_confirmed(
            self.state.options.cache.as_ref(),
            &self.state.server,
            &self.state.unconfirmed,
            &self.state.kept,
        )
        .map_err(|e| failure(&self.state.server, "token cache", e))
    }

    /// Sends with the token; on a challenge authorizes (a refresh, the cached login, or a new
    /// login) and sends again, at most [`OAuthOptions::max_authorizations`] times in a row for
    /// one request. Tokens a request succeeded with are written to the cache.
    pub(super) async fn send<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        if !self.state.options.enabled {
            return call(None).await;
        }
        let max = self.state.options.max_authorizations.max(1);
        let mut token = self.token().await?;
        let mut tries = 0;
        loop {
            let (challenge, forbidden) = match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(e)) => (e.www_authenticate_header, false),
                Err(StreamableHttpError::InsufficientScope(e)) => (e.www_authenticate_header, true),
                // A 401 without WWW-Authenticate (servers of MCP 2025-03-26 send no challenge):
                // discovery goes by the well-known paths.
                Err(StreamableHttpError::UnexpectedServerResponse(text)) if text.starts_with("HTTP 401") => {
                    ("Bearer".to_owned(), false)
                }
                Ok(answer) => {
                    if token.is_some() {
                        self.confirm()?;
                    }
                    return Ok(answer);
                }
                other => return other,
            };
            if tries >= max && token.is_some() {
                return Err(self.gave_up(&challenge, forbidden, tries, max));
            }
            tries += 1;
            token = Some(self.authorize(&challenge, token.as_deref(), forbidden).await?);
        }
    }

    /// The error of a request the server still refuses after `tries` authorizations.
    fn gave_up(
        &self,
        challenge: &str,
        forbidden: bool,
        tries: u32,
        max: u32,
    ) -> StreamableHttpError<reqwest::Error> {
        let says = |prefix: &str| {
            super::login::challenge_param(challenge, "error_description")
                .map(|d| format!("{prefix}{}", crate::client::error::truncate(&d, 200)))
                .unwrap_or_default()
        };
        let why = if forbidden {
            format!(
                "the server still answers 403 insufficient_scope after {tries} authorizations: the request \
                 needs scope {}, which the authorization server did not grant{}; giving up (step-up limit \
                 {max})",
                challenge_scope(challenge).unwrap_or_else(|| "none named".into()),
                says("; the server says: ")
            )
        } else {
            let error = super::login::challenge_param(challenge, "error")
                .map(|e| format!(" {}", crate::client::error::truncate(&e, 40)))
                .unwrap_or_default();
            format!(
                "the server refused the access token from its authorization server (HTTP 401{error}{}) \
                 {tries} times in a row, after a login or a refresh each time; giving up (limit {max}). \
                 The refused token was not kept: the authorization server issues tokens this server does \
                 not accept (its audience, issuer or signing key)",
                says("; the server says: ")
            )
        };
        failure(&self.state.server, "step-up", why)
    }

    /// Runs one authorization for `challenge` (or takes the token another request just got).
    async fn authorize(
        &self,
        challenge: &str,
        sent: Option<&str>,
        forbidden: bool,
    ) -> Result<String, StreamableHttpError<reqwest::Error>> {
        let mut slot = self.state.manager.lock().await;
        self.load_cached(&mut slot).await?;
        let mut refused = None;
        if let Some(manager) = &slot.manager {
            // The cached login, another request of this session authorized meanwhile, or (401)
            // the token expired and refreshes. A refresh the authorization server answers with
            // invalid_client means it no longer knows the client: the login registers anew.
            match manager.get_access_token().await {
                Ok(token) if Some(token.as_str()) != sent => return Ok(token),
                Err(e) if refused_client(&e).is_some() => refused = refused_client(&e),
                _ if !forbidden && sent.is_some() => match manager.refresh_token().await {
                    Ok(_) => {
                        if let Ok(token) = manager.get_access_token().await
                            && Some(token.as_str()) != sent
                        {
                            return Ok(token);
                        }
                    }
                    Err(e) => refused = refused_client(&e),
                },
                _ => {}
            }
        }
        if refused.is_some() {
            slot.client_refused = refused;
        }
        let done = self.state.authorizations.load(Ordering::SeqCst);
        let max = self.state.options.max_authorizations.max(1);
        if done >= max {
            return Err(self.gave_up(challenge, forbidden, done, max));
        }
        self.state.authorizations.store(done + 1, Ordering::SeqCst);
        let manager = match slot.manager.take() {
            Some(manager) => manager,
            None => self.new_manager().await?,
        };
        let (manager, outcome) = self.run(manager, &mut slot, challenge).await;
        self.state.waiting.set(None);
        slot.manager = Some(manager);
        outcome
    }

    /// Protected resource and authorization server metadata for `challenge` (with the
    /// 2025-03-26 fallbacks), and whether it was found or only the default endpoints assumed.
    pub(super) async fn discover(
        &self,
        manager: &mut AuthorizationManager,
        challenge: &str,
    ) -> Result<(AuthorizationMetadata, bool), StreamableHttpError<reqwest::Error>> {
        let server = &self.state.server;
        // Its protected resource metadata first (rmcp reads it again): what it names tells a
        // slow or failing authorization server from the MCP server.
        self.wait_for(format!("discovery: its protected resource metadata at {}", origin_of(server)));
        let found = protected_resource(&self.state.http, server, challenge).await;
        let authorization_server =
            found.as_ref().and_then(|(_, document)| first_authorization_server(document));
        self.wait_for(match &authorization_server {
            Some(at) => format!("discovery: the metadata of its authorization server {at}"),
            None => format!("discovery of its OAuth metadata at {}", origin_of(server)),
        });
        let failed = |e: AuthError| failure(server, "discovery", discovery_failure(&e));
        match manager.resolve_metadata_from_challenge(Some(challenge)).await {
            // rmcp passes over protected resource metadata it finds unusable and goes on with
            // the origin's own authorization server; metadata that names a resource on another
            // origin is a server claiming to be another: an error, not a fallback.
            Ok(resolution) if resolution.source != AuthorizationMetadataSource::ProtectedResourceMetadata => {
                if let Some(why) = foreign_resource(server, found.as_ref()) {
                    return Err(failure(server, "discovery", why));
                }
                let assumed = resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback;
                Ok((resolution.metadata, assumed))
            }
            Ok(resolution) => Ok((resolution.metadata, false)),
            // MCP 2025-03-26: no protected resource metadata, the MCP server is its own
            // authorization server, and its metadata at the root may name an issuer with a
            // path (RFC 8414's strict issuer check, which rmcp applies, refuses it).
            Err(e @ AuthError::AuthorizationServerMismatch { .. }) => {
                match legacy_metadata(&self.state.http, server).await {
                    Some(metadata) => Ok((metadata, false)),
                    None => Err(failed(e)),
                }
            }
            Err(e) => Err(failed(e)),
        }
    }

    /// Records what the authorization waits for (see [`Waiting`]).
    pub(super) fn wait_for(&self, what: String) {
        let server = crate::client::endpoint::redacted(&self.state.server);
        self.state.waiting.set(Some(format!("authorizing at {server}: {what}")));
    }
}
