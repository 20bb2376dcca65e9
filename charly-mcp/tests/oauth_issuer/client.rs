//! The client side of the OAuth login tests: a token cache that remembers what was written (the
//! CLI's is the credential store), connect options with it, a first login against a fresh
//! authorization server and resource server, and readers of the cached document.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use charly_mcp::client::{self, ConnectOptions, Endpoint, OAuthOptions, Protocol, TokenCache, TransportKind};
use charly_mcp::server::ServerHandle;

use super::{Issuer, serve};

/// A token cache that remembers what was written (the CLI's is the credential store).
#[derive(Default)]
pub struct Recorded(pub Mutex<HashMap<String, String>>);

impl TokenCache for Recorded {
    fn load(&self, server: &str) -> Result<Option<String>, String> {
        Ok(self.0.lock().unwrap().get(server).cloned())
    }
    fn save(&self, server: &str, document: &str) -> Result<(), String> {
        self.0.lock().unwrap().insert(server.to_owned(), document.to_owned());
        Ok(())
    }
    fn clear(&self, server: &str) -> Result<(), String> {
        self.0.lock().unwrap().remove(server);
        Ok(())
    }
}

impl Recorded {
    /// The cached document of `url`, parsed.
    pub fn document(&self, url: &str) -> serde_json::Value {
        let document = self.0.lock().unwrap().get(url).cloned().expect("a cached document");
        serde_json::from_str(&document).unwrap()
    }

    /// Changes the cached document of `url` with `edit`.
    pub fn edit(&self, url: &str, edit: impl FnOnce(&mut serde_json::Value)) {
        let mut value = self.document(url);
        edit(&mut value);
        self.0.lock().unwrap().insert(url.to_owned(), value.to_string());
    }

    /// The `registration` (the client kept for the next login) of the cached document of `url`.
    pub fn registration(&self, url: &str) -> serde_json::Value {
        self.document(url)["registration"].clone()
    }

    /// Makes the cached token of `url` an hour older (expired, for the client).
    pub fn age(&self, url: &str) {
        self.edit(url, |value| {
            let received = value["token_received_at"].as_u64().expect("token_received_at");
            value["token_received_at"] = serde_json::json!(received - 3600);
        });
    }
}

/// Connect options that log in with `cache` within `timeout`.
pub fn options(cache: &Arc<Recorded>, timeout: Duration) -> ConnectOptions {
    ConnectOptions {
        timeout,
        protocol: Protocol::Initialize,
        oauth: OAuthOptions { cache: Some(cache.clone() as Arc<dyn TokenCache>), ..Default::default() },
        ..Default::default()
    }
}

/// The Streamable HTTP endpoint at `url`.
pub fn endpoint(url: &str) -> Endpoint {
    Endpoint::url(url, TransportKind::StreamableHttp).unwrap()
}

/// `options` whose login notices are recorded (instead of printed on stderr).
pub fn noticed(mut options: ConnectOptions) -> (ConnectOptions, Arc<Mutex<Vec<String>>>) {
    let notices = Arc::new(Mutex::new(Vec::new()));
    let recorded = notices.clone();
    options.oauth.notice = Some(Arc::new(move |text: &str| recorded.lock().unwrap().push(text.to_owned())));
    (options, notices)
}

/// An authorization server, charly's resource server guarded by it, and a cache holding the
/// login of a first run (one registration, a token for `mcp:read`).
pub struct LoggedIn {
    pub issuer: Issuer,
    pub handle: ServerHandle,
    /// The resource server's URL.
    pub url: String,
    pub cache: Arc<Recorded>,
}

impl LoggedIn {
    pub async fn start() -> LoggedIn {
        let issuer = Issuer::start().await;
        let handle = serve(&issuer).await;
        let url = handle.url();
        let cache = Arc::new(Recorded::default());
        let session =
            client::connect(&endpoint(&url), &options(&cache, Duration::from_secs(20))).await.unwrap();
        session.close().await;
        LoggedIn { issuer, handle, url, cache }
    }

    /// Stops both servers.
    pub async fn stop(self) {
        self.handle.shutdown().await.unwrap();
        self.issuer.stop.cancel();
    }
}
