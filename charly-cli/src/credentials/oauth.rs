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
