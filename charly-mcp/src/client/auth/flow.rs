//! [`OAuthHttp`]: the transport's HTTP client that sends the token and, on a challenge,
//! authorizes (the cached login, a refresh, or discovery, registration, the authorization
//! step and the token request) and sends again, boundedly.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession,
};
use rmcp::transport::streamable_http_client::StreamableHttpError;

use super::login::{
    bind_loopback, challenge_scope, discovery_failure, first_authorization_server, foreign_resource,
    legacy_metadata, protected_resource,
};
use super::waiting::Waiting;
use super::{CacheStore, Interaction, OAuthOptions, Unconfirmed};

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
}

#[derive(Default)]
struct Slot {
    /// Whether the token cache was looked at (on the first challenge: a server that asks for
    /// no login never touches the credential store).
    loaded: bool,
    manager: Option<AuthorizationManager>,
    /// Whether `manager` has a client (registered, pre-registered or a metadata document).
    registered: bool,
    /// The loopback port of the redirect URI the client was registered with.
    port: Option<u16>,
    /// The authorization server the client is registered with: (issuer, token endpoint).
    authorization_server: Option<(String, String)>,
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
fn token_failure(endpoint: &str, error: &AuthError) -> String {
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
        };
        OAuthHttp { inner, state: Arc::new(state) }
    }

    async fn new_manager(&self) -> Result<AuthorizationManager, StreamableHttpError<reqwest::Error>> {
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
        if cached.is_some() {
            let mut manager = self.new_manager().await?;
            if manager.initialize_from_store().await.unwrap_or(false) {
                slot.registered = true;
                slot.manager = Some(manager);
            }
        }
        Ok(())
    }

    /// Writes the tokens the server just took to the cache.
    fn confirm(&self) -> Result<(), StreamableHttpError<reqwest::Error>> {
        super::write_confirmed(self.state.options.cache.as_ref(), &self.state.server, &self.state.unconfirmed)
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
        if let Some(manager) = &slot.manager {
            // The cached login, another request of this session authorized meanwhile, or (401)
            // the token expired and refreshes.
            match manager.get_access_token().await {
                Ok(token) if Some(token.as_str()) != sent => return Ok(token),
                _ if !forbidden && sent.is_some() => {
                    if manager.refresh_token().await.is_ok()
                        && let Ok(token) = manager.get_access_token().await
                        && Some(token.as_str()) != sent
                    {
                        return Ok(token);
                    }
                }
                _ => {}
            }
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
    async fn discover(
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
    fn wait_for(&self, what: String) {
        let server = crate::client::endpoint::redacted(&self.state.server);
        self.state.waiting.set(Some(format!("authorizing at {server}: {what}")));
    }

    /// Discovery, registration (the first time), the authorization step and the token request.
    async fn run(
        &self,
        mut manager: AuthorizationManager,
        slot: &mut Slot,
        challenge: &str,
    ) -> (AuthorizationManager, Result<String, StreamableHttpError<reqwest::Error>>) {
        let server = self.state.server.clone();
        let options = &self.state.options;
        let (mut metadata, mut assumed) = match self.discover(&mut manager, challenge).await {
            Ok(found) => found,
            Err(e) => return (manager, Err(e)),
        };
        let server_of =
            |m: &AuthorizationMetadata| (m.issuer.clone().unwrap_or_default(), m.token_endpoint.clone());
        // Register anew when the resource moved to another authorization server (its metadata
        // names another issuer or token endpoint: the old client and tokens mean nothing
        // there), or when the client was restored from the token cache: it was registered
        // with an earlier run's loopback redirect, which this run neither knows nor listens
        // on (a step-up would send the server a redirect_uri that is not charly's: trial
        // finding). The fresh manager discovers again, so it knows the challenge's scopes.
        let moved = slot.authorization_server.as_ref().is_some_and(|known| *known != server_of(&metadata));
        if slot.registered && (moved || slot.port.is_none()) {
            manager = match self.new_manager().await {
                Ok(fresh) => fresh,
                Err(e) => return (manager, Err(e)),
            };
            slot.registered = false;
            slot.port = None;
            (metadata, assumed) = match self.discover(&mut manager, challenge).await {
                Ok(found) => found,
                Err(e) => return (manager, Err(e)),
            };
        }
        let current = server_of(&metadata);
        let (authorization_endpoint, token_endpoint) =
            (metadata.authorization_endpoint.clone(), metadata.token_endpoint.clone());
        let registration_endpoint = metadata.registration_endpoint.clone();
        let auth_methods = metadata.additional_fields.get("token_endpoint_auth_methods_supported").cloned();
        if !slot.registered {
            manager.set_metadata(metadata);
        }
        slot.authorization_server = Some(current);
        let listener = match bind_loopback(slot.port).await {
            Ok(listener) => listener,
            Err(e) => return (manager, Err(failure(&server, "redirect listener", e))),
        };
        let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let auth_url = if slot.registered {
            let mut scopes = manager.select_scopes(None, &[]);
            // A grant of no scope comes back as `scope: ""`, which rmcp keeps as one empty
            // scope: a step-up then asked for " mcp:admin" (trial finding).
            scopes.retain(|scope| !scope.is_empty());
            for scope in &options.scopes {
                if !scopes.contains(scope) {
                    scopes.push(scope.clone());
                }
            }
            let refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
            match manager.get_authorization_url(&refs).await {
                Ok(url) => url,
                Err(e) => return (manager, Err(failure(&server, "authorization request", e))),
            }
        } else {
            // The first login asks for what the challenge asked (else the resource's
            // scopes_supported, else none), as the spec selects: rmcp's default would add
            // every scope the resource supports to the challenge's.
            let mut request = AuthorizationRequest::new(redirect_uri.clone())
                .with_client_name(&options.client_name)
                .with_initial_scope_selection();
            if !options.scopes.is_empty() {
                request = request.with_scopes(options.scopes.iter().cloned());
            }
            if let Some(id) = &options.client_id {
                request = request.with_preregistered_client(id);
                if let Some(secret) = &options.client_secret {
                    // rmcp sends a secret with client_secret_basic unless the server offers
                    // client_secret_post alone, even to a server that offers only `none`.
                    match super::client::token_auth_method(auth_methods.as_ref()) {
                        Ok("none") => {}
                        Ok(_) => request = request.with_client_secret(secret),
                        Err(why) => {
                            return (manager, Err(failure(&server, "authorization server metadata", why)));
                        }
                    }
                }
            }
            if let Some(url) = &options.client_metadata_url {
                request = request.with_client_metadata_url(url);
            }
            if let Some(endpoint) = &registration_endpoint {
                self.wait_for(format!("its authorization server's registration endpoint {endpoint}"));
            }
            match AuthorizationSession::new(manager, request).await {
                Ok(session) => {
                    slot.registered = true;
                    slot.port = Some(port);
                    manager = session.auth_manager;
                    session.auth_url
                }
                // No metadata anywhere and the default /register is not there either: the
                // server wants a bearer token and has no OAuth to get one (trial finding: it
                // ended at "client registration ... 404").
                Err((m, e)) if assumed => {
                    // The challenge may name a document that did not answer (a 401 of its own).
                    let pointed = match super::login::challenge_param(challenge, "resource_metadata") {
                        Some(url) => format!(
                            "the resource_metadata its WWW-Authenticate names, {}, gave no JSON document",
                            crate::client::redacted(&url)
                        ),
                        None => "no resource_metadata in its WWW-Authenticate".to_owned(),
                    };
                    let why = format!(
                        "the server asks for a bearer token but publishes no OAuth metadata ({pointed}, \
                         nothing at /.well-known/oauth-protected-resource or \
                         /.well-known/oauth-authorization-server, and the default {} failed: {}): give \
                         --header 'Authorization: Bearer TOKEN'",
                        registration_endpoint.as_deref().unwrap_or("/register"),
                        crate::client::plain::summary(&super::without_rmcp_labels(&e.to_string()))
                    );
                    return (m, Err(failure(&server, "discovery", why)));
                }
                // rmcp's PkceUnsupported, which a registration error may wrap.
                Err((m, e)) if e.to_string().contains("does not support the required PKCE") => {
                    let why = "its authorization server does not offer PKCE with S256 (its metadata's \
                               code_challenge_methods_supported), which OAuth 2.1 and the MCP \
                               authorization spec require: charly cannot log in there";
                    return (m, Err(failure(&server, "authorization server metadata", why)));
                }
                Err((m, e)) => {
                    // A server that registers no clients on its own may have one registered
                    // beforehand.
                    let hint = if options.client_id.is_none() {
                        "; if the authorization server registers no clients on its own, register one \
                         there and give --oauth-client-id ID (with --oauth-client-secret-env VAR for a \
                         confidential client)"
                    } else {
                        ""
                    };
                    let why = format!("{}{hint}", super::without_rmcp_labels(&e.to_string()));
                    return (m, Err(failure(&server, "client registration", why)));
                }
            }
        };
        let callback = match options.interaction {
            Interaction::Unattended => {
                self.wait_for(format!(
                    "its authorization server's authorization endpoint {authorization_endpoint} (an \
                     unattended login waits for its redirect)"
                ));
                self.follow(&auth_url, &redirect_uri).await
            }
            Interaction::Terminal => {
                self.wait_for(format!(
                    "the login in the browser at the authorization endpoint {authorization_endpoint}"
                ));
                self.ask_person(&auth_url, &redirect_uri, listener).await
            }
        };
        let callback = match callback {
            Ok(callback) => callback,
            Err(e) => return (manager, Err(e)),
        };
        self.wait_for(format!("its authorization server's token endpoint {token_endpoint}"));
        let exchanged = manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await;
        if let Err(e) = exchanged {
            return (manager, Err(failure(&server, "token request", token_failure(&token_endpoint, &e))));
        }
        let token = manager.get_access_token().await.map_err(|e| failure(&server, "token request", e));
        if token.is_ok() {
            self.state.refused.store(false, Ordering::SeqCst);
        }
        (manager, token)
    }
}
