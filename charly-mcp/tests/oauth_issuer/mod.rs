//! The OAuth tests' authorization server, on 127.0.0.1: metadata (RFC 8414), a JWKS of keys
//! generated for the run (P-256 and RSA 2048) that it can rotate, and a login: dynamic client
//! registration (RFC 7591), an authorization endpoint that redirects back on its own (refusing a
//! redirect_uri the client did not register, as a real one does, and a client it was told to
//! forget with `invalid_client`), and a token endpoint that
//! signs access tokens with those keys (RustCrypto directly, not the server's code) and hands
//! out refresh tokens it honours (or refuses, `invalid_grant`, when told to). It records what it
//! was sent.
#![allow(dead_code, unreachable_pub)]

pub mod client;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::response::IntoResponse as _;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use charly_mcp::Annotations;
use charly_mcp::client::{ConnectOptions, Endpoint, TransportKind, connect};
use charly_mcp::server::{HttpOptions, OAuthOptions, Server, ServerHandle, ServerOptions, Tool, ToolOutput};
use p256::ecdsa::signature::Signer as _;
use rsa::traits::PublicKeyParts as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// An `initialize` request of 2025-11-25, for raw HTTP requests.
pub const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

/// What the token endpoint grants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Grant {
    /// The scopes the authorization request asked for, for the resource it named.
    AsAsked,
    /// Only this scope, whatever was asked.
    Only(&'static str),
    /// Tokens for another resource (a wrong `aud`).
    WrongAudience,
    /// The authorization endpoint never answers (bounded: 60 s).
    Hang,
    /// The authorization endpoint shows a login page (HTTP 200) instead of redirecting back:
    /// a person is needed.
    Person,
    /// The token endpoint fails with an HTML error page (HTTP 500).
    ErrorPage,
}

/// A registration the authorization server took: the client id it gave and the redirect URIs.
#[derive(Clone, Debug)]
pub struct Registration {
    pub client_id: String,
    pub redirect_uris: Vec<String>,
}

/// An authorization request as the authorization endpoint received it.
#[derive(Clone, Debug)]
pub struct Authorization {
    pub client_id: String,
    pub redirect_uri: String,
    pub scope: String,
    /// Whether the redirect_uri was one the client registered (else it was refused).
    pub accepted: bool,
}

/// What the authorization server was sent.
#[derive(Default, Debug)]
pub struct Seen {
    pub registrations: Vec<Registration>,
    pub authorizations: Vec<Authorization>,
    /// The `grant_type` of every token request, in order.
    pub grants: Vec<String>,
    /// The access tokens the token endpoint issued, in order.
    pub issued: Vec<String>,
    /// How each token request authenticated the client, in order: `client_secret_basic` (an
    /// `Authorization: Basic` header), `client_secret_post` (`client_secret` in the form) or
    /// `none`.
    pub token_auth: Vec<String>,
    /// Clients registered beforehand (not by RFC 7591): their client ids, any loopback
    /// redirect URI accepted (RFC 8252 section 7.3: the port varies).
    pub preregistered: Vec<String>,
    /// Clients it no longer knows (deleted or expired registrations): the authorization
    /// endpoint answers them 400 `invalid_client`, the token endpoint 401 `invalid_client`.
    pub forgotten: Vec<String>,
    /// code -> (scope, resource).
    codes: HashMap<String, (String, String)>,
    /// refresh token -> (client id, scope, resource).
    refresh_tokens: HashMap<String, (String, String, String)>,
}

/// The test's authorization server: metadata, a JWKS it can change, and its signing keys.
pub struct Issuer {
    pub url: String,
    pub ec: p256::ecdsa::SigningKey,
    pub rsa: Arc<rsa::PrivateKey>,
    /// The JWKS served at `/jwks`.
    pub jwks: Arc<Mutex<Value>>,
    /// How often `/jwks` was fetched.
    pub fetches: Arc<AtomicUsize>,
    pub stop: CancellationToken,
    /// What the login endpoints were sent.
    pub seen: Arc<Mutex<Seen>>,
    /// What the token endpoint grants (changeable while it runs).
    pub grant: Arc<Mutex<Grant>>,
    /// The `expires_in` (and `exp` lifetime) of the access tokens it issues, in seconds
    /// (default 300).
    pub lifetime: Arc<AtomicU64>,
    /// Whether refresh tokens are refused with `invalid_grant` (default false).
    pub refuse_refresh: Arc<AtomicBool>,
    /// How long the metadata takes to answer, in milliseconds (default 0).
    pub slow_metadata: Arc<AtomicU64>,
}

pub fn ec_key() -> p256::ecdsa::SigningKey {
    loop {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).unwrap();
        if let Ok(key) = p256::ecdsa::SigningKey::from_slice(&bytes) {
            return key;
        }
    }
}

/// One RSA key per test process: generating one takes seconds in a debug build.
pub fn rsa_key() -> Arc<rsa::PrivateKey> {
    static KEY: std::sync::OnceLock<Arc<rsa::PrivateKey>> = std::sync::OnceLock::new();
    KEY.get_or_init(|| Arc::new(<rsa::PrivateKey as rsa::Generate>::generate())).clone()
}

pub fn ec_jwk(key: &p256::ecdsa::SigningKey, kid: &str) -> Value {
    let point = key.verifying_key().to_sec1_point(false);
    let bytes = point.as_bytes();
    json!({"kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
           "x": B64.encode(&bytes[1..33]), "y": B64.encode(&bytes[33..65])})
}

pub fn rsa_jwk(key: &rsa::PrivateKey, kid: &str) -> Value {
    json!({"kty": "RSA", "use": "sig", "alg": "RS256", "kid": kid,
           "n": B64.encode(key.n().to_be_bytes_trimmed_vartime()),
           "e": B64.encode(key.e().to_be_bytes_trimmed_vartime())})
}

/// A JWT of `claims`: `header` (with `alg`) and the signature `sign` makes of the input.
pub fn jwt(header: &Value, claims: &Value, sign: impl Fn(&[u8]) -> Vec<u8>) -> String {
    let input = format!("{}.{}", B64.encode(header.to_string()), B64.encode(claims.to_string()));
    let signature = sign(input.as_bytes());
    format!("{input}.{}", B64.encode(signature))
}

pub fn es256(key: &p256::ecdsa::SigningKey, kid: &str, claims: &Value) -> String {
    let header = json!({"alg": "ES256", "typ": "at+jwt", "kid": kid});
    jwt(&header, claims, |input| {
        let signature: p256::ecdsa::Signature = key.sign(input);
        signature.to_bytes().to_vec()
    })
}

pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

impl Issuer {
    pub async fn start() -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let ec = ec_key();
        let rsa = rsa_key();
        let jwks = Arc::new(Mutex::new(json!({"keys": [ec_jwk(&ec, "ec-1"), rsa_jwk(&rsa, "rsa-1")]})));
        let fetches = Arc::new(AtomicUsize::new(0));
        let metadata = json!({
            "issuer": url, "jwks_uri": format!("{url}/jwks"),
            "authorization_endpoint": format!("{url}/authorize"), "token_endpoint": format!("{url}/token"),
            "registration_endpoint": format!("{url}/register"),
            "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
        })
        .to_string();
        let (served, counted) = (jwks.clone(), fetches.clone());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let grant = Arc::new(Mutex::new(Grant::AsAsked));
        let lifetime = Arc::new(AtomicU64::new(300));
        let refuse_refresh = Arc::new(AtomicBool::new(false));
        let slow_metadata = Arc::new(AtomicU64::new(0));
        let slow = slow_metadata.clone();
        let login = Login {
            url: url.clone(),
            ec: ec.clone(),
            seen: seen.clone(),
            grant: grant.clone(),
            lifetime: lifetime.clone(),
            refuse_refresh: refuse_refresh.clone(),
        };
        let router = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                axum::routing::get(move || async move {
                    let delay = slow.load(Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    metadata
                }),
            )
            .route(
                "/jwks",
                axum::routing::get(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    served.lock().unwrap().to_string()
                }),
            )
            .route("/register", axum::routing::post(register))
            .route("/authorize", axum::routing::get(authorize))
            .route("/token", axum::routing::post(token))
            .with_state(login);
        let stop = CancellationToken::new();
        let stopped = stop.clone().cancelled_owned();
        tokio::spawn(async move { axum::serve(listener, router).with_graceful_shutdown(stopped).await });
        Issuer { url, ec, rsa, jwks, fetches, stop, seen, grant, lifetime, refuse_refresh, slow_metadata }
    }

    /// Claims for `resource` with `scope`, valid for five minutes.
    pub fn claims(&self, resource: &str, scope: &str) -> Value {
        json!({"iss": self.url, "aud": resource, "sub": "alice", "client_id": "test-client",
               "scope": scope, "iat": now(), "exp": now() + 300})
    }

    pub fn token(&self, claims: &Value) -> String {
        es256(&self.ec, "ec-1", claims)
    }

    pub fn rs256(&self, claims: &Value) -> String {
        let header = json!({"alg": "RS256", "typ": "at+jwt", "kid": "rsa-1"});
        let signer = rsa::pkcs1v15::SigningKey::<sha2::Sha256>::new(self.rsa.as_ref().clone());
        jwt(&header, claims, |input| {
            use rsa::signature::SignatureEncoding as _;
            rsa::signature::Signer::sign(&signer, input).to_vec()
        })
    }
}

/// A read-only tool showing its meta, a destructive one, and one that writes without
/// destroying.
pub fn server() -> Server {
    let empty = json!({"type": "object", "properties": {}, "additionalProperties": false});
    let whoami = Tool::new(
        "whoami",
        "Shows the call's meta",
        empty.clone(),
        Annotations { read_only_hint: true, ..Default::default() },
        |_, cx| async move { Ok(ToolOutput::text(Value::Object(cx.meta().clone()).to_string())) },
    );
    let wipe = Tool::new(
        "wipe",
        "Deletes everything",
        empty.clone(),
        Annotations { destructive_hint: true, ..Default::default() },
        |_, _| async move { Ok(ToolOutput::text("wiped")) },
    );
    let note = Tool::new("note", "Adds a note", empty, Annotations::default(), |_, _| async move {
        Ok(ToolOutput::text("noted"))
    });
    Server::new(ServerOptions::new("guarded", "0").tool(whoami).tool(wipe).tool(note))
}

pub async fn serve(issuer: &Issuer) -> ServerHandle {
    let options = HttpOptions::default()
        .listen(([127, 0, 0, 1], 0).into())
        .oauth(OAuthOptions::new(&issuer.url).resource_name("guarded test server"));
    server().serve_http(options).await.unwrap()
}

pub fn post(url: &str, token: Option<&str>, body: &str) -> reqwest::RequestBuilder {
    let request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    match token {
        Some(token) => request.bearer_auth(token),
        None => request,
    }
}

/// The `WWW-Authenticate` header of `response`.
pub fn challenge(response: &reqwest::Response) -> String {
    response.headers()["www-authenticate"].to_str().unwrap().to_owned()
}

pub async fn client(url: &str, token: &str) -> charly_mcp::client::Client {
    let endpoint = Endpoint::url(url, TransportKind::StreamableHttp)
        .unwrap()
        .with_headers([("Authorization".to_owned(), format!("Bearer {token}"))]);
    connect(&endpoint, &ConnectOptions::default()).await.unwrap()
}

pub fn text(result: &charly_mcp::server::rmcp::model::CallToolResult) -> String {
    result.content[0].as_text().unwrap().text.clone()
}

/// The login endpoints' state.
#[derive(Clone)]
struct Login {
    url: String,
    ec: p256::ecdsa::SigningKey,
    seen: Arc<Mutex<Seen>>,
    grant: Arc<Mutex<Grant>>,
    lifetime: Arc<AtomicU64>,
    refuse_refresh: Arc<AtomicBool>,
}

type Reply = axum::response::Response;

fn oauth_error(status: axum::http::StatusCode, error: &str, description: &str) -> Reply {
    (status, axum::Json(json!({"error": error, "error_description": description}))).into_response()
}

/// RFC 7591: a client id `client-N` for the redirect URIs given.
async fn register(
    axum::extract::State(s): axum::extract::State<Login>,
    axum::Json(body): axum::Json<Value>,
) -> Reply {
    let redirect_uris: Vec<String> = body["redirect_uris"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|u| u.as_str().map(str::to_owned))
        .collect();
    let mut seen = s.seen.lock().unwrap();
    let client_id = format!("client-{}", seen.registrations.len() + 1);
    seen.registrations
        .push(Registration { client_id: client_id.clone(), redirect_uris: redirect_uris.clone() });
    let reply =
        json!({"client_id": client_id, "redirect_uris": redirect_uris, "token_endpoint_auth_method": "none"});
    (axum::http::StatusCode::CREATED, axum::Json(reply)).into_response()
}

/// The authorization endpoint: redirects back at once with a code, to a redirect_uri the
/// client registered (another one is refused with 400, never redirected to).
async fn authorize(
    axum::extract::State(s): axum::extract::State<Login>,
    axum::extract::Query(q): axum::extract::Query<HashMap<String, String>>,
) -> Reply {
    let grant = *s.grant.lock().unwrap();
    if grant == Grant::Person {
        let page = "<!doctype html><title>Log in</title><form method=post><input name=user></form>";
        return (axum::http::StatusCode::OK, page).into_response();
    }
    if grant == Grant::Hang {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    let get = |k: &str| q.get(k).cloned().unwrap_or_default();
    let (client_id, redirect_uri, scope) = (get("client_id"), get("redirect_uri"), get("scope"));
    let mut seen = s.seen.lock().unwrap();
    if seen.forgotten.contains(&client_id) {
        seen.authorizations.push(Authorization { client_id, redirect_uri, scope, accepted: false });
        return oauth_error(axum::http::StatusCode::BAD_REQUEST, "invalid_client", "unknown client");
    }
    let accepted = seen
        .registrations
        .iter()
        .any(|r| r.client_id == client_id && r.redirect_uris.contains(&redirect_uri))
        || (seen.preregistered.contains(&client_id) && redirect_uri.starts_with("http://127.0.0.1:"));
    seen.authorizations.push(Authorization {
        client_id,
        redirect_uri: redirect_uri.clone(),
        scope: scope.clone(),
        accepted,
    });
    if !accepted {
        return oauth_error(
            axum::http::StatusCode::BAD_REQUEST,
            "invalid_request",
            "redirect_uri is not registered for this client",
        );
    }
    let code = format!("code-{}", seen.authorizations.len());
    seen.codes.insert(code.clone(), (scope, get("resource")));
    let location = format!("{redirect_uri}?code={code}&state={}", get("state"));
    (axum::http::StatusCode::FOUND, [(axum::http::header::LOCATION, location)]).into_response()
}

/// The token endpoint: for `authorization_code`, an ES256 access token for the code's scope and
/// resource, as [`Grant`] says; for `refresh_token`, a new one for the refresh token's grant
/// (the refresh token rotates), or `invalid_grant` when refreshes are refused. Every grant
/// carries a refresh token.
async fn token(
    axum::extract::State(s): axum::extract::State<Login>,
    headers: axum::http::HeaderMap,
    body: String,
) -> Reply {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
    let grant_type = form.get("grant_type").cloned().unwrap_or_default();
    let basic = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("Basic "));
    let auth = match (basic, form.contains_key("client_secret")) {
        (true, _) => "client_secret_basic",
        (false, true) => "client_secret_post",
        (false, false) => "none",
    };
    {
        let mut seen = s.seen.lock().unwrap();
        seen.grants.push(grant_type.clone());
        seen.token_auth.push(auth.to_owned());
    }
    let client_id = form.get("client_id").cloned().unwrap_or_default();
    if s.seen.lock().unwrap().forgotten.contains(&client_id) {
        return oauth_error(axum::http::StatusCode::UNAUTHORIZED, "invalid_client", "unknown client");
    }
    let (scope, aud) = if grant_type == "refresh_token" {
        let presented = form.get("refresh_token").cloned().unwrap_or_default();
        let known = s.seen.lock().unwrap().refresh_tokens.remove(&presented);
        let refused = s.refuse_refresh.load(Ordering::SeqCst);
        match known {
            Some((client, scope, resource)) if client == client_id && !refused => (scope, resource),
            _ => {
                return oauth_error(
                    axum::http::StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "the refresh token is expired or revoked",
                );
            }
        }
    } else {
        if *s.grant.lock().unwrap() == Grant::ErrorPage {
            let page = "<!doctype html><html><body><h1>500 Internal Server Error</h1></body></html>";
            return (axum::http::StatusCode::INTERNAL_SERVER_ERROR, axum::response::Html(page))
                .into_response();
        }
        let Some((asked, resource)) = form.get("code").and_then(|c| s.seen.lock().unwrap().codes.remove(c))
        else {
            return oauth_error(axum::http::StatusCode::BAD_REQUEST, "invalid_grant", "unknown code");
        };
        let resource = form.get("resource").cloned().filter(|r| !r.is_empty()).unwrap_or(resource);
        match *s.grant.lock().unwrap() {
            Grant::Only(scope) => (scope.to_owned(), resource),
            Grant::WrongAudience => (asked, "http://127.0.0.1:1/mcp".to_owned()),
            Grant::AsAsked | Grant::Hang | Grant::Person | Grant::ErrorPage => (asked, resource),
        }
    };
    let lifetime = s.lifetime.load(Ordering::SeqCst);
    // Every token differs (ES256 signatures are deterministic here: RFC 6979), as a real
    // authorization server's do.
    let jti = format!("token-{}", s.seen.lock().unwrap().issued.len() + 1);
    let claims = json!({"iss": s.url, "aud": aud, "sub": "alice", "client_id": client_id,
                        "scope": scope, "iat": now(), "exp": now() + lifetime, "jti": jti});
    let access_token = es256(&s.ec, "ec-1", &claims);
    let mut seen = s.seen.lock().unwrap();
    seen.issued.push(access_token.clone());
    let refresh_token = format!("refresh-{}", seen.issued.len());
    seen.refresh_tokens.insert(refresh_token.clone(), (client_id, scope.clone(), aud));
    axum::Json(json!({"access_token": access_token, "token_type": "Bearer", "expires_in": lifetime,
                      "refresh_token": refresh_token, "scope": scope}))
    .into_response()
}
