//! The pointer, through sway's own seat commands (`wlrctl`, the reference's tool, is not in
//! Debian bookworm): `seat - cursor set X Y` moves it to layout coordinates, `seat - cursor
//! press|release buttonN` clicks (button4-7 scroll: sway turns them into wheel steps). Every
//! point is checked against the outputs first; a press is always followed by its release,
//! also when a later step fails.
//!
//! Coordinates may be given relative to something else (REFERENCE.md §15):
//! `--from-sway TARGET` adds the window's content origin from sway's tree; `--from-x11 CLASS`
//! adds an XWayland window's content origin and scales by the content size over the X11
//! window's own size (`xdotool getwindowgeometry`, for a client that scales itself);
//! `--from-cdp TAB` adds a browser window's `screenX`, `screenY` and its chrome height
//! (`outerHeight - innerHeight`), read over CDP.

use std::time::Duration;

use serde_json::Value;

use super::ipc::Sway;
use super::tree::{self, Window};
use super::WlError;

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
    /// sway's name of it.
    pub fn sway(self) -> &'static str {
        match self {
            Button::Left => "button1",
            Button::Middle => "button2",
            Button::Right => "button3",
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
    /// sway's scroll button.
    fn sway(self) -> &'static str {
        match self {
            Direction::Up => "button4",
            Direction::Down => "button5",
            Direction::Left => "button6",
            Direction::Right => "button7",
        }
    }

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
        /// The DevTools endpoint when the target is `.`.
        cdp_url: String,
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
        tree::find(&list, target, &self.tools.session.describe()).cloned()
    }

    async fn seat(&self, command: &str, what: &str) -> Result<(), WlError> {
        self.command(&format!("seat - cursor {command}"), what).await.map(|_| ())
    }

    /// Moves the pointer to (`x`, `y`).
    ///
    /// # Errors
    ///
    /// As [`Sway::command`].
    pub async fn move_to(&self, x: i64, y: i64, what: &str) -> Result<(), WlError> {
        self.seat(&format!("set {x} {y}"), what).await
    }

    /// Presses and releases `button` at the pointer.
    ///
    /// # Errors
    ///
    /// As [`Sway::command`].
    pub async fn click(&self, button: Button, what: &str) -> Result<(), WlError> {
        self.seat(&format!("press {}", button.sway()), what).await?;
        self.seat(&format!("release {}", button.sway()), what).await
    }

    /// `amount` wheel steps in `direction` at the pointer.
    ///
    /// # Errors
    ///
    /// As [`Sway::command`].
    pub async fn scroll(&self, direction: Direction, amount: u32, what: &str) -> Result<(), WlError> {
        for i in 0..amount {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            self.seat(&format!("press {}", direction.sway()), what).await?;
        }
        Ok(())
    }

    /// Presses `button` at (`x1`, `y1`), moves to (`x2`, `y2`) in steps over `duration`, and
    /// releases it there (released also when a move fails).
    ///
    /// # Errors
    ///
    /// As [`Sway::command`].
    pub async fn drag(&self, from: (i64, i64), to: (i64, i64), button: Button, duration: Duration, what: &str) -> Result<(), WlError> {
        self.move_to(from.0, from.1, what).await?;
        self.seat(&format!("press {}", button.sway()), what).await?;
        let steps = 10i64;
        let mut moved = Ok(());
        for i in 1..=steps {
            tokio::time::sleep(duration / steps as u32).await;
            let (x, y) = (from.0 + (to.0 - from.0) * i / steps, from.1 + (to.1 - from.1) * i / steps);
            moved = self.move_to(x, y, what).await;
            if moved.is_err() {
                break;
            }
        }
        let released = self.seat(&format!("release {}", button.sway()), what).await;
        moved.and(released)
    }
}
