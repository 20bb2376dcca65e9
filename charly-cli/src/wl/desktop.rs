//! The leaves that drive tools or combine several requests: `status`, `screenshot`, pointer
//! placement with its coordinate translations, `xprop`, `clipboard`, `resolution`.

use std::path::Path;

use super::ipc::{GET_VERSION, Sway};
use super::pointer::{self, Origin};
use super::report::{OutputInfo, Screenshot, WlAction, WlStatus, WlText};
use super::tool::Tools;
use super::tree::Window;
use super::{ClipAction, Outcome, Point, WlError};

/// The tools `status` looks for, in the target.
const TOOLS: [&str; 9] =
    ["wtype", "grim", "wl-copy", "wl-paste", "wlr-randr", "swaymsg", "xdotool", "xprop", "python3"];

/// Where the Atspi typelib may be (python3-gi's `gi.require_version('Atspi', '2.0')` loads it).
const ATSPI_TYPELIBS: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/girepository-1.0/Atspi-2.0.typelib",
    "/usr/lib/aarch64-linux-gnu/girepository-1.0/Atspi-2.0.typelib",
    "/usr/lib64/girepository-1.0/Atspi-2.0.typelib",
];

/// `status`: the session once it is found. When sway's socket is there but sway does not
/// answer (hung, stopped, timed out), the report records the failure (`problem`, exit 1) and
/// leaves the outputs and the window count unknown rather than showing zeros.
pub(super) async fn status(sway: &Sway<'_>) -> WlStatus {
    let (session, tools) = (sway.tools.session, &sway.tools);
    let what = "check.wl.status";
    let mut problem = None;
    let version = match session.sway_socket {
        Some(_) => match sway.request(GET_VERSION, "", what).await {
            Ok(v) => v.get("human_readable").and_then(|h| h.as_str()).map(str::to_owned),
            Err(e) => {
                problem = Some(format!("sway does not answer: {e}"));
                None
            }
        },
        None => None,
    };
    let (mut outputs, mut windows) = (Vec::new(), None);
    if version.is_some() {
        match sway.output_rects(what).await {
            Ok(o) => outputs = o,
            Err(e) => problem = Some(format!("sway's outputs: {e}")),
        }
        match sway.windows(what).await {
            Ok(w) => windows = Some(w.len()),
            Err(e) => problem = problem.or(Some(format!("sway's windows: {e}"))),
        }
    }
    // XWayland's socket can be there while it refuses every client (Xwayland 22.1 without
    // `-ac` when sway passes it no cookie): an X11 client's connection says, when sway answers.
    let (mut xwayland_ok, mut xwayland_error) = (None, None);
    if version.is_some() && session.display.is_some() && tools.has("xprop") {
        match tools.run(&["xprop", "-root", "-notype", "_NET_SUPPORTING_WM_CHECK"], None).await {
            Ok(ran) if ran.status == 0 => xwayland_ok = Some(true),
            Ok(ran) => {
                xwayland_ok = Some(false);
                xwayland_error = Some(format!(
                    "X11 clients cannot connect to XWayland's display {} {} (xprop -root: {}); sway must start \
                     Xwayland so that it accepts them: set WLR_XWAYLAND to a wrapper that runs \
                     `exec /usr/bin/Xwayland -ac \"$@\"` in sway's environment (README: check wl)",
                    session.display.as_deref().unwrap_or_default(),
                    session.at(),
                    ran.stderr.trim()
                ));
            }
            Err(e) => {
                xwayland_ok = Some(false);
                xwayland_error = Some(format!("XWayland's display did not answer an X11 client: {e}"));
            }
        }
    }
    let (present, missing): (Vec<&str>, Vec<&str>) = TOOLS.iter().partition(|t| tools.has(t));
    let atspi = tools.has("/usr/bin/python3") && ATSPI_TYPELIBS.iter().any(|p| session.host_path(p).exists());
    WlStatus {
        place: session.describe(),
        wayland_socket: session.wayland_socket(),
        user: format!("{}:{}", session.uid, session.gid),
        sway_socket: session.sway_socket.clone(),
        sway_version: version,
        outputs: outputs
            .into_iter()
            .map(|o| OutputInfo { name: o.name, width: o.width, height: o.height, x: o.x, y: o.y })
            .collect(),
        windows,
        problem,
        xwayland: session.display.clone(),
        xwayland_ok,
        xwayland_error,
        atspi,
        tools: present.into_iter().map(str::to_owned).collect(),
        missing: missing.into_iter().map(str::to_owned).collect(),
    }
}

/// How a region is written, for messages.
pub const REGION_FORM: &str = "\"X,Y WxH\" (pixels, e.g. \"0,0 640x480\")";

/// How a size is written, for messages.
pub const SIZE_FORM: &str = "WIDTHxHEIGHT in pixels (1-16384), e.g. 1920x1080";

/// A region, `"X,Y WxH"` (grim's `-g` geometry), as `(x, y, w, h)`; `None` when it is not
/// of that form ([`REGION_FORM`]) or its size is not positive.
pub fn parse_region(region: &str) -> Option<(i64, i64, i64, i64)> {
    let (at, size) = region.trim().split_once(' ')?;
    let (x, y) = at.split_once(',')?;
    let (w, h) = size.trim().split_once('x')?;
    let n = |s: &str| s.trim().parse::<i64>().ok();
    Some((n(x)?, n(y)?, n(w)?, n(h)?)).filter(|(_, _, w, h)| *w > 0 && *h > 0)
}

/// `screenshot`: `grim [-o OUTPUT] [-g "X,Y WxH"] -`, the PNG written to `file` when given.
pub(super) async fn screenshot(
    sway: &Sway<'_>,
    file: Option<&Path>,
    shown: Option<String>,
    output: Option<&str>,
    region: Option<&str>,
) -> Result<Screenshot, WlError> {
    let what = "check.wl.screenshot";
    let tools = &sway.tools;
    let mut argv: Vec<String> = vec!["grim".into()];
    if output.is_some() || region.is_some() {
        let outputs = match tools.session.sway_socket {
            Some(_) => Some(sway.output_rects(what).await?),
            None => None,
        };
        if let Some(name) = output {
            if let Some(list) = &outputs
                && !list.iter().any(|o| o.name == name)
            {
                let names: Vec<&str> = list.iter().map(|o| o.name.as_str()).collect();
                return Err(WlError::Usage(format!(
                    "screenshot: --output {name:?} is not an output (outputs: {})",
                    names.join(", ")
                )));
            }
            argv.extend(["-o".into(), name.to_owned()]);
        }
        if let Some(text) = region {
            let Some((x, y, w, h)) = parse_region(text) else {
                return Err(WlError::Usage(format!("screenshot: --region {text:?}: expects {REGION_FORM}")));
            };
            if let Some(list) = &outputs {
                pointer::check_point(list, x, y, "screenshot: the region's top left")?;
                pointer::check_point(list, x + w - 1, y + h - 1, "screenshot: the region's bottom right")?;
            }
            argv.extend(["-g".into(), format!("{x},{y} {w}x{h}")]);
        }
    }
    argv.push("-".into());
    tools.require("grim", "grim", what)?;
    let ran = tools.run_ok(&argv.iter().map(String::as_str).collect::<Vec<_>>(), None).await?;
    let png = ran.stdout;
    if !png.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Err(WlError::Tool {
            tool: "grim".into(),
            place: tools.session.at(),
            status: 0,
            stderr: format!("it printed {} bytes that are not a PNG", png.len()),
        });
    }
    let dim = |at: usize| png.get(at..at + 4).map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let (width, height) = (dim(16), dim(20));
    if let Some(path) = file {
        write_file(path, &png)?;
    }
    Ok(Screenshot {
        file: file.map(|p| shown.unwrap_or_else(|| p.display().to_string())),
        bytes: png.len(),
        width,
        height,
        png,
    })
}

/// Writes `data` to `path` (mode 0644) through a temporary file in its directory, so a
/// failure leaves no partial file.
fn write_file(path: &Path, data: &[u8]) -> Result<(), WlError> {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let failed =
        |e: std::io::Error| WlError::Write { path: path.display().to_string(), message: e.to_string() };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    tmp.write_all(data).map_err(failed)?;
    tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(failed)?;
    tmp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

/// Translates `at` from `origin` to layout pixels and checks it is on an output: the point,
/// and the outputs.
pub(super) async fn resolve_point(
    sway: &Sway<'_>,
    at: Point,
    origin: &Origin,
    what: &str,
) -> Result<((i64, i64), Vec<pointer::OutputRect>), WlError> {
    let (x, y) = match origin {
        Origin::Desktop => (at.x, at.y),
        Origin::Sway(target) => {
            let w = sway.window(target, what).await?;
            shown_with(&w, at, (w.width, w.height), "--from-sway", what)?;
            (w.x + at.x, w.y + at.y)
        }
        Origin::X11(class) => {
            let w = x11_window(sway, class, what).await?;
            let (x11_w, x11_h) = x11_size(&sway.tools, &w, what).await?;
            shown_with(&w, at, (x11_w, x11_h), "--from-x11", what)?;
            (w.x + at.x * w.width / x11_w.max(1), w.y + at.y * w.height / x11_h.max(1))
        }
        Origin::Cdp { tab, cdp_url } => {
            let (dx, dy) = cdp_offset(sway, tab, cdp_url.as_deref()).await?;
            (at.x + dx, at.y + dy)
        }
    };
    let outputs = sway.output_rects(what).await?;
    let shown = match origin {
        Origin::Desktop => "the point".to_owned(),
        _ => format!("the point ({}, {}) translated to", at.x, at.y),
    };
    pointer::check_point(&outputs, x, y, &shown)?;
    Ok(((x, y), outputs))
}

/// Refuses a point relative to window `w` that would not land on it: the window minimized
/// (in sway's scratchpad) or not shown (on a workspace not visible, or hidden behind a tab or
/// stack), where sway's rect is stale and the event would reach whatever is there now; or
/// `at` outside the window's `size` (its own pixels for `flag`).
fn shown_with(w: &Window, at: Point, size: (i64, i64), flag: &str, what: &str) -> Result<(), WlError> {
    let window = w.describe();
    if w.minimized {
        return Err(WlError::Usage(format!(
            "{what} {flag}: window {window} is minimized (in sway's scratchpad), so its place on the desktop \
             is not its own; restore it first (`charly check wl minimize TARGET '#{}'` again)",
            w.id
        )));
    }
    if !w.visible {
        return Err(WlError::Usage(format!(
            "{what} {flag}: window {window} is not visible (on workspace {}, which is not shown, or behind \
             another window); bring it up first (`charly check wl focus TARGET '#{}'`)",
            w.workspace, w.id
        )));
    }
    let (width, height) = size;
    if at.x < 0 || at.y < 0 || at.x >= width || at.y >= height {
        return Err(WlError::Usage(format!(
            "{what} {flag}: ({}, {}) is outside window {window}, which is {width}x{height}: offsets go from \
             (0, 0) to ({}, {})",
            at.x,
            at.y,
            width - 1,
            height - 1
        )));
    }
    Ok(())
}

/// The XWayland window `class` names (class or instance, or any target form).
async fn x11_window(sway: &Sway<'_>, class: &str, what: &str) -> Result<Window, WlError> {
    let w = sway.window(class, what).await?;
    if w.x11_window == 0 {
        return Err(WlError::Usage(format!(
            "{what}: {} is a Wayland window, not an X11 (XWayland) one; {}",
            w.describe(),
            if what.ends_with("xprop") {
                "xprop reads X11 windows only (`charly check wl geometry` gives a Wayland window's place)"
            } else {
                "use --from-sway for it"
            }
        )));
    }
    Ok(w)
}

/// The X11 window's own size (`xdotool getwindowgeometry --shell WID`).
async fn x11_size(tools: &Tools<'_>, w: &Window, what: &str) -> Result<(i64, i64), WlError> {
    tools.require("xdotool", "xdotool", &format!("{what} --from-x11"))?;
    if tools.session.display.is_none() {
        return Err(no_display(tools, what));
    }
    let id = w.x11_window.to_string();
    let ran = tools.run_ok(&["xdotool", "getwindowgeometry", "--shell", &id], None).await?;
    let text = ran.text();
    let value = |key: &str| text.lines().find_map(|l| l.strip_prefix(key)?.trim().parse::<i64>().ok());
    match (value("WIDTH="), value("HEIGHT=")) {
        (Some(width), Some(height)) => Ok((width, height)),
        _ => Err(WlError::Tool {
            tool: "xdotool".into(),
            place: tools.session.at(),
            status: ran.status,
            stderr: format!("getwindowgeometry printed no WIDTH/HEIGHT: {text}"),
        }),
    }
}

fn no_display(tools: &Tools<'_>, what: &str) -> WlError {
    WlError::Missing(format!(
        "{what} needs XWayland, and no X display was found {} (no DISPLAY, and sway holds no X socket: \
         is sway's xwayland disabled?)",
        tools.session.at()
    ))
}

/// A browser tab's viewport origin on the desktop, over CDP: `screenX`, and `screenY` plus the
/// browser's chrome (`outerHeight - innerHeight`).
async fn cdp_offset(sway: &Sway<'_>, tab: &str, cdp_url: Option<&str>) -> Result<(i64, i64), WlError> {
    use crate::cdp;
    let session = sway.tools.session;
    let timeout = sway.tools.timeout;
    let failed = |e: cdp::CdpError| WlError::Usage(format!("--from-cdp: {e}"));
    let browser = match &session.place {
        super::Place::Local => cdp::resolve_local(cdp_url.unwrap_or(cdp::DEFAULT_URL)),
        // The box was checked when the session was found; the hints read its labels.
        super::Place::Container { container, fix, .. } => {
            if let Some(why) =
                crate::resolve::endpoint_on_box("--cdp-url", "cdp_url", cdp_url, fix, cdp::CONTAINER_PORT)
            {
                return Err(WlError::Usage(format!("--from-cdp: {why}")));
            }
            cdp::resolve_container(sway.tools.engine, container, None).await
        }
    }
    .map_err(failed)?;
    let tab = match tab {
        "" => match browser.targets(timeout).await.map_err(failed)?.into_iter().find(|t| t.kind == "page") {
            Some(first) => first.id,
            None => {
                return Err(WlError::Usage(format!(
                    "--from-cdp: the browser at {} has no tab",
                    browser.base
                )));
            }
        },
        id => id.to_owned(),
    };
    let expression = "[window.screenX, window.screenY, window.outerHeight - window.innerHeight]".to_owned();
    let outcome =
        cdp::perform(&browser, &cdp::Op::Eval { tab, expression }, timeout).await.map_err(failed)?;
    let value = match outcome {
        cdp::Outcome::Value(v) => v.value,
        _ => serde_json::Value::Null,
    };
    let parsed: Vec<i64> = serde_json::from_value::<Vec<f64>>(value.clone())
        .map(|v| v.into_iter().map(|n| n.round() as i64).collect())
        .unwrap_or_default();
    let json = value.to_string();
    match parsed.as_slice() {
        [x, y, chrome] => Ok((*x, y + chrome)),
        _ => Err(WlError::Usage(format!("--from-cdp: the tab's window position is unreadable: {json}"))),
    }
}

/// `xprop [TARGET]`: an XWayland window's properties and geometry (the focused window without
/// a target).
pub(super) async fn xprop(sway: &Sway<'_>, target: Option<&str>, what: &str) -> Result<WlText, WlError> {
    let tools = &sway.tools;
    tools.require("xprop", "x11-utils", what)?;
    if tools.session.display.is_none() {
        return Err(no_display(tools, what));
    }
    let w = match target {
        Some(t) => x11_window(sway, t, what).await?,
        None => {
            let list = sway.windows(what).await?;
            match list.into_iter().find(|w| w.focused) {
                Some(w) if w.x11_window != 0 => w,
                Some(w) => {
                    return Err(WlError::Usage(format!(
                        "{what}: the focused window {} is a Wayland window; name an X11 one",
                        w.describe()
                    )));
                }
                None => return Err(WlError::NoWindow(format!("{what}: no window has the focus; name one"))),
            }
        }
    };
    let id = format!("0x{:x}", w.x11_window);
    // The reference's four, and WM_NAME: plain X clients (xev, Xt programs) set no _NET_WM_NAME.
    let props = ["WM_CLASS", "WM_NAME", "_NET_WM_NAME", "_NET_WM_WINDOW_TYPE", "_NET_WM_PID"];
    let mut argv = vec!["xprop", "-id", &id];
    argv.extend(props);
    let mut text = tools.run_ok(&argv, None).await?.text();
    if tools.has("xdotool") {
        let decimal = w.x11_window.to_string();
        let ran = tools.run_ok(&["xdotool", "getwindowgeometry", &decimal], None).await?;
        text.push_str(&ran.text());
    }
    Ok(WlText { what: "xprop".into(), text, message: None })
}

/// `clipboard get|set|clear`: `wl-paste [-p] -n`, `wl-copy [-p] -- TEXT`, `wl-copy [-p] --clear`.
pub(super) async fn clipboard(
    tools: &Tools<'_>,
    action: ClipAction,
    text: Option<&str>,
    primary: bool,
    what: &str,
) -> Result<Outcome, WlError> {
    let which = if primary { "primary selection" } else { "clipboard" };
    // set and clear report the clipboard as they leave it, with what was done (the leaf's
    // one report type, WlText, whatever the action).
    let done = |text: &str, message: String| {
        Outcome::Text(WlText { what: "clipboard".into(), text: text.to_owned(), message: Some(message) })
    };
    match action {
        ClipAction::Get => {
            if text.is_some() {
                return Err(WlError::Usage("clipboard get takes no text".into()));
            }
            tools.require("wl-paste", "wl-clipboard", what)?;
            let mut argv = vec!["wl-paste", "--no-newline"];
            if primary {
                argv.push("--primary");
            }
            let ran = tools.run(&argv, None).await?;
            let empty = ran.stderr.contains("Nothing is copied") || ran.stderr.contains("No selection");
            match (ran.status, empty) {
                (0, _) => {
                    Ok(Outcome::Text(WlText { what: "clipboard".into(), text: ran.text(), message: None }))
                }
                (_, true) => {
                    Ok(Outcome::Text(WlText { what: "clipboard".into(), text: String::new(), message: None }))
                }
                (status, false) => Err(WlError::Tool {
                    tool: "wl-paste".into(),
                    place: tools.session.at(),
                    status,
                    stderr: ran.stderr,
                }),
            }
        }
        ClipAction::Set => {
            let Some(text) = text else {
                return Err(WlError::Usage("clipboard set needs the text".into()));
            };
            tools.require("wl-copy", "wl-clipboard", what)?;
            let mut argv = vec!["wl-copy"];
            if primary {
                argv.push("--primary");
            }
            argv.extend(["--", text]);
            tools.run_forking(&argv).await?;
            Ok(done(text, format!("Set the {which} ({} characters)", text.chars().count())))
        }
        ClipAction::Clear => {
            if text.is_some() {
                return Err(WlError::Usage("clipboard clear takes no text".into()));
            }
            tools.require("wl-copy", "wl-clipboard", what)?;
            let mut argv = vec!["wl-copy", "--clear"];
            if primary {
                argv.push("--primary");
            }
            tools.run_forking(&argv).await?;
            Ok(done("", format!("Cleared the {which}")))
        }
    }
}

/// A size, `WIDTHxHEIGHT` in pixels, each 1-16384 ([`SIZE_FORM`]); `None` otherwise.
pub fn parse_size(size: &str) -> Option<(u32, u32)> {
    let parsed =
        size.split_once('x').and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)));
    parsed.filter(|(w, h)| (1..=16384).contains(w) && (1..=16384).contains(h))
}

/// `resolution WxH [--output O]`: sway's `output O mode --custom WxH`, or `wlr-randr --output O
/// --custom-mode WxH` without sway.
pub(super) async fn resolution(
    sway: &Sway<'_>,
    size: &str,
    output: Option<&str>,
    what: &str,
) -> Result<WlAction, WlError> {
    let Some((width, height)) = parse_size(size) else {
        return Err(WlError::Usage(format!("resolution {size:?}: expects {SIZE_FORM}")));
    };
    let name_ok =
        |n: &str| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    let tools = &sway.tools;
    let name = if tools.session.sway_socket.is_some() {
        let outputs = sway.output_rects(what).await?;
        let names: Vec<&str> = outputs.iter().map(|o| o.name.as_str()).collect();
        match (output, names.as_slice()) {
            (Some(o), _) if names.contains(&o) => o.to_owned(),
            (Some(o), _) => {
                return Err(WlError::Usage(format!(
                    "resolution: --output {o:?} is not an output (outputs: {})",
                    names.join(", ")
                )));
            }
            (None, [only]) => (*only).to_owned(),
            (None, _) => {
                return Err(WlError::Usage(format!(
                    "resolution: name the output with --output (outputs: {})",
                    names.join(", ")
                )));
            }
        }
    } else {
        match output {
            Some(o) => o.to_owned(),
            None => {
                return Err(WlError::Usage(
                    "resolution: name the output with --output (the compositor is not sway)".into(),
                ));
            }
        }
    };
    if !name_ok(&name) {
        return Err(WlError::Usage(format!("resolution: output name {name:?} is not one charly passes on")));
    }
    if tools.session.sway_socket.is_some() {
        sway.command(&format!("output {name} mode --custom {width}x{height}"), what).await?;
    } else {
        tools.require("wlr-randr", "wlr-randr", what)?;
        let mode = format!("{width}x{height}");
        tools.run_ok(&["wlr-randr", "--output", &name, "--custom-mode", &mode], None).await?;
    }
    Ok(WlAction {
        action: "resolution".into(),
        message: format!("Set {name} to {width}x{height}"),
        ..WlAction::default()
    })
}
