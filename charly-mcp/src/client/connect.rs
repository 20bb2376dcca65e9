//! [`connect`] an [`Endpoint`]: dial, then discover (protocol 2026-07-28) or `initialize`
//! (2025-11-25 and before), giving a [`Client`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ProtocolVersion, ServerResult};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode, ClientServiceExt as _};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport, TokioChildProcess};

use super::answers::Answers;
use super::endpoint::{Endpoint, StdioCommand, Target, TransportKind};
use super::error::{ClientError, error_chain};
use super::handler::Handler;
use super::observe::{Observed, Record};
use super::plain::Credentials;
use super::session::Client;
use super::sse::SseClientTransport;

/// The default timeout of one operation (connecting, or one request): 30 seconds.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The most pages a list operation follows before it gives up (a server whose cursors never
/// end would otherwise loop forever): 1,000 pages.
pub const MAX_PAGES: usize = 1000;

/// How long [`Client::close`] waits for a polite shutdown before the session is dropped
/// (and a stdio child killed): 500 ms.
pub const CLOSE_GRACE: Duration = Duration::from_millis(500);

/// One `notifications/progress` from the server, as the progress callback sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgressUpdate {
    /// Progress so far; increases with every notification (units are the server's).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable message, when the server sends one.
    pub message: Option<String>,
}

/// A callback that receives progress notifications; it runs on the client's task, so it must
/// be quick. [`crate::client::ProgressBar::callback`] makes one that draws a terminal bar.
pub type ProgressFn = Arc<dyn Fn(&ProgressUpdate) + Send + Sync>;

/// What to do with a stdio server's stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChildStderr {
    /// Pass it through to charly's stderr (the default: a failing server says why).
    #[default]
    Inherit,
    /// Discard it.
    Discard,
}

/// Which protocol revisions the client offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protocol {
    /// 2026-07-28 first (`server/discover`, per-request `_meta`), falling back to an
    /// `initialize` of 2025-11-25 when the server answers discovery as an older server does
    /// (an error, or nothing within 10 s). The legacy SSE transport always initializes.
    #[default]
    Latest,
    /// 2026-07-28 only: a server that does not discover is an error.
    Stateless,
    /// `initialize` at 2025-11-25 (the server may answer with an older version).
    Initialize,
}

/// Options for [`connect`].
#[derive(Clone)]
pub struct ConnectOptions {
    /// Timeout for connecting and for each request (default [`DEFAULT_TIMEOUT`]). A request
    /// that times out is cancelled with `notifications/cancelled`.
    pub timeout: Duration,
    /// Called for every progress notification.
    pub progress: Option<ProgressFn>,
    /// What happens to a stdio server's stderr.
    pub child_stderr: ChildStderr,
    /// What the client answers when the server asks for input.
    pub answers: Answers,
    /// Which protocol revisions the client offers.
    pub protocol: Protocol,
    /// The `clientInfo.name` sent in `initialize` and in 2026-07-28 requests' `_meta`
    /// (default `charly`): a server that publishes
    /// different tool names per client (`claude-code` gets `_`-joined ones) answers as it would
    /// answer that client.
    pub client_name: Option<String>,
    /// Cancelled when the run is interrupted (Ctrl-C): a task the client follows is then
    /// cancelled on the server (`tasks/cancel`, waiting at most [`CANCEL_GRACE`]) and the call
    /// ends with [`ClientError::Interrupted`].
    pub interrupt: Option<tokio_util::sync::CancellationToken>,
    /// How HTTP endpoints' certificates are checked (system roots, `--ca-file`, `--insecure`).
    pub tls: super::tls::TlsOptions,
    /// How an OAuth-protected HTTP endpoint is logged in to (on by default: a 401 with a
    /// challenge starts the authorization, unattended unless the options say otherwise).
    pub oauth: super::auth::OAuthOptions,
}

/// How long an interrupted call waits for the server to confirm a `tasks/cancel`: 2 s.
pub const CANCEL_GRACE: Duration = Duration::from_secs(2);

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            timeout: DEFAULT_TIMEOUT,
            progress: None,
            child_stderr: ChildStderr::Inherit,
            answers: Answers::default(),
            protocol: Protocol::default(),
            client_name: None,
            interrupt: None,
            tls: super::tls::TlsOptions::default(),
            oauth: super::auth::OAuthOptions::default(),
        }
    }
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("timeout", &self.timeout)
            .field("progress", &self.progress.is_some())
            .field("child_stderr", &self.child_stderr)
            .field("answers", &self.answers)
            .field("protocol", &self.protocol)
            .field("client_name", &self.client_name)
            .field("interrupt", &self.interrupt.is_some())
            .field("tls", &self.tls)
            .field("oauth", &self.oauth)
            .finish()
    }
}

/// Connects to `endpoint` and starts the session as `options.protocol` says (by default
/// `server/discover` of 2026-07-28, falling back to `initialize`), within `options.timeout`.
///
/// # Errors
///
/// [`ClientError::Connect`] (refused, HTTP error, handshake failure, a stdio command that
/// cannot start), [`ClientError::Timeout`] (starting took longer than the timeout).
pub async fn connect(endpoint: &Endpoint, options: &ConnectOptions) -> Result<Client, ClientError> {
    if let (Target::Http { transport: TransportKind::Sse, .. }, Protocol::Stateless) =
        (&endpoint.target, options.protocol)
    {
        return Err(ClientError::InvalidInput(format!(
            "{}: MCP 2026-07-28 has no HTTP+SSE transport (that transport ended with 2024-11-05): \
             use --transport http with --protocol 2026-07-28, or keep --transport sse without \
             --protocol 2026-07-28",
            endpoint.location()
        )));
    }
    let waiting = super::auth::Waiting::default();
    let attempt = async {
        match dial(endpoint, options, &waiting).await {
            // rmcp 3.11's automatic lifecycle falls back to `initialize` only when discovery
            // fails with an error; a server that answers `server/discover` with some other
            // result (older test servers answer every unknown method with `{}`) is an older
            // server too: dial again and initialize.
            Err(Started::NotDiscovered(first)) if options.protocol == Protocol::Latest => {
                let why = format!("server/discover was answered with another kind of result ({first})");
                let legacy = ConnectOptions { protocol: Protocol::Initialize, ..options.clone() };
                match dial(endpoint, &legacy, &waiting).await {
                    Ok(mut client) => {
                        client.fallback = Some(why);
                        Ok(client)
                    }
                    Err(second) => Err(with_fallback_reason(second.into_error(), &why)),
                }
            }
            other => other.map_err(Started::into_error),
        }
    };
    // The timeout does not count the time a person spends logging in at a browser (the login
    // waits at most `OAuthOptions::login_wait`, as it says).
    let started = tokio::time::Instant::now();
    tokio::pin!(attempt);
    let finished = loop {
        let deadline = match waiting.paused() {
            Some(paused) => started + options.timeout + paused,
            None => tokio::time::Instant::now() + Duration::from_millis(200),
        };
        if tokio::time::Instant::now() >= deadline {
            break None;
        }
        tokio::select! {
            result = &mut attempt => break Some(result),
            () = tokio::time::sleep_until(deadline) => {}
        }
    };
    waiting.connected();
    match finished {
        Some(result) => result.map_err(|e| with_tls_hint(e, &options.tls)),
        // The MCP server answered (with a challenge); an authorization server did not.
        None if let Some(what) = waiting.get() => Err(ClientError::Connect {
            endpoint: endpoint.location(),
            message: format!(
                "{what} did not answer within {} (charly's --timeout for connecting ran out while it \
                 waited for the authorization server; the MCP server had answered)",
                super::format_duration(options.timeout)
            ),
        }),
        None => Err(ClientError::Timeout {
            operation: "connect and initialize",
            timeout: options.timeout,
            endpoint: Some(endpoint.location()),
        }),
    }
}

/// `error`, its message followed by why `server/discover` did not start the session.
fn with_fallback_reason(error: ClientError, why: &str) -> ClientError {
    match error {
        ClientError::Connect { endpoint, message } => ClientError::Connect {
            endpoint,
            message: format!("{message} (after falling back to initialize: {why})"),
        },
        other => other,
    }
}

/// Why a session did not start: an error, or a server that answered `server/discover` with
/// something else than a discover result.
enum Started {
    Failed(ClientError),
    NotDiscovered(ClientError),
}

impl Started {
    fn into_error(self) -> ClientError {
        match self {
            Started::Failed(e) | Started::NotDiscovered(e) => e,
        }
    }
}

/// `error` with the TLS hint that fits `tls`: a certificate refused although `--ca-file` was
/// given is not fixed by giving one.
fn with_tls_hint(error: ClientError, tls: &super::tls::TlsOptions) -> ClientError {
    match error {
        ClientError::Connect { endpoint, message } => {
            ClientError::Connect { endpoint, message: super::tls::fit_hint(&message, tls) }
        }
        other => other,
    }
}

/// Opens `endpoint`'s transport and starts a session on it as `options` say; an OAuth login
/// records in `waiting` what it waits for.
async fn dial(
    endpoint: &Endpoint,
    options: &ConnectOptions,
    waiting: &super::auth::Waiting,
) -> Result<Client, Started> {
    let location = endpoint.location();
    let fail = |message: String| {
        Started::Failed(ClientError::Connect {
            endpoint: location.clone(),
            message: super::endpoint::redact_urls(&message),
        })
    };
    match &endpoint.target {
        Target::Http { url, transport: TransportKind::Sse, headers } => {
            for (name, _) in headers {
                super::endpoint::reserved_header(name).map_err(|e| fail(e.to_string()))?;
            }
            let client = super::tls::http_client(&options.tls, true).map_err(fail)?;
            let transport = SseClientTransport::connect_with(client, url, headers)
                .await
                .map_err(|e| fail(sse_failure(&e)))?;
            let legacy = ConnectOptions { protocol: Protocol::Initialize, ..options.clone() };
            start(transport, &legacy, &location, false, Credentials::OAuth).await
        }
        Target::Http { url, headers, .. } => {
            let client = super::tls::http_client(&options.tls, true).map_err(fail)?;
            let config = streamable_http(url, headers).map_err(fail)?;
            // Headers that carry their own Authorization are the credentials under test: a 401
            // is then an answer, not a login. Without OAuth the client still reads a failure's
            // body back (see `auth::OAuthHttp`).
            let own_auth = headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("authorization"));
            let oauth = super::auth::OAuthOptions {
                enabled: options.oauth.enabled && !own_auth,
                ..options.oauth.clone()
            };
            let credentials = match (oauth.enabled, own_auth) {
                (true, _) => Credentials::OAuth,
                (false, true) => Credentials::Header,
                (false, false) => Credentials::Off,
            };
            let oauth_http = super::tls::http_client(&options.tls, false).map_err(fail)?;
            let http =
                super::auth::OAuthHttp::new(url, client, oauth_http, oauth, waiting.clone(), options.timeout);
            let transport = StreamableHttpClientTransport::with_client(http, config);
            start(transport, options, &location, true, credentials).await
        }
        Target::Stdio(command) => {
            let transport = spawn_stdio(command, options.child_stderr)
                .map_err(|e| fail(format!("cannot start {:?}: {}", command.command, error_chain(&e))))?;
            start(transport, options, &location, false, Credentials::OAuth).await
        }
    }
}

/// Starts a session over any rmcp transport (an in-memory `tokio::io::duplex` pair, a
/// custom transport...), as `options.protocol` says. `label` names the endpoint in errors.
/// Not bounded by the timeout: [`connect`] does that. Unlike [`connect`], it cannot dial again
/// when a server answers `server/discover` with some other result instead of an error: use
/// [`Protocol::Initialize`] for such servers.
///
/// # Errors
///
/// [`ClientError::Connect`] when discovery and the handshake fail.
pub async fn connect_transport<T, E, A>(
    transport: T,
    options: &ConnectOptions,
    label: &str,
) -> Result<Client, ClientError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    start(transport, options, label, false, Credentials::OAuth).await.map_err(|started| match started {
        // The transport is spent: no second dial here, as `connect` makes.
        Started::NotDiscovered(ClientError::Connect { endpoint, message }) => ClientError::Connect {
            endpoint,
            message: format!(
                "{message} (the server answered server/discover as an older server may; connect with \
                 Protocol::Initialize)"
            ),
        },
        other => other.into_error(),
    })
}

async fn start<T, E, A>(
    transport: T,
    options: &ConnectOptions,
    label: &str,
    http: bool,
    credentials: Credentials,
) -> Result<Client, Started>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let lifecycle = match options.protocol {
        Protocol::Latest => ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::LATEST_WITH_INITIALIZE),
        },
        Protocol::Stateless => {
            ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
        }
        Protocol::Initialize => ClientLifecycleMode::Initialize,
    };
    let name = options.client_name.clone().unwrap_or_else(|| "charly".to_owned());
    let handler = Handler::new(options.progress.clone(), options.answers.clone(), name);
    let record = Record::default();
    let observed = Observed { inner: transport.into_transport(), record: record.clone() };
    let service = handler.serve_with_lifecycle(observed, lifecycle).await.map_err(|e| {
        let not_discovered = matches!(&e, ClientInitializeError::ExpectedInitResult(Some(r))
            if !matches!(r, ServerResult::DiscoverResult(_) | ServerResult::InitializeResult(_)));
        let message = match options.protocol {
            Protocol::Stateless => super::plain::discover_failure(&e, credentials),
            _ => super::plain::connect_failure(&e, credentials),
        };
        let error = ClientError::Connect {
            endpoint: label.to_owned(),
            message: super::endpoint::redact_urls(&message),
        };
        if not_discovered { Started::NotDiscovered(error) } else { Started::Failed(error) }
    })?;
    let startup = record.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    let negotiated = service.peer().peer_info().map(|info| info.protocol_version.clone());
    let fallback = match (&startup.initialize_offered, options.protocol) {
        (Some(offered), _) => {
            if let Err(message) = check_initialized(offered, negotiated.as_ref()) {
                let _ = service.cancel().await;
                return Err(Started::Failed(ClientError::Connect { endpoint: label.to_owned(), message }));
            }
            (options.protocol == Protocol::Latest).then(|| match &startup.discover_error {
                Some(e) => format!("server/discover failed with error {}: {}", e.code.0, e.message),
                None => "no answer to server/discover within 10s".to_owned(),
            })
        }
        (None, _) => None,
    };
    Ok(Client {
        service,
        timeout: options.timeout,
        http,
        discovered: startup.initialize_offered.is_none(),
        fallback,
        interrupt: options.interrupt.clone(),
        location: label.to_owned(),
        listed: Mutex::new(None),
    })
}

/// The revisions an `initialize` may agree on: those that have the handshake.
fn initialize_versions() -> Vec<&'static str> {
    ProtocolVersion::KNOWN_VERSIONS.iter().filter(|v| v.has_initialize()).map(|v| v.as_str()).collect()
}

/// Whether `negotiated`, the version a server answered `initialize` with, is one the client
/// can speak after offering `offered`: a known revision with the handshake, no newer than the
/// offer (the spec lets a server answer an older revision, never an unknown or newer one).
///
/// # Errors
///
/// What was offered, what came back and what would have been accepted.
fn check_initialized(offered: &str, negotiated: Option<&ProtocolVersion>) -> Result<(), String> {
    let accepted: Vec<&str> = initialize_versions().into_iter().filter(|v| *v <= offered).collect();
    let Some(version) = negotiated else {
        return Err(format!("the server answered initialize without a protocolVersion (offered {offered})"));
    };
    if accepted.contains(&version.as_str()) {
        return Ok(());
    }
    let why = if version.as_str() == ProtocolVersion::V_2026_07_28.as_str() {
        " (2026-07-28 has no initialize: a 2026-07-28 session starts with server/discover; use \
         --protocol 2026-07-28 or latest)"
    } else {
        ""
    };
    Err(format!(
        "the server answered initialize with protocolVersion {:?}, which charly did not offer: it \
         offered {offered} and accepts {} in answer{why}",
        super::error::truncate(version.as_str(), 80),
        accepted.join(", ")
    ))
}

/// A legacy SSE failure; a certificate refused in words (host and reason).
fn sse_failure(error: &super::sse::SseTransportError) -> String {
    if let super::sse::SseTransportError::Http(e) = error
        && let Some(text) = super::tls::certificate_failure(e)
    {
        return text;
    }
    error_chain(error)
}

/// The transport's configuration: the URL and the extra headers, sent on every request (POST,
/// the GET stream, DELETE).
fn streamable_http(
    url: &str,
    headers: &[(String, String)],
) -> Result<rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig, String> {
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    // Every header, `Authorization` included, goes through verbatim (rmcp's `auth_header`
    // would turn any value into `Bearer <value>`).
    let mut custom = std::collections::HashMap::new();
    for (name, value) in headers {
        super::endpoint::reserved_header(name).map_err(|e| e.to_string())?;
        let n = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("invalid header {name:?}"))?;
        let v = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| format!("invalid value for header {name:?}"))?;
        custom.insert(n, v);
    }
    Ok(StreamableHttpClientTransportConfig::with_uri(url)
        .custom_headers(custom)
        .max_sse_event_size(MAX_MESSAGE_BYTES)
        .max_json_response_size(MAX_MESSAGE_BYTES))
}

/// The most bytes one message from a Streamable HTTP server may take (an SSE event or a JSON
/// body): 64 MiB, four times rmcp's default, which a tool result of a few megabytes passes
/// (its text content and its structured content carry it twice, JSON-escaped): a page's HTML, a
/// desktop's PNG. A larger message closes the session ([`super::ClientError::Session`]).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

fn spawn_stdio(command: &StdioCommand, stderr: ChildStderr) -> std::io::Result<TokioChildProcess> {
    let mut cmd = tokio::process::Command::new(&command.command);
    // A session dropped (or a close that overran its grace) kills the server outright.
    cmd.kill_on_drop(true);
    cmd.args(&command.args);
    cmd.envs(command.env.iter().map(|(k, v)| (k, v)));
    if let Some(dir) = &command.cwd {
        cmd.current_dir(dir);
    }
    let stderr = match stderr {
        ChildStderr::Inherit => std::process::Stdio::inherit(),
        ChildStderr::Discard => std::process::Stdio::null(),
    };
    let (process, _) = TokioChildProcess::builder(cmd).stderr(stderr).spawn()?;
    Ok(process)
}
