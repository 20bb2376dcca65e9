//! `check.cdp.*`: a browser driven over the Chrome DevTools Protocol (REFERENCE.md §14).
//!
//! **Where the browser is** ([`resolve`]): `.` is this machine, at `--cdp-url` (default
//! `http://127.0.0.1:9222`); a box is its running container `charly-<box>[-<instance>]`,
//! dialled at the host port `podman port` gives for container port 9222 (`0.0.0.0` and `[::]`
//! become `127.0.0.1`), or at 127.0.0.1:9222 when the container runs with `--network host`;
//! no mapping is [`CdpError::NoPortMapping`], saying how to publish it.
//!
//! **The wire** ([`client`]): the DevTools HTTP endpoint (`GET /json`, `PUT /json/new?<url>`,
//! `GET /json/close/<id>`, `GET /json/version`), and JSON-RPC over the tab's
//! `webSocketDebuggerUrl`, every call bounded by the leaf's `--timeout` (default 30 s). A thin
//! client over tokio-tungstenite rather than a typed CDP crate: charly sends a dozen methods,
//! and `raw` sends any other.
//!
//! **Elements** are found with the reference's `deepQuery(selector)`: the first match whose
//! bounding box is not empty, looking into open shadow roots ([`page`]).
//!
//! | leaf | what it does | report |
//! |---|---|---|
//! | `status` | `GET /json` (2 s) | [`CdpStatus`] |
//! | `list` | the `page` targets | [`TabList`] |
//! | `open URL`, `close TAB` | `/json/new`, `/json/close` | [`TabChanged`] |
//! | `url TAB` | title and URL | [`PageInfo`] |
//! | `text`, `html`, `eval EXPR` | `document.body.innerText`, `outerHTML`, `Runtime.evaluate` | [`Evaluated`] |
//! | `wait`, `click`, `type`, `coords` | an element by selector | [`ElementAction`] |
//! | `axtree [QUERY]`, `raw METHOD [PARAMS]` | `Accessibility.getFullAXTree`, any method | [`Json`] |
//! | `screenshot [FILE]` | `Page.captureScreenshot` (PNG; `image` content over MCP) | [`Screenshot`] |
//! | `spa.status`, `spa.click`, `spa.mouse`, `spa.type`, `spa.key`, `spa.key-combo` | a Selkies web desktop's canvas and input | [`SpaStatus`], [`SpaInput`] |
//!
//! Every error ([`CdpError`]) leaves the browser and the tab as they were.

pub mod client;
mod error;
pub mod keys;
pub mod page;
mod pool;
mod report;
mod target;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

pub use client::{Browser, Session, Tab};
pub use error::CdpError;
pub use report::{
    CdpStatus, ElementAction, Evaluated, Json, PageInfo, Rect, Screenshot, SpaInput, SpaStatus, TabChanged,
    TabList,
};

use crate::report::{Reply, Report};
pub use target::{resolve, resolve_container, resolve_local};

/// The DevTools endpoint `.` means without `--cdp-url`.
pub const DEFAULT_URL: &str = "http://127.0.0.1:9222";

/// The container port Chromium listens on inside a box.
pub const CONTAINER_PORT: u16 = 9222;

/// How long `status` waits for `GET /json`.
pub const STATUS_TIMEOUT: Duration = Duration::from_secs(2);

/// A mouse button of `spa.click`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MouseButton {
    /// The left button (CDP `left`).
    #[default]
    Left,
    /// The right button.
    Right,
    /// The middle button.
    Middle,
}

impl MouseButton {
    /// `left`, `right`, `middle`.
    pub fn as_str(self) -> &'static str {
        match self {
            MouseButton::Left => "left",
            MouseButton::Right => "right",
            MouseButton::Middle => "middle",
        }
    }

    /// The button called `name`, or a message listing the three.
    ///
    /// # Errors
    ///
    /// A name other than left, right, middle.
    pub fn parse(name: &str) -> Result<MouseButton, String> {
        match name {
            "left" => Ok(MouseButton::Left),
            "right" => Ok(MouseButton::Right),
            "middle" => Ok(MouseButton::Middle),
            other => Err(format!("button {other:?}: expects left, right or middle")),
        }
    }
}

/// One `check.cdp.*` operation and its arguments. `tab` is a target id from `list`.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Op {
    Status,
    List,
    Open {
        url: String,
    },
    Close {
        tab: String,
    },
    Url {
        tab: String,
    },
    Text {
        tab: String,
    },
    Html {
        tab: String,
    },
    Eval {
        tab: String,
        expression: String,
    },
    Wait {
        tab: String,
        selector: String,
    },
    Click {
        tab: String,
        selector: String,
    },
    Type {
        tab: String,
        selector: String,
        text: String,
    },
    Coords {
        tab: String,
        selector: String,
    },
    Axtree {
        tab: String,
        query: Option<String>,
    },
    Raw {
        tab: String,
        method: String,
        params: Option<String>,
    },
    /// `file`: where to write the PNG (absolute, or relative to the working directory).
    Screenshot {
        tab: String,
        file: Option<PathBuf>,
    },
    SpaStatus {
        tab: String,
    },
    SpaClick {
        tab: String,
        x: i64,
        y: i64,
        button: MouseButton,
        scale: Option<(f64, f64)>,
    },
    SpaMouse {
        tab: String,
        x: i64,
        y: i64,
        scale: Option<(f64, f64)>,
    },
    SpaType {
        tab: String,
        text: String,
    },
    SpaKey {
        tab: String,
        key: String,
    },
    SpaCombo {
        tab: String,
        combo: String,
    },
}

impl Op {
    /// The tab it acts on (`None` for `status`, `list`, `open`).
    pub fn tab(&self) -> Option<String> {
        self.clone().tab_mut().map(|t| t.clone())
    }

    /// The tab it acts on, to change (a plan step without `tab:` takes the first page tab).
    pub fn tab_mut(&mut self) -> Option<&mut String> {
        match self {
            Op::Status | Op::List | Op::Open { .. } => None,
            Op::Close { tab }
            | Op::Url { tab }
            | Op::Text { tab }
            | Op::Html { tab }
            | Op::Eval { tab, .. }
            | Op::Wait { tab, .. }
            | Op::Click { tab, .. }
            | Op::Type { tab, .. }
            | Op::Coords { tab, .. }
            | Op::Axtree { tab, .. }
            | Op::Raw { tab, .. }
            | Op::Screenshot { tab, .. }
            | Op::SpaStatus { tab }
            | Op::SpaClick { tab, .. }
            | Op::SpaMouse { tab, .. }
            | Op::SpaType { tab, .. }
            | Op::SpaKey { tab, .. }
            | Op::SpaCombo { tab, .. } => Some(tab),
        }
    }
}

/// What an [`Op`] produced: one of the reports.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum Outcome {
    Status(CdpStatus),
    Tabs(TabList),
    Changed(TabChanged),
    Page(PageInfo),
    Value(Evaluated),
    Element(ElementAction),
    Json(Json),
    Screenshot(Screenshot),
    Spa(SpaStatus),
    Input(SpaInput),
}

impl Outcome {
    /// The report as a [`Reply`] (its text, JSON, failure and images).
    pub fn reply(&self) -> Reply {
        match self {
            Outcome::Status(r) => Reply::new(r),
            Outcome::Tabs(r) => Reply::new(r),
            Outcome::Changed(r) => Reply::new(r),
            Outcome::Page(r) => Reply::new(r),
            Outcome::Value(r) => Reply::new(r),
            Outcome::Element(r) => Reply::new(r),
            Outcome::Json(r) => Reply::new(r),
            Outcome::Screenshot(r) => Reply::new(r),
            Outcome::Spa(r) => Reply::new(r),
            Outcome::Input(r) => Reply::new(r),
        }
    }

    /// Whether the report records a failure (`status` of an unreachable browser).
    pub fn failure(&self) -> Option<String> {
        match self {
            Outcome::Status(r) => r.failure(),
            _ => None,
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reply().text)
    }
}

/// Runs `op` against `browser`, each call bounded by `timeout` (and `wait` polling for that
/// long).
///
/// # Errors
///
/// Every [`CdpError`]; an unreachable browser is a [`CdpStatus`] that records a failure for
/// `status`, an error for the other leaves.
pub async fn perform(browser: &Browser, op: &Op, timeout: Duration) -> Result<Outcome, CdpError> {
    match op {
        Op::Status => return Ok(Outcome::Status(status(browser).await)),
        Op::List => {
            let tabs = browser.targets(timeout).await?.into_iter().filter(|t| t.kind == "page").collect();
            return Ok(Outcome::Tabs(TabList { tabs }));
        }
        Op::Open { url } => {
            // Chrome opens about:blank for what it cannot load and says nothing (trial 2 LOW:
            // "Opened not a url"): an address that does not parse is refused here.
            if let Err(e) = url::Url::parse(url) {
                return Err(CdpError::Usage(format!(
                    "url {url:?} is not an absolute URL ({e}): give the scheme too (https://example.com/, \
                     file:///tmp/page.html, about:blank); nothing was opened"
                )));
            }
            let tab = browser.open(url, timeout).await?;
            return Ok(Outcome::Changed(TabChanged {
                action: "opened".into(),
                id: tab.id,
                url: url.clone(),
            }));
        }
        Op::Close { tab } => {
            browser.close(tab, timeout).await?;
            return Ok(Outcome::Changed(TabChanged {
                action: "closed".into(),
                id: tab.clone(),
                url: String::new(),
            }));
        }
        _ => {}
    }
    // Arguments checked before any session opens.
    let params = match op {
        Op::Raw { params: Some(text), .. } => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => v,
            Ok(other) => return Err(CdpError::Usage(format!("params: expects a JSON object, got {other}"))),
            Err(e) => return Err(CdpError::Usage(format!("params: not JSON: {e}"))),
        },
        _ => json!({}),
    };
    if let Op::SpaKey { key, .. } = op
        && keys::named(key).is_none()
    {
        return Err(CdpError::Usage(format!(
            "key-name {key:?} is not in the key table (allowed: {})",
            keys::named_list()
        )));
    }
    if let Op::SpaCombo { combo, .. } = op {
        keys::combo(combo).map_err(CdpError::Usage)?;
    }
    let tab = op.tab().unwrap_or_default();
    let mut session = browser.session(&tab, timeout).await?;
    let outcome = on_tab(&mut session, op, params, timeout).await;
    session.close().await;
    outcome
}

async fn status(browser: &Browser) -> CdpStatus {
    let port = url::Url::parse(&browser.base).ok().and_then(|u| u.port_or_known_default()).unwrap_or(0);
    let mut report = CdpStatus {
        url: charly::client::redacted(&browser.base),
        port,
        reachable: false,
        browser: None,
        tabs: 0,
        error: None,
    };
    match browser.targets(STATUS_TIMEOUT).await {
        Ok(targets) => {
            report.reachable = true;
            report.tabs = targets.iter().filter(|t| t.kind == "page").count();
            report.browser = browser.version(STATUS_TIMEOUT).await.ok().filter(|b| !b.is_empty());
        }
        Err(e) => report.error = Some(e.to_string()),
    }
    report
}

async fn on_tab(s: &mut Session, op: &Op, params: Value, timeout: Duration) -> Result<Outcome, CdpError> {
    Ok(match op {
        Op::Url { .. } => Outcome::Page(page::page_info(s).await?),
        Op::Text { .. } => {
            Outcome::Value(evaluated(s.evaluate("document.body ? document.body.innerText : ''").await?))
        }
        Op::Html { .. } => Outcome::Value(evaluated(s.evaluate("document.documentElement.outerHTML").await?)),
        Op::Eval { expression, .. } => Outcome::Value(evaluated(s.evaluate(expression).await?)),
        Op::Wait { selector, .. } => Outcome::Element(page::wait(s, selector, timeout).await?),
        Op::Click { selector, .. } => Outcome::Element(page::click(s, selector).await?),
        Op::Type { selector, text, .. } => Outcome::Element(page::type_text(s, selector, text).await?),
        Op::Coords { selector, .. } => Outcome::Element(page::coords(s, selector).await?),
        Op::Axtree { query, .. } => {
            let method = "Accessibility.getFullAXTree";
            let mut result = s.call(method, json!({})).await?;
            let nodes = match result.get_mut("nodes").map(Value::take) {
                Some(Value::Array(nodes)) => nodes,
                _ => Vec::new(),
            };
            let needle = query.as_deref().map(str::to_lowercase);
            let kept: Vec<Value> = nodes
                .into_iter()
                .filter(|n| needle.as_ref().is_none_or(|q| n.to_string().to_lowercase().contains(q)))
                .collect();
            let matched = Some(kept.len());
            let result = serde_json::Map::from_iter([("nodes".to_owned(), Value::Array(kept))]);
            Outcome::Json(Json { method: method.into(), matched, result })
        }
        Op::Raw { method, .. } => {
            let result = match s.call(method, params).await? {
                Value::Object(map) => map,
                other => serde_json::Map::from_iter([("value".to_owned(), other)]),
            };
            Outcome::Json(Json { method: method.clone(), matched: None, result })
        }
        Op::Screenshot { file, .. } => Outcome::Screenshot(screenshot(s, file.as_deref()).await?),
        Op::SpaStatus { .. } => Outcome::Spa(page::spa_status(s).await?),
        Op::SpaClick { x, y, button, scale, .. } => {
            Outcome::Input(page::spa_pointer(s, *x, *y, Some(*button), *scale).await?)
        }
        Op::SpaMouse { x, y, scale, .. } => Outcome::Input(page::spa_pointer(s, *x, *y, None, *scale).await?),
        Op::SpaType { text, .. } => Outcome::Input(page::spa_type(s, text).await?),
        Op::SpaKey { key, .. } => Outcome::Input(page::spa_key(s, key).await?),
        Op::SpaCombo { combo, .. } => Outcome::Input(page::spa_combo(s, combo).await?),
        Op::Status | Op::List | Op::Open { .. } | Op::Close { .. } => {
            unreachable!("answered without a session")
        }
    })
}

/// A `Runtime.evaluate` result as `eval` prints it: strings raw, `undefined` and `null` as
/// those words (not an empty line, which an empty string also prints), other values as JSON,
/// and objects JSON cannot hold (a function) as their description. (A DOM node comes back as
/// `{}`: `returnByValue` gives no subtype or description to tell it by.)
fn evaluated(object: Value) -> Evaluated {
    let kind = object.get("type").and_then(Value::as_str).unwrap_or("undefined").to_owned();
    let subtype = object.get("subtype").and_then(Value::as_str).unwrap_or_default();
    let description = object.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
    let value = object.get("value").cloned();
    let text = match &value {
        Some(Value::String(_)) => None,
        _ if kind == "undefined" => Some("undefined".to_owned()),
        _ if subtype == "null" => Some("null".to_owned()),
        Some(Value::Null) | None => Some(description),
        Some(v) => Some(v.to_string()),
    };
    Evaluated { value: value.unwrap_or(Value::Null), kind, text }
}

/// `Page.captureScreenshot {format: png}`; the PNG written to `file` (mode 0644) through a
/// temporary file in its directory, so a failure leaves no partial file.
async fn screenshot(s: &mut Session, file: Option<&Path>) -> Result<Screenshot, CdpError> {
    use base64::Engine as _;
    let result = s.call("Page.captureScreenshot", json!({"format": "png"})).await?;
    let data = result.get("data").and_then(Value::as_str).unwrap_or_default();
    let png = base64::engine::general_purpose::STANDARD.decode(data).map_err(|e| CdpError::Socket {
        url: s.tab.websocket.clone().unwrap_or_default(),
        why: format!("Page.captureScreenshot sent data that is not base64: {e}"),
    })?;
    let dim = |at: usize| png.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let (width, height) = (dim(16), dim(20));
    if let Some(path) = file {
        write_file(path, &png)?;
    }
    Ok(Screenshot { file: file.map(|p| p.display().to_string()), bytes: png.len(), width, height, png })
}

fn write_file(path: &Path, data: &[u8]) -> Result<(), CdpError> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let named = |e: std::io::Error| std::io::Error::new(e.kind(), format!("writing {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(named)?;
    tmp.write_all(data).map_err(named)?;
    tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(named)?;
    tmp.persist(path).map_err(|e| named(e.error))?;
    Ok(())
}
