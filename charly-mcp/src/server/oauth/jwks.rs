//! [`Jwks`]: the issuer's signing keys, fetched when first needed, cached, and fetched again
//! for a key id the cache does not hold (the issuer rotated its keys), or once the cache is
//! [`MAX_AGE`] old. A fetch that did not find the key a token named holds off the next one
//! for [`REFETCH_AFTER`]: tokens naming made-up key ids cost one fetch per interval.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// Shortest time from a fetch that missed the key it was for to the next fetch: tokens
/// naming key ids the issuer does not have cost one fetch per interval, not one per request.
pub(super) const REFETCH_AFTER: Duration = Duration::from_secs(10);
/// Age after which the keys are fetched again before use (a key the issuer has removed stops
/// verifying tokens within this time).
pub(super) const MAX_AGE: Duration = Duration::from_secs(3600);
/// How long one fetch may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest metadata or JWKS document read, in bytes.
const MAX_DOCUMENT: usize = 1024 * 1024;

/// Why no key verifies a token (the `error_description` of the 401, or a 503 when the keys
/// could not be had at all).
#[derive(Debug)]
pub(super) enum KeyError {
    /// The issuer's keys could not be fetched: the server cannot check any token now.
    Unavailable(String),
    /// The issuer has no key of this id (or, for a token without `kid`, no single key).
    Unknown(String),
}

/// One usable key.
#[derive(Clone)]
struct Key {
    kid: Option<String>,
    /// The `alg` the key is restricted to, if the JWK names one.
    alg: Option<Algorithm>,
    key: Arc<DecodingKey>,
}

/// The keys of one fetch.
struct KeySet {
    keys: Vec<Key>,
    fetched: Instant,
}

/// The issuer's keys, shared by every request.
pub(super) struct Jwks {
    http: reqwest::Client,
    issuer: String,
    /// Where the keys are: given, or found in the issuer's metadata on the first fetch.
    uri: Mutex<Option<String>>,
    cache: Mutex<Option<Arc<KeySet>>>,
    /// Serialises fetches; holds when the last one that missed its key ended.
    fetching: tokio::sync::Mutex<Option<Instant>>,
    /// How many key sets were fetched: a token verified with an earlier set is verified
    /// again (its key may be gone).
    generation: AtomicU64,
}

impl Jwks {
    /// The keys of `issuer`, at `uri` or where its metadata says; `ca_file` adds CAs to the
    /// system's roots for them.
    ///
    /// # Errors
    ///
    /// The CA file cannot be read or holds no certificate (see [`ca_certificates`]), or the
    /// HTTP client cannot be built.
    pub(super) fn new(issuer: &str, uri: Option<&str>, ca_file: Option<&Path>) -> Result<Jwks, String> {
        // With the client half in the build, reqwest carries rustls without a provider of its
        // own and panics on build until one is installed: an https issuer needs it anyway.
        #[cfg(feature = "client")]
        crate::client::install_tls_provider();
        let mut builder = reqwest::Client::builder().timeout(FETCH_TIMEOUT);
        if let Some(path) = ca_file {
            builder = builder.tls_certs_merge(ca_certificates(path)?);
        }
        let http = builder.build().map_err(|e| {
            format!("cannot build the HTTP client for the issuer's keys: {}", error_chain(&e))
        })?;
        Ok(Jwks {
            http,
            issuer: issuer.to_owned(),
            uri: Mutex::new(uri.map(str::to_owned)),
            cache: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
        })
    }

    /// The number of the key set in use (see [`Jwks::generation`]'s field): it changes with
    /// every fetch.
    pub(super) fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The key that verifies a token signed with `alg` by key `kid`.
    ///
    /// # Errors
    ///
    /// [`KeyError::Unknown`] when the issuer's keys (fetched afresh if the id is new) hold
    /// no such key, [`KeyError::Unavailable`] when they cannot be fetched.
    pub(super) async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<Arc<DecodingKey>, KeyError> {
        let cached = self.cache.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(set) = &cached
            && set.fetched.elapsed() < MAX_AGE
            && let Some(key) = pick(set, kid, alg)
        {
            return Ok(key);
        }
        let mut missed = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let cached = self.cache.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let fresh = cached.as_ref().filter(|set| set.fetched.elapsed() < MAX_AGE);
        if let Some(set) = fresh {
            if let Some(key) = pick(set, kid, alg) {
                return Ok(key);
            }
            if missed.is_some_and(|at| at.elapsed() < REFETCH_AFTER) {
                return Err(KeyError::Unknown(unknown(kid, alg)));
            }
        }
        match self.fetch().await {
            Ok(set) => {
                let set = Arc::new(set);
                *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = Some(set.clone());
                self.generation.fetch_add(1, Ordering::SeqCst);
                let key = pick(&set, kid, alg);
                *missed = key.is_none().then(Instant::now);
                key.ok_or_else(|| KeyError::Unknown(unknown(kid, alg)))
            }
            Err(why) => {
                *missed = Some(Instant::now());
                tracing::warn!("{why}");
                // Keys that were good an hour ago still verify what they signed.
                match cached.as_ref().and_then(|set| pick(set, kid, alg)) {
                    Some(key) => Ok(key),
                    None => Err(KeyError::Unavailable(why)),
                }
            }
        }
    }

    /// Fetches the key set (and, the first time without a `jwks_uri`, the issuer's metadata).
    async fn fetch(&self) -> Result<KeySet, String> {
        let known = self.uri.lock().unwrap_or_else(PoisonError::into_inner).clone();
        let uri = match known {
            Some(uri) => uri,
            None => {
                let uri = self.discover().await?;
                *self.uri.lock().unwrap_or_else(PoisonError::into_inner) = Some(uri.clone());
                uri
            }
        };
        let document = self
            .get(&uri)
            .await
            .map_err(|e| format!("cannot fetch the issuer's keys (JWKS) from {uri}: {e}"))?;
        let Some(Value::Array(entries)) = document.get("keys") else {
            return Err(format!("the JWKS at {uri} has no `keys` array (RFC 7517 section 5)"));
        };
        let keys: Vec<Key> = entries.iter().filter_map(usable).collect();
        if keys.is_empty() {
            return Err(format!("the JWKS at {uri} holds no RS256 or ES256 signing key"));
        }
        tracing::debug!(keys = keys.len(), %uri, "fetched the issuer's keys");
        Ok(KeySet { keys, fetched: Instant::now() })
    }

    /// The `jwks_uri` of the issuer's metadata: RFC 8414's well-known path (inserted before
    /// the issuer's path), then OpenID Connect Discovery's (appended to it).
    async fn discover(&self) -> Result<String, String> {
        let issuer =
            url::Url::parse(&self.issuer).map_err(|e| format!("the issuer {:?}: {e}", self.issuer))?;
        let path = issuer.path().trim_end_matches('/');
        let origin = issuer.origin().ascii_serialization();
        let candidates = [
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{}/.well-known/openid-configuration", self.issuer.trim_end_matches('/')),
        ];
        let mut tried = Vec::new();
        for candidate in &candidates {
            match self.get(candidate).await {
                Ok(metadata) => {
                    // RFC 8414 section 3.3: the metadata must be the issuer's own.
                    if metadata.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str()) {
                        tried.push(format!("{candidate}: its `issuer` is not {:?}", self.issuer));
                        continue;
                    }
                    return match metadata.get("jwks_uri").and_then(Value::as_str) {
                        Some(uri) => Ok(uri.to_owned()),
                        None => Err(format!(
                            "the issuer's metadata at {candidate} has no `jwks_uri`; give --oauth-jwks-uri"
                        )),
                    };
                }
                Err(e) => tried.push(format!("{candidate}: {e}")),
            }
        }
        Err(format!("cannot find the issuer's keys: no authorization server metadata ({})", tried.join("; ")))
    }

    /// A JSON document from `url`, at most [`MAX_DOCUMENT`] bytes.
    async fn get(&self, url: &str) -> Result<Value, String> {
        let mut response = self.http.get(url).send().await.map_err(|e| {
            let chain = error_chain(&e);
            // The certificate of an issuer behind a private CA: say how to trust it.
            if chain.contains("certificate") {
                format!("{chain} (for an issuer behind a private CA give --oauth-ca-file CA.pem)")
            } else {
                chain
            }
        })?;
        if !response.status().is_success() {
            return Err(format!("HTTP {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| error_chain(&e))? {
            if body.len() + chunk.len() > MAX_DOCUMENT {
                return Err(format!("the document is over {MAX_DOCUMENT} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("not JSON: {e}"))
    }
}

/// The CA certificates of the PEM file `path` (`--oauth-ca-file`).
///
/// # Errors
///
/// `--oauth-ca-file PATH: ...` when it cannot be read, is not PEM, or holds no certificate.
pub(super) fn ca_certificates(path: &Path) -> Result<Vec<reqwest::Certificate>, String> {
    let pem = std::fs::read(path)
        .map_err(|e| format!("--oauth-ca-file {}: cannot read it: {e}", path.display()))?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| format!("--oauth-ca-file {}: not a PEM file of CA certificates: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!(
            "--oauth-ca-file {}: no certificate in it (expected PEM blocks `-----BEGIN CERTIFICATE-----`)",
            path.display()
        ));
    }
    Ok(certs)
}

/// `e` and its sources, `: `-joined (reqwest's own message says only "error sending request").
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        message.push_str(": ");
        message.push_str(&inner.to_string());
        source = inner.source();
    }
    message
}

/// A JWK this server can verify with: RSA or P-256, for signing (no `use`, or `sig`), its
/// `alg` (when given) RS256 or ES256. Others (encryption keys, other curves) are skipped.
fn usable(entry: &Value) -> Option<Key> {
    let jwk: Jwk = serde_json::from_value(entry.clone()).ok()?;
    if matches!(jwk.common.public_key_use, Some(ref u) if *u != PublicKeyUse::Signature) {
        return None;
    }
    let alg = match jwk.common.key_algorithm {
        None => None,
        Some(KeyAlgorithm::RS256) => Some(Algorithm::RS256),
        Some(KeyAlgorithm::ES256) => Some(Algorithm::ES256),
        Some(_) => return None,
    };
    let key = DecodingKey::from_jwk(&jwk).ok()?;
    Some(Key { kid: jwk.common.key_id.clone(), alg, key: Arc::new(key) })
}

/// The key of `kid` for `alg`; for a token without `kid`, the only key for `alg`.
fn pick(set: &KeySet, kid: Option<&str>, alg: Algorithm) -> Option<Arc<DecodingKey>> {
    let fits = |key: &&Key| key.alg.is_none_or(|a| a == alg) && key.key.family() == alg.family();
    match kid {
        Some(kid) => set.keys.iter().filter(fits).find(|key| key.kid.as_deref() == Some(kid)),
        None => {
            let mut candidates = set.keys.iter().filter(fits);
            match (candidates.next(), candidates.next()) {
                (Some(only), None) => Some(only),
                _ => None,
            }
        }
    }
    .map(|key| key.key.clone())
}

/// The description of a token whose key is not in the set.
fn unknown(kid: Option<&str>, alg: Algorithm) -> String {
    match kid {
        Some(kid) => format!("the issuer has no {alg:?} signing key with key id (kid) `{kid}`"),
        None => format!("the token names no key id (kid) and the issuer has not exactly one {alg:?} key"),
    }
}
