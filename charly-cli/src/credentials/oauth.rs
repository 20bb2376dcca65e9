//! OAuth tokens of remote MCP servers in the credential store: service [`OAUTH_SERVICE`], the
//! server's URL as the key, the value a JSON document (client id, tokens, granted scopes,
//! issuer, and the client charly registered: its redirect URI, authorization server and
//! secret if any) that only `charly_mcp`'s client reads. Nothing here prints a value.

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

impl OAuthTokens {
    /// Reads the entry of `key`.
    fn read(&self, key: &str) -> Result<Option<String>, String> {
        self.with(|store| {
            store
                .get(OAUTH_SERVICE, key)
                .map(|found| found.value)
                .map_err(|e| format!("the credential store ({}) cannot be read: {e}", store.active().name()))
        })
    }

    /// Removes the entry of `key`; whether there was one.
    fn remove(&self, key: &str) -> Result<bool, String> {
        self.with(|store| {
            store.delete(OAUTH_SERVICE, key).map_err(|e| {
                format!(
                    "the token cannot be removed from the credential store ({}): {e}",
                    store.active().name()
                )
            })
        })
    }
}

/// Each server's login is kept under [`server_key`] of its URL; an entry an earlier charly
/// wrote under the URL as given (any of [`url_forms`]) is still read, and moved to the key on
/// the next write.
impl TokenCache for OAuthTokens {
    fn load(&self, server: &str) -> Result<Option<String>, String> {
        for key in keys_of(server) {
            if let Some(document) = self.read(&key)? {
                return Ok(Some(document));
            }
        }
        Ok(None)
    }

    fn save(&self, server: &str, document: &str) -> Result<(), String> {
        let key = server_key(server);
        self.with(|store| {
            store.set(OAUTH_SERVICE, &key, document).map(|_| ()).map_err(|e| {
                format!("the token cannot be kept in the credential store ({}): {e}", store.active().name())
            })
        })?;
        for legacy in keys_of(server).into_iter().filter(|k| *k != key) {
            self.remove(&legacy)?;
        }
        Ok(())
    }

    fn clear(&self, server: &str) -> Result<(), String> {
        for key in keys_of(server) {
            self.remove(&key)?;
        }
        Ok(())
    }
}

/// The key a server's login is kept under: its URL as the URL parser writes it (scheme and
/// host in lower case, a default port dropped), without user info (tokens are the
/// resource's, not the URL's credentials, which no key should hold) or fragment, and without
/// a trailing `/` on a path other than the root: `https://H.example:443/mcp/` and
/// `https://h.example/mcp` name the same login. The query is kept (another query may be
/// another resource). Text that is not a URL is its own key.
pub fn server_key(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else { return url.to_owned() };
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_fragment(None);
    let path = parsed.path().to_owned();
    if path.len() > 1 && path.ends_with('/') {
        parsed.set_path(path.trim_end_matches('/'));
        if parsed.path().is_empty() {
            parsed.set_path("/");
        }
    }
    parsed.to_string()
}

/// [`server_key`] of `url` first, then the forms an earlier charly kept its login under.
fn keys_of(url: &str) -> Vec<String> {
    let mut keys = vec![server_key(url)];
    for form in url_forms(url) {
        if !keys.contains(&form) {
            keys.push(form);
        }
    }
    keys
}

/// `check mcp logout`: what was forgotten of a server's cached OAuth credentials. No token is
/// ever in it, only whether there was one; when there was none, which servers have one.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct LoggedOut {
    /// The server's URL, the key of its entry (service `charly/oauth`), its password and
    /// query values shown as `***`.
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
    /// When nothing was removed: the servers whose logins the store keeps (their URLs, a
    /// password and query values shown as `***`), so a logout that named another server says
    /// which ones it could have meant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored: Vec<String>,
}

impl std::fmt::Display for LoggedOut {
    /// `Forgot the OAuth login of URL (keyring): access token, refresh token, client
    /// registration client-1`, or `No OAuth login cached for URL (keyring): nothing to forget`,
    /// then `; OAuth logins are cached for URL, URL` when the store keeps others.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.removed {
            write!(f, "No OAuth login cached for {} ({}): nothing to forget", self.url, self.store)?;
            if !self.stored.is_empty() {
                write!(f, "; OAuth logins are cached for {}", self.stored.join(", "))?;
            }
            return writeln!(f);
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

/// The keys an earlier charly may have kept `url`'s login under: as given (its key was the URL
/// as the command named it), as the URL parser writes it (`http://h:1` is `http://h:1/`), and with or without
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
/// registration they belong to), in the credential store of `project_dir`'s settings. `flag`
/// names `url` in messages as the caller gave it (`--url`, or `url` in a tool call).
///
/// # Errors
///
/// Why the store cannot be read or written (no secret in the text), or `url` is not an http
/// or https URL.
pub fn logout(project_dir: PathBuf, url: &str, flag: &str, interactive: bool) -> Result<LoggedOut, String> {
    let shown = charly::client::redacted(url);
    let parsed = url::Url::parse(url)
        .map_err(|e| format!("{flag} {shown:?} is not a URL ({e}), e.g. https://mcp.example.com/mcp"))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("{flag} {shown:?}: OAuth logins are kept for http and https servers only"));
    }
    let tokens = OAuthTokens::new(project_dir, interactive);
    let mut out = LoggedOut { url: shown.clone(), ..LoggedOut::default() };
    let stored = tokens.with(|store| {
        store
            .keys(OAUTH_SERVICE)
            .map_err(|e| format!("the credential store ({}) cannot be listed: {e}", store.active().name()))
    })?;
    // Any other spelling of the same server an earlier charly kept (`HTTPS://Host/mcp`, a
    // hand-written entry) goes too.
    let mut keys = keys_of(url);
    let target = server_key(url);
    let spellings: Vec<String> =
        stored.iter().filter(|k| server_key(k) == target && !keys.contains(k)).cloned().collect();
    keys.extend(spellings);
    for key in keys {
        let Some(document) = tokens.read(&key)? else { continue };
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
    if !out.removed {
        out.stored = stored.iter().map(|k| charly::client::redacted(&server_key(k))).collect();
        out.stored.dedup();
    }
    Ok(out)
}
