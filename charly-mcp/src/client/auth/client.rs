//! The OAuth client charly is at an authorization server: how it authenticates at the token
//! endpoint, and the dynamic registration it keeps for the next login.

/// The token endpoint auth method of a client with a secret, chosen from the authorization
/// server's `token_endpoint_auth_methods_supported` (RFC 8414 section 2; absent means
/// `client_secret_basic`): `client_secret_basic` when offered, else `client_secret_post`, else
/// `none` (the secret is not sent: the server takes the client as a public one).
///
/// # Errors
///
/// The methods offered, when none of the three is (e.g. only `private_key_jwt`).
pub(super) fn token_auth_method(supported: Option<&serde_json::Value>) -> Result<&'static str, String> {
    let Some(supported) = supported else { return Ok("client_secret_basic") };
    let offered: Vec<&str> = supported
        .as_array()
        .map(|a| a.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default();
    for method in ["client_secret_basic", "client_secret_post", "none"] {
        if offered.contains(&method) {
            return Ok(method);
        }
    }
    let named = if offered.is_empty() { "none named".to_owned() } else { offered.join(", ") };
    Err(format!(
        "its token_endpoint_auth_methods_supported ({}) has none that charly's client can use \
         (client_secret_basic, client_secret_post or none)",
        crate::client::error::truncate(&named, 200)
    ))
}

/// The document key of a [`KeptClient`], beside rmcp's `StoredCredentials` fields.
const KEPT_KEY: &str = "registration";

/// A client charly registered itself (RFC 7591), kept in the cached document beside the
/// tokens (under `registration`) so that a later login reuses it instead of registering
/// again. Its redirect URI's loopback port is bound again on that login: RFC 8252 section
/// 7.3 has authorization servers allow any port for a loopback redirect, but many accept
/// only the one registered. Given clients (`--oauth-client-id`, a client ID metadata
/// document) register nothing and are not kept here.
#[derive(Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct KeptClient {
    /// The client id the registration gave (also the document's `client_id`).
    pub(super) client_id: String,
    /// The redirect URI it was registered with, `http://127.0.0.1:PORT/callback`.
    pub(super) redirect_uri: String,
    /// The secret the registration gave, if any (rmcp registers public clients, but a server
    /// may still issue one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) client_secret: Option<String>,
    /// The authorization server it is registered with: its issuer (none when its metadata
    /// names none) ...
    #[serde(default)]
    pub(super) issuer: Option<String>,
    /// ... and its token endpoint. A login whose metadata names another registers anew.
    pub(super) token_endpoint: String,
}

impl std::fmt::Debug for KeptClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptClient")
            .field("client_id", &self.client_id)
            .field("redirect_uri", &self.redirect_uri)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "[REDACTED]"))
            .field("issuer", &self.issuer)
            .field("token_endpoint", &self.token_endpoint)
            .finish()
    }
}

impl KeptClient {
    /// The loopback port of its redirect URI; `None` unless that is charly's own,
    /// `http://127.0.0.1:PORT/callback`.
    pub(super) fn port(&self) -> Option<u16> {
        let port = self.redirect_uri.strip_prefix("http://127.0.0.1:")?.strip_suffix("/callback")?;
        port.parse().ok().filter(|port| *port != 0)
    }

    /// (issuer, token endpoint), as the login compares authorization servers.
    pub(super) fn authorization_server(&self) -> (String, String) {
        (self.issuer.clone().unwrap_or_default(), self.token_endpoint.clone())
    }

    /// The kept client of a cached `document`: its `registration`, when that parses, names
    /// the document's own `client_id` and a loopback port. `None` for a document an earlier
    /// charly wrote (tokens only: the next login registers anew).
    pub(super) fn in_document(document: &str) -> Option<KeptClient> {
        let value: serde_json::Value = serde_json::from_str(document).ok()?;
        let kept: KeptClient = serde_json::from_value(value.get(KEPT_KEY)?.clone()).ok()?;
        let same =
            value.get("client_id").and_then(serde_json::Value::as_str) == Some(kept.client_id.as_str());
        (same && kept.port().is_some()).then_some(kept)
    }
}

/// The client kept for the next login, shared by the login and the token cache's writes.
#[derive(Default)]
pub(super) struct Kept(std::sync::Mutex<Option<KeptClient>>);

impl Kept {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<KeptClient>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(super) fn get(&self) -> Option<KeptClient> {
        self.lock().clone()
    }

    pub(super) fn set(&self, kept: Option<KeptClient>) {
        *self.lock() = kept;
    }
}

/// The cached document of `credentials`: rmcp's fields, and the kept client under
/// `registration` when it is the credentials' client.
///
/// # Errors
///
/// When it cannot be encoded (no secret in the text).
pub(super) fn document(
    credentials: &rmcp::transport::auth::StoredCredentials,
    kept: Option<&KeptClient>,
) -> Result<String, String> {
    let mut value =
        serde_json::to_value(credentials).map_err(|e| format!("cannot encode the tokens: {e}"))?;
    if let (Some(kept), Some(object)) = (kept, value.as_object_mut())
        && kept.client_id == credentials.client_id
    {
        let kept = serde_json::to_value(kept).map_err(|e| format!("cannot encode the client: {e}"))?;
        object.insert(KEPT_KEY.to_owned(), kept);
    }
    Ok(value.to_string())
}

/// The OAuth error code (RFC 6749 section 5.2) of a token request's failure as rmcp words it
/// (oauth2's `Server returned error response: CODE: description`).
pub(super) fn token_error_code(text: &str) -> Option<&str> {
    let rest = text.split("Server returned error response: ").nth(1)?;
    rest.split([':', ' ']).next().filter(|code| !code.is_empty())
}

/// Whether an authorization server's OAuth error refuses the client itself, which a new
/// registration may mend: `invalid_client` (RFC 6749 section 5.2: unknown, or its
/// authentication failed), RFC 7591's `invalid_redirect_uri`, or an error about its
/// redirect_uri (RFC 6749 section 4.1.2.1: a redirect URI that does not match the client's).
pub(super) fn refuses_client(error: &str, description: &str) -> bool {
    matches!(error, "invalid_client" | "invalid_redirect_uri")
        || (error == "invalid_request" && description.to_ascii_lowercase().contains("redirect"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{KeptClient, refuses_client, token_auth_method, token_error_code};

    #[test]
    fn the_token_endpoint_auth_method_follows_the_metadata() {
        assert_eq!(token_auth_method(None), Ok("client_secret_basic"));
        let of = |v: serde_json::Value| token_auth_method(Some(&v));
        assert_eq!(of(json!(["client_secret_post", "client_secret_basic"])), Ok("client_secret_basic"));
        assert_eq!(of(json!(["none", "client_secret_post"])), Ok("client_secret_post"));
        assert_eq!(of(json!(["none"])), Ok("none"));
        let err = of(json!(["private_key_jwt", "tls_client_auth"])).unwrap_err();
        assert!(
            err.contains("(private_key_jwt, tls_client_auth)") && err.contains("client_secret_basic"),
            "{err}"
        );
    }

    fn kept(redirect_uri: &str) -> KeptClient {
        KeptClient {
            client_id: "client-1".into(),
            redirect_uri: redirect_uri.into(),
            client_secret: Some("s3cret".into()),
            issuer: Some("https://as.example".into()),
            token_endpoint: "https://as.example/token".into(),
        }
    }

    #[test]
    fn the_registration_is_kept_beside_the_tokens_and_read_back() {
        let credentials: rmcp::transport::auth::StoredCredentials = serde_json::from_value(json!({
            "client_id": "client-1", "token_response": null, "granted_scopes": ["mcp:read"],
            "token_received_at": 1, "issuer": "https://as.example"
        }))
        .unwrap();
        let client = kept("http://127.0.0.1:40123/callback");
        let document = super::document(&credentials, Some(&client)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&document).unwrap();
        assert_eq!(value["client_id"], "client-1");
        assert_eq!(value["registration"]["redirect_uri"], "http://127.0.0.1:40123/callback");
        assert_eq!(KeptClient::in_document(&document), Some(client.clone()));
        assert_eq!(client.port(), Some(40123));
        assert!(!format!("{client:?}").contains("s3cret"));
        // rmcp still reads the document as its own.
        let read: rmcp::transport::auth::StoredCredentials = serde_json::from_str(&document).unwrap();
        assert_eq!(read.client_id, "client-1");
        // Another client's registration is not written, nor read back; an earlier charly's
        // document has none; a redirect that is not charly's loopback one is no port to bind.
        let other = KeptClient { client_id: "client-2".into(), ..client.clone() };
        let plain = super::document(&credentials, Some(&other)).unwrap();
        assert!(!plain.contains("registration"), "{plain}");
        assert_eq!(KeptClient::in_document(&plain), None);
        let mut forged = value.clone();
        forged["registration"]["client_id"] = json!("client-2");
        assert_eq!(KeptClient::in_document(&forged.to_string()), None);
        for uri in
            ["http://localhost:40123/callback", "http://127.0.0.1/callback", "http://127.0.0.1:0/callback"]
        {
            assert_eq!(kept(uri).port(), None, "{uri}");
        }
    }

    #[test]
    fn a_refused_client_is_told_from_other_errors() {
        let refusal = "Server returned error response: invalid_client: unknown client";
        assert_eq!(token_error_code(refusal), Some("invalid_client"));
        assert_eq!(token_error_code("Server returned error response: invalid_grant"), Some("invalid_grant"));
        assert_eq!(token_error_code("Request failed"), None);
        assert!(refuses_client("invalid_client", ""));
        assert!(refuses_client("invalid_redirect_uri", ""));
        assert!(refuses_client("invalid_request", "redirect_uri is not registered for this client"));
        assert!(!refuses_client("invalid_request", "missing code_challenge"));
        assert!(!refuses_client("access_denied", "redirect"));
    }
}
