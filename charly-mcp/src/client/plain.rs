//! Transport failures in plain words: what a person can act on (nothing listens at the URL,
//! the server answered HTTP 404, the answer is an HTML page and not MCP, nothing came back in
//! time) instead of rmcp's nested error texts, which name Rust types and the lifecycle step.

use std::error::Error;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// Why starting a session failed, in plain words that follow `cannot connect to <endpoint>: `
/// (so they call the endpoint "the server"); rmcp's own text (with its causes) when the
/// failure is none of the known kinds.
/// Why a `server/discover`-only start (protocol 2026-07-28, no fallback) failed, with what to
/// do when the server answered as a server of an older revision does.
pub(crate) fn discover_failure(error: &ClientInitializeError, credentials: Credentials) -> String {
    let text = connect_failure(error, credentials);
    let older = match error {
        ClientInitializeError::JsonRpcError(e) => !e.message.contains(" rejected with HTTP "),
        ClientInitializeError::ExpectedInitResult(_) | ClientInitializeError::ExpectedInitResponse(_) => true,
        _ => false,
    };
    if older {
        return format!(
            "{text}; the server answered server/discover as a server of an older revision does: it \
             does not speak MCP 2026-07-28, which --protocol 2026-07-28 requires; use --protocol \
             latest (2026-07-28, falling back to 2025-11-25) or --protocol 2025-11-25"
        );
    }
    text
}

pub(crate) fn connect_failure(error: &ClientInitializeError, credentials: Credentials) -> String {
    describe("the server", error, credentials).unwrap_or_else(|| summary(&super::error::error_chain(error)))
}

/// How the client meant to authorize to the server, for the words of a 401.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Credentials {
    /// By OAuth, when the server asks (or not known: stdio, legacy SSE, a session's request).
    OAuth,
    /// With an `Authorization` header the endpoint was given (`--header`, `.mcp.json`).
    Header,
    /// None: OAuth is off (`--no-oauth`) and no `Authorization` header was given.
    Off,
}

/// Why a request on an open session failed in its transport, when that is a known kind.
pub(crate) fn transport_failure(endpoint: &str, error: &(dyn Error + 'static)) -> Option<String> {
    http_failure(endpoint, error, Credentials::OAuth)
}

fn describe(endpoint: &str, error: &ClientInitializeError, credentials: Credentials) -> Option<String> {
    match error {
        // Discovery (2026-07-28) failed, then `initialize`: the second attempt says most
        // about an older or broken server, the first when the second is no known kind.
        // The fallback's failure, then why discovery failed first.
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            let text = |e: &ClientInitializeError| {
                describe(endpoint, e, credentials).unwrap_or_else(|| summary(&super::error::error_chain(e)))
            };
            let (fallback, discover) = (text(fallback), text(discover));
            // Both answered with the same HTTP status (a wrong path, a proxy's error page):
            // the second text says it all.
            if http_status(&fallback).is_some() && http_status(&fallback) == http_status(&discover) {
                return Some(fallback);
            }
            Some(format!(
                "{fallback} (after falling back to initialize: server/discover failed first: {discover})"
            ))
        }
        ClientInitializeError::TransportError { error, .. } => {
            http_failure(endpoint, &*error.error, credentials)
        }
        ClientInitializeError::ConnectionClosed(_) => Some(format!(
            "{endpoint} closed the connection before it answered (a command may have exited, or \
             written something other than MCP on its stdout)"
        )),
        ClientInitializeError::ExpectedInitResponse(_) | ClientInitializeError::ExpectedInitResult(_) => {
            Some(format!("not an MCP response: {endpoint} answered the handshake with something else"))
        }
        ClientInitializeError::JsonRpcError(e) => {
            // rmcp turns an HTTP 4xx to `server/discover` into a -32600 with the whole body.
            let message = match e.message.split_once(" rejected with HTTP ") {
                Some((method, rest)) => {
                    let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
                    let path =
                        if status.starts_with("404") { ": nothing is served at that path" } else { "" };
                    format!("{method} was answered with HTTP status {status}{}{path}", body_hint(body))
                }
                None => summary(&e.message),
            };
            let data = e.data.as_ref().filter(|d| !d.is_null());
            let data = data.map(|d| format!(" [data: {}]", super::error::truncate(&d.to_string(), 400)));
            Some(format!(
                "{endpoint} refused the handshake: error {}: {message}{}",
                e.code.0,
                data.unwrap_or_default()
            ))
        }
        ClientInitializeError::NoCompatibleProtocolVersion { client_supported, server_supported } => {
            let list = |v: &[rmcp::model::ProtocolVersion]| {
                v.iter().map(|v| super::error::truncate(v.as_str(), 40)).collect::<Vec<_>>().join(", ")
            };
            Some(format!(
                "{endpoint} speaks none of the revisions charly offered in server/discover (offered \
                 {}; it speaks {}): use --protocol 2025-11-25 for a server that still initializes",
                list(client_supported),
                list(server_supported)
            ))
        }
        _ => None,
    }
}

/// ` error: description` of a 401 challenge that names what is wrong with the token sent
/// (`error="invalid_token", error_description="..."`); `None` for a challenge to log in.
fn refusal(challenge: &str) -> Option<String> {
    let error = super::auth::challenge_param(challenge, "error")?;
    let description = super::auth::challenge_param(challenge, "error_description")
        .map(|d| format!(": {}", super::error::truncate(&d, 200)))
        .unwrap_or_default();
    Some(format!(" {}{description}", super::error::truncate(&error, 40)))
}

/// The three-digit code after the first `HTTP status ` in a text this module wrote.
fn http_status(text: &str) -> Option<&str> {
    let (_, rest) = text.split_once("HTTP status ")?;
    rest.get(..3).filter(|code| code.bytes().all(|b| b.is_ascii_digit()))
}

/// A failure of the Streamable HTTP transport (or of the connection below it) at `endpoint`.
fn http_failure(endpoint: &str, error: &(dyn Error + 'static), credentials: Credentials) -> Option<String> {
    let mut source = Some(error);
    while let Some(error) = source {
        if let Some(http) = error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return streamable(endpoint, http, credentials);
        }
        if let Some(e) = error.downcast_ref::<reqwest::Error>() {
            return request(endpoint, e);
        }
        if let Some(e) = error.downcast_ref::<std::io::Error>() {
            return io(endpoint, e);
        }
        source = error.source();
    }
    None
}

fn streamable(
    endpoint: &str,
    error: &StreamableHttpError<reqwest::Error>,
    credentials: Credentials,
) -> Option<String> {
    const MCP_TYPES: &str = "application/json or text/event-stream";
    Some(match error {
        StreamableHttpError::Client(e) => return request(endpoint, e),
        StreamableHttpError::Io(e) => return io(endpoint, e),
        StreamableHttpError::HttpStatus(e) => {
            let reason = reqwest::StatusCode::from_u16(e.status).ok().and_then(|s| s.canonical_reason());
            let retry = e.retry_after.as_ref().map(|r| format!(" (Retry-After: {r})")).unwrap_or_default();
            format!("HTTP status {} {} from {endpoint}{retry}", e.status, reason.unwrap_or_default())
                .replace("  ", " ")
        }
        StreamableHttpError::UnexpectedContentType(Some(content_type)) => format!(
            "not an MCP response: {endpoint} answered with Content-Type {content_type}, not {MCP_TYPES}"
        ),
        StreamableHttpError::UnexpectedContentType(None) => {
            format!("not an MCP response: {endpoint} answered without a Content-Type ({MCP_TYPES} expected)")
        }
        StreamableHttpError::UnexpectedServerResponse(text) if text.starts_with(EXPLAINED) => {
            let mut parts = text[EXPLAINED.len()..].splitn(3, '\n');
            let (status, retry, said) = (
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
                parts.next().unwrap_or_default(),
            );
            let retry = if retry.is_empty() { String::new() } else { format!(" (Retry-After: {retry})") };
            let said = match said.strip_prefix(RAW_BODY) {
                Some(body) => body_hint(body),
                None => format!(": it says: {}", super::error::truncate(said, 300)),
            };
            format!("HTTP status {status} from {endpoint}{retry}{said}")
        }
        StreamableHttpError::UnexpectedServerResponse(text) => match text.strip_prefix("HTTP ") {
            // rmcp's "HTTP 404 Not Found: <body>".
            Some(rest) => {
                let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
                format!("HTTP status {status} from {endpoint}{}", body_hint(body))
            }
            None => format!("not an MCP response from {endpoint}: {}", summary(text)),
        },
        StreamableHttpError::Deserialize(e) => {
            format!(
                "not an MCP response: {endpoint} answered with a body that is not JSON-RPC ({})",
                summary(&e.to_string())
            )
        }
        StreamableHttpError::Sse(e) => {
            format!("not an MCP response: the event stream from {endpoint} is malformed ({e})")
        }
        StreamableHttpError::UnexpectedEndOfStream => {
            format!("{endpoint} ended its event stream before it answered")
        }
        StreamableHttpError::AuthRequired(e) => match (refusal(&e.www_authenticate_header), credentials) {
            // The server names what is wrong with the token it was sent (RFC 6750 section 3.1).
            (Some(why), _) => format!(
                "{endpoint} refused the token it was sent (HTTP 401{why}): give a valid one with --header \
                 'Authorization: Bearer TOKEN', or leave that header out to log in by OAuth"
            ),
            (None, Credentials::Header) => format!(
                "{endpoint} refused the Authorization header given (HTTP 401): check its value (--header, \
                 or the headers of .mcp.json), or leave that header out to log in by OAuth"
            ),
            (None, Credentials::Off) => format!(
                "{endpoint} requires authorization (HTTP 401), and OAuth logins are off (--no-oauth): give a \
                 token with --header 'Authorization: Bearer TOKEN', or leave out --no-oauth to log in by OAuth"
            ),
            (None, Credentials::OAuth) => format!(
                "{endpoint} requires authorization (HTTP 401): give a token with --header 'Authorization: \
                 Bearer TOKEN', or log in by OAuth (once on a terminal, when the server publishes its OAuth \
                 metadata)"
            ),
        },
        StreamableHttpError::Auth(rmcp::transport::auth::AuthError::AuthorizationFailed(text)) => {
            // charly's own OAuth failures (`authorizing at URL: STEP: ...`) say it all.
            text.clone()
        }
        StreamableHttpError::Auth(e) => {
            format!("OAuth: {}", super::auth::without_rmcp_labels(&e.to_string()))
        }
        StreamableHttpError::InsufficientScope(e) => {
            let header = &e.www_authenticate_header;
            let scope = super::auth::challenge_param(header, "scope").or_else(|| e.required_scope.clone());
            let needs = scope.map(|s| format!(": the request needs scope {s}")).unwrap_or_default();
            let says = super::auth::challenge_param(header, "error_description")
                .map(|d| format!(" (the server says: {})", super::error::truncate(&d, 200)))
                .unwrap_or_default();
            format!("{endpoint} refused the credentials given (HTTP 403 insufficient_scope){needs}{says}")
        }
        StreamableHttpError::ResponseBodyTooLarge { max_size } => {
            format!("{endpoint} answered with more than {max_size} bytes; not read")
        }
        _ => return None,
    })
}

/// A failed request to `endpoint` (an authorization server's host, say) in words, with the
/// error's own text when it is no known kind.
pub(crate) fn request_failure(endpoint: &str, error: &reqwest::Error) -> String {
    request(endpoint, error).unwrap_or_else(|| summary(&super::error::error_chain(error)))
}

/// Marks [`explained_status`]'s text.
const EXPLAINED: &str = "\u{1}charly-explained\u{1}";

/// The text of an HTTP failure `status` (with its Retry-After) whose body says `said`, read
/// back by the client (rmcp drops the body): a `StreamableHttpError::UnexpectedServerResponse`
/// that this module renders as `HTTP status 503 Service Unavailable from the server
/// (Retry-After: 5): it says: ...`.
/// `said` is the body's own words (a JSON `error_description`), or [`RAW_BODY`] and the body,
/// which is then summarised as other bodies are (its first line, or an HTML page's text).
pub(crate) fn explained_status(status: u16, retry_after: Option<&str>, said: &str) -> String {
    let reason = reqwest::StatusCode::from_u16(status).ok().and_then(|s| s.canonical_reason());
    let status = format!("{status} {}", reason.unwrap_or_default()).trim().to_owned();
    let said = if said.starts_with(RAW_BODY) { said.to_owned() } else { said.replace(['\n', '\r'], " ") };
    format!("{EXPLAINED}{status}\n{}\n{said}", retry_after.unwrap_or_default().replace('\n', " "))
}

/// Marks the `said` of [`explained_status`] that is a body as it came.
pub(crate) const RAW_BODY: &str = "\u{2}";

fn request(endpoint: &str, error: &reqwest::Error) -> Option<String> {
    if error.is_redirect() {
        let mut source = error.source();
        while let Some(e) = source {
            if let Some(refused) = e.downcast_ref::<super::tls::CrossOrigin>() {
                return Some(refused.to_string());
            }
            source = e.source();
        }
        return Some(format!(
            "{endpoint} redirected too often ({})",
            summary(&super::error::error_chain(error))
        ));
    }
    if error.is_timeout() {
        return Some(format!("no answer from {endpoint}: the HTTP request timed out"));
    }
    if let Some(status) = error.status() {
        return Some(format!("HTTP status {status} from {endpoint}"));
    }
    if let Some(tls) = super::tls::certificate_failure(error) {
        return Some(tls);
    }
    if error.is_connect() {
        let mut source = error.source();
        while let Some(e) = source {
            if let Some(e) = e.downcast_ref::<std::io::Error>() {
                if let Some(tls) = rustls_error(e) {
                    return Some(handshake(endpoint, tls));
                }
                if let Some(text) = io(endpoint, e) {
                    return Some(text);
                }
            }
            if e.to_string().contains("dns error") {
                return Some("the host name does not resolve (DNS lookup failed)".to_owned());
            }
            source = e.source();
        }
        return Some(format!("no connection to {endpoint} could be opened"));
    }
    None
}

/// The rustls error inside `error`: it reaches reqwest wrapped in `io::Error`s (an `Other`
/// around an `InvalidData`), whose `source` skips what they wrap.
fn rustls_error(error: &std::io::Error) -> Option<&rustls::Error> {
    let inner = error.get_ref()?;
    if let Some(tls) = inner.downcast_ref::<rustls::Error>() {
        return Some(tls);
    }
    rustls_error(inner.downcast_ref::<std::io::Error>()?)
}

/// A TLS handshake that failed other than on the certificate (which
/// [`super::tls::certificate_failure`] names): most often an `https://` URL for a port that
/// speaks plain HTTP.
fn handshake(endpoint: &str, error: &rustls::Error) -> String {
    match error {
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => format!(
            "TLS: {endpoint} did not answer the TLS handshake as a TLS server does ({error}): does it \
             speak plain HTTP on that port? Then use an http:// URL"
        ),
        other => format!("TLS: the handshake with {endpoint} failed: {other}"),
    }
}

fn io(endpoint: &str, error: &std::io::Error) -> Option<String> {
    use std::io::ErrorKind;
    Some(match error.kind() {
        ErrorKind::ConnectionRefused => "connection refused: nothing listens at that address".to_owned(),
        ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::UnexpectedEof => {
            format!("{endpoint} closed the connection before it answered")
        }
        ErrorKind::TimedOut => format!("no answer from {endpoint}: the connection timed out"),
        ErrorKind::HostUnreachable | ErrorKind::NetworkUnreachable => {
            format!("{endpoint} cannot be reached from this machine ({error})")
        }
        _ => return None,
    })
}

/// The most characters of a body or a server's message an error quotes.
const QUOTED: usize = 120;

/// `: <first line of the body>` for a short text body (at most [`QUOTED`] characters);
/// ` (an HTML page: <its text, first words>)` for HTML; nothing for an empty one. A page is
/// summarised, never printed whole.
fn body_hint(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() || body == "<empty>" {
        return String::new();
    }
    if body.starts_with('<') {
        let text = page_text(body);
        if text.is_empty() {
            return " (an HTML page)".to_owned();
        }
        return format!(" (an HTML page: {})", super::error::truncate(&text, QUOTED));
    }
    format!(": {}", summary(body))
}

/// The first line of `text`, at most [`QUOTED`] characters, `…` when anything was left out.
pub(crate) fn summary(text: &str) -> String {
    let text = text.trim();
    if text.starts_with('<') {
        return format!("an HTML page: {}", super::error::truncate(&page_text(text), QUOTED));
    }
    let line = text.lines().next().unwrap_or_default();
    let short = super::error::truncate(line, QUOTED);
    if short.len() < text.len() && !short.ends_with('…') { format!("{short}…") } else { short }
}

/// The text of an HTML page: tags (and `<head>`'s `<style>`/`<script>`) left out,
/// whitespace collapsed.
fn page_text(html: &str) -> String {
    let mut text = String::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        text.push_str(&rest[..open]);
        text.push(' ');
        let tag = &rest[open..];
        let lower = tag.get(..7).unwrap_or(tag).to_ascii_lowercase();
        let skip_to = if lower.starts_with("<style") {
            tag.to_ascii_lowercase().find("</style>")
        } else if lower.starts_with("<script") {
            tag.to_ascii_lowercase().find("</script>")
        } else {
            None
        };
        let after = skip_to.map_or(tag, |at| &tag[at..]);
        match after.find('>') {
            Some(close) => rest = &after[close + 1..],
            None => {
                rest = "";
                break;
            }
        }
    }
    text.push_str(rest);
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn bodies_are_hinted_briefly() {
        assert_eq!(super::body_hint(""), "");
        assert_eq!(super::body_hint("<empty>"), "");
        assert_eq!(super::body_hint("<html><body></body></html>"), " (an HTML page)");
        let page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Error</title>\n\
                    <style>body { color: red }</style></head>\n<body>\n<pre>Cannot POST /wrong</pre>\n</body>\n</html>\n";
        assert_eq!(super::body_hint(page), " (an HTML page: Error Cannot POST /wrong)");
        assert_eq!(super::body_hint(&format!("<p>{}</p>", "x".repeat(500))).chars().count(), 138);
        assert_eq!(super::body_hint("not found\n"), ": not found");
        assert_eq!(super::body_hint("first\nsecond"), ": first…");
    }
}
