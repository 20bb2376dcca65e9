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
//! (`client_secret_basic`, `client_secret_post`, `none`; whether a pre-registered client's
//! secret is sent at all is charly's choice, from the server's
//! `token_endpoint_auth_methods_supported`: rmcp sends it to a server that offers only
//! `none`), and refresh before expiry.
//!
//! What this module adds: [`OAuthHttp`], the HTTP client of every Streamable HTTP endpoint
//! (with OAuth off it only reads the body of a 429/5xx back, which rmcp drops), which sends the
//! token, and on `401` (with a challenge, or a bare one) or `403 insufficient_scope` authorizes
//! (the cached login, a refresh, or a new login with the scopes the challenge names added) and
//! sends the request once more: at most [`OAuthOptions::max_authorizations`] times in a row for
//! one request, and as many logins a session (the step-up limit); the authorization step
//! ([`Interaction`]: `step`), during which a person's time at the browser does not count
//! against the connect timeout (`Waiting`); and [`TokenCache`], where tokens live between
//! runs, one entry a server: read on the first challenge only (a server that asks for no login
//! never touches the credential store), written only once the server accepted a request with
//! the token (a token it refuses is never kept). No token or secret is printed or put in an
//! error.
//!
//! A client charly registers (RFC 7591) is kept in the same cached document: its client id,
//! the redirect URI's loopback port, its secret if the server gave one, and the authorization
//! server's issuer and token endpoint. A later login (a step-up, a refused refresh) reuses it
//! and listens on that same port (RFC 8252 section 7.3 has servers allow any loopback port,
//! but many accept only the registered one). It registers anew only when the port cannot be
//! bound (said in one line, [`OAuthOptions::notice`]), when the authorization server moved
//! (another issuer or token endpoint), or when the server refuses the client (`invalid_client`
//! at a refresh, the authorization or the token endpoint, or its redirect_uri): registered
//! once more, the login is tried once more. A document without it (an earlier charly's)
//! registers anew, as before, and is kept from then on.

mod client;
mod flow;
mod login;
mod run;
mod step;
mod transport;
mod waiting;

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};

pub(crate) use flow::OAuthHttp;
pub(crate) use login::challenge_param;
pub(crate) use waiting::Waiting;

/// rmcp's error labels (`OAuth authorization failed: `, `Registration failed: `...) left out
/// of `text`: charly's own text names the step, and rmcp repeats its labels when it wraps its
/// own errors (`Registration failed: ... Registration failed: HTTP 404`).
pub(crate) fn without_rmcp_labels(text: &str) -> String {
    const LABELS: [&str; 9] = [
        "OAuth authorization failed: ",
        "Dynamic registration failed: ",
        "Registration failed: ",
        "OAuth token exchange failed: ",
        "OAuth error: ",
        "Metadata error: ",
        "Internal error: ",
        "HTTP request error: ",
        "OAuth: ",
    ];
    let mut out = text.to_owned();
    for label in LABELS {
        out = out.replace(label, "");
    }
    out
}

/// Where OAuth tokens are kept between runs: one JSON document a server URL (client id,
/// tokens, granted scopes, issuer, and the client charly registered: its redirect URI and
/// authorization server, and its secret if it has one). The CLI's implementation is its
/// credential store.
pub trait TokenCache: Send + Sync {
    /// The document saved for `server`, if any. Asked on a session's first challenge (401)
    /// only: a server without auth never makes the client read the store.
    ///
    /// # Errors
    ///
    /// Why the store cannot be read (no secret in the text).
    fn load(&self, server: &str) -> Result<Option<String>, String>;
    /// Saves `document` for `server`: tokens the server accepted a request with.
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

/// Opens an authorization URL for a person (see [`OAuthOptions::browser`]).
pub type BrowserFn = Arc<dyn Fn(&str) + Send + Sync>;

/// Takes a one-line notice of the login (see [`OAuthOptions::notice`]).
pub type NoticeFn = Arc<dyn Fn(&str) + Send + Sync>;

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
    /// Logins one session may run, the first included, and authorizations (a login, a refresh,
    /// the cached token) one request may run in a row (default 3): a server that keeps
    /// answering 403 `insufficient_scope`, or refusing the tokens it is given, ends with an
    /// error, not a loop.
    pub max_authorizations: u32,
    /// How long a [`Interaction::Terminal`] login waits for the browser (default 5 minutes).
    /// While the session starts, [`crate::client::ConnectOptions::timeout`] does not count
    /// this wait; a step-up later in the session is bounded by its request's timeout too (the
    /// printed wait says which).
    pub login_wait: Duration,
    /// How to log in, for the error of an unattended run that needs a person (the CLI says
    /// which command to run on a terminal).
    pub login_hint: Option<String>,
    /// Opens the authorization URL for the person ([`Interaction::Terminal`]); `None`: the
    /// command `$BROWSER` names, else `xdg-open` (`open` on macOS) on a desktop. The URL is
    /// printed on stderr either way.
    pub browser: Option<BrowserFn>,
    /// Where a login says, in one line, why it does other than planned (the loopback port of
    /// the kept client's redirect URI is taken, the authorization server no longer accepts
    /// that client: a new one is registered); `None`: on stderr, as `charly: TEXT`.
    pub notice: Option<NoticeFn>,
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
            notice: None,
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

/// What a login or a refresh got and the server has not yet accepted: written to the
/// [`TokenCache`] only once a request with it succeeded, so a token the server refuses (another
/// audience, a bad signature, an issuer it does not trust) never reaches the store.
#[derive(Default)]
pub(crate) struct Unconfirmed(std::sync::Mutex<Option<StoredCredentials>>);

impl Unconfirmed {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<StoredCredentials>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// rmcp's credential store over a [`TokenCache`] entry (or memory). New tokens wait in
/// [`Unconfirmed`] until the server took them ([`write_confirmed`]).
struct CacheStore {
    cache: Option<Arc<dyn TokenCache>>,
    server: String,
    memory: std::sync::Mutex<Option<StoredCredentials>>,
    /// Set when the authorization server refused the refresh token (`invalid_grant`), for the
    /// error of a new login that cannot be done unattended.
    refused: Arc<std::sync::atomic::AtomicBool>,
    unconfirmed: Arc<Unconfirmed>,
    /// The client registered for the next login, written with the tokens.
    kept: Arc<client::Kept>,
}

/// Writes the tokens waiting in `unconfirmed` to `cache` (a request with them succeeded),
/// with the client `kept` for the next login when the tokens are its.
///
/// # Errors
///
/// Why the cache cannot be written (no secret in the text).
fn write_confirmed(
    cache: Option<&Arc<dyn TokenCache>>,
    server: &str,
    unconfirmed: &Unconfirmed,
    kept: &client::Kept,
) -> Result<(), String> {
    let Some(credentials) = unconfirmed.lock().take() else { return Ok(()) };
    let Some(cache) = cache else { return Ok(()) };
    let text = client::document(&credentials, kept.get().as_ref())?;
    cache.save(server, &text)
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

    /// Kept in memory; tokens wait in [`Unconfirmed`] for the server's answer.
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        if credentials.token_response.is_some() {
            *self.unconfirmed.lock() = Some(credentials.clone());
        }
        *self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(credentials);
        Ok(())
    }

    /// The refresh token is dropped (memory and cache), the access token kept: rmcp asks
    /// again for every expired token otherwise (trial finding: two refused refreshes before
    /// the new login), and a later run would present the revoked refresh token once more.
    /// Tokens the server has not taken yet stay unconfirmed; the cached ones lose their
    /// refresh token in the cache at once.
    async fn on_refresh_token_rejected(&self, credentials: &StoredCredentials) -> Result<(), AuthError> {
        self.refused.store(true, std::sync::atomic::Ordering::SeqCst);
        let mut kept = credentials.clone();
        if let Some(tokens) = kept.token_response.as_mut() {
            tokens.set_refresh_token(None);
        }
        let waiting = self.unconfirmed.lock().is_some();
        self.save(kept).await?;
        if !waiting {
            write_confirmed(self.cache.as_ref(), &self.server, &self.unconfirmed, &self.kept)
                .map_err(AuthError::CredentialStoreError)?;
        }
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        *self.memory.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        *self.unconfirmed.lock() = None;
        match &self.cache {
            Some(cache) => cache.clear(&self.server).map_err(AuthError::CredentialStoreError),
            None => Ok(()),
        }
    }
}
