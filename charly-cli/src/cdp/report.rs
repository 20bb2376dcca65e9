//! The reports of the `check.cdp.*` leaves: typed JSON for `--json` and `structuredContent`,
//! and the reference's text lines (REFERENCE.md §14) as their `Display`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::client::Tab;
use crate::report::Report;
pub use crate::report::Screenshot;

/// `status`: whether the DevTools endpoint answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CdpStatus {
    /// The endpoint probed, e.g. `http://127.0.0.1:40123` (a password or query values as `***`).
    pub url: String,
    /// Its port.
    pub port: u16,
    /// Whether `GET /json` answered.
    pub reachable: bool,
    /// The browser (`Chrome/156.0.8078.114`), when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    /// How many targets of type `page` it has.
    pub tabs: usize,
    /// Why it did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl fmt::Display for CdpStatus {
    /// `CDP:       ok (port P)` / `Detail:    N tabs`, or `unreachable` and the reason.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.error, self.reachable) {
            (None, true) => {
                writeln!(f, "CDP:       ok (port {})", self.port)?;
                writeln!(f, "Detail:    {} tabs", self.tabs)
            }
            (why, _) => {
                writeln!(f, "CDP:       unreachable (port {})", self.port)?;
                writeln!(f, "Detail:    {}", why.as_deref().unwrap_or("no answer"))
            }
        }
    }
}

impl Report for CdpStatus {
    /// `CDP is unreachable` when it is.
    fn failure(&self) -> Option<String> {
        (!self.reachable).then(|| "CDP is unreachable".to_owned())
    }
}

/// `list`: the tabs (targets of type `page`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TabList {
    /// In the browser's order.
    pub tabs: Vec<Tab>,
}

/// At most `n` characters of `s`.
fn cut(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

impl fmt::Display for TabList {
    /// `id<TAB>title (≤60)<TAB>url (≤80)` per tab.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for t in &self.tabs {
            writeln!(f, "{}\t{}\t{}", t.id, cut(&t.title, 60).replace('\t', " "), cut(&t.url, 80))?;
        }
        Ok(())
    }
}

impl Report for TabList {}

/// `open` and `close`: the tab opened or closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TabChanged {
    /// `opened` or `closed`.
    pub action: String,
    /// The tab id.
    pub id: String,
    /// Its URL (as asked, for `open`).
    pub url: String,
}

impl fmt::Display for TabChanged {
    /// `Opened URL (tab ID)` / `Closed tab ID`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.action.as_str() {
            "opened" => writeln!(f, "Opened {} (tab {})", self.url, self.id),
            _ => writeln!(f, "Closed tab {}", self.id),
        }
    }
}

impl Report for TabChanged {}

/// `url`, and what `click` ends on: the page's title and URL.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PageInfo {
    /// `document.title`.
    pub title: String,
    /// `location.href`.
    pub url: String,
}

impl fmt::Display for PageInfo {
    /// `Title: ...` / `URL:   ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Title: {}", self.title)?;
        writeln!(f, "URL:   {}", self.url)
    }
}

impl Report for PageInfo {}

/// `text`, `html` and `eval`: a value of the page. Its JSON also has `value`: the value itself
/// (a number, string, boolean, array or object as the script returned it; `null` for `null`,
/// `undefined` and objects JSON cannot hold, such as a function or a DOM node).
// `value` has no one JSON type, which a strict schema needs for every property: the schema
// leaves it out of `properties` and admits it as an additional property.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[schemars(extend("additionalProperties" = true))]
pub struct Evaluated {
    /// The value as JSON (see the type's docs).
    #[schemars(skip)]
    pub value: Value,
    /// The JavaScript type (`string`, `number`, `object`, `undefined`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// The value as printed when it is not a string: `undefined`, `null`, JSON for everything
    /// else, the description of what JSON cannot hold (a function). Absent for a string, which
    /// `value` holds as it is printed (a page's text or HTML is carried once).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

impl Evaluated {
    /// The value as printed: a string raw, else [`Evaluated::text`].
    pub fn printed(&self) -> &str {
        match (&self.value, &self.text) {
            (Value::String(s), None) => s,
            (_, text) => text.as_deref().unwrap_or_default(),
        }
    }
}

impl fmt::Display for Evaluated {
    /// [`Evaluated::printed`] and a newline (none added when the text ends with one).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.printed();
        f.write_str(text)?;
        if !text.ends_with('\n') {
            f.write_str("\n")?;
        }
        Ok(())
    }
}

impl Report for Evaluated {}

/// An element's box in CSS pixels of the viewport.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub width: f64,
    /// Height.
    pub height: f64,
}

impl Rect {
    /// The centre, rounded to whole pixels.
    pub fn centre(&self) -> (f64, f64) {
        ((self.x + self.width / 2.0).round(), (self.y + self.height / 2.0).round())
    }
}

/// `wait`, `click`, `type` and `coords`: what was done to the element the selector found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct ElementAction {
    /// `found`, `clicked`, `typed` or `located`.
    pub action: String,
    /// The CSS selector.
    pub selector: String,
    /// The element's box in the viewport (after scrolling it into view, for click).
    pub rect: Rect,
    /// `click`: where the mouse pressed (viewport pixels).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<(f64, f64)>,
    /// `type`: how many characters were typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub typed: Option<usize>,
    /// `coords`: the viewport size (`innerWidth`, `innerHeight`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub viewport: Option<(f64, f64)>,
    /// `coords`: the element's top-left on the desktop (`screenX`, `screenY` plus the
    /// browser's toolbar height, `outerHeight - innerHeight`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub desktop: Option<(f64, f64)>,
    /// `click`: the page after the click.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page: Option<PageInfo>,
    /// `wait`: how long it took to appear, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waited_ms: Option<u64>,
}

impl fmt::Display for ElementAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.rect;
        match self.action.as_str() {
            "found" => writeln!(f, "Element {} found", self.selector),
            "clicked" => {
                let (x, y) = self.point.unwrap_or_default();
                writeln!(f, "Clicked element at ({x}, {y})")?;
                self.page.as_ref().map_or(Ok(()), |p| p.fmt(f))
            }
            "typed" => writeln!(f, "Typed {} characters into {}", self.typed.unwrap_or(0), self.selector),
            _ => {
                writeln!(f, "Element:   {},{} {}x{}", r.x, r.y, r.width, r.height)?;
                let (w, h) = self.viewport.unwrap_or_default();
                writeln!(f, "Viewport:  {w}x{h}")?;
                let (x, y) = self.desktop.unwrap_or_default();
                writeln!(f, "Desktop:   {x},{y}")
            }
        }
    }
}

impl Report for ElementAction {}

/// `axtree` and `raw`: JSON from the browser.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Json {
    /// `Accessibility.getFullAXTree` or the raw method.
    pub method: String,
    /// `axtree`: how many nodes matched the query (all nodes without one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<usize>,
    /// The method's result (a CDP result is an object; `axtree`: `{"nodes": [matching nodes]}`).
    pub result: serde_json::Map<String, Value>,
}

impl fmt::Display for Json {
    /// The result as pretty JSON (`axtree`: the list of matching nodes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = match (self.matched, self.result.get("nodes")) {
            (Some(_), Some(nodes)) => nodes.clone(),
            _ => Value::Object(self.result.clone()),
        };
        writeln!(f, "{}", serde_json::to_string_pretty(&shown).map_err(|_| fmt::Error)?)
    }
}

impl Report for Json {}

/// `spa.status`: a Selkies web desktop's canvas and input.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct SpaStatus {
    /// `#videoCanvas` width in pixels.
    pub canvas_width: f64,
    /// `#videoCanvas` height.
    pub canvas_height: f64,
    /// The canvas scale (not detected: always 0, as in the reference).
    pub scale: f64,
    /// Whether `#overlayInput` exists.
    pub input: bool,
    /// Whether it has the focus.
    pub input_focused: bool,
    /// `isSecureContext`.
    pub secure: bool,
    /// Whether `VideoDecoder` (WebCodecs) exists.
    pub decoder: bool,
}

impl fmt::Display for SpaStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let yes = |b: bool| if b { "yes" } else { "no" };
        writeln!(f, "Canvas:  {}x{}", self.canvas_width, self.canvas_height)?;
        writeln!(f, "Scale:   {}", self.scale)?;
        let input = match (self.input, self.input_focused) {
            (false, _) => "absent",
            (true, true) => "present, focused",
            (true, false) => "present, not focused",
        };
        writeln!(f, "Input:   {input}")?;
        writeln!(f, "Secure:  {}", yes(self.secure))?;
        writeln!(f, "Decoder: {}", yes(self.decoder))
    }
}

impl Report for SpaStatus {}

/// `spa.click`, `spa.mouse`, `spa.type`, `spa.key`, `spa.key-combo`: the input events sent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SpaInput {
    /// `click`, `mouse`, `type`, `key` or `key-combo`.
    pub action: String,
    /// What was sent: `left at (100, 80)`, `5 characters`, `Enter`, `ctrl+a`.
    pub detail: String,
    /// How many `Input.dispatch*Event` calls were made.
    pub events: usize,
}

impl fmt::Display for SpaInput {
    /// `SPA click: left at (x, y)`, `SPA typed N characters`, `SPA key: K`, ...
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.action.as_str() {
            "type" => writeln!(f, "SPA typed {}", self.detail),
            action => writeln!(f, "SPA {action}: {}", self.detail),
        }
    }
}

impl Report for SpaInput {}
