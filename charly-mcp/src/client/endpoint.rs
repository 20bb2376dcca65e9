//! Where an MCP server is: [`Endpoint`], its [`TransportKind`] and [`Target`].

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use super::error::ClientError;

/// How charly talks to an MCP server.
///
/// Parsed from the `--transport` flag, a `.mcp.json` `type` or an `mcp_provide` label's
/// `transport`: `http`, `streamable`, `streamable-http` and the empty string mean Streamable
/// HTTP; `sse` the legacy HTTP+SSE transport (MCP 2024-11-05); `stdio` a child process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// Streamable HTTP (MCP 2025-03-26 and later), spelled `http` when printed.
    StreamableHttp,
    /// The legacy HTTP+SSE transport: GET an event stream, POST to its `endpoint`.
    Sse,
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
}

impl TransportKind {
    /// The canonical spelling: `http`, `sse` or `stdio`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::StreamableHttp => "http",
            TransportKind::Sse => "sse",
            TransportKind::Stdio => "stdio",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for TransportKind {
    type Err = ClientError;

    /// Case-insensitive; surrounding blanks are ignored.
    ///
    /// # Errors
    ///
    /// [`ClientError::UnsupportedTransport`]: `unsupported mcp transport "X" (expected http,
    /// sse or stdio)`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "http" | "streamable" | "streamable-http" | "streamablehttp" => {
                Ok(TransportKind::StreamableHttp)
            }
            "sse" => Ok(TransportKind::Sse),
            "stdio" => Ok(TransportKind::Stdio),
            _ => Err(ClientError::UnsupportedTransport(s.to_owned())),
        }
    }
}

/// A command line that starts a stdio MCP server.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StdioCommand {
    /// The program, looked up on `PATH` when it has no slash.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment variables, added to charly's own environment.
    pub env: Vec<(String, String)>,
    /// Working directory; charly's own when `None`.
    pub cwd: Option<PathBuf>,
}

impl fmt::Display for StdioCommand {
    /// The command and its arguments joined by single spaces (display only, not shell-quoted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.command)?;
        for arg in &self.args {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

/// What to dial: a URL (Streamable HTTP or legacy SSE) or a command (stdio).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target {
    /// An HTTP endpoint.
    Http {
        /// The MCP endpoint (Streamable HTTP) or the SSE stream URL (legacy SSE).
        url: String,
        /// [`TransportKind::StreamableHttp`] or [`TransportKind::Sse`].
        transport: TransportKind,
        /// Extra headers sent with every request (`--header`, `.mcp.json` `headers`).
        headers: Vec<(String, String)>,
    },
    /// A child process.
    Stdio(StdioCommand),
}

/// One MCP server: a name (from `.mcp.json` or an `mcp_provide` label; empty for `--url`)
/// and where to reach it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// The server's name; empty when it came from `--url`.
    pub name: String,
    /// Where to reach it.
    pub target: Target,
}

impl Endpoint {
    /// An HTTP endpoint with no name and no extra headers.
    ///
    /// # Errors
    ///
    /// [`ClientError::InvalidEndpoint`] when `transport` is [`TransportKind::Stdio`] (a URL
    /// cannot be run) or `url` is not an absolute `http`/`https` URL.
    pub fn url(url: &str, transport: TransportKind) -> Result<Self, ClientError> {
        if transport == TransportKind::Stdio {
            return Err(ClientError::InvalidEndpoint(format!(
                "--url {url} with transport stdio: a stdio server is a command, not a URL (use a .mcp.json server)"
            )));
        }
        let parsed = url::Url::parse(url)
            .map_err(|e| ClientError::InvalidEndpoint(format!("invalid url {:?}: {e}", redacted(url))))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(ClientError::InvalidEndpoint(format!(
                "invalid url {:?}: scheme must be http or https",
                redacted(url)
            )));
        }
        Ok(Endpoint {
            name: String::new(),
            target: Target::Http { url: url.to_owned(), transport, headers: Vec::new() },
        })
    }

    /// A stdio endpoint with no name.
    pub fn stdio(command: StdioCommand) -> Self {
        Endpoint { name: String::new(), target: Target::Stdio(command) }
    }

    /// The transport this endpoint uses.
    pub fn transport(&self) -> TransportKind {
        match &self.target {
            Target::Http { transport, .. } => *transport,
            Target::Stdio(_) => TransportKind::Stdio,
        }
    }

    /// The URL (its password, if it holds one, as `***`), or for stdio the command line (as
    /// printed by `servers`).
    pub fn location(&self) -> String {
        match &self.target {
            Target::Http { url, .. } => redacted(url),
            Target::Stdio(cmd) => cmd.to_string(),
        }
    }

    /// Adds `headers` to an HTTP endpoint; a stdio endpoint is returned unchanged.
    pub fn with_headers(mut self, extra: impl IntoIterator<Item = (String, String)>) -> Self {
        if let Target::Http { headers, .. } = &mut self.target {
            headers.extend(extra);
        }
        self
    }
}

/// `url` as it may be shown in an error, a progress line, a report or a log line: the
/// password of its user info (`https://user:secret@host/`), a user name without a password
/// (`https://TOKEN@host/`, often the token itself), and the value of every query parameter
/// (`?token=abc`; a bare `?abc` too) as `***`, the other names kept
/// (`https://user:***@host/mcp?token=***`), a fragment dropped. A URL with none of these is
/// returned as given. One the parser refuses (a bad port; a password holding `/`) is masked by
/// its text the same way, its user info ending at the last `@`. Text without `://` is returned
/// as given unless it holds `@`, `?` or `#` (`u:pw@host`, `mailto:`): then it is `(a URL not
/// shown: it may hold a secret)`. Every server URL charly prints goes through this (or
/// [`redact_urls`], for a library's text that names one).
pub fn redacted(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return match masked_text(url) {
            Some(masked) => masked,
            None if url.contains(['@', '?', '#']) => "(a URL not shown: it may hold a secret)".to_owned(),
            None => url.to_owned(),
        };
    };
    // No authority (`u:pw@host` read as scheme `u`, `mailto:`): where the secret is cannot be told.
    if parsed.cannot_be_a_base() && url.contains('@') {
        return "(a URL not shown: it may hold a secret)".to_owned();
    }
    // A user name without a password may be the token itself (`https://TOKEN@host/`).
    let lone_user = !parsed.username().is_empty() && parsed.password().is_none();
    if lone_user {
        let _ = parsed.set_username("***");
    }
    if !lone_user && parsed.password().is_none() && parsed.query().is_none() && parsed.fragment().is_none() {
        // As given (the parser would add a `/` to `http://h:1`).
        return url.to_owned();
    }
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("***"));
    }
    if let Some(query) = parsed.query().map(str::to_owned) {
        // Written by hand, not with `query_pairs_mut`: that one would percent-encode the `*`s.
        parsed.set_query(Some(&masked_query(&query)));
    }
    parsed.set_fragment(None);
    parsed.to_string()
}

/// Every URL inside `text` (an error of a library, which names the URL it asked) through
/// [`redacted`]: a URL is a run of non-blank characters starting at `http://` or `https://`,
/// without the `)`, `,`, `.`, `:`, `;` or `]` that end it.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["http://", "https://"].iter().filter_map(|s| rest.find(s)).min() {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let mut end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>'))
            .unwrap_or(tail.len());
        while end > 0 && tail[..end].ends_with([')', ',', '.', ':', ';', ']']) {
            end -= 1;
        }
        out.push_str(&redacted(&tail[..end]));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

/// A query with every value as `***`, the names kept; a bare value (`?abc123`) may be the
/// secret itself, so it is `***` too.
fn masked_query(query: &str) -> String {
    let masked: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) => format!("{name}=***"),
            None if pair.is_empty() => String::new(),
            None => "***".to_owned(),
        })
        .collect();
    masked.join("&")
}

/// [`redacted`] by text alone, for a URL the parser refuses (a bad port, a bad host):
/// `scheme://user:***@rest?name=***`, the fragment dropped; `None` without `://`.
fn masked_text(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    // The user info ends at the last `@`: a password may hold `/`, `?` or `#`.
    let (user, rest) = match rest.rsplit_once('@') {
        Some((user, after)) => match user.split_once(':') {
            Some((name, _)) if !name.contains(['/', '?', '#']) => (format!("{name}:***@"), after),
            // A user name alone may be the token itself.
            _ => ("***@".to_owned(), after),
        },
        None => (String::new(), rest),
    };
    let rest = rest.split('#').next().unwrap_or_default();
    let (before_query, query) = match rest.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (rest, None),
    };
    let query = query.map(|q| format!("?{}", masked_query(q))).unwrap_or_default();
    Some(format!("{scheme}://{user}{before_query}{query}"))
}

/// Parses a `--header` value, `Name: value` (or `Name=value`), into a (name, value) pair.
///
/// # Errors
///
/// [`ClientError::InvalidInput`] when there is no `:`/`=` or the name is empty or not a
/// valid HTTP header name.
pub fn parse_header(text: &str) -> Result<(String, String), ClientError> {
    // The text may be a secret (`Bearer sk-…` without its name): an error quotes none of it.
    let bad = || {
        ClientError::InvalidInput(format!(
            "invalid --header of {} characters, not shown as it may hold a secret (expected \"Name: value\", \
             the name a valid HTTP header name, e.g. \"Authorization: Bearer TOKEN\")",
            text.chars().count()
        ))
    };
    let (name, value) = text.split_once(':').or_else(|| text.split_once('=')).ok_or_else(bad)?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    {
        return Err(bad());
    }
    reserved_header(name)?;
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// Headers charly's HTTP client sets itself, which no `--header`, `.mcp.json` `headers` or
/// plan step may replace: `Host` (the URL's), `Content-Type` and `Content-Length` (of the
/// JSON-RPC body).
pub const RESERVED_HEADERS: [&str; 3] = ["Host", "Content-Type", "Content-Length"];

/// An error naming `name` when it is one of [`RESERVED_HEADERS`].
///
/// # Errors
///
/// [`ClientError::InvalidInput`] naming the header and the reserved ones.
pub fn reserved_header(name: &str) -> Result<(), ClientError> {
    match RESERVED_HEADERS.iter().find(|r| r.eq_ignore_ascii_case(name.trim())) {
        Some(reserved) => Err(ClientError::InvalidInput(format!(
            "header {reserved} cannot be given: charly sets {} itself (from the URL and the JSON-RPC \
             body); any other header can be given with --header 'Name: value'",
            RESERVED_HEADERS.join(", ")
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            parse_header("Authorization: Bearer x:y").unwrap(),
            ("Authorization".into(), "Bearer x:y".into())
        );
        assert_eq!(parse_header("X-Key=abc").unwrap(), ("X-Key".into(), "abc".into()));
        assert!(parse_header("no separator").is_err());
        for name in ["Host", "content-type", "CONTENT-LENGTH"] {
            let err = parse_header(&format!("{name}: evil.example")).unwrap_err().to_string();
            assert!(err.contains("Host, Content-Type, Content-Length") && !err.contains("evil"), "{err}");
        }
        assert!(parse_header(": v").is_err());
        assert!(parse_header("bad name: v").is_err());
        // A token given without its header name (trial finding): none of it is quoted.
        let err = parse_header("Bearer sk-live-LEAKME123").unwrap_err().to_string();
        assert!(!err.contains("LEAKME") && !err.contains("sk-live"), "{err}");
        let err = parse_header("bad name: s3cret").unwrap_err().to_string();
        assert!(!err.contains("s3cret"), "{err}");
    }

    #[test]
    fn transport_spellings() {
        for s in ["", "http", "HTTP", "streamable", "streamable-http", " http "] {
            assert_eq!(s.parse::<TransportKind>().unwrap(), TransportKind::StreamableHttp, "{s:?}");
        }
        assert_eq!("sse".parse::<TransportKind>().unwrap(), TransportKind::Sse);
        assert_eq!("stdio".parse::<TransportKind>().unwrap(), TransportKind::Stdio);
        let err = "websocket".parse::<TransportKind>().unwrap_err();
        assert_eq!(err.to_string(), r#"unsupported mcp transport "websocket" (expected http, sse or stdio)"#);
    }

    #[test]
    fn url_endpoint_checks() {
        assert!(Endpoint::url("http://127.0.0.1:1/mcp", TransportKind::StreamableHttp).is_ok());
        assert!(Endpoint::url("ftp://x/y", TransportKind::Sse).is_err());
        assert!(Endpoint::url("/relative", TransportKind::Sse).is_err());
        assert!(Endpoint::url("http://x/", TransportKind::Stdio).is_err());
        let cmd = StdioCommand {
            command: "node".into(),
            args: vec!["a.js".into(), "stdio".into()],
            ..Default::default()
        };
        assert_eq!(Endpoint::stdio(cmd).location(), "node a.js stdio");
        // A password in the URL never reaches an error or a report.
        let with_password = Endpoint::url("https://me:s3cret@mcp.example/mcp", TransportKind::StreamableHttp);
        assert_eq!(with_password.unwrap().location(), "https://me:***@mcp.example/mcp");
        let keyed = "https://me:s3cret@mcp.example/mcp?token=abc&tenant=t1&flag#frag";
        assert_eq!(redacted(keyed), "https://me:***@mcp.example/mcp?token=***&tenant=***&***");
        assert_eq!(
            redact_urls(&format!("error sending request for url ({keyed}): refused, see {keyed}.")),
            "error sending request for url (https://me:***@mcp.example/mcp?token=***&tenant=***&***): \
             refused, see https://me:***@mcp.example/mcp?token=***&tenant=***&***."
        );
        assert_eq!(redacted("not a url"), "not a url");
        // A URL the parser refuses is masked by its text.
        assert_eq!(
            redacted("http://me:s3cret@127.0.0.1:99999/mcp?key=abc&bare#frag"),
            "http://me:***@127.0.0.1:99999/mcp?key=***&***"
        );
        // A password holding `/`, `#` or `?`, a lone user name, no scheme (second trial, MED-1, LOW-1).
        assert_eq!(redacted("http://u:S3C/RET@127.0.0.1:1/mcp"), "http://u:***@127.0.0.1:1/mcp");
        assert_eq!(redacted("http://u:S3C#RET@127.0.0.1:1/mcp"), "http://u:***@127.0.0.1:1/mcp");
        assert_eq!(redacted("http://u:S3C?RET@127.0.0.1:1/mcp"), "http://u:***@127.0.0.1:1/mcp");
        assert_eq!(redacted("http://S3CRET@127.0.0.1:1/mcp"), "http://***@127.0.0.1:1/mcp");
        assert_eq!(redacted("http://S3CRET@127.0.0.1:99999/mcp"), "http://***@127.0.0.1:99999/mcp");
        assert_eq!(redacted("u:S3CRET@127.0.0.1:1/mcp?token=Q"), "(a URL not shown: it may hold a secret)");
        assert_eq!(redacted("mailto:S3CRET@example.com"), "(a URL not shown: it may hold a secret)");
        assert!(!redacted("nope?token=abc").contains("abc"));
        let plain = Endpoint::url("http://127.0.0.1:1", TransportKind::StreamableHttp).unwrap();
        assert_eq!(plain.location(), "http://127.0.0.1:1");
    }
}
