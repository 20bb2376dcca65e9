//! [`OAuthHttp`]: the transport's HTTP client that sends the token and, on a challenge,
//! authorizes (discovery, registration, the authorization step, the token request) and sends
//! again, boundedly; and its `StreamableHttpClient` methods.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use http::{HeaderName, HeaderValue};
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use super::login::{
    bind_loopback, callback_from, challenge_scope, foreign_resource, host_of, legacy_metadata, open_browser,
    wait_for_redirect,
};
use super::{CacheStore, Interaction, OAuthOptions};

/// The Streamable HTTP client of an OAuth-protected endpoint: `reqwest` plus the token, and the
/// authorization when the server asks for one (see the module's text).
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    inner: reqwest::Client,
    state: Arc<State>,
}

struct State {
    /// The MCP endpoint's URL: the resource, and the token cache's key.
    server: String,
    /// For OAuth requests: same TLS, no redirects followed.
    http: reqwest::Client,
    options: OAuthOptions,
    manager: tokio::sync::Mutex<Slot>,
    authorizations: AtomicU32,
}

#[derive(Default)]
struct Slot {
    /// Whether the token cache was looked at.
    loaded: bool,
    manager: Option<AuthorizationManager>,
    /// Whether `manager` has a client (registered, pre-registered or a metadata document).
    registered: bool,
    /// The loopback port of the redirect URI the client was registered with.
    port: Option<u16>,
    /// The authorization server the client is registered with: (issuer, token endpoint).
    authorization_server: Option<(String, String)>,
}

/// An OAuth failure: `authorizing at SERVER: STEP: DETAIL`.
pub(super) fn failure(
    server: &str,
    step: &str,
    detail: impl std::fmt::Display,
) -> StreamableHttpError<reqwest::Error> {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(format!(
        "authorizing at {server}: {step}: {detail}"
    )))
}

impl OAuthHttp {
    pub(crate) fn new(
        server: &str,
        inner: reqwest::Client,
        http: reqwest::Client,
        options: OAuthOptions,
    ) -> Self {
        let state = State {
            server: server.to_owned(),
            http,
            options,
            manager: tokio::sync::Mutex::new(Slot::default()),
            authorizations: AtomicU32::new(0),
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
        });
        Ok(manager)
    }

    /// The token to send: the session's (refreshed when it is about to expire), else the
    /// cache's, else none (the server's 401 starts the authorization).
    async fn token(&self) -> Result<Option<String>, StreamableHttpError<reqwest::Error>> {
        let mut slot = self.state.manager.lock().await;
        if !slot.loaded {
            slot.loaded = true;
            let cached = match &self.state.options.cache {
                Some(cache) => cache
                    .load(&self.state.server)
                    .map_err(|e| failure(&self.state.server, "token cache", e))?,
                None => None,
            };
            if cached.is_some() {
                let mut manager = self.new_manager().await?;
                // Cached tokens need the server's metadata (for refresh): a server that no
                // longer publishes it gets a new authorization.
                if manager.initialize_from_store().await.unwrap_or(false) {
                    slot.registered = true;
                    slot.manager = Some(manager);
                }
            }
        }
        let Some(manager) = &slot.manager else { return Ok(None) };
        match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(failure(&self.state.server, "token refresh", e)),
        }
    }

    /// Sends with the token; on a challenge authorizes and sends again, boundedly.
    async fn send<T, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let mut token = self.token().await?;
        loop {
            let (challenge, forbidden) = match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(e)) => (e.www_authenticate_header, false),
                Err(StreamableHttpError::InsufficientScope(e)) => (e.www_authenticate_header, true),
                other => return other,
            };
            token = Some(self.authorize(&challenge, token.as_deref(), forbidden).await?);
        }
    }

    /// Runs one authorization for `challenge` (or takes the token another request just got).
    async fn authorize(
        &self,
        challenge: &str,
        sent: Option<&str>,
        forbidden: bool,
    ) -> Result<String, StreamableHttpError<reqwest::Error>> {
        let server = self.state.server.clone();
        let mut slot = self.state.manager.lock().await;
        if let Some(manager) = &slot.manager {
            // Another request of this session authorized meanwhile, or (401) the token
            // expired and refreshes.
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
            let why = if forbidden {
                format!(
                    "the server still answers 403 insufficient_scope after {done} authorizations \
                     (challenge scope: {}); giving up (step-up limit {max})",
                    challenge_scope(challenge).unwrap_or_else(|| "none".into())
                )
            } else {
                format!("the server still answers 401 after {done} authorizations; giving up (limit {max})")
            };
            return Err(failure(&server, "step-up", why));
        }
        self.state.authorizations.store(done + 1, Ordering::SeqCst);
        let manager = match slot.manager.take() {
            Some(manager) => manager,
            None => self.new_manager().await?,
        };
        let (manager, outcome) = self.run(manager, &mut slot, challenge).await;
        slot.manager = Some(manager);
        outcome
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
        let metadata = match manager.resolve_metadata_from_challenge(Some(challenge)).await {
            // rmcp passes over protected resource metadata it finds unusable and goes on with
            // the origin's own authorization server; metadata that names a resource on another
            // origin is a server claiming to be another: an error, not a fallback.
            Ok(resolution) if resolution.source != AuthorizationMetadataSource::ProtectedResourceMetadata => {
                if let Some(why) = foreign_resource(&self.state.http, &server, challenge).await {
                    return (manager, Err(failure(&server, "discovery", why)));
                }
                resolution.metadata
            }
            Ok(resolution) => resolution.metadata,
            // MCP 2025-03-26: no protected resource metadata, the MCP server is its own
            // authorization server, and its metadata at the root may name an issuer with a
            // path (RFC 8414's strict issuer check, which rmcp applies, refuses it).
            Err(e @ AuthError::AuthorizationServerMismatch { .. }) => {
                match legacy_metadata(&self.state.http, &server).await {
                    Some(metadata) => metadata,
                    None => return (manager, Err(failure(&server, "discovery", e))),
                }
            }
            Err(e) => return (manager, Err(failure(&server, "discovery", e))),
        };
        // The resource moved to another authorization server (its metadata names another
        // issuer or token endpoint): the old client and tokens mean nothing there; register anew.
        let server_of = |m: &rmcp::transport::auth::AuthorizationMetadata| {
            (m.issuer.clone().unwrap_or_default(), m.token_endpoint.clone())
        };
        let current = server_of(&metadata);
        if slot.registered && slot.authorization_server.as_ref().is_some_and(|known| *known != current) {
            match self.new_manager().await {
                Ok(fresh) => manager = fresh,
                Err(e) => return (manager, Err(e)),
            }
            slot.registered = false;
            slot.port = None;
        }
        if slot.registered && slot.port.is_none() {
            // Restored from the token cache: the client was registered with an earlier run's
            // loopback redirect, which this run neither knows nor listens on (a step-up would
            // send the server a redirect_uri that is not charly's: trial finding). Register anew.
            match self.new_manager().await {
                Ok(fresh) => manager = fresh,
                Err(e) => return (manager, Err(e)),
            }
            slot.registered = false;
        }
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
            let mut request =
                AuthorizationRequest::new(redirect_uri.clone()).with_client_name(&options.client_name);
            if !options.scopes.is_empty() {
                request = request.with_scopes(options.scopes.iter().cloned());
            }
            if let Some(id) = &options.client_id {
                request = request.with_preregistered_client(id);
                if let Some(secret) = &options.client_secret {
                    request = request.with_client_secret(secret);
                }
            }
            if let Some(url) = &options.client_metadata_url {
                request = request.with_client_metadata_url(url);
            }
            match AuthorizationSession::new(manager, request).await {
                Ok(session) => {
                    slot.registered = true;
                    slot.port = Some(port);
                    manager = session.auth_manager;
                    session.auth_url
                }
                Err((m, e)) => return (m, Err(failure(&server, "client registration", e))),
            }
        };
        let callback = match options.interaction {
            Interaction::Unattended => self.follow(&auth_url, &redirect_uri).await,
            Interaction::Terminal => self.ask_person(&auth_url, &redirect_uri, listener).await,
        };
        let callback = match callback {
            Ok(callback) => callback,
            Err(e) => return (manager, Err(e)),
        };
        let exchanged = manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await;
        if let Err(e) = exchanged {
            return (manager, Err(failure(&server, "token request", e)));
        }
        let token = manager.get_access_token().await.map_err(|e| failure(&server, "token request", e));
        (manager, token)
    }

    /// Unattended: the authorization endpoint must answer with a redirect back to
    /// `redirect_uri`, which is read and not followed.
    async fn follow(
        &self,
        auth_url: &str,
        redirect_uri: &str,
    ) -> Result<AuthorizationCallback, StreamableHttpError<reqwest::Error>> {
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
        let location = response.headers().get(reqwest::header::LOCATION).and_then(|v| v.to_str().ok());
        match location {
            Some(location) if status.is_redirection() && location.starts_with(redirect_uri) => {
                callback_from(server, location)
            }
            _ => {
                let how = self.state.options.login_hint.clone().unwrap_or_else(|| {
                    "run the same command once on a terminal to log in; the token is then cached".to_owned()
                });
                Err(failure(
                    server,
                    "authorization",
                    format!(
                        "the authorization endpoint at {host} wants a person to log in (it answered HTTP {} \
                         and not a redirect back to charly), and this run is not on a terminal: {how}",
                        status.as_u16()
                    ),
                ))
            }
        }
    }

    /// On a terminal: print the URL, open a browser, wait for the redirect on loopback.
    async fn ask_person(
        &self,
        auth_url: &str,
        redirect_uri: &str,
        listener: tokio::net::TcpListener,
    ) -> Result<AuthorizationCallback, StreamableHttpError<reqwest::Error>> {
        let server = &self.state.server;
        let wait = self.state.options.login_wait;
        eprintln!(
            "charly: {server} asks you to log in. Open this URL in a browser (charly waits {} for it \
             to come back to {redirect_uri}):\n  {auth_url}",
            crate::client::format_duration(wait)
        );
        match &self.state.options.browser {
            Some(open) => open(auth_url),
            None => open_browser(auth_url),
        }
        match tokio::time::timeout(wait, wait_for_redirect(listener)).await {
            Ok(Ok(path)) => callback_from(server, &format!("http://127.0.0.1{path}")),
            Ok(Err(e)) => Err(failure(server, "authorization", format!("the redirect listener failed: {e}"))),
            Err(_) => Err(failure(
                server,
                "authorization",
                format!("no login came back within {}", crate::client::format_duration(wait)),
            )),
        }
    }
}

impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.post_message(uri.clone(), message.clone(), session_id.clone(), token, headers.clone())
        })
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.send(|token| {
            self.inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                token,
                headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        // Closing never starts a login: the current token or none.
        let token = self.token().await?;
        self.inner.delete_session(uri, session_id, token, headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.send(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max: usize,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.send(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers.clone(),
                max,
            )
        })
        .await
    }
}
