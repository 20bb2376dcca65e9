//! Windows from sway's tree (`GET_TREE`), and the window a target names.
//!
//! A target is matched exactly against, in order, `#<con id>` (sway's container id), the
//! Wayland `app_id`, the X11 class and instance (XWayland windows), and the title. Several
//! matches are ranked as REFERENCE.md §15's `geometry` ranks them: the focused one, then the
//! higher fullscreen mode, then the larger area. charly's window actions then address the
//! chosen window by its con id (`[con_id=N] focus`), so no text of the target ever becomes
//! part of a sway command.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::WlError;

/// A window (a sway view): where its content is, and what it is.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Window {
    /// sway's container id (`#<id>` names it as a target).
    pub id: i64,
    /// The Wayland app_id (empty for an X11 window).
    pub app_id: String,
    /// The X11 class (XWayland windows; empty otherwise).
    pub class: String,
    /// The X11 instance (XWayland windows; empty otherwise).
    pub instance: String,
    /// The title.
    pub title: String,
    /// The client's pid, in the target's pid namespace (0 when unknown).
    pub pid: i64,
    /// `xdg_shell` or `xwayland`.
    pub shell: String,
    /// The X11 window id (XWayland windows; 0 otherwise).
    pub x11_window: i64,
    /// X of the content's top left, in layout pixels (sway's rect plus window_rect: inside the
    /// border and title bar).
    pub x: i64,
    /// Y of the content's top left.
    pub y: i64,
    /// Content width.
    pub width: i64,
    /// Content height.
    pub height: i64,
    /// It has the focus.
    pub focused: bool,
    /// It is shown.
    pub visible: bool,
    /// sway's fullscreen mode (0 none, 1 on its output, 2 global).
    pub fullscreen: i64,
    /// It floats.
    pub floating: bool,
    /// It is in the scratchpad (`minimize`).
    pub minimized: bool,
    /// Its workspace.
    pub workspace: String,
}

impl Window {
    /// `foot (app_id foot, "~")`, `Xev (X11 class Xev, "Event Tester")`.
    pub fn describe(&self) -> String {
        let what = match (self.app_id.is_empty(), self.class.is_empty()) {
            (false, _) => format!("app_id {}", self.app_id),
            (true, false) => format!("X11 class {}", self.class),
            (true, true) => "X11, no class".to_owned(),
        };
        format!("#{} ({what}, {:?})", self.id, self.title)
    }

    /// Its app_id, else its X11 class, else its X11 instance.
    pub fn name(&self) -> &str {
        [&self.app_id, &self.class, &self.instance].into_iter().find(|n| !n.is_empty()).map_or("", |n| n)
    }
}

impl fmt::Display for Window {
    /// `#ID NAME "TITLE" WxH+X+Y [focused, floating, ...]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "#{}\t{}\t{:?}\t{}x{}+{}+{}",
            self.id,
            self.name(),
            self.title,
            self.width,
            self.height,
            self.x,
            self.y
        )?;
        let flags: Vec<&str> = [
            (self.focused, "focused"),
            (self.fullscreen > 0, "fullscreen"),
            (self.floating, "floating"),
            (self.minimized, "minimized"),
            (self.shell == "xwayland", "xwayland"),
        ]
        .into_iter()
        .filter_map(|(on, word)| on.then_some(word))
        .collect();
        if !flags.is_empty() {
            write!(f, "\t[{}]", flags.join(", "))?;
        }
        Ok(())
    }
}

/// Every window of `tree`, in tree order (tiled before floating, per workspace).
pub fn windows(tree: &Value) -> Vec<Window> {
    let mut out = Vec::new();
    walk(tree, "", false, &mut out);
    out
}

fn walk(node: &Value, workspace: &str, floating: bool, out: &mut Vec<Window>) {
    let kind = node.get("type").and_then(Value::as_str).unwrap_or_default();
    let name = node.get("name").and_then(Value::as_str).unwrap_or_default();
    let workspace = if kind == "workspace" { name } else { workspace };
    if node.get("shell").and_then(Value::as_str).is_some() {
        out.push(window(node, workspace, floating || kind == "floating_con"));
    }
    for (key, floats) in [("nodes", floating), ("floating_nodes", true)] {
        for child in node.get(key).and_then(Value::as_array).into_iter().flatten() {
            walk(child, workspace, floats, out);
        }
    }
}

fn window(node: &Value, workspace: &str, floating: bool) -> Window {
    let int = |ptr: &str| node.pointer(ptr).and_then(Value::as_i64).unwrap_or(0);
    let text = |ptr: &str| node.pointer(ptr).and_then(Value::as_str).unwrap_or_default().to_owned();
    Window {
        id: int("/id"),
        app_id: text("/app_id"),
        class: text("/window_properties/class"),
        instance: text("/window_properties/instance"),
        title: text("/name"),
        pid: int("/pid"),
        shell: text("/shell"),
        x11_window: int("/window"),
        x: int("/rect/x") + int("/window_rect/x"),
        y: int("/rect/y") + int("/window_rect/y"),
        width: int("/window_rect/width"),
        height: int("/window_rect/height"),
        focused: node.get("focused").and_then(Value::as_bool).unwrap_or(false),
        visible: node.get("visible").and_then(Value::as_bool).unwrap_or(false),
        fullscreen: int("/fullscreen_mode"),
        floating,
        minimized: workspace == "__i3_scratch",
        workspace: workspace.to_owned(),
    }
}

/// What a target may be, for messages.
pub const TARGET_FORMS: &str = "an app_id, an X11 class or instance, a title, or #<con id>";

/// The window `target` names among `list` (see the module doc); `place` (`on this machine`)
/// is named in errors.
///
/// # Errors
///
/// [`WlError::Usage`] for an empty target, [`WlError::NoWindow`] listing the windows there are.
pub fn find<'a>(list: &'a [Window], target: &str, place: &str) -> Result<&'a Window, WlError> {
    if target.is_empty() {
        return Err(WlError::Usage(format!("the target window is empty; name one: {TARGET_FORMS}")));
    }
    let by_id = target.strip_prefix('#').and_then(|n| n.parse::<i64>().ok());
    let tests: [&dyn Fn(&Window) -> bool; 4] = [
        &|w| by_id == Some(w.id),
        &|w| !w.app_id.is_empty() && w.app_id == target,
        &|w| (!w.class.is_empty() && w.class == target) || (!w.instance.is_empty() && w.instance == target),
        &|w| w.title == target,
    ];
    for test in tests {
        let mut found: Vec<&Window> = list.iter().filter(|w| test(w)).collect();
        found.sort_by_key(|w| (!w.focused, -w.fullscreen, -(w.width * w.height)));
        if let Some(first) = found.first() {
            return Ok(first);
        }
    }
    let there = if list.is_empty() {
        "there are no windows".to_owned()
    } else {
        format!("the windows are {}", list.iter().map(Window::describe).collect::<Vec<_>>().join(", "))
    };
    Err(WlError::NoWindow(format!(
        "no window matches {target:?} {place}: {there}; a target is {TARGET_FORMS}"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> Value {
        serde_json::json!({"type": "root", "name": "root", "nodes": [
            {"type": "output", "name": "HEADLESS-1", "nodes": [
                {"type": "workspace", "name": "1", "nodes": [
                    {"type": "con", "id": 5, "name": "~", "app_id": "foot", "shell": "xdg_shell", "pid": 9,
                     "focused": false, "rect": {"x": 0, "y": 25, "width": 960, "height": 1055},
                     "window_rect": {"x": 2, "y": 0, "width": 956, "height": 1053}},
                    {"type": "con", "id": 7, "name": "big", "app_id": "foot", "shell": "xdg_shell",
                     "rect": {"x": 960, "y": 25, "width": 960, "height": 1055},
                     "window_rect": {"x": 2, "y": 0, "width": 956, "height": 1053}}
                ], "floating_nodes": [
                    {"type": "floating_con", "id": 8, "name": "Event Tester", "app_id": null, "shell": "xwayland",
                     "window": 4194305, "focused": true,
                     "window_properties": {"class": "Xev", "instance": "xev"},
                     "rect": {"x": 200, "y": 100, "width": 178, "height": 178},
                     "window_rect": {"x": 0, "y": 0, "width": 178, "height": 178}}
                ]}
            ]}
        ]})
    }

    #[test]
    fn windows_are_found_by_id_app_id_class_and_title() {
        let list = windows(&tree());
        assert_eq!(list.len(), 3);
        assert_eq!((list[0].x, list[0].y, list[0].width), (2, 25, 956));
        assert!(list[2].floating && list[2].shell == "xwayland" && list[2].x11_window == 4194305);
        assert_eq!(find(&list, "#7", "here").unwrap().id, 7);
        assert_eq!(find(&list, "Xev", "here").unwrap().id, 8);
        assert_eq!(find(&list, "xev", "here").unwrap().id, 8);
        assert_eq!(find(&list, "big", "here").unwrap().id, 7);
        let err = find(&list, "nothing", "in container charly-x").unwrap_err().to_string();
        assert!(err.contains("no window matches \"nothing\" in container charly-x"), "{err}");
        assert!(err.contains("#8 (X11 class Xev, \"Event Tester\")"), "{err}");
        assert!(windows(&serde_json::json!({"type": "root"})).is_empty());
    }
}
