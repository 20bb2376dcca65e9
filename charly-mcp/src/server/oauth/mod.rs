//! The HTTP endpoint as an OAuth 2.1 resource server ([`OAuthOptions`],
//! `HttpOptions::oauth`), as the MCP authorization spec (2025-11-25, "Authorization")
//! describes it:
//!
//! - **Protected resource metadata** (RFC 9728) at `/.well-known/oauth-protected-resource`
//!   and at that path followed by the resource's path (`.../oauth-protected-resource/mcp`),
//!   naming the authorization server, the scopes and `bearer_methods_supported: ["header"]`.
//! - **401** to a request without a valid access token, with `WWW-Authenticate: Bearer
//!   resource_metadata="<metadata URL>"` (and `scope="<read scope>"`), plus
//!   `error="invalid_token"` and an `error_description` saying what was wrong when a token
//!   was sent (RFC 6750 section 3).
//! - **Access tokens** are JWTs (RFC 9068): signed with RS256 or ES256 by a key of the
//!   issuer's JWKS (fetched from `jwks_uri`, or the one its authorization server metadata
//!   names, RFC 8414; cached, fetched again for a key id it does not hold, at most every 10
//!   s), `iss` the issuer, `aud` this resource's URL (RFC 8707: a token minted for another
//!   server is refused), `exp` in the future and `nbf` (when present) in the past, within
//!   [`OAuthOptions::leeway`]. A verified token is taken again without a signature check for
//!   up to 5 minutes (never past its `exp`) while the issuer's keys are not fetched again; once
//!   they are (a new key id, or an hour passed), it is checked with the new keys, so a token
//!   signed by a key the issuer removed is refused from then on.
//! - **Scopes per tool class**: every request needs [`OAuthOptions::read_scope`]; a
//!   `tools/call` of a tool that is not read-only (its `readOnlyHint` is false: it may write,
//!   destructive or not) also needs [`OAuthOptions::write_scope`]. A token without them gets
//!   **403** with `error="insufficient_scope"` and `scope="<the scopes needed>"` (the spec's
//!   "Scope Challenge Handling"), so a client can ask for more (step-up). The session handler
//!   checks the same again before running the tool, whatever the HTTP layer read.
//! - **Sessions are bound to their opener**: a session opened with a token of subject `sub`
//!   takes only tokens of that subject afterwards (others get 403 `access_denied`), as the
//!   MCP security best practices ask.
//! - **Identity in the host meta**: the token's subject, scopes, issuer and client id go to
//!   every call's meta under [`AUTH_META_KEY`](super::AUTH_META_KEY), over anything a
//!   client's `_meta` says there (the server drops a client's `charly/auth` whatever the
//!   transport).

mod crypto;
mod guard;
mod jwks;
mod metadata;
mod owners;

use std::time::Duration;

pub(crate) use guard::{Guard, ScopeGrant};

/// Default [`OAuthOptions::read_scope`].
pub const DEFAULT_READ_SCOPE: &str = "mcp:read";
/// Default [`OAuthOptions::write_scope`].
pub const DEFAULT_WRITE_SCOPE: &str = "mcp:write";

/// How the HTTP endpoint checks OAuth access tokens (`HttpOptions::oauth`): the
/// authorization server it trusts, the resource it is, and the scopes it asks for. Start from
/// [`OAuthOptions::new`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct OAuthOptions {
    /// The authorization server's issuer identifier (`https://auth.example.com/realms/x`):
    /// tokens must carry it as `iss`, exactly; the protected resource metadata names it in
    /// `authorization_servers`.
    pub issuer: String,
    /// This server's resource URL, the canonical URI of its MCP endpoint
    /// (`https://mcp.example.com/mcp`; RFC 8707, MCP "Canonical Server URI"): tokens must carry
    /// it as `aud`, and the metadata is published as its `resource`. `None`:
    /// `http://<bound address><path>`, filled in by [`super::Server::serve_http`] once it
    /// has bound ([`super::Server::http_router`] needs it set). Behind a proxy, give the
    /// URL clients use.
    pub resource: Option<String>,
    /// Where the issuer's signing keys are (a JWK Set, RFC 7517). `None`: the `jwks_uri` of
    /// the issuer's authorization server metadata, from
    /// `/.well-known/oauth-authorization-server` (RFC 8414), else
    /// `/.well-known/openid-configuration` (OpenID Connect Discovery).
    pub jwks_uri: Option<String>,
    /// The scope every request needs (default [`DEFAULT_READ_SCOPE`]); `None`: any valid
    /// token may list tools and call read-only ones.
    pub read_scope: Option<String>,
    /// The scope a `tools/call` of a tool that is not read-only needs, beside the read scope
    /// (default [`DEFAULT_WRITE_SCOPE`]); `None`: no more than the read scope.
    pub write_scope: Option<String>,
    /// Clock skew allowed on `exp` and `nbf` (default 60 s).
    pub leeway: Duration,
    /// `resource_name` in the metadata, shown by clients asking a user to authorize.
    pub resource_name: Option<String>,
    /// A PEM file of CA certificates trusted, besides the system's roots, for the issuer's
    /// metadata and JWKS (`--oauth-ca-file`): an issuer behind a private CA.
    pub ca_file: Option<std::path::PathBuf>,
}

impl OAuthOptions {
    /// Tokens from `issuer`, with the default scopes and leeway and the resource URL of the
    /// bound address.
    pub fn new(issuer: impl Into<String>) -> OAuthOptions {
        OAuthOptions {
            issuer: issuer.into(),
            resource: None,
            jwks_uri: None,
            read_scope: Some(DEFAULT_READ_SCOPE.to_owned()),
            write_scope: Some(DEFAULT_WRITE_SCOPE.to_owned()),
            leeway: Duration::from_secs(60),
            resource_name: None,
            ca_file: None,
        }
    }

    /// Sets the resource URL (see [`OAuthOptions::resource`]).
    pub fn resource(mut self, url: impl Into<String>) -> Self {
        self.resource = Some(url.into());
        self
    }

    /// Sets the JWKS URL (see [`OAuthOptions::jwks_uri`]).
    pub fn jwks_uri(mut self, url: impl Into<String>) -> Self {
        self.jwks_uri = Some(url.into());
        self
    }

    /// Sets the scopes: what every request needs, and what a tool that is not read-only
    /// needs too (`None`: nothing).
    pub fn scopes(mut self, read: Option<String>, write: Option<String>) -> Self {
        self.read_scope = read;
        self.write_scope = write;
        self
    }

    /// Sets the clock skew allowed on `exp` and `nbf`.
    pub fn leeway(mut self, leeway: Duration) -> Self {
        self.leeway = leeway;
        self
    }

    /// Sets `resource_name` in the metadata.
    pub fn resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Trusts the CAs of a PEM file for the issuer's metadata and keys (see
    /// [`OAuthOptions::ca_file`]).
    pub fn ca_file(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.ca_file = Some(path.into());
        self
    }

    /// Checks the URLs and scopes.
    ///
    /// # Errors
    ///
    /// A message naming the setting (and its `charly mcp serve` flag) when the issuer, the
    /// resource or the JWKS URL is not an absolute `http`/`https` URL (the resource also
    /// without a fragment, RFC 8707 section 2), or a scope is empty or holds a space, a
    /// quote or a backslash (RFC 6749 section 3.3), or the CA file cannot be read or holds no
    /// PEM certificate.
    pub fn check(&self) -> Result<(), String> {
        if let Some(path) = &self.ca_file {
            jwks::ca_certificates(path)?;
        }
        let issuer =
            check_url(&self.issuer, "the OAuth issuer (--oauth-issuer)", "https://auth.example.com")?;
        plain_http_beyond_loopback(&issuer, "the OAuth issuer (--oauth-issuer)")?;
        if let Some(resource) = &self.resource {
            let url = check_url(
                resource,
                "the OAuth resource URL (--oauth-resource)",
                "https://mcp.example.com/mcp",
            )?;
            if url.fragment().is_some() {
                return Err(format!(
                    "the OAuth resource URL (--oauth-resource) {resource:?} has a fragment; a resource URL has none (RFC 8707)"
                ));
            }
        }
        if let Some(jwks) = &self.jwks_uri {
            let url = check_url(jwks, "the JWKS URL (--oauth-jwks-uri)", "https://auth.example.com/jwks")?;
            plain_http_beyond_loopback(&url, "the JWKS URL (--oauth-jwks-uri)")?;
        }
        for (scope, name) in [
            (&self.read_scope, "read (--oauth-read-scope)"),
            (&self.write_scope, "write (--oauth-write-scope)"),
        ] {
            if let Some(scope) = scope
                && (scope.is_empty() || scope.chars().any(|c| !c.is_ascii_graphic() || c == '"' || c == '\\'))
            {
                return Err(format!(
                    "the {name} scope {scope:?} is not a scope: one word of visible ASCII without `\"` or `\\`, e.g. mcp:read"
                ));
            }
        }
        Ok(())
    }
}

/// Refuses a plain `http://` URL whose host is not loopback (127.0.0.0/8, `::1`,
/// `localhost`): the issuer's metadata and keys come from it, and anyone on the path could
/// swap the keys and sign tokens of their own.
fn plain_http_beyond_loopback(url: &url::Url, what: &str) -> Result<(), String> {
    if url.scheme() != "http" {
        return Ok(());
    }
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    };
    if loopback {
        return Ok(());
    }
    Err(format!(
        "{what} {:?} is plain http on a host that is not loopback: the issuer's keys would be fetched \
         unencrypted, so anyone on the path could sign tokens this server accepts; use https:// \
         (plain http is allowed for 127.0.0.1, ::1 and localhost only)",
        url.as_str()
    ))
}

/// `value` as an absolute http(s) URL with a host, or why not (naming it as `what`, with
/// `example` of one).
fn check_url(value: &str, what: &str, example: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(value)
        .map_err(|e| format!("{what} {value:?} is not an absolute URL ({e}), e.g. {example}"))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(format!("{what} {value:?} must be an http:// or https:// URL with a host"));
    }
    Ok(url)
}
