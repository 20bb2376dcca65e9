//! The Streamable HTTP client methods of [`OAuthHttp`]: each request sent with the token (and
//! authorized on a challenge, see [`OAuthHttp::send`]); the body of a 429 or 5xx, which rmcp
//! drops, read back for the error.

use std::collections::HashMap;
use std::sync::Arc;

use http::{HeaderName, HeaderValue};
use rmcp::transport::streamable_http_client::{
    HttpStatusError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::flow::OAuthHttp;

/// How long reading a failure's body back may take.
const EXPLAIN_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// Most bytes of a failure's body read back.
const EXPLAIN_BYTES: usize = 4096;

impl OAuthHttp {
    /// `sent`, with the body of a 429 or 5xx in its error: rmcp keeps only the status and the
    /// Retry-After (trial finding: a resource server's 503 explained that it cannot reach its
    /// issuer's keys, and the client said only "503"). The body is had by a GET of the same
    /// endpoint, which has no effect on the server, with the same headers and token: when it
    /// answers the same status, its `error_description` (or `message`, or first line) is the
    /// explanation.
    async fn explained<T>(
        &self,
        sent: Result<T, StreamableHttpError<reqwest::Error>>,
        uri: &str,
        session_id: Option<&str>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        let Err(StreamableHttpError::HttpStatus(error)) = sent else { return sent };
        match self.said(uri, session_id, headers, error.status).await {
            Some(said) => Err(StreamableHttpError::UnexpectedServerResponse(
                crate::client::plain::explained_status(error.status, error.retry_after.as_deref(), &said)
                    .into(),
            )),
            None => {
                Err(StreamableHttpError::HttpStatus(HttpStatusError::new(error.status, error.retry_after)))
            }
        }
    }

    /// What the endpoint says with its `status` to a GET (see [`OAuthHttp::explained`]).
    async fn said(
        &self,
        uri: &str,
        session_id: Option<&str>,
        headers: &HashMap<HeaderName, HeaderValue>,
        status: u16,
    ) -> Option<String> {
        let token = self.token().await.ok().flatten();
        let mut request =
            self.inner.get(uri).header(http::header::ACCEPT, "application/json, text/event-stream");
        for (name, value) in headers {
            request = request.header(name, value);
        }
        if let Some(session) = session_id {
            request = request.header("mcp-session-id", session);
        }
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let mut response = tokio::time::timeout(EXPLAIN_WAIT, request.send()).await.ok()?.ok()?;
        if response.status().as_u16() != status {
            return None;
        }
        let mut body = Vec::new();
        while body.len() < EXPLAIN_BYTES {
            match tokio::time::timeout(EXPLAIN_WAIT, response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                _ => break,
            }
        }
        body.truncate(EXPLAIN_BYTES);
        let text = String::from_utf8_lossy(&body);
        let said = match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(json) => {
                let field = |v: &serde_json::Value| v.as_str().map(str::to_owned);
                json.get("error_description")
                    .and_then(field)
                    .or_else(|| json.get("message").and_then(field))
                    .or_else(|| json.get("error").and_then(|e| e.get("message")).and_then(field))
                    .or_else(|| json.get("error").and_then(field))?
            }
            // A page or a line of text: the error summarises it as it does other bodies.
            Err(_) => {
                return (!text.trim().is_empty())
                    .then(|| format!("{}{text}", crate::client::plain::RAW_BODY));
            }
        };
        let said = said.trim();
        (!said.is_empty()).then(|| said.to_owned())
    }
}

impl StreamableHttpClient for OAuthHttp {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let sent = self
            .send(|token| {
                self.inner.post_message(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    headers.clone(),
                )
            })
            .await;
        self.explained(sent, &uri, session_id.as_deref(), &headers).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let sent = self
            .send(|token| {
                self.inner.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    headers.clone(),
                    limits,
                )
            })
            .await;
        self.explained(sent, &uri, session_id.as_deref(), &headers).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        // Closing never starts a login: the current token or none.
        let token = self.token().await?;
        self.inner.delete_session(uri, session_id, token, headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.send(|token| {
            self.inner.get_stream(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers.clone(),
            )
        })
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        _auth: Option<String>,
        headers: HashMap<HeaderName, HeaderValue>,
        max: usize,
    ) -> Result<
        futures::stream::BoxStream<'static, Result<sse_stream::Sse, sse_stream::Error>>,
        StreamableHttpError<Self::Error>,
    > {
        self.send(|token| {
            self.inner.get_stream_with_max_sse_event_size(
                uri.clone(),
                session_id.clone(),
                last_event_id.clone(),
                token,
                headers.clone(),
                max,
            )
        })
        .await
    }
}
