//! Connecting to something that is not a working MCP server fails with a message in plain
//! words naming the URL: a closed port on 127.0.0.1, a real tiny HTTP server on 127.0.0.1
//! that answers 404, 500 or an HTML page, and one that accepts and never answers.

use std::time::{Duration, Instant};

use charly_mcp::client::{ClientError, ConnectOptions, Endpoint, TransportKind, connect};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// An HTTP server on 127.0.0.1 answering every request with `status`, `content_type` and
/// `body` (`None`: reads the request and never answers); stops when the test's runtime ends.
async fn canned(
    status: &'static str,
    content_type: &'static str,
    body: &'static str,
    answer: bool,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                // The head, then as much body as Content-Length says.
                loop {
                    let Ok(n) = socket.read(&mut buf).await else { return };
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).to_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length:"))
                            .and_then(|v| v.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                if !answer {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    return;
                }
                let reply = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    url
}

async fn connect_error(url: &str, timeout: Duration) -> ClientError {
    let endpoint = Endpoint::url(url, TransportKind::StreamableHttp).unwrap();
    let options = ConnectOptions { timeout, ..Default::default() };
    connect(&endpoint, &options).await.expect_err("connecting must fail")
}

#[tokio::test]
async fn a_closed_port_is_connection_refused() {
    // A port nothing listens on: bind, then drop.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let error = connect_error(&url, Duration::from_secs(5)).await.to_string();
    assert_eq!(
        error,
        format!("cannot connect to {url}: connection refused: nothing listens at that address")
    );
}

#[tokio::test]
async fn an_http_error_status_is_named() {
    let url = canned("404 Not Found", "text/plain", "no such page", true).await;
    let error = connect_error(&url, Duration::from_secs(5)).await.to_string();
    assert_eq!(
        error,
        format!("cannot connect to {url}: HTTP status 404 Not Found from the server: no such page")
    );

    let url = canned("500 Internal Server Error", "text/html", "<html><body>oops</body></html>", true).await;
    let error = connect_error(&url, Duration::from_secs(5)).await.to_string();
    // rmcp drops a 5xx's body: the client reads it back (a GET of the endpoint), and shows it
    // as it shows a 4xx's.
    assert_eq!(
        error,
        format!(
            "cannot connect to {url}: HTTP status 500 Internal Server Error from the server (an HTML page: oops)"
        )
    );
    assert!(!error.contains("rmcp") && !error.contains("Transport"), "{error}");
}

#[tokio::test]
async fn an_html_page_is_not_an_mcp_response() {
    let url = canned("200 OK", "text/html", "<html><body>Welcome</body></html>", true).await;
    let error = connect_error(&url, Duration::from_secs(5)).await.to_string();
    assert_eq!(
        error,
        format!(
            "cannot connect to {url}: not an MCP response: the server answered with Content-Type text/html, \
             not application/json or text/event-stream"
        )
    );

    let url = canned("200 OK", "application/json", "{\"hello\": ", true).await;
    let error = connect_error(&url, Duration::from_secs(5)).await.to_string();
    assert!(error.starts_with(&format!("cannot connect to {url}: not an MCP response")), "{error}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_naming_the_url() {
    let url = canned("200 OK", "application/json", "", false).await;
    let started = Instant::now();
    let error = connect_error(&url, Duration::from_secs(1)).await;
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    assert!(matches!(error, ClientError::Timeout { operation: "connect and initialize", .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("no answer from {url} within 1s (connect and initialize timed out)")
    );
}
