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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::token_auth_method;

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
}
