//! `charly check cdp ...`: a browser over the Chrome DevTools Protocol ([`crate::cdp`]).

use std::path::PathBuf;

use charly::McpTool;
use clap::{Args, Subcommand};

use super::Timeout;
use crate::cdp::{CdpStatus, ElementAction, Evaluated, Json, MouseButton, PageInfo, Screenshot};
use crate::cdp::{SpaInput, SpaStatus, TabChanged, TabList};

/// Where the browser is.
#[derive(Args, McpTool, Debug, Clone)]
pub struct CdpTarget {
    /// Box whose running container has Chromium on port 9222 (dialled at its published host
    /// port), or `.` for this machine (at --cdp-url)
    pub target: String,
    /// Box instance: the container is charly-<box>-<instance>
    #[arg(short, long)]
    pub instance: Option<String>,
    /// The DevTools HTTP endpoint when the target is `.` (default http://127.0.0.1:9222);
    /// refused with a box, whose browser is dialled at its published port 9222
    #[arg(long, value_name = "URL")]
    pub cdp_url: Option<String>,
    /// Timeout of each CDP call (and how long `wait` waits), e.g. 30s, 500ms
    #[arg(long, default_value = "30s")]
    pub timeout: Timeout,
}

/// A browser and one of its tabs.
#[derive(Args, McpTool, Debug, Clone)]
pub struct TabArgs {
    /// The browser.
    #[command(flatten)]
    pub on: CdpTarget,
    /// Tab id (the first column of check.cdp.list)
    pub tab: String,
}

/// A tab and a CSS selector.
#[derive(Args, McpTool, Debug, Clone)]
pub struct SelectorArgs {
    /// The tab.
    #[command(flatten)]
    pub tab: TabArgs,
    /// CSS selector; the first visible match counts, shadow roots included
    pub selector: String,
}

/// Canvas coordinates of a Selkies SPA.
#[derive(Args, McpTool, Debug, Clone)]
pub struct SpaPoint {
    /// The tab.
    #[command(flatten)]
    pub tab: TabArgs,
    /// X in canvas pixels
    pub x: u32,
    /// Y in canvas pixels
    pub y: u32,
    /// Canvas scale `sx,sy`: the events go to (x/sx, y/sy)
    #[arg(long)]
    pub scale: Option<String>,
}

/// `charly check cdp ...`
#[derive(Subcommand, McpTool, Debug)]
pub enum CdpCmd {
    /// Probe the browser's DevTools endpoint (GET /json, 2 s): `CDP: ok (port P)` and how many
    /// tabs, or `unreachable` and why (exit 1)
    #[mcp_tool(output = CdpStatus, open_world)]
    Status(CdpTarget),
    /// List the browser's tabs: `id<TAB>title<TAB>url`
    #[mcp_tool(output = TabList, open_world)]
    List(CdpTarget),
    /// Open a new tab showing a URL
    #[mcp_tool(output = TabChanged, destructive = "opens a browser tab, which loads the URL", open_world)]
    Open {
        /// The browser.
        #[command(flatten)]
        on: CdpTarget,
        /// The URL to load
        url: String,
    },
    /// Close a tab
    #[mcp_tool(output = TabChanged, destructive = "closes a browser tab", open_world)]
    Close(TabArgs),
    /// Print a tab's title and URL
    #[mcp_tool(output = PageInfo, open_world)]
    Url(TabArgs),
    /// Print a tab's text (document.body.innerText)
    #[mcp_tool(output = Evaluated, open_world)]
    Text(TabArgs),
    /// Print a tab's HTML (document.documentElement.outerHTML)
    #[mcp_tool(output = Evaluated, open_world)]
    Html(TabArgs),
    /// Evaluate JavaScript in a tab (Runtime.evaluate, promises awaited): strings print raw,
    /// other values as JSON; a thrown exception is an error with its text
    #[mcp_tool(output = Evaluated, destructive = "runs JavaScript in the page, which can do anything the page can", open_world)]
    Eval {
        /// The tab.
        #[command(flatten)]
        tab: TabArgs,
        /// The JavaScript expression
        expression: String,
    },
    /// Wait until a selector matches a visible element (polled every 500 ms up to --timeout)
    #[mcp_tool(output = ElementAction, open_world)]
    Wait(SelectorArgs),
    /// Click an element: scrolled into view, the left button pressed and released at its
    /// centre; prints the page's title and URL after
    #[mcp_tool(output = ElementAction, destructive = "clicks in the page, which can submit forms or navigate", open_world)]
    Click(SelectorArgs),
    /// Type text into an element: focused, its value cleared, then a key event per character
    #[mcp_tool(output = ElementAction, destructive = "types into the page, replacing the field's value", open_world)]
    Type {
        /// The element.
        #[command(flatten)]
        element: SelectorArgs,
        /// The text
        text: String,
    },
    /// Print an element's box in the viewport, the viewport size and its desktop position
    #[mcp_tool(output = ElementAction, open_world)]
    Coords(SelectorArgs),
    /// Print the accessibility tree (Accessibility.getFullAXTree) as JSON, only the nodes
    /// whose JSON contains the query (case-insensitive) when one is given
    #[mcp_tool(output = Json, open_world)]
    Axtree {
        /// The tab.
        #[command(flatten)]
        tab: TabArgs,
        /// Keep only nodes whose JSON contains this text
        query: Option<String>,
    },
    /// Send any CDP method to a tab and print its result as JSON
    #[mcp_tool(output = Json, destructive = "sends any CDP method, which can change or close the page", open_world)]
    Raw {
        /// The tab.
        #[command(flatten)]
        tab: TabArgs,
        /// The method, e.g. Page.reload, DOM.getDocument
        method: String,
        /// Its params, a JSON object
        params: Option<String>,
    },
    /// Take a PNG screenshot of a tab's viewport; written to FILE when given (over MCP a
    /// path inside the project), and returned as `image` content over MCP
    #[mcp_tool(output = Screenshot, destructive = "writes the PNG to the file given", open_world)]
    Screenshot {
        /// The tab.
        #[command(flatten)]
        tab: TabArgs,
        /// Where to write the PNG (mode 0644)
        file: Option<PathBuf>,
    },
    /// A Selkies web desktop in a tab (its #videoCanvas and #overlayInput)
    #[command(subcommand)]
    Spa(SpaCmd),
}

/// `charly check cdp spa ...`: a Selkies web desktop's canvas, driven with input events.
#[derive(Subcommand, McpTool, Debug)]
pub enum SpaCmd {
    /// Print the canvas size, the overlay input, secure context and VideoDecoder support;
    /// an error when the tab has no #videoCanvas
    #[mcp_tool(output = SpaStatus, open_world)]
    Status(TabArgs),
    /// Click at canvas coordinates (the overlay input focused first): mouse moved, pressed,
    /// released
    #[mcp_tool(output = SpaInput, destructive = "sends a click to the remote desktop", open_world)]
    Click {
        /// Where.
        #[command(flatten)]
        point: SpaPoint,
        /// The button
        #[arg(long, value_enum, default_value = "left")]
        button: MouseButton,
    },
    /// Move the mouse to canvas coordinates
    #[mcp_tool(output = SpaInput, destructive = "moves the remote desktop's pointer", open_world)]
    Mouse(SpaPoint),
    /// Type text: a keyDown (key, code, text) and keyUp per character
    #[mcp_tool(output = SpaInput, destructive = "types on the remote desktop", open_world)]
    Type {
        /// The tab.
        #[command(flatten)]
        tab: TabArgs,
        /// The text
        text: String,
    },
    /// Press a named key (return/enter, escape, tab, backspace, delete, home, end, page_up,
    /// page_down, up, down, left, right, insert, space, f1-f12)
    #[mcp_tool(output = SpaInput, destructive = "presses a key on the remote desktop", open_world)]
    Key {
        /// The tab.
        #[command(flatten)]
        tab: TabArgs,
        /// The key name, in any case (also DOM and X names: PageDown, ArrowUp, Page_Down, BackSpace)
        key_name: String,
    },
    /// Press a key combination, e.g. ctrl+shift+t: modifiers down, the key, modifiers up
    #[mcp_tool(output = SpaInput, destructive = "presses keys on the remote desktop", open_world)]
    KeyCombo {
        /// The tab.
        #[command(flatten)]
        tab: TabArgs,
        /// The combination, `mod+...+key` (modifiers ctrl, alt, shift, super/meta)
        combo: String,
    },
}
