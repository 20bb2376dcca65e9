//! The wire: the DevTools HTTP endpoint (`/json`, `/json/new`, `/json/close`) over reqwest, and
//! JSON-RPC over the tab's `webSocketDebuggerUrl` with tokio-tungstenite (no Origin header:
//! Chromium refuses WebSocket handshakes whose Origin it was not told to allow), on sockets
//! [`super::pool`] keeps open between calls.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{CdpError, pool};

/// One entry of `GET /json`: a DevTools target.
#[derive(Clone, Debug, Default, Deserialize, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Tab {
    /// The target id (what tab-scoped leaves take).
    pub id: String,
    /// `page`, `iframe`, `service_worker`, `background_page`, ...
    #[serde(rename = "type", default)]
    pub kind: String,
    /// The document title.
    #[serde(default)]
    pub title: String,
    /// The document URL.
    #[serde(default)]
    pub url: String,
    /// Where its JSON-RPC session is (absent while another client holds it, on old Chromes).
    #[serde(rename = "webSocketDebuggerUrl", default, skip_serializing_if = "Option::is_none")]
    pub websocket: Option<String>,
}

/// A browser's DevTools HTTP endpoint, e.g. `http://127.0.0.1:9222`.
#[derive(Clone, Debug)]
pub struct Browser {
    /// The endpoint, without a trailing `/`.
    pub base: String,
    /// How to fix an unreachable endpoint (start Chromium with --remote-debugging-port; the
    /// box's container and its port).
    pub hint: String,
    http: reqwest::Client,
}

/// The process's one HTTP client for DevTools endpoints. Building a reqwest client loads the
/// TLS roots (milliseconds, for plain-http loopback requests), which made every tool call pay
/// for it; no idle pool, so no connection outlives the runtime that opened it (each CLI
/// call and test has its own).
fn http() -> reqwest::Client {
    static HTTP: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    HTTP.get_or_init(|| {
        reqwest::Client::builder().no_proxy().pool_max_idle_per_host(0).build().unwrap_or_default()
    })
    .clone()
}

impl Browser {
    /// The browser at `base` (`http://host:port`); `hint` is said when it does not answer.
    pub fn new(base: &str, hint: impl Into<String>) -> Browser {
        Browser { base: base.trim_end_matches('/').to_owned(), hint: hint.into(), http: http() }
    }

    async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        timeout: Duration,
    ) -> Result<String, CdpError> {
        let url = format!("{}{path}", self.base);
        let unreachable =
            |why: String| CdpError::Unreachable { url: self.base.clone(), why, hint: self.hint.clone() };
        let response = self.http.request(method, &url).timeout(timeout).send().await.map_err(|e| {
            unreachable(if e.is_timeout() { "no answer in time".into() } else { root_cause(&e) })
        })?;
        let status = response.status();
        let body = response.text().await.map_err(|e| unreachable(root_cause(&e)))?;
        if !status.is_success() {
            return Err(CdpError::BadAnswer {
                url: self.base.clone(),
                what: format!("{path} answered {status}: {}", body.trim()),
            });
        }
        Ok(body)
    }

    /// `GET /json/version`: the browser's `Browser` string (e.g. `Chrome/156.0.8078.114`).
    ///
    /// # Errors
    ///
    /// [`CdpError::Unreachable`], [`CdpError::BadAnswer`].
    pub async fn version(&self, timeout: Duration) -> Result<String, CdpError> {
        let body = self.request(reqwest::Method::GET, "/json/version", timeout).await?;
        let v: Value = serde_json::from_str(&body).map_err(|e| self.bad(format!("/json/version: {e}")))?;
        Ok(v.get("Browser").and_then(Value::as_str).unwrap_or_default().to_owned())
    }

    /// `GET /json`: every target, in the browser's order.
    ///
    /// # Errors
    ///
    /// [`CdpError::Unreachable`], [`CdpError::BadAnswer`].
    pub async fn targets(&self, timeout: Duration) -> Result<Vec<Tab>, CdpError> {
        let body = self.request(reqwest::Method::GET, "/json", timeout).await?;
        serde_json::from_str(&body).map_err(|e| self.bad(format!("/json is not a list of targets: {e}")))
    }

    /// The tab `id` (any target type), or [`CdpError::NoTab`] listing the page ids there are.
    ///
    /// # Errors
    ///
    /// As [`targets`](Self::targets), and [`CdpError::NoTab`].
    pub async fn tab(&self, id: &str, timeout: Duration) -> Result<Tab, CdpError> {
        let targets = self.targets(timeout).await?;
        if let Some(tab) = targets.iter().find(|t| t.id == id) {
            return Ok(tab.clone());
        }
        let pages: Vec<&str> = targets.iter().filter(|t| t.kind == "page").map(|t| t.id.as_str()).collect();
        Err(CdpError::NoTab {
            id: id.to_owned(),
            url: self.base.clone(),
            available: if pages.is_empty() { "none".into() } else { pages.join(", ") },
        })
    }

    /// `PUT /json/new?<url>`: a new tab showing `url`.
    ///
    /// # Errors
    ///
    /// [`CdpError::Unreachable`], [`CdpError::BadAnswer`].
    pub async fn open(&self, url: &str, timeout: Duration) -> Result<Tab, CdpError> {
        let query: String = url::form_urlencoded::byte_serialize(url.as_bytes()).collect();
        let path = format!("/json/new?{}", query.replace('+', "%20"));
        let body = self.request(reqwest::Method::PUT, &path, timeout).await?;
        serde_json::from_str(&body).map_err(|e| self.bad(format!("/json/new: {e}")))
    }

    /// `GET /json/close/<id>`.
    ///
    /// # Errors
    ///
    /// [`CdpError::NoTab`] for an id the browser does not have, and as [`targets`](Self::targets).
    pub async fn close(&self, id: &str, timeout: Duration) -> Result<(), CdpError> {
        // Checked first: Chromium answers an unknown id with 404 "No such target id".
        self.tab(id, timeout).await?;
        let encoded: String = url::form_urlencoded::byte_serialize(id.as_bytes()).collect();
        self.request(reqwest::Method::GET, &format!("/json/close/{encoded}"), timeout).await.map(drop)
    }

    /// A JSON-RPC session with tab `id`, each call bounded by `timeout`.
    ///
    /// # Errors
    ///
    /// As [`tab`](Self::tab), and [`CdpError::Socket`] when the WebSocket does not open.
    pub async fn session(&self, id: &str, timeout: Duration) -> Result<Session, CdpError> {
        // Straight to the tab's socket (what `/json` lists as its webSocketDebuggerUrl, on the
        // host and port dialled): one HTTP round trip less per call. A refused handshake (an
        // id the browser does not have) falls back to `/json`, which names the tabs there are.
        let safe = !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if let (true, Some(rest)) = (safe, self.base.strip_prefix("http://")) {
            let direct = format!("ws://{rest}/devtools/page/{id}");
            let tab = Tab {
                id: id.to_owned(),
                kind: "page".into(),
                websocket: Some(direct.clone()),
                ..Tab::default()
            };
            if let Ok(session) = Session::connect(&direct, tab, timeout).await {
                return Ok(session);
            }
        }
        let tab = self.tab(id, timeout).await?;
        let Some(ws) = tab.websocket.clone() else {
            return Err(CdpError::Socket {
                url: format!("{}/devtools/page/{id}", self.base),
                why:
                    "the browser lists no webSocketDebuggerUrl for the tab (another DevTools client holds it)"
                        .into(),
            });
        };
        Session::connect(&ws, tab, timeout).await
    }

    fn bad(&self, what: String) -> CdpError {
        CdpError::BadAnswer { url: self.base.clone(), what }
    }
}

/// The innermost cause of an HTTP error (`Connection refused (os error 111)`).
fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

/// How long a timed-out call waits for its answer after interrupting the page's script.
const STOP_GRACE: Duration = Duration::from_secs(2);

/// A JSON-RPC session over a tab's WebSocket (a socket of [`super::pool`]'s, kept open for
/// the next call to the same tab). Events the browser sends between answers are skipped; each
/// call is bounded by the session's timeout.
pub struct Session {
    conn: Option<pool::Conn>,
    url: String,
    /// No call has failed or timed out: the socket can serve the next session.
    healthy: bool,
    /// The per-call timeout.
    pub timeout: Duration,
    /// The tab as `/json` listed it when the session opened.
    pub tab: Tab,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("url", &self.url)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// Opens the WebSocket `url` of `tab` (or takes the idle one a previous session left).
    ///
    /// # Errors
    ///
    /// [`CdpError::Socket`], [`CdpError::Timeout`].
    pub async fn connect(url: &str, tab: Tab, timeout: Duration) -> Result<Session, CdpError> {
        let conn = pool::checkout(url, timeout).await?;
        Ok(Session { conn: Some(conn), url: url.to_owned(), healthy: true, timeout, tab })
    }

    /// Sends `method` with `params` and returns its `result`.
    ///
    /// A kept socket that the browser closed while it was idle (its tab closed, the browser
    /// restarted) fails its first call: that call is sent again once on a new socket.
    ///
    /// # Errors
    ///
    /// [`CdpError::Protocol`] for a JSON-RPC error (an unknown method: code -32601),
    /// [`CdpError::Timeout`], [`CdpError::Socket`].
    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value, CdpError> {
        let socket = |url: &str, failure: pool::Failure| match failure {
            pool::Failure::Socket(why) => CdpError::Socket { url: url.to_owned(), why },
            pool::Failure::TooLong { size } => {
                CdpError::TooLarge { method: method.to_owned(), size, max: pool::MAX_MESSAGE }
            }
        };
        let Some(conn) = self.conn.as_mut() else {
            return Err(socket(&self.url, pool::Failure::Socket("the session is closed".into())));
        };
        let timeout = self.timeout;
        let url = self.url.clone();
        let interrupt = conn.interrupter();
        let exchange = async {
            match conn.exchange(method, params.clone()).await {
                Err(_) if conn.reused => {
                    *conn = pool::open(&url, timeout).await?;
                    conn.exchange(method, params).await.map_err(|why| socket(&url, why))
                }
                answer => {
                    conn.reused = false;
                    answer.map_err(|why| socket(&url, why))
                }
            }
        };
        tokio::pin!(exchange);
        let answer = match tokio::time::timeout(timeout, &mut exchange).await {
            Ok(answer) => answer,
            Err(_) => {
                // Stop the page's script on this socket, and wait a little for the call's own
                // answer, which then comes (the tab is usable again).
                self.healthy = false;
                interrupt.send();
                let stopped = tokio::time::timeout(STOP_GRACE, &mut exchange).await.is_ok();
                return Err(CdpError::Timeout {
                    method: method.to_owned(),
                    after: timeout,
                    stopped: Some(stopped),
                });
            }
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(e) => {
                self.healthy = false;
                return Err(e);
            }
        };
        if let Some(dialog) = answer.get(pool::DIALOG) {
            let text = |k: &str| dialog.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            return Err(CdpError::Dialog {
                method: method.to_owned(),
                kind: text("type"),
                message: text("message"),
            });
        }
        if let Some(error) = answer.get("error") {
            return Err(CdpError::Protocol {
                method: method.to_owned(),
                code: error.get("code").and_then(Value::as_i64).unwrap_or_default(),
                // Chrome says what was wrong with the params in `data` (trial 2 LOW: dropped).
                message: match (
                    error.get("message").and_then(Value::as_str),
                    error.get("data").and_then(Value::as_str),
                ) {
                    (Some(m), Some(d)) if !d.is_empty() => format!("{m}: {d}"),
                    (m, _) => m.unwrap_or_default().to_owned(),
                },
            });
        }
        Ok(answer.get("result").cloned().unwrap_or(Value::Null))
    }

    /// `Runtime.evaluate {expression, returnByValue: true, awaitPromise: true}`: the value's
    /// `RemoteObject` (`type`, `value`, `description`).
    ///
    /// # Errors
    ///
    /// [`CdpError::Exception`] with the exception's text when the script throws, and as
    /// [`call`](Self::call).
    pub async fn evaluate(&mut self, expression: &str) -> Result<Value, CdpError> {
        let params = json!({"expression": expression, "returnByValue": true, "awaitPromise": true});
        let mut result = self.call("Runtime.evaluate", params).await?;
        if let Some(details) = result.get("exceptionDetails") {
            // An Error has a description (its stack); `throw 'x'` only a value.
            let text = match (details.pointer("/exception/description"), details.pointer("/exception/value"))
            {
                (Some(Value::String(d)), _) => d.clone(),
                (_, Some(Value::String(v))) => v.clone(),
                (_, Some(v)) if !v.is_null() => v.to_string(),
                _ => details.get("text").and_then(Value::as_str).unwrap_or("an exception").to_owned(),
            };
            return Err(CdpError::Exception(text));
        }
        Ok(result.get_mut("result").map(Value::take).unwrap_or(Value::Null))
    }

    /// [`evaluate`](Self::evaluate) returning only the value (`null` for `undefined`).
    ///
    /// # Errors
    ///
    /// As [`evaluate`](Self::evaluate).
    pub async fn value(&mut self, expression: &str) -> Result<Value, CdpError> {
        let mut object = self.evaluate(expression).await?;
        Ok(object.get_mut("value").map(Value::take).unwrap_or(Value::Null))
    }

    /// Ends the session (the tab stays): its socket goes back to the pool when every call
    /// succeeded, and is closed otherwise.
    pub async fn close(mut self) {
        if let Some(conn) = self.conn.take()
            && self.healthy
        {
            pool::checkin(&self.url, conn);
        }
    }
}
