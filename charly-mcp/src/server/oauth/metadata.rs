//! Protected resource metadata (RFC 9728): the document, the URL clients find it at, and the
//! paths this server serves it at.

use axum::response::{IntoResponse as _, Response};
use http::{HeaderValue, header};
use serde_json::{Value, json};

use super::OAuthOptions;

/// The well-known path of protected resource metadata (RFC 9728 section 3).
pub(super) const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The published metadata of one resource.
#[derive(Debug)]
pub(super) struct Metadata {
    /// The document, serialised once.
    body: String,
    /// Where clients fetch it: the resource's origin, [`WELL_KNOWN`], then the resource's
    /// path (RFC 9728 section 3.1); the `resource_metadata` of every challenge.
    pub(super) url: String,
    /// The paths this server answers it at: [`WELL_KNOWN`] alone and followed by the
    /// resource's path and by the endpoint's own path (which differ behind a proxy that
    /// rewrites paths).
    pub(super) paths: Vec<String>,
}

impl Metadata {
    /// The metadata of the resource `resource` (as given: `aud` is compared with it byte for
    /// byte), which parses as `parsed`, served beside the endpoint at `endpoint_path`.
    pub(super) fn new(
        options: &OAuthOptions,
        resource: &str,
        parsed: &url::Url,
        endpoint_path: &str,
    ) -> Metadata {
        let scopes: Vec<&String> = options.read_scope.iter().chain(&options.write_scope).collect();
        let mut document = json!({
            "resource": resource,
            "authorization_servers": [options.issuer],
            "scopes_supported": scopes,
            "bearer_methods_supported": ["header"],
        });
        if let Some(name) = &options.resource_name {
            document["resource_name"] = Value::String(name.clone());
        }
        let suffix = |path: &str| match path.trim_end_matches('/') {
            "" => String::new(),
            trimmed => trimmed.to_owned(),
        };
        let origin = parsed.origin().ascii_serialization();
        let url = format!("{origin}{WELL_KNOWN}{}", suffix(parsed.path()));
        let mut paths = vec![WELL_KNOWN.to_owned()];
        for path in [parsed.path(), endpoint_path] {
            let path = format!("{WELL_KNOWN}{}", suffix(path));
            if !paths.contains(&path) {
                paths.push(path);
            }
        }
        Metadata { body: document.to_string(), url, paths }
    }

    /// The metadata document as a response: JSON, readable from any origin (browser-based
    /// clients fetch it cross-origin), cacheable for a minute.
    pub(super) fn response(&self) -> Response {
        let mut response = self.body.clone().into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("max-age=60"));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(resource: &str, endpoint: &str) -> Metadata {
        let options = OAuthOptions::new("https://auth.example.com/realms/r");
        Metadata::new(&options, resource, &url::Url::parse(resource).unwrap(), endpoint)
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        let m = metadata("https://mcp.example.com/mcp", "/mcp");
        assert_eq!(m.url, "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
        assert_eq!(m.paths, [WELL_KNOWN, "/.well-known/oauth-protected-resource/mcp"]);
        let m = metadata("https://mcp.example.com", "/mcp");
        assert!(m.body.contains(r#""resource":"https://mcp.example.com""#), "{}", m.body);
        assert_eq!(m.url, "https://mcp.example.com/.well-known/oauth-protected-resource");
        assert_eq!(m.paths, [WELL_KNOWN, "/.well-known/oauth-protected-resource/mcp"]);
        let m = metadata("https://mcp.example.com:8443/tools/mcp/", "/mcp");
        assert_eq!(m.url, "https://mcp.example.com:8443/.well-known/oauth-protected-resource/tools/mcp");
        assert_eq!(m.paths.len(), 3);
    }

    #[test]
    fn the_document_names_the_issuer_the_scopes_and_the_header_method() {
        let m = metadata("https://mcp.example.com/mcp", "/mcp");
        let doc: Value = serde_json::from_str(&m.body).unwrap();
        assert_eq!(doc["resource"], "https://mcp.example.com/mcp");
        assert_eq!(doc["authorization_servers"], json!(["https://auth.example.com/realms/r"]));
        assert_eq!(doc["scopes_supported"], json!(["mcp:read", "mcp:write"]));
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    }
}
