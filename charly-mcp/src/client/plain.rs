//! Transport failures in plain words: what a person can act on (nothing listens at the URL,
//! the server answered HTTP 404, the answer is an HTML page and not MCP, nothing came back in
//! time) instead of rmcp's nested error texts, which name Rust types and the lifecycle step.

use std::error::Error;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// Why starting a session failed, in plain words that follow `cannot connect to <endpoint>: `
/// (so they call the endpoint "the server"); rmcp's own text (with its causes) when the
/// failure is none of the known kinds.
pub(crate) fn connect_failure(error: &ClientInitializeError) -> String {
    describe("the server", error).unwrap_or_else(|| super::error::error_chain(error))
}

/// Why a request on an open session failed in its transport, when that is a known kind.
pub(crate) fn transport_failure(error: &(dyn Error + 'static)) -> Option<String> {
    http_failure("the server", error)
}

fn describe(endpoint: &str, error: &ClientInitializeError) -> Option<String> {
    match error {
        // Discovery (2026-07-28) failed, then `initialize`: the second attempt says most
        // about an older or broken server, the first when the second is no known kind.
        ClientInitializeError::LegacyFallbackFailed { discover, fallback } => {
            describe(endpoint, fallback).or_else(|| describe(endpoint, discover))
        }
        ClientInitializeError::TransportError { error, .. } => http_failure(endpoint, &*error.error),
        ClientInitializeError::ConnectionClosed(_) => Some(format!(
            "{endpoint} closed the connection before it answered (a command may have exited, or \
             written something other than MCP on its stdout)"
        )),
        ClientInitializeError::ExpectedInitResponse(_) | ClientInitializeError::ExpectedInitResult(_) => {
            Some(format!("not an MCP response: {endpoint} answered the handshake with something else"))
        }
        ClientInitializeError::JsonRpcError(e) => {
            Some(format!("{endpoint} refused the handshake: error {}: {}", e.code.0, e.message))
        }
        _ => None,
    }
}

/// A failure of the Streamable HTTP transport (or of the connection below it) at `endpoint`.
fn http_failure(endpoint: &str, error: &(dyn Error + 'static)) -> Option<String> {
    let mut source = Some(error);
    while let Some(error) = source {
        if let Some(http) = error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            return streamable(endpoint, http);
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

fn streamable(endpoint: &str, error: &StreamableHttpError<reqwest::Error>) -> Option<String> {
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
        StreamableHttpError::UnexpectedServerResponse(text) => match text.strip_prefix("HTTP ") {
            // rmcp's "HTTP 404 Not Found: <body>".
            Some(rest) => {
                let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
                format!("HTTP status {status} from {endpoint}{}", body_hint(body))
            }
            None => format!("not an MCP response from {endpoint}: {text}"),
        },
        StreamableHttpError::Deserialize(e) => {
            format!("not an MCP response: {endpoint} answered with a body that is not JSON-RPC ({e})")
        }
        StreamableHttpError::Sse(e) => {
            format!("not an MCP response: the event stream from {endpoint} is malformed ({e})")
        }
        StreamableHttpError::UnexpectedEndOfStream => {
            format!("{endpoint} ended its event stream before it answered")
        }
        StreamableHttpError::AuthRequired(_) => {
            format!("{endpoint} requires authorization (HTTP 401): give a token with --header")
        }
        StreamableHttpError::InsufficientScope(_) => {
            format!("{endpoint} refused the credentials given (HTTP 403: insufficient scope)")
        }
        StreamableHttpError::ResponseBodyTooLarge { max_size } => {
            format!("{endpoint} answered with more than {max_size} bytes; not read")
        }
        _ => return None,
    })
}

fn request(endpoint: &str, error: &reqwest::Error) -> Option<String> {
    if error.is_timeout() {
        return Some(format!("no answer from {endpoint}: the HTTP request timed out"));
    }
    if let Some(status) = error.status() {
        return Some(format!("HTTP status {status} from {endpoint}"));
    }
    if error.is_connect() {
        let mut source = error.source();
        while let Some(e) = source {
            if let Some(e) = e.downcast_ref::<std::io::Error>() {
                return io(endpoint, e);
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

/// `: <first line of the body>` for a short text body; ` (an HTML page)` for HTML; nothing
/// for an empty one.
fn body_hint(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() || body == "<empty>" {
        return String::new();
    }
    if body.starts_with('<') {
        return " (an HTML page)".to_owned();
    }
    let line = body.lines().next().unwrap_or_default();
    let short: String = line.chars().take(120).collect();
    let more = if short.len() < body.len() { "…" } else { "" };
    format!(": {short}{more}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn bodies_are_hinted_briefly() {
        assert_eq!(super::body_hint(""), "");
        assert_eq!(super::body_hint("<empty>"), "");
        assert_eq!(super::body_hint("<html><body>x</body></html>"), " (an HTML page)");
        assert_eq!(super::body_hint("not found\n"), ": not found");
        assert_eq!(super::body_hint("first\nsecond"), ": first…");
    }
}
