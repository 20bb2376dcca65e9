//! OAuth 2.1 for Streamable HTTP, as the MCP authorization spec (2025-11-25) describes it,
//! built on rmcp's `auth` module and adding what it lacks: the reaction to a 401/403 in the
//! middle of a session, a bounded step-up, the authorization step itself (an endpoint that
//! redirects on its own, or a person at a browser and a loopback redirect), and the token cache.
//!
//! What rmcp does (and is used for): protected resource metadata discovery from
//! `WWW-Authenticate` and the well-known paths, authorization server metadata (RFC 8414 and
//! OpenID discovery, with the 2025-03-26 fallbacks: metadata at the server's root, then the
//! default `/authorize`, `/token`, `/register`), the resource's check (RFC 8707), client
//! registration in the spec's order (a pre-registered client, a client ID metadata document when
//! the server supports them, dynamic registration), PKCE S256, scope selection (the challenge's
//! `scope`, then `scopes_supported`, else none), the token endpoint's auth method
//! (`client_secret_basic`, `client_secret_post`, `none`), and refresh before expiry.
//!
//! What this module adds: [`OAuthHttp`], the HTTP client of the transport, which sends the token,
//! and on `401` (with a challenge) or `403 insufficient_scope` authorizes (again, with the
//! scopes the challenge names added) and sends the request once more, at most
//! [`OAuthOptions::max_authorizations`] times a session (the step-up limit); the authorization
//! step ([`Interaction`]); and [`TokenCache`], where tokens live between runs, one entry a server.
//! No token or secret is printed or put in an error.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession, CredentialStore, StoredCredentials,
};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use std::collections::HashMap;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Where OAuth tokens are kept between runs: one JSON document a server URL (client id,
/// tokens, granted scopes, issuer). The CLI's implementation is its credential store.
pub trait TokenCache: Send + Sync {
    /// The document saved for `server`, if any.
    ///
    /// # Errors
    ///
    /// Why the store cannot be read (no secret in the text).
    fn load(&self, server: &str) -> Result<Option<String>, String>;
    /// Saves `document` for `server`.
    ///
    /// # Errors
    ///
    /// Why it cannot be written.
    fn save(&self, server: &str, document: &str) -> Result<(), String>;
    /// Forgets `server`'s document.
    ///
    /// # Errors
    ///
    /// Why it cannot be removed.
    fn clear(&self, server: &str) -> Result<(), String>;
}

/// How the authorization step gets its code.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Interaction {
    /// No person: the authorization endpoint must redirect back on its own (a CI identity
    /// provider, a test server); otherwise the step fails saying how to log in once on a
    /// terminal. Plans, tools and CI run so.
    #[default]
    Unattended,
    /// A person at a terminal: the URL is printed on stderr (and a browser opened when one can
    /// be), and the redirect is awaited on `http://127.0.0.1:PORT/callback` for at most
    /// [`OAuthOptions::login_wait`].
    Terminal,
}

/// How the client logs in to an OAuth-protected server.
#[derive(Clone)]
pub struct OAuthOptions {
    /// Whether a 401 with a challenge starts an authorization (default true). Off, or when the
    /// endpoint's headers carry their own `Authorization`, a 401 is an error.
    pub enabled: bool,
    /// How the authorization step gets its code.
    pub interaction: Interaction,
    /// A client registered with the authorization server beforehand (no registration then).
    pub client_id: Option<String>,
    /// The secret of [`OAuthOptions::client_id`], for a confidential client.
    pub client_secret: Option<String>,
    /// The HTTPS URL of the client's metadata document (SEP-991), used as the client id when
    /// the server supports such documents.
    pub client_metadata_url: Option<String>,
    /// The `client_name` of a dynamic registration (default `charly`).
    pub client_name: String,
    /// Scopes asked for; empty: as the spec selects them (the challenge's, else
    /// `scopes_supported`, else none).
    pub scopes: Vec<String>,
    /// Where tokens are kept; `None`: in memory, for this session only.
    pub cache: Option<Arc<dyn TokenCache>>,
    /// Authorizations one session may run, the first included (default 3): a server that keeps
    /// answering 403 `insufficient_scope` ends with an error, not a loop.
    pub max_authorizations: u32,
    /// How long a [`Interaction::Terminal`] login waits for the browser (default 5 minutes).
    pub login_wait: Duration,
    /// How to log in, for the error of an unattended run that needs a person (the CLI says
    /// which command to run on a terminal).
    pub login_hint: Option<String>,
    /// Opens the authorization URL for the person ([`Interaction::Terminal`]); `None`: the
    /// command `$BROWSER` names, else `xdg-open` (`open` on macOS) on a desktop. The URL is
    /// printed on stderr either way.
    pub browser: Option<Arc<dyn Fn(&str) + Send + Sync>>,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        OAuthOptions {
            enabled: true,
            interaction: Interaction::Unattended,
            client_id: None,
            client_secret: None,
            client_metadata_url: None,
            client_name: "charly".to_owned(),
            scopes: Vec::new(),
            cache: None,
            max_authorizations: 3,
            login_wait: Duration::from_secs(300),
            login_hint: None,
            browser: None,
        }
    }
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("enabled", &self.enabled)
            .field("interaction", &self.interaction)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "[REDACTED]"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("scopes", &self.scopes)
            .field("cache", &self.cache.is_some())
            .field("max_authorizations", &self.max_authorizations)
            .finish_non_exhaustive()
    }
}

/// rmcp's credential store over a [`TokenCache`] entry (or memory).
struct CacheStore {
    cache: Option<Arc<dyn TokenCache>>,
    server: String,
    memory: std::sync::Mutex<Option<StoredCredentials>>,
}

#[async_trait::async_trait]
impl CredentialStore for CacheStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let memory = self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        if memory.is_some() {
            return Ok(memory);
        }
        let Some(cache) = &self.cache else { return Ok(None) };
        let text = cache.load(&self.server).map_err(AuthError::CredentialStoreError)?;
        // A document that no longer parses is as good as none: log in again.
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        if let Some(cache) = &self.cache
            && credentials.token_response.is_some()
        {
            let text = serde_json::to_string(&credentials)
                .map_err(|e| AuthError::CredentialStoreError(format!("cannot encode the tokens: {e}")))?;
            cache.save(&self.server, &text).map_err(AuthError::CredentialStoreError)?;
        }
        *self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(credentials);
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        *self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        match &self.cache {
            Some(cache) => cache.clear(&self.server).map_err(AuthError::CredentialStoreError),
            None => Ok(()),
        }
    }
}

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
fn failure(server: &str, step: &str, detail: impl std::fmt::Display) -> StreamableHttpError<reqwest::Error> {
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
            failure(server, "authorization endpoint", format!("{host}: {}", super::error::error_chain(&e)))
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
            super::format_duration(wait)
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
                format!("no login came back within {}", super::format_duration(wait)),
            )),
        }
    }
}

/// Why the protected resource metadata the server publishes (at the challenge's
/// `resource_metadata`, else the RFC 9728 well-known paths) cannot be this server's: its
/// `resource` is on another origin. `None` when there is none, or it names this origin.
async fn foreign_resource(http: &reqwest::Client, server: &str, challenge: &str) -> Option<String> {
    let base = url::Url::parse(server).ok()?;
    let mut candidates = Vec::new();
    if let Some(at) = challenge.find("resource_metadata=") {
        let rest = challenge[at + "resource_metadata=".len()..].trim_start_matches('"');
        if let Some(url) = rest.split(['"', ',', ' ']).next().and_then(|u| base.join(u).ok()) {
            candidates.push(url);
        }
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
        let Some(resource) = document.get("resource").and_then(serde_json::Value::as_str) else { continue };
        let same = url::Url::parse(resource).is_ok_and(|r| r.origin() == base.origin());
        if !same {
            return Some(format!(
                "the protected resource metadata at {url} names the resource {}, on another origin than \
                 the server: refused (a server may only ask for tokens for itself)",
                super::error::truncate(resource, 200)
            ));
        }
        return None;
    }
    None
}

/// The 2025-03-26 server's own metadata, `/.well-known/oauth-authorization-server` at its root,
/// when every endpoint it names is on the MCP server's origin (the 2025-03-26 spec's server is
/// its own authorization server; another origin is refused, as the issuer check would).
async fn legacy_metadata(
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
fn callback_from(
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
fn challenge_scope(challenge: &str) -> Option<String> {
    let at = challenge.find("scope=")?;
    let rest = challenge[at + "scope=".len()..].trim_start_matches('"');
    Some(rest.split('"').next().unwrap_or_default().split(',').next().unwrap_or_default().to_owned())
}

fn host_of(url: &str) -> String {
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
async fn bind_loopback(port: Option<u16>) -> std::io::Result<tokio::net::TcpListener> {
    tokio::net::TcpListener::bind(("127.0.0.1", port.unwrap_or(0))).await
}

/// Opens `url` with `$BROWSER`, or in the desktop's browser when there is one (`xdg-open`,
/// `open`); silent otherwise
/// (the URL is printed anyway).
fn open_browser(url: &str) {
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

/// Waits for `GET /callback?...` on `listener`, answers it with a short page, and returns its
/// path and query. Other requests (a browser's `/favicon.ico`) get a 404; a request line over
/// 8 KiB is refused.
pub(crate) async fn wait_for_redirect(listener: tokio::net::TcpListener) -> std::io::Result<String> {
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
        match target {
            Some(path) if path.starts_with("/callback?") => {
                let body = "<!doctype html><title>charly</title><p>charly is logged in. You can close this window.</p>";
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(reply.as_bytes()).await;
                return Ok(path.to_owned());
            }
            _ => {
                let _ = stream
                    .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_scopes_are_read() {
        let challenge =
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="x""#;
        assert_eq!(challenge_scope(challenge).as_deref(), Some("mcp:basic mcp:write"));
        assert_eq!(challenge_scope("Bearer"), None);
    }

    #[tokio::test]
    async fn the_loopback_redirect_is_awaited_and_answered() {
        let listener = bind_loopback(None).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(wait_for_redirect(listener));
        let http = crate::client::http_client(&crate::client::TlsOptions::default(), true).unwrap();
        let miss = http.get(format!("http://127.0.0.1:{port}/favicon.ico")).send().await.unwrap();
        assert_eq!(miss.status(), 404);
        let hit = http.get(format!("http://127.0.0.1:{port}/callback?code=c&state=s")).send().await.unwrap();
        assert_eq!(hit.status(), 200);
        let path = waiting.await.unwrap().unwrap();
        assert_eq!(path, "/callback?code=c&state=s");
        let callback = callback_from("S", &format!("http://127.0.0.1{path}")).unwrap();
        assert_eq!((callback.code.as_str(), callback.csrf_token.as_str()), ("c", "s"));
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
