//! [`Guard`]: the access-token check in front of the MCP endpoint, and the metadata routes
//! beside it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse as _, Response};
use http::{HeaderValue, Method, StatusCode, header};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Validation, decode, decode_header};
use serde::Deserialize;
use serde_json::{Value, json};

use super::OAuthOptions;
use super::crypto::{self, ALGORITHMS};
use super::jwks::{Jwks, KeyError};
use super::metadata::Metadata;
use super::owners::Owners;
use crate::catalog::JsonObject;
use crate::server::handler::{AUTH_META_KEY, HostMeta};
use crate::server::state::ServerState;

/// Longest `error_description` sent (a token's `kid` is the client's to choose).
const MAX_DESCRIPTION: usize = 300;
/// Longest time a verified token is taken without checking its signature again, in seconds
/// (never past its `exp`).
const CACHE_FOR: u64 = 300;
/// Most verified tokens kept.
const MAX_CACHED: usize = 4096;

/// What a request's token allows, as a request extension the session handler reads before
/// running a tool: it refuses a tool that is not read-only when the write scope is missing,
/// whatever the HTTP layer made of the body.
#[derive(Clone, Debug)]
pub(crate) struct ScopeGrant {
    /// The write scope, when the token lacks it.
    pub(crate) missing_write: Option<String>,
}

/// The resource server of one endpoint: its settings, its metadata and the issuer's keys.
pub(crate) struct Guard {
    issuer: String,
    resource: String,
    read_scope: Option<String>,
    write_scope: Option<String>,
    leeway: u64,
    metadata: Metadata,
    jwks: Jwks,
    server: Arc<ServerState>,
    /// The endpoint's body limit (`HttpOptions::max_body_bytes`).
    max_body: usize,
    /// Tokens verified lately, by their SHA-256, with when to verify them again (Unix
    /// seconds) and the key set they were verified with: a session's requests carry the same
    /// token, and a signature check costs a hundred microseconds or more. Once the issuer's
    /// keys were fetched again, a token is verified again with them (trial finding: a token
    /// signed by a key the issuer removed was taken for minutes).
    verified: Mutex<HashMap<[u8; 32], Verified>>,
    /// The subject each session was opened by.
    owners: Owners,
}

/// A verified token's claims, when to verify it again (Unix seconds), and the
/// [`Jwks::generation`] of the keys that verified it.
type Verified = (Arc<Claims>, u64, u64);

/// The claims read from an access token (RFC 9068 section 2.2).
#[derive(Deserialize)]
struct Claims {
    /// Checked by `jsonwebtoken` (required); read here for the cache.
    #[serde(default)]
    exp: Option<f64>,
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    iss: Option<String>,
    /// Space-separated scopes (RFC 9068, RFC 8693 section 4.2).
    #[serde(default)]
    scope: Option<String>,
    /// Scopes as Entra ID and Okta write them: an array, or a space-separated string.
    #[serde(default)]
    scp: Option<Value>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
}

impl Claims {
    fn scopes(&self) -> Vec<String> {
        let mut scopes: Vec<String> = Vec::new();
        let words = |s: &str| s.split(' ').filter(|w| !w.is_empty()).map(str::to_owned).collect::<Vec<_>>();
        if let Some(scope) = &self.scope {
            scopes.extend(words(scope));
        }
        match &self.scp {
            Some(Value::String(s)) => scopes.extend(words(s)),
            Some(Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(Value::as_str).map(str::to_owned))
            }
            _ => {}
        }
        let mut seen = HashSet::new();
        scopes.retain(|s| seen.insert(s.clone()));
        scopes
    }
}

/// Why a request is refused.
enum Refusal {
    /// 401: no token, or not a valid one (its description then).
    Unauthorized(Option<String>),
    /// 403: a valid token without these scopes (all the operation needs), and why.
    Scope(String, String),
    /// 503: the issuer's keys cannot be had.
    Unavailable(String),
    /// 403: a valid token of another subject than the session's.
    Session(String),
}

impl Guard {
    /// The guard of an endpoint at `endpoint_path` that is the resource `resource`, serving
    /// `server`, reading bodies up to `max_body` bytes. `options` passed
    /// [`OAuthOptions::check`].
    pub(crate) fn new(
        options: &OAuthOptions,
        resource: &str,
        endpoint_path: &str,
        server: Arc<ServerState>,
        max_body: usize,
    ) -> Result<Guard, String> {
        crypto::install();
        let parsed =
            url::Url::parse(resource).map_err(|e| format!("the OAuth resource URL {resource:?}: {e}"))?;
        let metadata = Metadata::new(options, resource, &parsed, endpoint_path);
        for path in &metadata.paths {
            crate::server::check_path(path)
                .map_err(|why| format!("the protected resource metadata path: {why}"))?;
        }
        Ok(Guard {
            issuer: options.issuer.clone(),
            resource: resource.to_owned(),
            read_scope: options.read_scope.clone(),
            write_scope: options.write_scope.clone(),
            leeway: options.leeway.as_secs(),
            metadata,
            jwks: Jwks::new(&options.issuer, options.jwks_uri.as_deref(), options.ca_file.as_deref())?,
            server,
            max_body,
            verified: Mutex::new(HashMap::new()),
            owners: Owners::default(),
        })
    }

    /// The metadata routes (GET), outside the token check.
    pub(crate) fn routes(self: &Arc<Self>) -> Router {
        let mut router = Router::new();
        for path in &self.metadata.paths {
            let guard = self.clone();
            router = router.route(path, axum::routing::get(move || async move { guard.metadata.response() }));
        }
        router
    }

    /// Lets `request` through to `next` when its token is valid and has the scopes its
    /// operation needs, with the token's identity in its [`HostMeta`]; answers 401, 403 or
    /// 503 otherwise.
    pub(crate) async fn check(self: Arc<Self>, request: Request, next: Next) -> Response {
        match self.admit(request).await {
            Ok((request, subject)) => {
                let had_session = request.headers().contains_key("mcp-session-id");
                let response = next.run(request).await;
                self.owners.record(had_session, response.headers(), subject);
                response
            }
            Err(refusal) => self.refuse(refusal),
        }
    }

    /// `request` with the token's identity in its meta, and the token's subject.
    async fn admit(&self, mut request: Request) -> Result<(Request, Option<String>), Refusal> {
        let token =
            bearer(request.headers().get(header::AUTHORIZATION)).ok_or(Refusal::Unauthorized(None))?;
        let claims = self.validate(token).await?;
        self.owners.check(request.headers(), claims.sub.as_deref()).map_err(Refusal::Session)?;
        let scopes = claims.scopes();
        let has = |scope: &str| scopes.iter().any(|s| s == scope);
        if let Some(read) = self.read_scope.as_deref().filter(|s| !has(s)) {
            return Err(Refusal::Scope(
                read.to_owned(),
                format!("every request to this server needs scope {read}; the token has {}", listed(&scopes)),
            ));
        }
        let missing_write = self.write_scope.clone().filter(|s| !has(s));
        if let Some(write) = &missing_write
            && request.method() == Method::POST
        {
            let (back, tool) = self.writing_call(request).await?;
            request = back;
            if let Some(tool) = tool {
                let needed: Vec<&str> = self.read_scope.iter().chain([write]).map(String::as_str).collect();
                return Err(Refusal::Scope(
                    needed.join(" "),
                    format!(
                        "tool `{tool}` is not read-only: calling it needs scope {write}; the token has {}",
                        listed(&scopes)
                    ),
                ));
            }
        }
        let identity = json!({
            "subject": claims.sub,
            "scopes": scopes,
            "issuer": claims.iss,
            "clientId": claims.client_id.as_ref().or(claims.azp.as_ref()),
        });
        let extensions = request.extensions_mut();
        let mut meta = extensions.remove::<HostMeta>().map(|m| m.0).unwrap_or_else(JsonObject::new);
        meta.insert(AUTH_META_KEY.to_owned(), identity);
        extensions.insert(HostMeta(meta));
        extensions.insert(ScopeGrant { missing_write });
        Ok((request, claims.sub.clone()))
    }

    /// The claims of `token`, when it is a JWT this server accepts: from the cache when it
    /// was verified less than [`CACHE_FOR`] ago and has not expired since.
    async fn validate(&self, token: &str) -> Result<Arc<Claims>, Refusal> {
        use sha2::Digest as _;
        let digest: [u8; 32] = sha2::Sha256::digest(token.as_bytes()).into();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        if let Some((claims, until, keys)) =
            self.verified.lock().unwrap_or_else(PoisonError::into_inner).get(&digest)
            && now < *until
            && *keys == self.jwks.generation()
        {
            return Ok(claims.clone());
        }
        // Read before: a fetch during the check makes the next request check again.
        let keys = self.jwks.generation();
        let claims = match self.verify(token).await {
            Ok(claims) => Arc::new(claims),
            Err(refusal) => {
                self.verified.lock().unwrap_or_else(PoisonError::into_inner).remove(&digest);
                return Err(refusal);
            }
        };
        // `exp` is required and checked: it is there, and (within the leeway) in the future.
        let expires = claims.exp.map_or(now, |exp| exp as u64).saturating_add(self.leeway);
        let until = expires.min(now + CACHE_FOR);
        let mut verified = self.verified.lock().unwrap_or_else(PoisonError::into_inner);
        if verified.len() >= MAX_CACHED {
            verified.retain(|_, (_, until, _)| now < *until);
            if verified.len() >= MAX_CACHED {
                verified.clear();
            }
        }
        verified.insert(digest, (claims.clone(), until, keys));
        Ok(claims)
    }

    /// The claims of `token`, its signature and claims checked.
    async fn verify(&self, token: &str) -> Result<Claims, Refusal> {
        let invalid = |why: String| Refusal::Unauthorized(Some(why));
        // An algorithm jsonwebtoken does not know (`none`, `HS1`...) fails its header parse
        // with a serde message: name the algorithm instead.
        if let Some(alg) = header_alg(token)
            && !ALGORITHMS.iter().any(|known| format!("{known:?}") == alg)
        {
            // The token's own text, in a header: letters and digits only, at most 20.
            let shown: String = alg.chars().filter(char::is_ascii_alphanumeric).take(20).collect();
            return Err(invalid(if alg.eq_ignore_ascii_case("none") {
                "the access token is unsigned (alg none); this server accepts RS256 and ES256".to_owned()
            } else {
                format!("the access token is signed with {shown}; this server accepts RS256 and ES256")
            }));
        }
        let header = decode_header(token)
            .map_err(|e| invalid(format!("the access token is not a JWT this server can read ({e})")))?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(invalid(format!(
                "the access token is signed with {:?}; this server accepts RS256 and ES256",
                header.alg
            )));
        }
        let key = self.jwks.key(header.kid.as_deref(), header.alg).await.map_err(|e| match e {
            KeyError::Unknown(why) => invalid(why),
            KeyError::Unavailable(why) => Refusal::Unavailable(why),
        })?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.resource]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.leeway;
        decode::<Claims>(token, &key, &validation).map(|data| data.claims).map_err(|e| {
            invalid(match e.kind() {
                ErrorKind::InvalidSignature => {
                    "the access token's signature does not verify with the issuer's key".to_owned()
                }
                ErrorKind::ExpiredSignature => "the access token has expired (exp)".to_owned(),
                ErrorKind::ImmatureSignature => "the access token is not valid yet (nbf)".to_owned(),
                ErrorKind::InvalidIssuer => {
                    format!("the access token is not from the trusted issuer: its iss is not {}", self.issuer)
                }
                ErrorKind::InvalidAudience => format!(
                    "the access token is for another resource: its audience (aud) is not {}",
                    self.resource
                ),
                ErrorKind::MissingRequiredClaim(claim) => format!("the access token has no `{claim}` claim"),
                ErrorKind::InvalidClaimFormat(claim) => {
                    format!("the access token's `{claim}` claim is malformed")
                }
                // A claim of another type than RFC 9068 gives it (a JSON array for `scope`, a
                // string `exp`): the parser's own words name Rust types (trial finding).
                ErrorKind::Json(_) => "the access token's claims are malformed: `scope` must be a string of \
                                       space-separated scopes, `exp`, `nbf` and `iat` numbers, `sub`, `iss`, \
                                       `client_id` strings"
                    .to_owned(),
                _ => format!("the access token is refused: {e}"),
            })
        })
    }

    /// `request` (its body read and put back) and, when it is a `tools/call` of a served
    /// tool that is not read-only, that tool's name as the request spells it.
    async fn writing_call(&self, request: Request) -> Result<(Request, Option<String>), Refusal> {
        let declared = request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<usize>().ok());
        if declared.is_some_and(|length| length > self.max_body) {
            // The endpoint refuses it whole (413), reading nothing.
            return Ok((request, None));
        }
        let (parts, body) = request.into_parts();
        let Ok(bytes) = axum::body::to_bytes(body, self.max_body).await else {
            // Too long without a length, or cut off: the endpoint sees an empty body and
            // refuses it as unreadable, running nothing.
            return Ok((Request::from_parts(parts, Body::empty()), None));
        };
        let tool = self.writing_tool(&bytes);
        Ok((Request::from_parts(parts, Body::from(bytes)), tool))
    }

    /// The first tool that is not read-only a `tools/call` in `body` (a message or a batch)
    /// names.
    fn writing_tool(&self, body: &[u8]) -> Option<String> {
        let message: Value = serde_json::from_slice(body).ok()?;
        let messages = match &message {
            Value::Array(batch) => batch.iter().collect(),
            one => vec![one],
        };
        messages.into_iter().find_map(|m| {
            if m.get("method")?.as_str()? != "tools/call" {
                return None;
            }
            let name = m.get("params")?.get("name")?.as_str()?;
            let index = *self.server.routes.get(name)?;
            (!self.server.tools[index].annotations().read_only_hint).then(|| name.to_owned())
        })
    }

    fn refuse(&self, refusal: Refusal) -> Response {
        let mut challenge = String::from("Bearer");
        let mut param = |name: &str, value: &str| {
            let sep = if challenge.len() > "Bearer".len() { "," } else { "" };
            challenge.push_str(&format!("{sep} {name}=\"{}\"", quotable(value)));
        };
        // What was wrong, for the operator (never the token).
        match &refusal {
            Refusal::Unauthorized(None) => tracing::debug!("refused a request without an access token (401)"),
            Refusal::Unauthorized(Some(why)) => tracing::info!("refused an access token (401): {why}"),
            Refusal::Scope(_, why) => tracing::info!("refused a request for its scopes (403): {why}"),
            Refusal::Unavailable(why) => tracing::warn!("cannot check access tokens (503): {why}"),
            Refusal::Session(why) => tracing::info!("refused a request for its session (403): {why}"),
        }
        let (status, body) = match &refusal {
            Refusal::Unauthorized(None) => {
                param("resource_metadata", &self.metadata.url);
                if let Some(read) = &self.read_scope {
                    param("scope", read);
                }
                let why = format!(
                    "this server needs `Authorization: Bearer <access token>` with a token from {} for {}; \
                     its protected resource metadata is at {}",
                    self.issuer, self.resource, self.metadata.url
                );
                (StatusCode::UNAUTHORIZED, json!({"error": "unauthorized", "error_description": why}))
            }
            Refusal::Unauthorized(Some(why)) => {
                param("error", "invalid_token");
                param("error_description", why);
                param("resource_metadata", &self.metadata.url);
                if let Some(read) = &self.read_scope {
                    param("scope", read);
                }
                (StatusCode::UNAUTHORIZED, json!({"error": "invalid_token", "error_description": why}))
            }
            Refusal::Scope(needed, why) => {
                param("error", "insufficient_scope");
                param("scope", needed);
                param("resource_metadata", &self.metadata.url);
                param("error_description", why);
                (
                    StatusCode::FORBIDDEN,
                    json!({"error": "insufficient_scope", "scope": needed, "error_description": why}),
                )
            }
            Refusal::Session(why) => {
                (StatusCode::FORBIDDEN, json!({"error": "access_denied", "error_description": why}))
            }
            Refusal::Unavailable(why) => (
                StatusCode::SERVICE_UNAVAILABLE,
                json!({"error": "temporarily_unavailable", "error_description":
                    format!("this server cannot check access tokens now: {why}")}),
            ),
        };
        let mut response = (status, body.to_string()).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        if status == StatusCode::SERVICE_UNAVAILABLE {
            headers.insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        } else if matches!(refusal, Refusal::Session(_)) {
            // Not a challenge: no other token of this subject would do.
        } else if let Ok(value) = HeaderValue::from_str(&challenge) {
            headers.insert(header::WWW_AUTHENTICATE, value);
        }
        crate::server::http::close_after_refusal(response)
    }
}

/// The token of an `Authorization: Bearer <token>` header (scheme case-insensitive).
fn bearer(header: Option<&HeaderValue>) -> Option<&str> {
    let (scheme, token) = header?.to_str().ok()?.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// `scopes`, or "no scope".
fn listed(scopes: &[String]) -> String {
    if scopes.is_empty() { "no scope".to_owned() } else { scopes.join(" ") }
}

/// `value` fit for a quoted-string of `WWW-Authenticate` (RFC 6750 section 3: visible ASCII
/// and spaces, without `"` and `\`), cut to [`MAX_DESCRIPTION`] characters.
fn quotable(value: &str) -> String {
    value
        .chars()
        .take(MAX_DESCRIPTION)
        .map(|c| match c {
            '"' | '\\' => '\'',
            ' '..='~' => c,
            _ => '?',
        })
        .collect()
}

/// The `alg` of a JWT's header, when the header is base64url JSON with a string `alg`.
fn header_alg(token: &str) -> Option<String> {
    use base64::Engine as _;
    let (header, _) = token.split_once('.')?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header.trim_end_matches('=')).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    value.get("alg")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_are_read_from_scope_and_scp() {
        let claims: Claims = serde_json::from_value(json!({"scope": "a  b", "scp": ["b", "c"]})).unwrap();
        assert_eq!(claims.scopes(), ["a", "b", "c"]);
        let claims: Claims = serde_json::from_value(json!({"scp": "x y"})).unwrap();
        assert_eq!(claims.scopes(), ["x", "y"]);
        let claims: Claims = serde_json::from_value(json!({})).unwrap();
        assert!(claims.scopes().is_empty());
    }

    #[test]
    fn a_description_cannot_break_out_of_its_quotes() {
        assert_eq!(quotable("kid `a\"b\\c`\n"), "kid `a'b'c`?");
        assert_eq!(quotable(&"x".repeat(1000)).len(), MAX_DESCRIPTION);
    }

    #[test]
    fn only_bearer_headers_carry_a_token() {
        let value = |s: &str| HeaderValue::from_str(s).unwrap();
        assert_eq!(bearer(Some(&value("Bearer abc"))), Some("abc"));
        assert_eq!(bearer(Some(&value("bearer  abc "))), Some("abc"));
        assert_eq!(bearer(Some(&value("Basic abc"))), None);
        assert_eq!(bearer(Some(&value("Bearer "))), None);
        assert_eq!(bearer(None), None);
    }
}
