//! The legacy HTTP+SSE client transport (MCP 2024-11-05), which rmcp does not carry.
//!
//! The protocol, from the 2024-11-05 specification ("Transports → HTTP with SSE"):
//!
//! 1. The client GETs the SSE URL (`Accept: text/event-stream`) and keeps the stream open.
//! 2. The server's first event is `event: endpoint` whose data is the URL to POST messages to,
//!    usually relative (`/message?sessionId=...`); it is resolved against the SSE URL and must
//!    have the same origin (scheme, host and port), or the connection is refused: a server
//!    must not be able to send a client's messages elsewhere.
//! 3. Every client message is one POST of a JSON-RPC message to that URL (the server answers
//!    `202 Accepted`); every server message (responses included) arrives on the stream as an
//!    `event: message` (or unnamed) event whose data is one JSON-RPC message.
//!
//! [`SseClientTransport`] implements rmcp's [`Transport`], so it plugs into
//! `rmcp::serve_client` like the built-in transports. SSE framing is read by
//! `sse_events.rs`, as the HTML standard says.

use std::borrow::Cow;

use futures::StreamExt as _;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::sync::mpsc;

use super::sse_events::{Event, events};

/// Why the legacy SSE transport failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SseTransportError {
    /// The HTTP request itself failed (connection refused, reset, ...).
    #[error("{0}")]
    Http(#[from] reqwest::Error),
    /// The server answered with a non-success status.
    #[error("{method} {url}: HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        /// `GET` or `POST`.
        method: &'static str,
        /// The URL requested.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the response body (at most 512 bytes).
        body: String,
    },
    /// The stream ended or failed before the `endpoint` event.
    #[error("the SSE stream at {0} ended before its `endpoint` event")]
    NoEndpoint(String),
    /// The `endpoint` event's data is not a URL.
    #[error("invalid `endpoint` event {data:?}: {reason}")]
    BadEndpoint {
        /// The event data.
        data: String,
        /// Why it is not usable.
        reason: String,
    },
    /// The `endpoint` points at another origin than the SSE stream.
    #[error("refusing endpoint {endpoint}: not the same origin as the SSE stream {sse}")]
    CrossOrigin {
        /// The resolved endpoint.
        endpoint: String,
        /// The SSE URL.
        sse: String,
    },
    /// A header given by the user is not a valid HTTP header.
    #[error("invalid header {0:?}")]
    BadHeader(String),
    /// Malformed SSE framing.
    #[error("SSE stream: {0}")]
    Sse(String),
    /// A message could not be serialised.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// A connected legacy HTTP+SSE session: the open event stream and the POST endpoint.
///
/// Built with [`SseClientTransport::connect`]; dropping it closes the stream (the reader task
/// is aborted), which ends the session on the server.
#[derive(Debug)]
pub struct SseClientTransport {
    client: reqwest::Client,
    post_url: url::Url,
    headers: reqwest::header::HeaderMap,
    rx: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    reader: tokio::task::JoinHandle<()>,
}

impl SseClientTransport {
    /// GETs `sse_url`, waits for the `endpoint` event and starts reading messages.
    ///
    /// `headers` (name, value) go on the GET and on every POST. The caller bounds the wait
    /// (charly wraps the whole connect in its operation timeout).
    ///
    /// # Errors
    ///
    /// [`SseTransportError`]: HTTP failure or status, a stream that ends before `endpoint`,
    /// an endpoint that is not a URL or not the same origin.
    pub async fn connect(sse_url: &str, headers: &[(String, String)]) -> Result<Self, SseTransportError> {
        super::tls::install_tls_provider();
        Self::connect_with(reqwest::Client::builder().build()?, sse_url, headers).await
    }

    /// [`SseClientTransport::connect`] with a client of the caller's (its TLS settings:
    /// [`crate::client::http_client`]).
    ///
    /// # Errors
    ///
    /// As [`SseClientTransport::connect`].
    pub async fn connect_with(
        client: reqwest::Client,
        sse_url: &str,
        headers: &[(String, String)],
    ) -> Result<Self, SseTransportError> {
        let base = url::Url::parse(sse_url).map_err(|e| SseTransportError::BadEndpoint {
            data: sse_url.to_owned(),
            reason: e.to_string(),
        })?;
        let headers = header_map(headers)?;
        let response = client
            .get(base.clone())
            .headers(headers.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await?;
        let response = check_status("GET", response).await?;
        let mut events = events(response.bytes_stream());
        let post_url = match wait_for_endpoint(&mut events, &base).await {
            Some(found) => found?,
            None => return Err(SseTransportError::NoEndpoint(super::endpoint::redacted(sse_url))),
        };
        let (tx, rx) = mpsc::channel(64);
        let reader = tokio::spawn(async move {
            while let Some(item) = events.next().await {
                let Ok(event) = item else {
                    tracing::debug!("legacy SSE stream failed; closing the session");
                    break;
                };
                let message = match message_of(event) {
                    Some(Ok(message)) => message,
                    Some(Err(e)) => {
                        tracing::warn!("ignoring a malformed message on the SSE stream: {e}");
                        continue;
                    }
                    None => continue,
                };
                if tx.send(message).await.is_err() {
                    break;
                }
            }
        });
        Ok(SseClientTransport { client, post_url, headers, rx, reader })
    }

    /// The URL messages are POSTed to (the resolved `endpoint` event).
    pub fn post_url(&self) -> &url::Url {
        &self.post_url
    }
}

impl Drop for SseClientTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl Transport<RoleClient> for SseClientTransport {
    type Error = SseTransportError;

    fn name() -> Cow<'static, str> {
        "legacy-sse".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let client = self.client.clone();
        let url = self.post_url.clone();
        let headers = self.headers.clone();
        async move {
            let body = serde_json::to_vec(&item)?;
            let response = client
                .post(url)
                .headers(headers)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await?;
            check_status("POST", response).await?;
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.rx.close();
        Ok(())
    }
}

/// Reads events until the `endpoint` event (others before it are skipped) and resolves it
/// against `base`; `None` when the stream ends first.
async fn wait_for_endpoint<S, E>(
    events: &mut S,
    base: &url::Url,
) -> Option<Result<url::Url, SseTransportError>>
where
    S: futures::Stream<Item = Result<Event, E>> + Unpin,
    E: std::fmt::Display,
{
    loop {
        match events.next().await? {
            Ok(event) if event.event.as_deref() == Some("endpoint") => {
                return Some(resolve_endpoint(base, event.data.trim()));
            }
            Ok(_) => continue,
            Err(e) => return Some(Err(SseTransportError::Sse(e.to_string()))),
        }
    }
}

/// The JSON-RPC message an event after the `endpoint` carries: `None` for events of another
/// name than `message` (or none).
fn message_of(event: Event) -> Option<Result<RxJsonRpcMessage<RoleClient>, serde_json::Error>> {
    if !matches!(event.event.as_deref(), None | Some("message")) {
        return None;
    }
    Some(serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(&event.data))
}

/// Resolves the `endpoint` event's data against the SSE URL and enforces same origin.
fn resolve_endpoint(base: &url::Url, data: &str) -> Result<url::Url, SseTransportError> {
    if data.is_empty() {
        return Err(SseTransportError::BadEndpoint { data: data.to_owned(), reason: "empty".into() });
    }
    let joined = base
        .join(data)
        .map_err(|e| SseTransportError::BadEndpoint { data: data.to_owned(), reason: e.to_string() })?;
    if joined.origin() != base.origin() {
        return Err(SseTransportError::CrossOrigin {
            endpoint: super::endpoint::redacted(joined.as_str()),
            sse: super::endpoint::redacted(base.as_str()),
        });
    }
    Ok(joined)
}

fn header_map(headers: &[(String, String)]) -> Result<reqwest::header::HeaderMap, SseTransportError> {
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        let n = reqwest::header::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| SseTransportError::BadHeader(format!("{name}: {value}")))?;
        let v = reqwest::header::HeaderValue::from_str(value)
            .map_err(|_| SseTransportError::BadHeader(format!("{name}: {value}")))?;
        map.append(n, v);
    }
    Ok(map)
}

async fn check_status(
    method: &'static str,
    response: reqwest::Response,
) -> Result<reqwest::Response, SseTransportError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let url = super::endpoint::redacted(response.url().as_str());
    let mut body = response.text().await.unwrap_or_default();
    if body.len() > 512 {
        let mut cut = 512;
        while !body.is_char_boundary(cut) {
            cut -= 1;
        }
        body.truncate(cut);
    }
    Err(SseTransportError::Status { method, url, status: status.as_u16(), body: body.trim().to_owned() })
}

/// The transport's reading half without the network, for the fuzz targets in `fuzz/` (built
/// with `--cfg fuzzing` by cargo-fuzz; not part of the API).
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing {
    use futures::StreamExt as _;

    use crate::client::sse_events::{EventParser, events};

    /// What the legacy transport made of one SSE stream.
    #[derive(Debug)]
    pub struct Session {
        /// Every event the parser dispatched: (event, data).
        pub events: Vec<(Option<String>, String)>,
        /// The resolved `endpoint`, or why it is not usable (`None`: no endpoint event).
        pub endpoint: Option<Result<url::Url, String>>,
        /// The messages read after the endpoint, re-serialised as JSON (or the decoding error).
        pub messages: Vec<Result<String, String>>,
    }

    /// Feeds `chunks` as the body of the SSE stream at `base` through the same steps as
    /// [`super::SseClientTransport::connect`] and its reader task.
    pub fn session(base: &url::Url, chunks: Vec<bytes::Bytes>) -> Session {
        let mut parser = EventParser::default();
        let mut all = Vec::new();
        for chunk in &chunks {
            parser.push(chunk);
            while let Some(e) = parser.next_event() {
                all.push((e.event, e.data));
            }
        }
        futures::executor::block_on(async {
            let body = futures::stream::iter(chunks.into_iter().map(Ok::<_, std::convert::Infallible>));
            let mut stream = events(body);
            let endpoint =
                super::wait_for_endpoint(&mut stream, base).await.map(|r| r.map_err(|e| e.to_string()));
            let mut messages = Vec::new();
            if matches!(endpoint, Some(Ok(_))) {
                while let Some(Ok(event)) = stream.next().await {
                    match super::message_of(event) {
                        Some(Ok(m)) => {
                            messages.push(Ok(serde_json::to_string(&m).expect("a message serialises")))
                        }
                        Some(Err(e)) => messages.push(Err(e.to_string())),
                        None => {}
                    }
                }
            }
            Session { events: all, endpoint, messages }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_resolution_and_origin() {
        let base = url::Url::parse("http://127.0.0.1:3001/sse").unwrap();
        let ok = resolve_endpoint(&base, "/message?sessionId=abc").unwrap();
        assert_eq!(ok.as_str(), "http://127.0.0.1:3001/message?sessionId=abc");
        let rel = resolve_endpoint(&base, "messages/1").unwrap();
        assert_eq!(rel.as_str(), "http://127.0.0.1:3001/messages/1");
        let abs = resolve_endpoint(&base, "http://127.0.0.1:3001/m").unwrap();
        assert_eq!(abs.as_str(), "http://127.0.0.1:3001/m");
        for foreign in
            ["http://evil.example/m", "https://127.0.0.1:3001/m", "http://127.0.0.1:3002/m", "//other/m"]
        {
            let err = resolve_endpoint(&base, foreign).unwrap_err();
            assert!(matches!(err, SseTransportError::CrossOrigin { .. }), "{foreign}: {err}");
        }
        assert!(matches!(resolve_endpoint(&base, ""), Err(SseTransportError::BadEndpoint { .. })));
    }

    #[test]
    fn bad_headers_are_errors() {
        assert!(header_map(&[("X-Ok".into(), "v".into())]).is_ok());
        assert!(matches!(
            header_map(&[("bad name".into(), "v".into())]),
            Err(SseTransportError::BadHeader(_))
        ));
        assert!(matches!(header_map(&[("X".into(), "a\nb".into())]), Err(SseTransportError::BadHeader(_))));
    }
}
