//! What tab-scoped leaves do inside a page: the reference's `deepQuery` (the first visible
//! match, descending into open shadow roots), element actions, and the Selkies SPA input.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::client::Session;
use super::keys::{self, Key};
use super::report::{ElementAction, PageInfo, Rect, SpaInput, SpaStatus};
use super::{CdpError, MouseButton};

/// `deepQuery(selector)`: the first element matching `selector` whose bounding box is not
/// empty, in document order, then inside each open shadow root in document order. An invalid
/// selector throws (`SyntaxError: ... is not a valid selector`).
const DEEP_QUERY: &str = "(function deepQuery(sel, root) {\
  root = root || document;\
  for (const e of root.querySelectorAll(sel)) {\
    const r = e.getBoundingClientRect();\
    if (r.width > 0 && r.height > 0) return e;\
  }\
  for (const h of root.querySelectorAll('*')) {\
    if (h.shadowRoot) { const f = deepQuery(sel, h.shadowRoot); if (f) return f; }\
  }\
  return null;\
})";

/// An expression that finds `selector`, runs `body` with the element as `e` and returns its
/// value, or `null` when nothing matches.
fn on_element(selector: &str, body: &str) -> String {
    let sel = Value::String(selector.to_owned());
    format!("(() => {{ const e = {DEEP_QUERY}({sel}); if (!e) return null; {body} }})()")
}

const RECT: &str =
    "const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height};";

fn rect_of(v: &Value) -> Rect {
    let n = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or_default();
    Rect { x: n("x"), y: n("y"), width: n("width"), height: n("height") }
}

/// The element's rect, once.
async fn find(s: &mut Session, selector: &str, body: &str) -> Result<Option<Value>, CdpError> {
    let v = s.value(&on_element(selector, body)).await?;
    Ok((!v.is_null()).then_some(v))
}

/// `wait`: polls every 500 ms until `selector` matches a visible element or `window` passed.
///
/// # Errors
///
/// [`CdpError::NotFound`] naming the selector and the window; a throwing selector at once.
pub async fn wait(s: &mut Session, selector: &str, window: Duration) -> Result<ElementAction, CdpError> {
    let started = Instant::now();
    loop {
        if let Some(v) = find(s, selector, RECT).await? {
            let waited = started.elapsed().as_millis() as u64;
            return Ok(ElementAction {
                action: "found".into(),
                selector: selector.into(),
                rect: rect_of(&v),
                waited_ms: Some(waited),
                ..ElementAction::default()
            });
        }
        // The last look is at the end of the window, not a poll interval before it.
        let left = window.saturating_sub(started.elapsed());
        if left.is_zero() {
            return Err(CdpError::NotFound { selector: selector.into(), waited: Some(window) });
        }
        tokio::time::sleep(left.min(Duration::from_millis(500))).await;
    }
}

fn not_found(selector: &str) -> CdpError {
    CdpError::NotFound { selector: selector.into(), waited: None }
}

/// `document.title` and `location.href`; retried briefly while a navigation replaces the
/// page's context (a click on a link).
pub async fn page_info(s: &mut Session) -> Result<PageInfo, CdpError> {
    let mut tries = 0;
    loop {
        match s.value("({title: document.title, url: location.href})").await {
            Ok(v) => {
                let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
                return Ok(PageInfo { title: text("title"), url: text("url") });
            }
            Err(CdpError::Exception(_) | CdpError::Protocol { .. }) if tries < 10 => {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e),
        }
    }
}

async fn mouse(s: &mut Session, kind: &str, x: f64, y: f64, button: MouseButton) -> Result<(), CdpError> {
    let (name, buttons) = match (kind, button) {
        ("mouseMoved", _) => ("none", 0),
        (_, MouseButton::Left) => ("left", 1),
        (_, MouseButton::Right) => ("right", 2),
        (_, MouseButton::Middle) => ("middle", 4),
    };
    let params = json!({"type": kind, "x": x, "y": y, "button": name, "buttons": buttons, "clickCount": 1});
    s.call("Input.dispatchMouseEvent", params).await.map(drop)
}

/// `click`: scrolls the element into view, presses and releases the left button at its centre,
/// and reports the page after.
///
/// # Errors
///
/// [`CdpError::NotFound`] and the session's errors.
pub async fn click(s: &mut Session, selector: &str) -> Result<ElementAction, CdpError> {
    let body = format!("e.scrollIntoViewIfNeeded ? e.scrollIntoViewIfNeeded() : e.scrollIntoView(); {RECT}");
    let v = find(s, selector, &body).await?.ok_or_else(|| not_found(selector))?;
    let rect = rect_of(&v);
    let (x, y) = rect.centre();
    mouse(s, "mousePressed", x, y, MouseButton::Left).await?;
    mouse(s, "mouseReleased", x, y, MouseButton::Left).await?;
    let page = page_info(s).await?;
    Ok(ElementAction {
        action: "clicked".into(),
        selector: selector.into(),
        rect,
        point: Some((x, y)),
        page: Some(page),
        ..ElementAction::default()
    })
}

async fn key_event(
    s: &mut Session,
    kind: &str,
    k: &Key,
    modifiers: u32,
    with_text: bool,
) -> Result<(), CdpError> {
    let mut params = json!({
        "type": kind, "key": k.key, "code": k.code, "modifiers": modifiers,
        "windowsVirtualKeyCode": k.vk, "nativeVirtualKeyCode": k.vk,
    });
    if with_text && !k.text.is_empty() {
        params["text"] = Value::String(k.text.clone());
        params["unmodifiedText"] = Value::String(k.text.clone());
    }
    s.call("Input.dispatchKeyEvent", params).await.map(drop)
}

/// What `type` accepts: an enabled, writable text `<input>` or `<textarea>`, or a
/// contenteditable element. Returns `{notEditable: "<tag ...>"}` for anything else.
const EDITABLE: &str = "const tag = e.tagName.toLowerCase(); \
    const texty = tag === 'textarea' || (tag === 'input' && !['button', 'checkbox', 'radio', 'submit', \
    'reset', 'image', 'file', 'color', 'range', 'hidden'].includes(e.type)); \
    if (!e.isContentEditable && !(texty && !e.disabled && !e.readOnly)) \
    return {notEditable: '<' + tag + (tag === 'input' ? ' type=' + e.type : '') + \
    (e.disabled ? ' disabled' : '') + (e.readOnly ? ' readonly' : '') + '>'};";

/// `type`: focuses the element, clears its `value`, then per character keyDown, char (with
/// the text) and keyUp.
///
/// # Errors
///
/// [`CdpError::NotFound`], [`CdpError::NotEditable`] (nothing typed) and the session's errors.
pub async fn type_text(s: &mut Session, selector: &str, text: &str) -> Result<ElementAction, CdpError> {
    let body = format!("{EDITABLE} e.focus(); if ('value' in e) e.value = ''; {RECT}");
    let v = find(s, selector, &body).await?.ok_or_else(|| not_found(selector))?;
    if let Some(tag) = v.get("notEditable").and_then(Value::as_str) {
        return Err(CdpError::NotEditable { selector: selector.to_owned(), element: tag.to_owned() });
    }
    let mut typed = 0;
    for c in text.chars() {
        let k = if c == '\n' {
            keys::named("enter").unwrap_or_else(|| keys::of_char(c))
        } else {
            keys::of_char(c)
        };
        key_event(s, "keyDown", &k, 0, false).await?;
        key_event(s, "char", &k, 0, true).await?;
        key_event(s, "keyUp", &k, 0, false).await?;
        typed += 1;
    }
    Ok(ElementAction {
        action: "typed".into(),
        selector: selector.into(),
        rect: rect_of(&v),
        typed: Some(typed),
        ..ElementAction::default()
    })
}

/// `coords`: the element's rect in the viewport, the viewport's size and the element's
/// top-left on the desktop (window position plus the toolbar height).
///
/// # Errors
///
/// [`CdpError::NotFound`] and the session's errors.
pub async fn coords(s: &mut Session, selector: &str) -> Result<ElementAction, CdpError> {
    let body = "const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height, \
                iw: innerWidth, ih: innerHeight, sx: screenX, sy: screenY + (outerHeight - innerHeight)};";
    let v = find(s, selector, body).await?.ok_or_else(|| not_found(selector))?;
    let n = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or_default();
    let rect = rect_of(&v);
    Ok(ElementAction {
        action: "located".into(),
        selector: selector.into(),
        rect,
        viewport: Some((n("iw"), n("ih"))),
        desktop: Some((n("sx") + rect.x, n("sy") + rect.y)),
        ..ElementAction::default()
    })
}

/// Checks the tab is a Selkies SPA and reads its state; `focus` focuses `#overlayInput` first.
async fn spa(s: &mut Session, focus: bool) -> Result<SpaStatus, CdpError> {
    let focus = if focus { "if (i) i.focus();" } else { "" };
    let expr = format!(
        "(() => {{ const c = document.querySelector('#videoCanvas'); if (!c) return null; \
         const i = document.querySelector('#overlayInput'); {focus} \
         return {{w: c.width, h: c.height, input: !!i, focused: !!i && document.activeElement === i, \
         secure: isSecureContext, decoder: typeof VideoDecoder !== 'undefined'}}; }})()"
    );
    let v = s.value(&expr).await?;
    if v.is_null() {
        return Err(CdpError::NotSpa(s.tab.id.clone()));
    }
    let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
    let n = |k: &str| v.get(k).and_then(Value::as_f64).unwrap_or_default();
    Ok(SpaStatus {
        canvas_width: n("w"),
        canvas_height: n("h"),
        scale: 0.0,
        input: flag("input"),
        input_focused: flag("focused"),
        secure: flag("secure"),
        decoder: flag("decoder"),
    })
}

/// `spa.status`.
///
/// # Errors
///
/// [`CdpError::NotSpa`] and the session's errors.
pub async fn spa_status(s: &mut Session) -> Result<SpaStatus, CdpError> {
    spa(s, false).await
}

/// `spa.click` (`button: Some`) and `spa.mouse` (`None`): canvas coordinates divided by the
/// scale, after focusing the overlay input; mouseMoved, then for a click mousePressed and
/// mouseReleased.
///
/// # Errors
///
/// [`CdpError::NotSpa`] and the session's errors.
pub async fn spa_pointer(
    s: &mut Session,
    x: i64,
    y: i64,
    button: Option<MouseButton>,
    scale: Option<(f64, f64)>,
) -> Result<SpaInput, CdpError> {
    spa(s, true).await?;
    let (sx, sy) = scale.unwrap_or((1.0, 1.0));
    let (px, py) = (x as f64 / sx, y as f64 / sy);
    mouse(s, "mouseMoved", px, py, MouseButton::Left).await?;
    let Some(button) = button else {
        return Ok(SpaInput { action: "mouse".into(), detail: format!("moved to ({px}, {py})"), events: 1 });
    };
    mouse(s, "mousePressed", px, py, button).await?;
    mouse(s, "mouseReleased", px, py, button).await?;
    Ok(SpaInput { action: "click".into(), detail: format!("{} at ({px}, {py})", button.as_str()), events: 3 })
}

/// `spa.type`: per character keyDown (key, code, text, virtual key code) and keyUp, no `char`
/// event (the SPA forwards keydown).
///
/// # Errors
///
/// [`CdpError::NotSpa`] and the session's errors.
pub async fn spa_type(s: &mut Session, text: &str) -> Result<SpaInput, CdpError> {
    spa(s, true).await?;
    let mut n = 0;
    for c in text.chars() {
        let k = keys::of_char(c);
        key_event(s, "keyDown", &k, 0, true).await?;
        key_event(s, "keyUp", &k, 0, false).await?;
        n += 1;
    }
    Ok(SpaInput { action: "type".into(), detail: format!("{n} characters"), events: n * 2 })
}

/// `spa.key`: a named key (any case, [`keys::named`]), keyDown and keyUp.
///
/// # Errors
///
/// [`CdpError::Usage`] for a name outside the table (the message lists it), [`CdpError::NotSpa`].
pub async fn spa_key(s: &mut Session, name: &str) -> Result<SpaInput, CdpError> {
    let k = keys::named(name).ok_or_else(|| {
        CdpError::Usage(format!(
            "key-name {name:?} is not in the key table (allowed: {})",
            keys::named_list()
        ))
    })?;
    spa(s, true).await?;
    key_event(s, "keyDown", &k, 0, true).await?;
    key_event(s, "keyUp", &k, 0, false).await?;
    Ok(SpaInput { action: "key".into(), detail: k.key, events: 2 })
}

/// `spa.key-combo`: modifiers down (each adding its bit), the key pressed with them, then the
/// modifiers up in reverse.
///
/// # Errors
///
/// [`CdpError::Usage`] for a combo [`keys::combo`] refuses, [`CdpError::NotSpa`].
pub async fn spa_combo(s: &mut Session, combo: &str) -> Result<SpaInput, CdpError> {
    let (mods, k) = keys::combo(combo).map_err(CdpError::Usage)?;
    spa(s, true).await?;
    let mut bits = 0;
    let mut events = 0;
    for (key, code, vk, bit) in &mods {
        bits |= bit;
        let m = Key { key: (*key).into(), code: (*code).into(), vk: *vk, text: String::new() };
        key_event(s, "keyDown", &m, bits, false).await?;
        events += 1;
    }
    key_event(s, "keyDown", &k, bits, false).await?;
    key_event(s, "keyUp", &k, bits, false).await?;
    events += 2;
    for (key, code, vk, bit) in mods.iter().rev() {
        bits &= !bit;
        let m = Key { key: (*key).into(), code: (*code).into(), vk: *vk, text: String::new() };
        key_event(s, "keyUp", &m, bits, false).await?;
        events += 1;
    }
    Ok(SpaInput { action: "key-combo".into(), detail: combo.to_lowercase(), events })
}
