//! A small OAuth authorization server on 127.0.0.1 for the CLI's tests: metadata (RFC 8414),
//! a JWKS with a P-256 key generated for the run, dynamic client registration (RFC 7591), an
//! authorization endpoint that redirects back on its own (an unattended login), and a token
//! endpoint that signs ES256 access tokens for the resource the request names, with the scope
//! it asked for. It counts the logins and runs on a thread of its own until the test process
//! ends. (charly-mcp's tests/oauth_issuer is the fuller one, with failure modes.)
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::response::IntoResponse as _;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use p256::ecdsa::signature::Signer as _;
use serde_json::json;

/// The authorization server.
pub(crate) struct Issuer {
    /// `http://127.0.0.1:PORT`, its issuer identifier.
    pub(crate) url: String,
    state: Arc<State>,
}

struct State {
    url: String,
    key: p256::ecdsa::SigningKey,
    registrations: AtomicUsize,
    authorizations: AtomicUsize,
    /// code -> (scope, resource).
    codes: Mutex<HashMap<String, (String, String)>>,
}

impl Issuer {
    pub(crate) fn start() -> Issuer {
        let key = loop {
            let mut bytes = [0u8; 32];
            getrandom::fill(&mut bytes).unwrap();
            if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&bytes) {
                break key;
            }
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(State {
            url: url.clone(),
            key,
            registrations: AtomicUsize::new(0),
            authorizations: AtomicUsize::new(0),
            codes: Mutex::new(HashMap::new()),
        });
        let served = state.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                use axum::routing::{get, post};
                let router = axum::Router::new()
                    .route("/.well-known/oauth-authorization-server", get(metadata))
                    .route("/jwks", get(jwks))
                    .route("/register", post(register))
                    .route("/authorize", get(authorize))
                    .route("/token", post(token))
                    .with_state(served);
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, router).await.unwrap();
            });
        });
        Issuer { url, state }
    }

    /// How many logins (authorization requests) it took.
    pub(crate) fn authorizations(&self) -> usize {
        self.state.authorizations.load(Ordering::SeqCst)
    }

    /// How many clients registered.
    pub(crate) fn registrations(&self) -> usize {
        self.state.registrations.load(Ordering::SeqCst)
    }
}

type S = axum::extract::State<Arc<State>>;

fn json_reply(status: axum::http::StatusCode, value: serde_json::Value) -> axum::response::Response {
    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

async fn metadata(axum::extract::State(s): S) -> axum::response::Response {
    let url = &s.url;
    json_reply(
        axum::http::StatusCode::OK,
        json!({"issuer": url, "jwks_uri": format!("{url}/jwks"),
               "authorization_endpoint": format!("{url}/authorize"), "token_endpoint": format!("{url}/token"),
               "registration_endpoint": format!("{url}/register"), "response_types_supported": ["code"],
               "code_challenge_methods_supported": ["S256"], "token_endpoint_auth_methods_supported": ["none"],
               "grant_types_supported": ["authorization_code", "refresh_token"]}),
    )
}

async fn jwks(axum::extract::State(s): S) -> axum::response::Response {
    let point = s.key.verifying_key().to_sec1_point(false);
    let bytes = point.as_bytes();
    json_reply(
        axum::http::StatusCode::OK,
        json!({"keys": [{"kty": "EC", "crv": "P-256", "alg": "ES256", "use": "sig", "kid": "k1",
                         "x": B64.encode(&bytes[1..33]), "y": B64.encode(&bytes[33..65])}]}),
    )
}

async fn register(axum::extract::State(s): S, body: String) -> axum::response::Response {
    let body: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    let n = s.registrations.fetch_add(1, Ordering::SeqCst) + 1;
    json_reply(
        axum::http::StatusCode::CREATED,
        json!({"client_id": format!("client-{n}"), "redirect_uris": body["redirect_uris"],
               "token_endpoint_auth_method": "none"}),
    )
}

fn form(text: &str) -> HashMap<String, String> {
    url::form_urlencoded::parse(text.as_bytes()).into_owned().collect()
}

async fn authorize(axum::extract::State(s): S, uri: axum::http::Uri) -> axum::response::Response {
    let q = form(uri.query().unwrap_or_default());
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    let n = s.authorizations.fetch_add(1, Ordering::SeqCst) + 1;
    let code = format!("code-{n}");
    s.codes.lock().unwrap().insert(code.clone(), (get("scope"), get("resource")));
    let location = format!("{}?code={code}&state={}", get("redirect_uri"), get("state"));
    (axum::http::StatusCode::FOUND, [(axum::http::header::LOCATION, location)]).into_response()
}

async fn token(axum::extract::State(s): S, body: String) -> axum::response::Response {
    let f = form(&body);
    let (scope, resource) = match f.get("grant_type").map(String::as_str) {
        Some("authorization_code") => match f.get("code").and_then(|c| s.codes.lock().unwrap().remove(c)) {
            Some(found) => found,
            None => {
                return json_reply(
                    axum::http::StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_grant", "error_description": "unknown code"}),
                );
            }
        },
        Some("refresh_token") => {
            let refresh = f.get("refresh_token").cloned().unwrap_or_default();
            let (scope, resource) = refresh.split_once('|').unwrap_or_default();
            (scope.to_owned(), resource.to_owned())
        }
        _ => {
            return json_reply(
                axum::http::StatusCode::BAD_REQUEST,
                json!({"error": "unsupported_grant_type"}),
            );
        }
    };
    let resource = f.get("resource").cloned().filter(|r| !r.is_empty()).unwrap_or(resource);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    let claims =
        json!({"iss": s.url, "aud": resource, "sub": "alice", "scope": scope, "iat": now, "exp": now + 300});
    let header = json!({"alg": "ES256", "typ": "at+jwt", "kid": "k1"});
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature: p256::ecdsa::Signature = s.key.sign(input.as_bytes());
    let access_token = format!("{input}.{}", B64.encode(signature.to_bytes()));
    json_reply(
        axum::http::StatusCode::OK,
        json!({"access_token": access_token, "token_type": "Bearer", "expires_in": 300,
               "refresh_token": format!("{scope}|{resource}"), "scope": scope}),
    )
}
