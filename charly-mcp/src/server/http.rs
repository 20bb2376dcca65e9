//! Streamable HTTP: a listener with a graceful-shutdown handle, and the same service as an
//! axum [`Router`] for hosts that mount it on their own router.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt as _;
use http::{HeaderValue, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::SessionConfig;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

pub use super::bearer::BearerToken;
use super::compat::{Endpoint, SessionKeeper, Sessions};
use super::handler::Calls;
use super::options::DEFAULT_MAX_REQUESTS_PER_SESSION;
use super::replica::check_replica_name;
use super::server::Server;
use super::stdio::ServeError;

/// Default listen address: loopback only; binding beyond loopback is explicit.
pub const DEFAULT_LISTEN: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 18765);
/// Default path of the MCP endpoint.
pub const DEFAULT_PATH: &str = "/mcp";
/// Default request body limit, in bytes: [`super::MAX_REQUEST_BYTES`] (4 MiB), the stdio
/// transport's line limit.
pub const DEFAULT_MAX_BODY_BYTES: usize = super::MAX_REQUEST_BYTES;
/// Default [`HttpOptions::max_sessions`].
pub const DEFAULT_MAX_SESSIONS: usize = 1024;

/// How the Streamable HTTP endpoint is served.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct HttpOptions {
    /// Where [`Server::serve_http`] listens (default `127.0.0.1:18765`; port 0 picks a free one).
    /// When binding beyond loopback, also list the names clients use in
    /// [`HttpOptions::allowed_hosts`] (and their origins), or every request gets 403.
    pub listen: SocketAddr,
    /// The endpoint path (default `/mcp`).
    pub path: String,
    /// `Host` values accepted, as hostnames (any port) or `host:port`; anything else gets
    /// 403 (DNS-rebinding protection). Default: `localhost`, `127.0.0.1`, `::1`. Empty
    /// disables the check.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted when a request carries one (`scheme://host[:port|:*]`);
    /// anything else gets 403. Default: http and https on loopback names, any port.
    pub allowed_origins: Vec<String>,
    /// Require `Authorization: Bearer <token>`; without it (or with another) the answer is 401.
    pub bearer_token: Option<BearerToken>,
    /// Act as an OAuth 2.1 resource server (feature `oauth`): publish protected resource
    /// metadata and require access tokens from this issuer, for this resource, with the
    /// scopes each request needs (see [`super::OAuthOptions`]). Not with
    /// [`HttpOptions::bearer_token`].
    #[cfg(feature = "oauth")]
    pub oauth: Option<super::OAuthOptions>,
    /// Largest accepted request body, in bytes; larger ones get 413.
    pub max_body_bytes: usize,
    /// No sessions: every POST is served on its own, so replicas behind a load balancer need
    /// no affinity. Server-to-client requests and the GET stream need sessions. A request
    /// whose handler sends nothing before its answer is answered with `application/json`;
    /// one that sends progress or log notifications first, with `text/event-stream`.
    pub stateless: bool,
    /// Interval of SSE keep-alive comments; `None` sends none.
    pub sse_keep_alive: Option<Duration>,
    /// A stateful session that for this long receives no request, runs no tool call and
    /// holds no GET stream open is closed (also one whose client never sent
    /// `notifications/initialized`: the timer runs from the `initialize` answer on), and its
    /// next request gets 404 (clients then start a new session, spec 2025-11-25, "Session
    /// Management"). Its slot under [`HttpOptions::max_sessions`] is then free. Other requests (a slow
    /// `resources/read`, say) do not keep a session while they run. Default: 5 minutes,
    /// rmcp's. `None` keeps sessions until the client deletes them or the server stops.
    pub session_idle_timeout: Option<Duration>,
    /// Path of a health endpoint beside the MCP endpoint (`/healthz`, say): a GET (or HEAD)
    /// answers `200` with `{"status":"ok"}`, or `503` with `{"status":"stopping"}` once
    /// shutdown has begun, with no bearer token and no Host or Origin check (probes such as
    /// the kubelet's send neither); it says nothing else about the server. Default: `None`,
    /// no such endpoint.
    pub health_path: Option<String>,
    /// Stateful sessions only: session ids become `<prefix>.<uuid>` instead of a bare UUID,
    /// so a load balancer can route a session's requests to the replica that holds it (see
    /// `deploy/nginx/charly.conf.template`). A prefix names the replica: 1 to 63 ASCII
    /// letters, digits, `-` or `_`. Default: `None`.
    pub session_id_prefix: Option<String>,
    /// Stateful sessions only: most sessions open at once. An `initialize` past it gets `503`
    /// with `Retry-After: 5` and opens nothing; a slot frees when a session is deleted or idles
    /// out ([`HttpOptions::session_idle_timeout`]), so without an idle timeout, sessions
    /// clients abandon hold their slots until the server stops. Default:
    /// [`DEFAULT_MAX_SESSIONS`]; `None`: no cap (rmcp's behaviour: a client that never deletes
    /// its sessions grows the server until they idle out).
    pub max_sessions: Option<usize>,
    /// Stateful sessions only: most requests of one session in flight at once, from a POST to
    /// the end of its answer (every request counts, `ping` as much as `tools/call`;
    /// notifications such as `notifications/cancelled` never do). A request past it gets
    /// `503` with `Retry-After: 1` and a JSON-RPC error (code -32000) carrying its id, and does
    /// not run. Default: [`DEFAULT_MAX_REQUESTS_PER_SESSION`]; `None`: no cap.
    pub max_requests_per_session: Option<usize>,
    /// Stateful sessions only: how long a request keeps running after its client dropped the
    /// POST's response stream (closed the connection, say), for the client to resume the
    /// stream (`GET` with `Last-Event-ID`, spec 2025-11-25, "Resumability and Redelivery").
    /// Past it the request is cancelled as a `notifications/cancelled` would cancel it: a tool
    /// call stops, and the children it started with [`super::CallContext::run_command`] are
    /// killed. A stream that never sent an event id cannot be resumed, so its request is
    /// cancelled at once (sessions before 2025-11-25 get no priming event, so a call that has
    /// sent nothing yet). Default: [`DEFAULT_DISCONNECT_GRACE`]; zero cancels at once.
    /// Stateless requests are cancelled when their client goes away (rmcp's behaviour).
    pub disconnect_grace: Duration,
}

/// Default [`HttpOptions::disconnect_grace`]: 5 s, the 3 s SSE `retry` interval clients are
/// told to wait before they reconnect, and 2 s for them to do so.
pub const DEFAULT_DISCONNECT_GRACE: Duration = Duration::from_secs(5);

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            listen: DEFAULT_LISTEN,
            path: DEFAULT_PATH.to_owned(),
            allowed_hosts: ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec(),
            allowed_origins: ["http", "https"]
                .iter()
                .flat_map(|s| ["localhost", "127.0.0.1", "[::1]"].map(|h| format!("{s}://{h}:*")))
                .collect(),
            bearer_token: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            stateless: false,
            sse_keep_alive: Some(Duration::from_secs(15)),
            session_idle_timeout: Some(SessionConfig::DEFAULT_KEEP_ALIVE),
            health_path: None,
            session_id_prefix: None,
            max_sessions: Some(DEFAULT_MAX_SESSIONS),
            max_requests_per_session: Some(DEFAULT_MAX_REQUESTS_PER_SESSION),
            disconnect_grace: DEFAULT_DISCONNECT_GRACE,
        }
    }
}

impl HttpOptions {
    /// Sets the listen address.
    pub fn listen(mut self, listen: SocketAddr) -> Self {
        self.listen = listen;
        self
    }

    /// Sets the endpoint path.
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Requires this bearer token.
    pub fn bearer_token(mut self, token: BearerToken) -> Self {
        self.bearer_token = Some(token);
        self
    }

    /// Checks OAuth access tokens (see [`HttpOptions::oauth`]).
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, oauth: super::OAuthOptions) -> Self {
        self.oauth = Some(oauth);
        self
    }

    /// Sets stateless mode.
    pub fn stateless(mut self, stateless: bool) -> Self {
        self.stateless = stateless;
        self
    }

    /// Sets the accepted `Host` values (see [`HttpOptions::allowed_hosts`]).
    pub fn allowed_hosts(mut self, hosts: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_hosts = hosts.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the accepted `Origin` values (see [`HttpOptions::allowed_origins`]).
    pub fn allowed_origins(mut self, origins: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allowed_origins = origins.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the session idle timeout (see [`HttpOptions::session_idle_timeout`]).
    pub fn session_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.session_idle_timeout = timeout;
        self
    }

    /// Serves the health endpoint at `path` (see [`HttpOptions::health_path`]).
    pub fn health_path(mut self, path: impl Into<String>) -> Self {
        self.health_path = Some(path.into());
        self
    }

    /// Sets the cap on open sessions (see [`HttpOptions::max_sessions`]).
    pub fn max_sessions(mut self, max: Option<usize>) -> Self {
        self.max_sessions = max;
        self
    }

    /// Sets the cap on each session's requests in flight (see
    /// [`HttpOptions::max_requests_per_session`]).
    pub fn max_requests_per_session(mut self, max: Option<usize>) -> Self {
        self.max_requests_per_session = max;
        self
    }

    /// Sets how long a request whose client went away waits to be resumed (see
    /// [`HttpOptions::disconnect_grace`]).
    pub fn disconnect_grace(mut self, grace: Duration) -> Self {
        self.disconnect_grace = grace;
        self
    }

    /// Prefixes session ids with this replica name (see [`HttpOptions::session_id_prefix`]).
    pub fn session_id_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.session_id_prefix = Some(prefix.into());
        self
    }

    /// Checks the paths and the session id prefix: what [`Server::serve_http`] refuses and
    /// [`Server::http_router`] panics on.
    ///
    /// # Errors
    ///
    /// [`ServeError::Path`] when the endpoint or health path is not a literal path
    /// ([`check_path`]) or both are the same, [`ServeError::SessionIdPrefix`] when the
    /// prefix is not a replica name ([`check_replica_name`]), [`ServeError::Limit`] when a
    /// cap is 0, [`ServeError::Token`] when both a bearer token and OAuth are set or the
    /// OAuth options fail `OAuthOptions::check`.
    pub fn check(&self) -> Result<(), ServeError> {
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            if self.bearer_token.is_some() {
                return Err(ServeError::Token(
                    "a static bearer token and OAuth access tokens exclude each other: give one".into(),
                ));
            }
            oauth.check().map_err(ServeError::Token)?;
        }
        for (cap, name) in [
            (self.max_sessions, "max_sessions (--max-sessions)"),
            (self.max_requests_per_session, "max_requests_per_session (--max-requests-per-session)"),
        ] {
            if cap == Some(0) {
                return Err(ServeError::Limit(format!(
                    "{name} is 0, which would refuse every request; give at least 1, or no cap"
                )));
            }
        }
        check_path(&self.path).map_err(ServeError::Path)?;
        if let Some(health) = &self.health_path {
            check_path(health).map_err(|why| ServeError::Path(format!("health: {why}")))?;
            if *health == self.path {
                return Err(ServeError::Path(format!(
                    "the health path {health:?} is the MCP endpoint's path; give it another, e.g. /healthz"
                )));
            }
        }
        if let Some(prefix) = &self.session_id_prefix {
            check_replica_name(prefix).map_err(ServeError::SessionIdPrefix)?;
        }
        Ok(())
    }

    /// Sets the body limit in bytes.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }
}

impl Server {
    /// The Streamable HTTP endpoint as an axum [`Router`] serving `options.path`, with the
    /// Host/Origin checks, bearer token and body limit of `options`. Mount it on a host
    /// router with `merge` (or serve it with `axum::serve`); a host passes its own per-request
    /// meta by inserting a [`super::HostMeta`] into the request's extensions in a middleware
    /// layered on top. Sessions end when `shutdown` is cancelled. With stateful sessions, a
    /// plain `tools/list` that rmcp's checks accept is answered from pages serialised once, as
    /// `application/json`; every other request is rmcp's, corrected where rmcp 3.11 is wrong
    /// (`compat`). With [`HttpOptions::health_path`], the router also serves the health
    /// endpoint, outside the bearer token and Host checks. With [`HttpOptions::oauth`], every
    /// request to the endpoint needs a valid access token (401/403 otherwise, the token's
    /// identity in its [`super::HostMeta`] under [`super::AUTH_META_KEY`]), and the router
    /// also serves the protected resource metadata, outside the token and Host checks.
    ///
    /// # Panics
    ///
    /// When `options` fail [`HttpOptions::check`] (the message says why), or set
    /// [`HttpOptions::oauth`] without its `resource` ([`Server::serve_http`] fills it in).
    pub fn http_router(&self, options: &HttpOptions, shutdown: CancellationToken) -> Router {
        self.router_counting_calls(options, shutdown).0
    }

    /// [`Server::http_router`], and the tracker its sessions count their tool calls in.
    fn router_counting_calls(&self, options: &HttpOptions, shutdown: CancellationToken) -> (Router, Calls) {
        if let Err(why) = options.check() {
            panic!("charly: {why}");
        }
        let stopping = shutdown.clone();
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(options.allowed_hosts.clone())
            .with_allowed_origins(options.allowed_origins.clone())
            .enforce_origin_validation()
            .with_max_request_body_bytes(options.max_body_bytes)
            .with_sse_keep_alive(options.sse_keep_alive)
            .with_legacy_session_mode(!options.stateless)
            // Stateless: a request whose handler sends nothing before its answer (no progress,
            // no log) is answered `application/json` rather than a one-event SSE stream; rmcp
            // falls back to SSE as soon as the handler emits a notification or a request.
            .with_json_response(options.stateless)
            .with_cancellation_token(shutdown);
        if options.allowed_hosts.is_empty() {
            config = config.disable_allowed_hosts();
        }
        let server = self.clone();
        let sessions = Sessions::new(
            options.session_idle_timeout,
            options.session_id_prefix.as_deref(),
            options.max_sessions.filter(|_| !options.stateless),
        );
        let keepers = sessions.clone();
        let stateless = options.stateless;
        let calls = Calls::default();
        let counted = calls.clone();
        let rmcp = StreamableHttpService::new(
            move || {
                let session = server.session().with_calls(counted.clone());
                Ok(if stateless {
                    session.stateless()
                } else {
                    session.with_keeper(SessionKeeper::new(&keepers))
                })
            },
            sessions.manager(),
            config,
        );
        let endpoint = if stateless {
            Endpoint::stateless(rmcp)
        } else {
            Endpoint::stateful(
                rmcp,
                sessions,
                self.inner.clone(),
                options.max_body_bytes,
                options.max_requests_per_session,
                options.disconnect_grace,
            )
        };
        // A handler calling `handle` directly, not `route_service` plus a `from_fn` layer:
        // each of those levels clones the rmcp service (its config, with the host and origin
        // lists) per request, a measurable share of a call's server CPU.
        let endpoint = Arc::new(endpoint);
        let endpoint = move |request: Request| {
            let endpoint = endpoint.clone();
            async move { close_after_refusal(endpoint.handle(request).await) }
        };
        let mut router = Router::new().route(&options.path, axum::routing::any(endpoint));
        if let Some(token) = options.bearer_token.clone() {
            router = router.layer(axum::middleware::from_fn(move |request: Request, next: Next| {
                let token = token.clone();
                async move {
                    if token.accepts(request.headers().get(header::AUTHORIZATION)) {
                        next.run(request).await
                    } else {
                        unauthorized()
                    }
                }
            }));
        }
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &options.oauth {
            let Some(resource) = &oauth.resource else {
                panic!(
                    "charly: HttpOptions::oauth needs its resource URL (the endpoint's public URL) to build a router"
                );
            };
            let guard = super::oauth::Guard::new(
                oauth,
                resource,
                &options.path,
                self.inner.clone(),
                options.max_body_bytes,
            )
            .unwrap_or_else(|why| panic!("charly: {why}"));
            let guard = Arc::new(guard);
            let routes = guard.routes();
            router = router.layer(axum::middleware::from_fn(move |request: Request, next: Next| {
                guard.clone().check(request, next)
            }));
            // After the token layer, which covers only the routes before it.
            router = router.merge(routes);
        }
        // Added after the token layer, which covers only the routes before it.
        if let Some(health) = &options.health_path {
            router = router.route(health, axum::routing::get(move || health_answer(stopping.is_cancelled())));
        }
        (router, calls)
    }

    /// Listens on `options.listen` and serves the Streamable HTTP endpoint until
    /// [`ServerHandle::shutdown`]. Accepted sockets get `TCP_NODELAY` (without it SSE
    /// responses stall for tens of milliseconds per call).
    ///
    /// # Errors
    ///
    /// What [`HttpOptions::check`] refuses, [`ServeError::Io`] when the address cannot be
    /// bound.
    pub async fn serve_http(&self, options: HttpOptions) -> Result<ServerHandle, ServeError> {
        #[allow(unused_mut)] // Changed with the `oauth` feature only.
        let mut options = options;
        options.check()?;
        let listener = tokio::net::TcpListener::bind(options.listen).await.map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot listen on {}: {e}", options.listen))
        })?;
        let local_addr = listener.local_addr()?;
        #[cfg(feature = "oauth")]
        if let Some(oauth) = options.oauth.as_mut().filter(|o| o.resource.is_none()) {
            oauth.resource = Some(format!("http://{local_addr}{}", options.path));
        }
        let shutdown = CancellationToken::new();
        let (router, calls) = self.router_counting_calls(&options, shutdown.clone());
        let router = router.fallback(|| async { close_after_refusal(StatusCode::NOT_FOUND.into_response()) });
        let listener = listener.tap_io(|tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::warn!("cannot set TCP_NODELAY: {e}");
            }
        });
        let signal = shutdown.clone().cancelled_owned();
        let task =
            tokio::spawn(async move { axum::serve(listener, router).with_graceful_shutdown(signal).await });
        tracing::info!("MCP server listening on http://{local_addr}{}", options.path);
        Ok(ServerHandle { local_addr, path: options.path, shutdown, task, calls })
    }
}

/// Checks that `path` is a literal endpoint path: it starts with `/` and holds no whitespace,
/// control characters or axum route syntax (`{param}`, `*wildcard`), which would panic when
/// routed or quietly match other paths.
///
/// # Errors
///
/// A message naming the path and what is wrong with it.
pub fn check_path(path: &str) -> Result<(), String> {
    let problem = if !path.starts_with('/') {
        "must start with `/`"
    } else if path.contains(['{', '}', '*', '?', '#']) {
        "must be a literal path, without `{`, `}`, `*`, `?` or `#`"
    } else if path.chars().any(|c| c.is_whitespace() || c.is_control()) {
        "must not contain whitespace or control characters"
    } else {
        return Ok(());
    };
    Err(format!("the endpoint path {path:?} {problem}, e.g. /mcp"))
}

/// Marks refusals (4xx) `Connection: close`.
///
/// A refused request's body is never read, so the connection cannot carry another request;
/// without this header a client reusing it sees the next request fail with a disconnect.
pub(crate) fn close_after_refusal(mut response: Response) -> Response {
    if response.status().is_client_error() {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The health endpoint's answer: `200 {"status":"ok"}`, or `503 {"status":"stopping"}` once
/// shutdown has begun, so a balancer stops sending new work while calls drain.
async fn health_answer(stopping: bool) -> Response {
    let (status, body) = if stopping {
        (StatusCode::SERVICE_UNAVAILABLE, r#"{"status":"stopping"}"#)
    } else {
        (StatusCode::OK, r#"{"status":"ok"}"#)
    };
    let mut response = (status, body).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn unauthorized() -> Response {
    let mut response = (StatusCode::UNAUTHORIZED, "401 Unauthorized: send `Authorization: Bearer <token>`\n")
        .into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    close_after_refusal(response)
}

/// A running HTTP server. Dropping the handle leaves the server running; call
/// [`ServerHandle::shutdown`] to stop it.
#[derive(Debug)]
pub struct ServerHandle {
    local_addr: SocketAddr,
    path: String,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
    /// The tool calls in flight.
    calls: Calls,
}

/// How long [`ServerHandle::shutdown`] waits for open connections and calls in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

impl ServerHandle {
    /// The bound address (the real port when listening on port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The endpoint URL, `http://<addr><path>`.
    pub fn url(&self) -> String {
        format!("http://{}{}", self.local_addr, self.path)
    }

    /// Stops accepting connections, closes every session and cancels the tool calls in
    /// flight, then waits until the connections are closed and every call has returned (a
    /// cancelled call first kills and reaps the children it started with
    /// [`super::CallContext::run_command`]), at most 5 s in all; then the port is released.
    /// Past 5 s the connections left are dropped, and calls that ignore their cancellation
    /// are left to the runtime (logged).
    ///
    /// # Errors
    ///
    /// [`ServeError::Io`] when serving had failed, [`ServeError::Join`] when its task panicked.
    pub async fn shutdown(mut self) -> Result<(), ServeError> {
        let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        // The calls first, while their sessions still run: rmcp's teardown of a session may
        // drop a call's task before the call has reaped its children.
        let running = &self.calls.running;
        running.close();
        self.calls.stop.cancel();
        if tokio::time::timeout_at(deadline, running.wait()).await.is_err() {
            tracing::warn!(
                calls = running.len(),
                "tool calls still running {} s after shutdown began: they ignore their cancellation",
                SHUTDOWN_GRACE.as_secs()
            );
        }
        self.shutdown.cancel();
        match tokio::time::timeout_at(deadline, &mut self.task).await {
            Ok(joined) => Ok(joined??),
            Err(_) => {
                self.task.abort();
                let _ = (&mut self.task).await;
                Ok(())
            }
        }
    }
}
