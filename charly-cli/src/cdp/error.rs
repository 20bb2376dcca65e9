//! [`CdpError`]: why a `check.cdp.*` leaf could not do its work, written for people (each
//! names the argument or the endpoint, what was wrong and how to fix it).

use std::time::Duration;

use charly::client::format_duration;

/// Why a CDP operation failed. The browser and its tabs are untouched by every one of these
/// (a failed call leaves the tab as it was; the next call opens a new session).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CdpError {
    /// An argument is not usable (a bad `--cdp-url`, `--scale`, key name, params JSON).
    #[error("{0}")]
    Usage(String),
    /// The box's container publishes no host port for container port 9222.
    #[error(
        "container {container} publishes no host port for CDP's container port 9222 (and does not run \
         with --network host): {fix}"
    )]
    NoPortMapping {
        /// The container.
        container: String,
        /// How to publish it ([`crate::resolve::publish_hint`]).
        fix: String,
    },
    /// Nothing answered at the DevTools HTTP endpoint.
    #[error("CDP at {} is unreachable ({why}); {hint}", charly::client::redacted(url))]
    Unreachable {
        /// The endpoint, e.g. `http://127.0.0.1:9222`.
        url: String,
        /// What the connection said.
        why: String,
        /// How to fix it (start the browser with --remote-debugging-port, check the box).
        hint: String,
    },
    /// The DevTools HTTP endpoint answered something other than what CDP sends.
    #[error("CDP at {}: {what}", charly::client::redacted(url))]
    BadAnswer {
        /// The endpoint.
        url: String,
        /// What was wrong with the answer.
        what: String,
    },
    /// No tab (target of type page) has that id.
    #[error(
        "tab {id:?} does not exist at {url} (tabs: {available}); list them with `charly check cdp list <target>` (and the same --cdp-url)"
    )]
    NoTab {
        /// The tab id given.
        id: String,
        /// The endpoint.
        url: String,
        /// The ids there are, comma separated (or `none`).
        available: String,
    },
    /// The browser answered a method with a JSON-RPC error (an unknown method, bad params).
    #[error("CDP method {method} failed: {message} (code {code})")]
    Protocol {
        /// The CDP method, e.g. `Page.navigate`.
        method: String,
        /// The JSON-RPC error code (-32601: method not found, -32602: bad params).
        code: i64,
        /// The browser's message.
        message: String,
    },
    /// The browser's answer is larger than charly reads of one CDP message.
    #[error(
        "the browser's answer to {method} is {size} bytes, more than the {max} bytes charly reads of one CDP \
         message: ask for less: {}",
        advice(method)
    )]
    TooLarge {
        /// The CDP method.
        method: String,
        /// The answer's size in bytes.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The page's JavaScript threw.
    #[error("JavaScript threw: {0}")]
    Exception(String),
    /// A call took longer than the per-call timeout. The page's script was then interrupted
    /// (`Runtime.terminateExecution`), and `stopped` says whether the tab answered after.
    #[error(
        "CDP method {method} got no answer within {} (--timeout){}",
        format_duration(*.after),
        match .stopped {
            Some(true) => ": the page's script was still running, and charly stopped it (the tab answers \
                           again); give a longer --timeout if it needs the time",
            Some(false) => ": the tab did not answer charly's interrupt either; if it stays stuck, close it \
                            (`charly check cdp close`) or restart the browser",
            None => "",
        }
    )]
    Timeout {
        /// The CDP method.
        method: String,
        /// The timeout.
        after: Duration,
        /// Whether the interrupt got the call's answer (the tab answers again); `None` for what
        /// cannot be interrupted (the WebSocket handshake).
        stopped: Option<bool>,
    },
    /// The page opened a JavaScript dialog (`alert`, `confirm`, `prompt`, `beforeunload`),
    /// which blocks it until answered: charly dismissed it.
    #[error(
        "CDP method {method}: the page opened a JavaScript {kind} dialog ({message:?}), which blocks the page \
         until answered: charly dismissed it"
    )]
    Dialog {
        /// The CDP method the dialog blocked.
        method: String,
        /// `alert`, `confirm`, `prompt` or `beforeunload`.
        kind: String,
        /// The dialog's text.
        message: String,
    },
    /// No visible element matches the selector (after `wait`'s timeout, when waiting).
    #[error("no visible element matches selector {selector:?}{}", .waited.map(|d| format!(" after {}", format_duration(d))).unwrap_or_default())]
    NotFound {
        /// The CSS selector.
        selector: String,
        /// How long `wait` waited (`None`: looked once).
        waited: Option<Duration>,
    },
    /// `type`'s element takes no text (not a text input, a textarea or contenteditable).
    #[error(
        "the element matching selector {selector:?} is {element}, which takes no typed text: `type` needs a text \
         <input>, a <textarea> or a contenteditable element (nothing was typed)"
    )]
    NotEditable {
        /// The CSS selector.
        selector: String,
        /// The element, e.g. `<h1>` or `<input type=checkbox>`.
        element: String,
    },
    /// The tab is not a Selkies web desktop (no `#videoCanvas`).
    #[error(
        "tab {0} is not a Selkies SPA (no #videoCanvas element): the `charly check cdp spa` leaves drive Selkies web desktops"
    )]
    NotSpa(String),
    /// The WebSocket to the tab failed or closed.
    #[error("CDP WebSocket {url}: {why}")]
    Socket {
        /// The tab's `webSocketDebuggerUrl`.
        url: String,
        /// What failed.
        why: String,
    },
    /// Finding the box's container failed (not started, not running, podman missing).
    #[error(transparent)]
    Engine(#[from] crate::engine::EngineError),
    /// Writing the screenshot failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How to ask for less than an answer too large to read, by method.
fn advice(method: &str) -> &'static str {
    match method {
        "Runtime.evaluate" => {
            "a smaller expression (e.g. `.slice(0, 100000)` of a string, or the part of the page you need: \
             `document.querySelector(SEL).innerText` instead of `text`, `.outerHTML` of one element instead \
             of `html`)"
        }
        "Accessibility.getFullAXTree" => {
            "the tree of one element (`raw Accessibility.getPartialAXTree` with its nodeId or backendNodeId), \
             or fewer levels (`raw Accessibility.getFullAXTree '{\"depth\": 3}'`)"
        }
        "Page.captureScreenshot" => "a smaller window, or `raw Page.captureScreenshot` with a clip",
        _ => "fewer or smaller results from the method's parameters",
    }
}
