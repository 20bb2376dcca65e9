//! The pointer: a virtual pointer device for the length of the action ([`VirtualPointer`]),
//! as `wlrctl pointer` (the reference's tool, not in Debian bookworm) makes one, so the
//! events reach the windows and not only sway. Every point is checked against the outputs
//! (sway's `GET_OUTPUTS`) first; a press is always followed by its release, also when a
//! later step fails.
//!
//! Coordinates may be given relative to something else (REFERENCE.md §15):
//! `--from-sway TARGET` adds the window's content origin from sway's tree; `--from-x11 CLASS`
//! adds an XWayland window's content origin and scales by the content size over the X11
//! window's own size (`xdotool getwindowgeometry`, for a client that scales itself);
//! `--from-cdp TAB` adds a browser window's `screenX`, `screenY` and its chrome height
//! (`outerHeight - innerHeight`), read over CDP.

use std::time::Duration;

use serde_json::Value;

use super::WlError;
use super::ipc::Sway;
use super::tree::{self, Window};
use super::vpointer::{self, VirtualPointer};

/// A mouse button.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Button {
    /// button1.
    Left,
    /// button2.
    Middle,
    /// button3.
    Right,
}

impl Button {
    /// Its Linux button code.
    pub fn code(self) -> u32 {
        match self {
            Button::Left => vpointer::BTN_LEFT,
            Button::Middle => vpointer::BTN_MIDDLE,
            Button::Right => vpointer::BTN_RIGHT,
        }
    }

    /// `left`, `middle`, `right`.
    pub fn word(self) -> &'static str {
        match self {
            Button::Left => "left",
            Button::Middle => "middle",
            Button::Right => "right",
        }
    }

    /// The button `word` names.
    ///
    /// # Errors
    ///
    /// A message listing the buttons.
    pub fn parse(word: &str) -> Result<Button, String> {
        match word {
            "left" => Ok(Button::Left),
            "middle" => Ok(Button::Middle),
            "right" => Ok(Button::Right),
            other => Err(format!("button: {other:?} is not a button (allowed: left, middle, right)")),
        }
    }
}

/// A scroll direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Direction {
    /// button4.
    Up,
    /// button5.
    Down,
    /// button6.
    Left,
    /// button7.
    Right,
}

impl Direction {
    /// `up`, `down`, `left`, `right`.
    pub fn word(self) -> &'static str {
        match self {
            Direction::Up => "up",
            Direction::Down => "down",
            Direction::Left => "left",
            Direction::Right => "right",
        }
    }
}

/// What given coordinates are relative to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The layout (the desktop).
    Desktop,
    /// A window's content, by sway target.
    Sway(String),
    /// An XWayland window's content, by X11 class (or instance), scaled to its X11 size.
    X11(String),
    /// A browser tab's viewport (empty tab: the first page), over CDP at `cdp_url` for `.`.
    Cdp {
        /// The tab id.
        tab: String,
        /// The DevTools endpoint when the target is `.` (`None`: [`crate::cdp::DEFAULT_URL`]);
        /// refused for a box, whose browser is at its published port.
        cdp_url: Option<String>,
    },
}

/// An output's rectangle in the layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputRect {
    /// `HEADLESS-1`.
    pub name: String,
    /// Left edge.
    pub x: i64,
    /// Top edge.
    pub y: i64,
    /// Width.
    pub width: i64,
    /// Height.
    pub height: i64,
}

/// The active outputs of a `GET_OUTPUTS` reply.
pub fn output_rects(outputs: &[Value]) -> Vec<OutputRect> {
    outputs
        .iter()
        .filter(|o| o.get("active").and_then(Value::as_bool).unwrap_or(true))
        .map(|o| {
            let int = |p: &str| o.pointer(p).and_then(Value::as_i64).unwrap_or(0);
            OutputRect {
                name: o.get("name").and_then(Value::as_str).unwrap_or_default().to_owned(),
                x: int("/rect/x"),
                y: int("/rect/y"),
                width: int("/rect/width"),
                height: int("/rect/height"),
            }
        })
        .collect()
}

/// `HEADLESS-1 is 1920x1080 at 0,0 (x 0-1919, y 0-1079)`, for every output.
pub fn describe_outputs(outputs: &[OutputRect]) -> String {
    if outputs.is_empty() {
        return "there is no active output".into();
    }
    outputs
        .iter()
        .map(|o| {
            format!(
                "{} is {}x{} at {},{} (x {}-{}, y {}-{})",
                o.name,
                o.width,
                o.height,
                o.x,
                o.y,
                o.x,
                o.x + o.width - 1,
                o.y,
                o.y + o.height - 1
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// `Ok` when (`x`, `y`) is on an output; `what` names the point in the error.
///
/// # Errors
///
/// [`WlError::Usage`] naming the point and each output's size.
pub fn check_point(outputs: &[OutputRect], x: i64, y: i64, what: &str) -> Result<(), WlError> {
    if outputs.iter().any(|o| x >= o.x && x < o.x + o.width && y >= o.y && y < o.y + o.height) {
        return Ok(());
    }
    Err(WlError::Usage(format!("{what} ({x}, {y}) is off the output: {}", describe_outputs(outputs))))
}

/// The time clients get to bind their pointers once the virtual pointer exists.
const SETTLE: Duration = Duration::from_millis(250);

/// A virtual pointer over the layout of `outputs` (see [`VirtualPointer`]).
///
/// # Errors
///
/// [`WlError::Missing`], [`WlError::Ipc`].
pub async fn open(sway: &Sway<'_>, outputs: &[OutputRect]) -> Result<VirtualPointer, WlError> {
    let session = sway.tools.session;
    let (x0, y0) =
        (outputs.iter().map(|o| o.x).min().unwrap_or(0), outputs.iter().map(|o| o.y).min().unwrap_or(0));
    let x1 = outputs.iter().map(|o| o.x + o.width).max().unwrap_or(1);
    let y1 = outputs.iter().map(|o| o.y + o.height).max().unwrap_or(1);
    let layout = (x0, y0, (x1 - x0).max(1) as u32, (y1 - y0).max(1) as u32);
    let inner = session.wayland_socket();
    let shown = format!("{inner} {}", session.at());
    VirtualPointer::create(&session.host_path(&inner), &shown, layout, SETTLE).await
}

/// Presses and releases `button`; the release is sent also when the press failed half-way.
///
/// # Errors
///
/// [`WlError::Ipc`].
pub async fn click(vp: &mut VirtualPointer, button: Button) -> Result<(), WlError> {
    let pressed = vp.button(button.code(), true).await;
    let released = vp.button(button.code(), false).await;
    pressed.and(released)
}

/// `amount` wheel steps in `direction`, 20 ms apart.
///
/// # Errors
///
/// [`WlError::Ipc`].
pub async fn scroll(vp: &mut VirtualPointer, direction: Direction, amount: u32) -> Result<(), WlError> {
    let (vertical, forward) = match direction {
        Direction::Up => (true, false),
        Direction::Down => (true, true),
        Direction::Left => (false, false),
        Direction::Right => (false, true),
    };
    for i in 0..amount {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        vp.wheel(vertical, forward).await?;
    }
    Ok(())
}

/// Presses `button` at `from`, moves to `to` in ten steps over `duration`, and releases it
/// there (released also when a move fails).
///
/// # Errors
///
/// [`WlError::Ipc`].
pub async fn drag(
    vp: &mut VirtualPointer,
    from: (i64, i64),
    to: (i64, i64),
    button: Button,
    duration: Duration,
) -> Result<(), WlError> {
    vp.move_to(from.0, from.1).await?;
    vp.button(button.code(), true).await?;
    let steps = 10i64;
    let mut moved = Ok(());
    for i in 1..=steps {
        tokio::time::sleep(duration / steps as u32).await;
        moved = vp.move_to(from.0 + (to.0 - from.0) * i / steps, from.1 + (to.1 - from.1) * i / steps).await;
        if moved.is_err() {
            break;
        }
    }
    let released = vp.button(button.code(), false).await;
    moved.and(released)
}

impl Sway<'_> {
    /// The active outputs.
    ///
    /// # Errors
    ///
    /// As [`Sway::request`].
    pub async fn output_rects(&self, what: &str) -> Result<Vec<OutputRect>, WlError> {
        Ok(output_rects(&self.outputs(what).await?))
    }

    /// The windows.
    ///
    /// # Errors
    ///
    /// As [`Sway::request`].
    pub async fn windows(&self, what: &str) -> Result<Vec<Window>, WlError> {
        Ok(tree::windows(&self.tree(what).await?))
    }

    /// The window `target` names.
    ///
    /// # Errors
    ///
    /// As [`Sway::request`]; [`WlError::NoWindow`].
    pub async fn window(&self, target: &str, what: &str) -> Result<Window, WlError> {
        let list = self.windows(what).await?;
        tree::find(&list, target, &self.tools.session.at()).cloned()
    }
}
