//! The typed reports of `check.wl.*`.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use super::tree::Window;
use crate::report::Report;
pub use crate::report::Screenshot;

/// One output, as `status` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct OutputInfo {
    /// `HEADLESS-1`.
    pub name: String,
    /// Width in pixels.
    pub width: i64,
    /// Height in pixels.
    pub height: i64,
    /// Left edge in the layout.
    pub x: i64,
    /// Top edge.
    pub y: i64,
}

/// `status`: the session, its compositor and the tools the leaves use.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WlStatus {
    /// `this machine` or `container charly-web`.
    pub place: String,
    /// The Wayland socket (`XDG_RUNTIME_DIR`/`WAYLAND_DISPLAY`).
    pub wayland_socket: String,
    /// The desktop's user, `uid:gid` (the tools run as it).
    pub user: String,
    /// sway's IPC socket, when the compositor is sway.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sway_socket: Option<String>,
    /// sway's version (`1.7`), when it answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sway_version: Option<String>,
    /// The active outputs.
    pub outputs: Vec<OutputInfo>,
    /// How many windows sway shows; absent when sway did not answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<usize>,
    /// Why the desktop cannot be driven (sway's IPC socket is there but sway did not answer):
    /// the report is then a failure (exit status 1, `isError` over MCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// XWayland's display (`:0`), when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xwayland: Option<String>,
    /// Whether an X11 client could connect to XWayland's display (`xprop -root`); absent when
    /// not tried (no display, no xprop, sway not answering).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xwayland_ok: Option<bool>,
    /// Why X11 clients cannot use XWayland, and how to fix it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xwayland_error: Option<String>,
    /// Whether AT-SPI can be used (python3 with the Atspi typelib).
    pub atspi: bool,
    /// The tools found in the target.
    pub tools: Vec<String>,
    /// The tools not found (what they are for is in each leaf's error).
    pub missing: Vec<String>,
}

impl fmt::Display for WlStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            None => writeln!(f, "WL:         ok ({})", self.place)?,
            Some(problem) => writeln!(f, "WL:         FAILED ({}): {problem}", self.place)?,
        }
        writeln!(f, "Wayland:    {} (user {})", self.wayland_socket, self.user)?;
        match (&self.sway_socket, &self.sway_version) {
            (Some(sock), Some(v)) => writeln!(f, "Sway:       {v} ({sock})")?,
            (Some(sock), None) => writeln!(f, "Sway:       - ({sock} did not answer)")?,
            _ => writeln!(f, "Sway:       - (the compositor is not sway)")?,
        }
        let outputs: Vec<String> = self
            .outputs
            .iter()
            .map(|o| format!("{} {}x{}+{}+{}", o.name, o.width, o.height, o.x, o.y))
            .collect();
        writeln!(f, "Outputs:    {}", if outputs.is_empty() { "-".into() } else { outputs.join(", ") })?;
        match self.windows {
            Some(n) => writeln!(f, "Windows:    {n}")?,
            None => writeln!(f, "Windows:    - (unknown)")?,
        }
        let x11 = match self.xwayland_ok {
            Some(true) => " (X11 clients connect)",
            Some(false) => " (X11 clients are REFUSED: see the warning)",
            None if self.xwayland.is_some() && self.problem.is_none() => " (not tried: no xprop)",
            None => "",
        };
        writeln!(f, "XWayland:   {}{x11}", self.xwayland.as_deref().unwrap_or("-"))?;
        writeln!(f, "AT-SPI:     {}", if self.atspi { "yes" } else { "-" })?;
        writeln!(f, "Tools:      {}", self.tools.join(" "))?;
        if !self.missing.is_empty() {
            writeln!(f, "Missing:    {}", self.missing.join(" "))?;
        }
        Ok(())
    }
}

impl Report for WlStatus {
    fn failure(&self) -> Option<String> {
        self.problem.clone()
    }

    fn warnings(&self) -> Vec<String> {
        self.xwayland_error.iter().cloned().collect()
    }
}

/// What an input or window action did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WlAction {
    /// The leaf (`click`, `type`, `focus`, `exec`, ...).
    pub action: String,
    /// What was done, e.g. `Clicked left at (120, 80)`.
    pub message: String,
    /// Where, in layout pixels, for pointer actions (after any translation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub x: Option<i64>,
    /// Where, Y.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub y: Option<i64>,
    /// The window acted on, for window actions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// `exec` on this machine: the started process's pid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
}

impl fmt::Display for WlAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.message)
    }
}

impl Report for WlAction {}

/// `windows` and `toplevel`: sway's windows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WlWindows {
    /// In tree order.
    pub windows: Vec<Window>,
    /// `toplevel`'s text: `app_id: title` per window, as `wlrctl toplevel list` prints them.
    #[serde(skip)]
    pub brief: bool,
}

impl fmt::Display for WlWindows {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for w in &self.windows {
            if self.brief {
                writeln!(f, "{}: {}", w.name(), w.title)?;
            } else {
                writeln!(f, "{w}")?;
            }
        }
        Ok(())
    }
}

impl Report for WlWindows {}

/// `geometry`: a window's content rectangle in layout pixels.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WlGeometry {
    /// X of the top left.
    pub x: i64,
    /// Y of the top left.
    pub y: i64,
    /// Width.
    pub width: i64,
    /// Height.
    pub height: i64,
    /// The window.
    pub window: Window,
}

impl fmt::Display for WlGeometry {
    /// `{"x":X,"y":Y,"width":W,"height":H}`, as the reference prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{{\"x\":{},\"y\":{},\"width\":{},\"height\":{}}}",
            self.x, self.y, self.width, self.height
        )
    }
}

impl Report for WlGeometry {}

/// Text a tool printed or set: `clipboard get|set|clear`, `xprop`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WlText {
    /// The leaf (`clipboard`, `xprop`).
    pub what: String,
    /// The text (the clipboard as it is, or as set: empty once cleared; xprop's lines).
    pub text: String,
    /// What was done, for `clipboard set|clear` (`Set the clipboard (4 characters)`): the
    /// terminal's line then, instead of the text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl fmt::Display for WlText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(message) = &self.message {
            return writeln!(f, "{message}");
        }
        f.write_str(&self.text)?;
        if !self.text.is_empty() && !self.text.ends_with('\n') && self.what != "clipboard" {
            f.write_str("\n")?;
        }
        Ok(())
    }
}

impl Report for WlText {}

/// JSON from the desktop: sway's tree, workspaces or outputs, AT-SPI nodes.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct WlJson {
    /// `sway.tree`, `sway.workspaces`, `sway.outputs`, `atspi.tree`, `atspi.find`, `atspi.click`.
    pub what: String,
    /// The objects (the tree is one).
    pub items: Vec<Map<String, Value>>,
}

impl fmt::Display for WlJson {
    /// Pretty JSON: the object for the tree, the list otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let value = match (self.what.as_str(), self.items.as_slice()) {
            ("sway.tree", [one]) => Value::Object(one.clone()),
            _ => Value::Array(self.items.iter().cloned().map(Value::Object).collect()),
        };
        writeln!(f, "{}", serde_json::to_string_pretty(&value).map_err(|_| fmt::Error)?)
    }
}

impl Report for WlJson {}

/// A sway command's results (`sway.*` leaves that change something).
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SwayReply {
    /// The command as sent.
    pub command: String,
    /// sway's result per command (`{"success": true}`).
    pub results: Vec<Map<String, Value>>,
}

impl fmt::Display for SwayReply {
    /// `sway: COMMAND: ok`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "sway: {}: ok", self.command)
    }
}

impl Report for SwayReply {}
