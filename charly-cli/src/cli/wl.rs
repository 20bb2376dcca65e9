//! `charly check wl ...`: a Wayland desktop, this machine's or a box's ([`crate::wl`]).

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use super::Timeout;
use crate::wl::{
    AtspiAction, Button, ClipAction, Direction, Screenshot, SwayReply, WlAction, WlGeometry, WlJson,
};
use crate::wl::{OverlayKind, WlOverlayStatus, WlOverlays, WlStatus, WlText, WlWindows};

/// Which desktop.
#[derive(Args, McpTool, Debug, Clone)]
pub struct WlTarget {
    /// `.` for this machine's Wayland session (XDG_RUNTIME_DIR, WAYLAND_DISPLAY, SWAYSOCK), or
    /// a box: the session in its running container
    pub target: String,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(short, long)]
    pub instance: Option<String>,
    /// Timeout of each tool run and sway request, e.g. 30s, 500ms
    #[arg(long, default_value = "30s")]
    pub timeout: Timeout,
}

/// What a point's coordinates are relative to (the desktop by default).
#[derive(Args, McpTool, Debug, Clone, Default)]
pub struct OriginArgs {
    /// X and Y are relative to this window's content as sway places it (an app_id, X11 class
    /// or instance, title, or #<con id>)
    #[arg(long, value_name = "WINDOW", conflicts_with_all = ["from_x11", "from_cdp"])]
    pub from_sway: Option<String>,
    /// X and Y are in this XWayland window's own pixels (X11 class or instance): its content
    /// origin plus X and Y scaled by its sway size over its X11 size
    #[arg(long, value_name = "CLASS", conflicts_with = "from_cdp")]
    pub from_x11: Option<String>,
    /// X and Y are in this browser tab's viewport (a tab id, or `first`): the window's
    /// screenX, and screenY plus its chrome (outerHeight - innerHeight), read over CDP (a
    /// box's published 9222, or --cdp-url for `.`)
    #[arg(long, value_name = "TAB")]
    pub from_cdp: Option<String>,
    /// The DevTools HTTP endpoint for --from-cdp when the target is `.` (default
    /// http://127.0.0.1:9222); refused with a box, whose browser is dialled at its published
    /// port 9222
    #[arg(long, value_name = "URL")]
    pub cdp_url: Option<String>,
}

/// A desktop and a point on it.
#[derive(Args, McpTool, Debug, Clone)]
pub struct WlPoint {
    /// The desktop.
    #[command(flatten)]
    pub on: WlTarget,
    /// X in layout pixels (or relative to --from-*)
    #[arg(allow_negative_numbers = true)]
    pub x: i32,
    /// Y in layout pixels (or relative to --from-*)
    #[arg(allow_negative_numbers = true)]
    pub y: i32,
    /// What X and Y are relative to.
    #[command(flatten)]
    pub origin: OriginArgs,
}

/// A desktop and one of its windows.
#[derive(Args, McpTool, Debug, Clone)]
pub struct WindowArgs {
    /// The desktop.
    #[command(flatten)]
    pub on: WlTarget,
    /// The window: an app_id, an X11 class or instance, a title (exact), or #<con id>; of
    /// several, the focused, then the fullscreen, then the largest
    pub window: String,
}

/// `charly check wl ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum WlCmd {
    /// Show the session: its Wayland and sway sockets, user, sway version, outputs, windows,
    /// XWayland display, AT-SPI and the tools found in the target
    #[mcp_tool(output = WlStatus)]
    Status(WlTarget),
    /// Take a PNG screenshot (grim) of the desktop, an output or a region; written to FILE
    /// when given (over MCP a path inside the project), and returned as `image` content over MCP
    #[mcp_tool(output = Screenshot, destructive = "writes the PNG to the file given")]
    Screenshot {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// Where to write the PNG (mode 0644)
        file: Option<PathBuf>,
        /// Only this output (e.g. HEADLESS-1)
        #[arg(long)]
        output: Option<String>,
        /// Only this region, "X,Y WxH" in layout pixels
        #[arg(long)]
        region: Option<String>,
    },
    /// Click at a point: the pointer moved there, a button pressed and released (through a
    /// virtual pointer, so the window under it gets the click)
    #[mcp_tool(output = WlAction, destructive = "clicks on the desktop, which can do anything a click can")]
    Click {
        /// Where.
        #[command(flatten)]
        point: WlPoint,
        /// The mouse button
        #[arg(long, value_enum, default_value = "left")]
        button: Button,
    },
    /// Double-click at a point: two clicks --delay apart
    #[mcp_tool(output = WlAction, destructive = "clicks on the desktop, which can do anything a click can")]
    DoubleClick {
        /// Where.
        #[command(flatten)]
        point: WlPoint,
        /// The mouse button
        #[arg(long, value_enum, default_value = "left")]
        button: Button,
        /// Milliseconds between the clicks
        #[arg(long, default_value_t = 50)]
        delay: u32,
    },
    /// Move the pointer to a point
    #[mcp_tool(output = WlAction, destructive = "moves the desktop's pointer")]
    Mouse(WlPoint),
    /// Scroll at a point: the pointer moved there, then --amount wheel steps
    #[mcp_tool(output = WlAction, destructive = "scrolls whatever is under the pointer")]
    Scroll {
        /// Where.
        #[command(flatten)]
        point: WlPoint,
        /// up, down, left or right
        #[arg(value_enum)]
        direction: Direction,
        /// Wheel steps
        #[arg(long, default_value_t = 3)]
        amount: u32,
    },
    /// Drag from one point to another: pressed at the first, moved in steps over --duration,
    /// released at the second
    #[mcp_tool(output = WlAction, destructive = "drags on the desktop: selects, moves or drops things")]
    Drag {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// Start X
        #[arg(allow_negative_numbers = true)]
        x1: i32,
        /// Start Y
        #[arg(allow_negative_numbers = true)]
        y1: i32,
        /// End X
        #[arg(allow_negative_numbers = true)]
        x2: i32,
        /// End Y
        #[arg(allow_negative_numbers = true)]
        y2: i32,
        /// The mouse button
        #[arg(long, value_enum, default_value = "left")]
        button: Button,
        /// Milliseconds the move takes
        #[arg(long, default_value_t = 200)]
        duration: u32,
    },
    /// Type text into the focused window (wtype): every character as it is, quotes, $(),
    /// backticks and newlines included
    #[mcp_tool(output = WlAction, destructive = "types on the desktop, into whatever has focus")]
    Type {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The text
        text: String,
    },
    /// Press and release one key by XKB name (Return, Escape, Tab, BackSpace, Delete, Insert,
    /// Home, End, Page_Up, Page_Down, space, arrows, F1-F12, Shift/Control/Alt/Super/Meta _L/_R,
    /// Caps_Lock, Menu, Print) or a single character
    #[mcp_tool(output = WlAction, destructive = "presses a key on the desktop")]
    Key {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The key name
        key_name: String,
    },
    /// Press a key combination, e.g. ctrl+shift+t: modifiers down, the key, modifiers up
    #[mcp_tool(output = WlAction, destructive = "presses keys on the desktop")]
    KeyCombo {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// `mod+...+key` (modifiers ctrl, alt, shift, super/win/logo, meta; the key last)
        combo: String,
    },
    /// List the windows: `#id<TAB>app_id or class<TAB>"title"<TAB>WxH+X+Y<TAB>[flags]`
    #[mcp_tool(output = WlWindows)]
    Windows(WlTarget),
    /// List the toplevel windows as `app_id: title`, as `wlrctl toplevel list` does
    #[mcp_tool(output = WlWindows)]
    Toplevel(WlTarget),
    /// Give a window the focus
    #[mcp_tool(output = WlAction, destructive = "changes which window has the focus")]
    Focus(WindowArgs),
    /// Close a window (sway asks the client to close)
    #[mcp_tool(output = WlAction, destructive = "closes a window")]
    Close(WindowArgs),
    /// Toggle a window's fullscreen
    #[mcp_tool(output = WlAction, destructive = "makes a window fullscreen or not")]
    Fullscreen(WindowArgs),
    /// Minimize a window into sway's scratchpad, or restore it from there
    #[mcp_tool(output = WlAction, destructive = "hides or shows a window")]
    Minimize(WindowArgs),
    /// Print a window's content rectangle as JSON {"x","y","width","height"}
    #[mcp_tool(output = WlGeometry)]
    Geometry(WindowArgs),
    /// Print an XWayland window's X11 properties (xprop) and geometry (xdotool); the focused
    /// window without one
    #[mcp_tool(output = WlText)]
    Xprop {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The X11 window (class or instance, title, #<con id>)
        window: Option<String>,
    },
    /// The accessibility tree (AT-SPI through python3-gi): tree prints every node, find those
    /// whose name or role contains the query (`name`, `role` or `name:role`), click performs
    /// the first match's click/press/activate action
    #[mcp_tool(output = WlJson, destructive = "click performs an accessible action in an application")]
    Atspi {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// tree, find or click
        #[arg(value_enum)]
        action: AtspiAction,
        /// What to look for (find, click)
        query: Option<String>,
    },
    /// Get, set or clear the clipboard (wl-paste, wl-copy); --primary for the primary selection
    #[mcp_tool(output = WlText, destructive = "set and clear replace the clipboard")]
    Clipboard {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// get, set or clear
        #[arg(value_enum)]
        action: ClipAction,
        /// The text (set)
        text: Option<String>,
        /// The primary selection instead of the clipboard
        #[arg(long)]
        primary: bool,
    },
    /// Start a program on the desktop, detached, as the desktop's user: the program and its
    /// arguments, each passed as it is (no shell)
    #[mcp_tool(output = WlAction, destructive = "starts a program on the desktop")]
    Exec {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The program and its arguments, after `--` when one starts with `-` (`-- foot -a
        /// term`); a plain list, so a trailing --json stays charly's
        #[arg(required = true)]
        command: Vec<String>,
    },
    /// Set an output's mode: sway's `output O mode --custom WxH` (wlr-randr without sway)
    #[mcp_tool(output = WlAction, destructive = "changes the output's resolution")]
    Resolution {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// WIDTHxHEIGHT, e.g. 1920x1080
        size: String,
        /// The output (default: the only one)
        #[arg(short, long)]
        output: Option<String>,
    },
    /// sway itself, over its IPC socket
    #[command(subcommand)]
    Sway(SwayCmd),
    /// On-screen overlays drawn by charly-overlay (a wlr-layer-shell client) inside the target
    #[command(subcommand)]
    Overlay(OverlayCmd),
}

/// Where `overlay show` puts an overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[allow(missing_docs)]
pub enum OverlayPosition {
    Center,
    Top,
    Bottom,
    Left,
    Right,
    TopLeft,
    TopRight,
    BottomLeft,
    BottomRight,
}

/// `charly check wl overlay ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum OverlayCmd {
    /// Show an overlay (text, lower-third, watermark, countdown, highlight, fade) on top of
    /// everything, click-through; starts the charly-overlay daemon in the target when none
    /// runs. A name shown already is replaced; countdown and fade end by themselves, the others
    /// after --duration or when hidden
    #[mcp_tool(output = WlOverlays, destructive = "draws over the desktop (and starts the overlay daemon)")]
    Show {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The kind of overlay
        #[arg(long, value_enum)]
        r#type: OverlayKind,
        /// The text (text, lower-third, watermark); a newline breaks the line
        #[arg(long)]
        text: Option<String>,
        /// The second line of a lower-third
        #[arg(long)]
        subtitle: Option<String>,
        /// Its name, to hide or replace it (default <type>-<n>)
        #[arg(long)]
        name: Option<String>,
        /// Where on the output (default: text and countdown center, lower-third bottom-left,
        /// watermark bottom-right)
        #[arg(long, value_enum)]
        position: Option<OverlayPosition>,
        /// Background colour: #RGB, #RRGGBB, #RRGGBBAA or a name (white, black, red, ...)
        #[arg(long)]
        bg: Option<String>,
        /// Text colour (highlight: the frame's), as --bg
        #[arg(long)]
        color: Option<String>,
        /// Text size in pixels (default 48; watermark 28, countdown 200)
        #[arg(long)]
        font_size: Option<f64>,
        /// Opacity of the whole overlay, 0 to 1 (default 1; watermark 0.5)
        #[arg(long)]
        opacity: Option<f64>,
        /// Seconds until it goes by itself (fade: its length, default 2); without it the
        /// overlay stays until hidden
        #[arg(long)]
        duration: Option<f64>,
        /// Where a countdown starts (default 3)
        #[arg(long)]
        seconds: Option<u32>,
        /// The highlighted rectangle, X,Y,W,H in output pixels
        #[arg(long)]
        region: Option<String>,
    },
    /// Hide the named overlay, or all of them
    #[mcp_tool(output = WlOverlays, destructive = "removes overlays from the desktop")]
    Hide {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The overlay's name
        #[arg(long, required_unless_present = "all", conflicts_with = "all")]
        name: Option<String>,
        /// Every overlay
        #[arg(long)]
        all: bool,
    },
    /// List the overlays shown: name, type, WxH+X+Y on the output, text, time left
    #[mcp_tool(output = WlOverlays)]
    List(WlTarget),
    /// Whether the charly-overlay daemon runs in the target: its pid, output, font and overlays
    #[mcp_tool(output = WlOverlayStatus)]
    Status(WlTarget),
}

/// `charly check wl sway ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum SwayCmd {
    /// Run sway commands (sway's command language, e.g. `[app_id="foot"] focus`); sway's error
    /// when it refuses one
    #[mcp_tool(output = SwayReply, destructive = "runs any sway command, exec included")]
    Msg {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The commands
        #[arg(allow_hyphen_values = true)]
        command: String,
    },
    /// Print sway's tree (GET_TREE) as JSON
    #[mcp_tool(output = WlJson)]
    Tree(WlTarget),
    /// Print sway's workspaces (GET_WORKSPACES) as JSON
    #[mcp_tool(output = WlJson)]
    Workspaces(WlTarget),
    /// Print sway's outputs (GET_OUTPUTS) as JSON
    #[mcp_tool(output = WlJson)]
    Outputs(WlTarget),
    /// Focus by criteria (`[app_id="foot"]` or app_id=foot) or in a direction (left, right,
    /// up, down, parent, child, prev, next, floating, tiling, mode_toggle)
    #[mcp_tool(output = SwayReply, destructive = "changes which window has the focus")]
    Focus {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// Criteria or a direction
        criteria: String,
    },
    /// Move the focused window: workspace N, left|right|up|down [PX], scratchpad, position X Y,
    /// position center, output NAME
    #[mcp_tool(output = SwayReply, destructive = "moves a window")]
    Move {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// Where to (a negative number is a value; a trailing --json stays charly's)
        #[arg(required = true, allow_negative_numbers = true)]
        place: Vec<String>,
    },
    /// Resize the focused window: grow or (with a leading -) shrink a dimension
    #[mcp_tool(output = SwayReply, destructive = "resizes a window")]
    Resize {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// width or height
        dimension: String,
        /// 10, 10px, -10px (shrink) or 5ppt
        #[arg(allow_hyphen_values = true)]
        amount: String,
    },
    /// Set the focused container's layout: tabbed, stacking, splitv, splith, toggle, toggle
    /// split, default (back to the split layout it had before tabbed or stacking: sway refuses
    /// it for a container that never had one)
    #[mcp_tool(output = SwayReply, destructive = "changes a container's layout")]
    Layout {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The layout
        mode: String,
    },
    /// Switch to workspace number N
    #[mcp_tool(output = SwayReply, destructive = "switches the workspace")]
    Workspace {
        /// The desktop.
        #[command(flatten)]
        on: WlTarget,
        /// The workspace number
        number: u32,
    },
    /// Close the focused window (sway's kill)
    #[mcp_tool(output = SwayReply, destructive = "closes the focused window")]
    Kill(WlTarget),
    /// Toggle the focused window's floating
    #[mcp_tool(output = SwayReply, destructive = "floats or tiles the focused window")]
    Floating(WlTarget),
    /// Reload sway's configuration
    #[mcp_tool(output = SwayReply, destructive = "reloads sway's configuration")]
    Reload(WlTarget),
}
