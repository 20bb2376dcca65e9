//! OAuth tokens of remote MCP servers in the credential store: service [`OAUTH_SERVICE`], the
//! server's URL as the key, the value a JSON document (client id, tokens, granted scopes,
//! issuer) that only `charly_mcp`'s client reads. Nothing here prints a value.

use std::path::PathBuf;
use std::sync::Mutex;

use charly::client::TokenCache;

use super::Store;
use crate::config::Settings;

/// The service OAuth tokens are kept under: `charly/oauth`.
pub const OAUTH_SERVICE: &str = "charly/oauth";

/// The credential store as the MCP client's token cache. The store is opened on first use
/// (the keyring probe is bounded), with the settings of `project_dir`.
pub struct OAuthTokens {
    project_dir: PathBuf,
    interactive: bool,
    store: Mutex<Option<Store>>,
}

impl std::fmt::Debug for OAuthTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthTokens").field("project_dir", &self.project_dir).finish_non_exhaustive()
    }
}

impl OAuthTokens {
    /// The cache of the host's credential store; `interactive`: the KDBX password may be
    /// asked on the terminal.
    pub fn new(project_dir: PathBuf, interactive: bool) -> OAuthTokens {
        OAuthTokens { project_dir, interactive, store: Mutex::new(None) }
    }

    fn with<T>(&self, f: impl FnOnce(&mut Store) -> Result<T, String>) -> Result<T, String> {
        let mut slot = self.store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            let settings = Settings::load(&self.project_dir)
                .map_err(|e| format!("the credential store's settings cannot be read: {e}"))?;
            *slot = Some(Store::open(settings, self.interactive));
        }
        let store = slot.as_mut().expect("opened above");
        f(store)
    }
}

impl TokenCache for OAuthTokens {
    fn load(&self, server: &str) -> Result<Option<String>, String> {
        self.with(|store| {
            store
                .get(OAUTH_SERVICE, server)
                .map(|found| found.value)
                .map_err(|e| format!("the credential store ({}) cannot be read: {e}", store.active().name()))
        })
    }

    fn save(&self, server: &str, document: &str) -> Result<(), String> {
        self.with(|store| {
            store.set(OAUTH_SERVICE, server, document).map(|_| ()).map_err(|e| {
                format!("the token cannot be kept in the credential store ({}): {e}", store.active().name())
            })
        })
    }

    fn clear(&self, server: &str) -> Result<(), String> {
        self.with(|store| {
            store.delete(OAUTH_SERVICE, server).map(|_| ()).map_err(|e| {
                format!(
                    "the token cannot be removed from the credential store ({}): {e}",
                    store.active().name()
                )
            })
        })
    }
}

/// `check mcp logout`: what was forgotten of a server's cached OAuth credentials. No token is
/// ever in it, only whether there was one.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct LoggedOut {
    /// The server's URL, the key of its entry (service `charly/oauth`), its password and
    /// query values shown as `***` ([`charly::client::redacted`]).
    pub url: String,
    /// Whether an entry was there (and is now removed).
    pub removed: bool,
    /// Whether the entry held an access token.
    pub access_token: bool,
    /// Whether the entry held a refresh token.
    pub refresh_token: bool,
    /// The OAuth client id the entry held (a dynamic registration's, a pre-registered
    /// client's or a client metadata document's URL), forgotten with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The credential store asked (`keyring`, `kdbx`, `config`).
    pub store: String,
}

impl std::fmt::Display for LoggedOut {
    /// `Forgot the OAuth login of URL (keyring): access token, refresh token, client
    /// registration client-1`, or `No OAuth login cached for URL (keyring)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.removed {
            return writeln!(f, "No OAuth login cached for {} ({}): nothing to forget", self.url, self.store);
        }
        let mut parts = Vec::new();
        if self.access_token {
            parts.push("access token".to_owned());
        }
        if self.refresh_token {
            parts.push("refresh token".to_owned());
        }
        if let Some(id) = &self.client_id {
            parts.push(format!("client registration {id}"));
        }
        let what = if parts.is_empty() { "an entry that held no token".to_owned() } else { parts.join(", ") };
        writeln!(f, "Forgot the OAuth login of {} ({}): {what}", self.url, self.store)
    }
}

impl crate::report::Report for LoggedOut {}

/// The keys `url` may be cached under: as given (the client's key is the URL as the command
/// named it), as the URL parser writes it (`http://h:1` is `http://h:1/`), and with or without
/// a trailing `/` (trial finding: `logout --url .../mcp/` found nothing cached for `.../mcp`).
fn url_forms(url: &str) -> Vec<String> {
    let mut forms = vec![url.to_owned()];
    let mut add = |form: String| {
        if !forms.contains(&form) {
            forms.push(form);
        }
    };
    if let Ok(parsed) = url::Url::parse(url) {
        add(parsed.as_str().to_owned());
        if parsed.query().is_none() && parsed.fragment().is_none() {
            match url.strip_suffix('/') {
                Some(without) if !without.ends_with('/') && parsed.path() != "/" => add(without.to_owned()),
                Some(_) => {}
                None => add(format!("{url}/")),
            }
        }
    }
    forms
}

/// Forgets the OAuth credentials cached for the server at `url` (its tokens and the client
/// registration they belong to), in the credential store of `project_dir`'s settings.
///
/// # Errors
///
/// Why the store cannot be read or written (no secret in the text), or `url` is not an http
/// or https URL.
pub fn logout(project_dir: PathBuf, url: &str, interactive: bool) -> Result<LoggedOut, String> {
    let shown = charly::client::redacted(url);
    let parsed = url::Url::parse(url)
        .map_err(|e| format!("--url {shown:?} is not a URL ({e}), e.g. https://mcp.example.com/mcp"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("--url {shown:?}: OAuth logins are kept for http and https servers only"));
    }
    let tokens = OAuthTokens::new(project_dir, interactive);
    let mut out = LoggedOut { url: shown.clone(), ..LoggedOut::default() };
    for key in url_forms(url) {
        let Some(document) = tokens.load(&key)? else { continue };
        // What the entry held, for the report; a document that does not parse is removed all
        // the same.
        let value: serde_json::Value = serde_json::from_str(&document).unwrap_or_default();
        let has = |field: &str| value["token_response"][field].as_str().is_some_and(|t| !t.is_empty());
        out.access_token |= has("access_token");
        out.refresh_token |= has("refresh_token");
        if out.client_id.is_none() {
            out.client_id = value["client_id"].as_str().filter(|id| !id.is_empty()).map(str::to_owned);
        }
        let removed = tokens.with(|store| {
            store.delete(OAUTH_SERVICE, &key).map_err(|e| {
                format!(
                    "the OAuth login of {shown} cannot be removed from the credential store ({}): {e}",
                    store.active().name()
                )
            })
        })?;
        out.removed |= removed;
    }
    out.store = tokens.with(|store| Ok(store.active().name()))?;
    Ok(out)
}
