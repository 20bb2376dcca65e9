//! The `sway.*` leaves' commands, built from checked arguments (REFERENCE.md §15): a value that
//! does not fit its place is refused here, so it never reaches sway's command language as
//! something else (a `;` that would start a second command, a quote that would end a
//! criteria value). `sway.msg` alone sends its text as it is: it is sway's language by design.

use super::WlError;

/// `sway.focus`'s directions.
pub const FOCUS_DIRECTIONS: [&str; 11] =
    ["left", "right", "up", "down", "parent", "child", "prev", "next", "floating", "tiling", "mode_toggle"];

/// `sway.layout`'s modes.
pub const LAYOUTS: [&str; 7] =
    ["tabbed", "stacking", "splitv", "splith", "toggle", "toggle split", "default"];

/// `[criteria] focus` or `focus DIRECTION`: TARGET is a whole criteria (`[app_id="foot"]`),
/// `key=value` (quoted for sway), or a direction.
///
/// # Errors
///
/// [`WlError::Usage`] naming what is allowed.
pub fn focus(target: &str) -> Result<String, WlError> {
    if target.starts_with('[') {
        return Ok(format!("{} focus", criteria(target)?));
    }
    if let Some((key, value)) = target.split_once('=') {
        let bad_key = key.is_empty() || !key.chars().all(|c| c.is_ascii_lowercase() || c == '_');
        if bad_key || value.contains(['"', '\\', '\n', '\r']) {
            return Err(WlError::Usage(format!(
                "sway.focus {target:?}: key=value takes a criteria key (app_id, class, title, con_id, ...) and a \
                 value without quotes or backslashes; write a whole criteria in brackets for more"
            )));
        }
        return Ok(format!("[{key}=\"{value}\"] focus"));
    }
    if FOCUS_DIRECTIONS.contains(&target) {
        return Ok(format!("focus {target}"));
    }
    Err(WlError::Usage(format!(
        "sway.focus {target:?}: expects criteria ([app_id=\"foot\"] or app_id=foot) or a direction ({})",
        FOCUS_DIRECTIONS.join(", ")
    )))
}

/// `text` when it is one bracketed criteria and nothing else (quotes balanced, backslash
/// escapes inside them, the first `]` outside quotes the last character, no line break).
fn criteria(text: &str) -> Result<&str, WlError> {
    let bad = |why: &str| {
        WlError::Usage(format!(
            "criteria {text:?}: {why}; e.g. [app_id=\"foot\"] or [class=\"Xev\" title=\"x\"]"
        ))
    };
    if text.contains(['\n', '\r']) {
        return Err(bad("a line break is not allowed"));
    }
    let (mut quoted, mut escaped) = (false, false);
    for (i, c) in text.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '[' if !quoted => return Err(bad("a [ inside the criteria")),
            ']' if !quoted => {
                return if i + 1 == text.len() {
                    Ok(text)
                } else {
                    Err(bad("nothing may follow the closing ]"))
                };
            }
            _ => {}
        }
    }
    Err(bad(if quoted { "a quote is not closed" } else { "the ] is missing" }))
}

/// `sway.move`'s command for WORDS: `workspace N`, a direction with an optional pixel amount,
/// `scratchpad`, `position X Y` / `position center`, `output NAME`.
///
/// # Errors
///
/// [`WlError::Usage`] listing the forms.
pub fn move_command(words: &[String]) -> Result<String, WlError> {
    let int = |s: &str| s.parse::<i64>().is_ok();
    let name = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    let w: Vec<&str> = words.iter().map(String::as_str).collect();
    let command = match w.as_slice() {
        ["workspace", n] if n.parse::<u32>().is_ok() => format!("move container to workspace number {n}"),
        [dir @ ("left" | "right" | "up" | "down")] => format!("move {dir}"),
        [dir @ ("left" | "right" | "up" | "down"), px]
            if px.trim_end_matches("px").parse::<u32>().is_ok() =>
        {
            format!("move {dir} {} px", px.trim_end_matches("px"))
        }
        ["scratchpad"] => "move scratchpad".to_owned(),
        ["position", "center"] => "move position center".to_owned(),
        ["position", x, y] if int(x) && int(y) => format!("move position {x} {y}"),
        ["output", out] if name(out) => format!("move container to output {out}"),
        _ => {
            return Err(WlError::Usage(format!(
                "sway.move {:?}: expects workspace N, left|right|up|down [PX], scratchpad, position X Y, \
                 position center, or output NAME",
                w.join(" ")
            )));
        }
    };
    Ok(command)
}

/// `resize grow|shrink width|height AMOUNT`: a leading `-` shrinks; AMOUNT is pixels (`10`,
/// `10px`) or percentage points (`5ppt`).
///
/// # Errors
///
/// [`WlError::Usage`] for another dimension or amount.
pub fn resize(dimension: &str, amount: &str) -> Result<String, WlError> {
    if !matches!(dimension, "width" | "height") {
        return Err(WlError::Usage(format!("sway.resize: dimension {dimension:?} is not width or height")));
    }
    let (how, magnitude) = match amount.strip_prefix('-') {
        Some(rest) => ("shrink", rest),
        None => ("grow", amount.strip_prefix('+').unwrap_or(amount)),
    };
    let (number, unit) = match magnitude.strip_suffix("ppt") {
        Some(n) => (n, "ppt"),
        None => (magnitude.strip_suffix("px").unwrap_or(magnitude), "px"),
    };
    if number.parse::<u32>().is_err() {
        return Err(WlError::Usage(format!(
            "sway.resize: amount {amount:?} is not pixels or percentage points (10, 10px, -10px, 5ppt)"
        )));
    }
    Ok(format!("resize {how} {dimension} {number} {unit}"))
}

/// `layout MODE`.
///
/// # Errors
///
/// [`WlError::Usage`] listing the modes.
pub fn layout(mode: &str) -> Result<String, WlError> {
    if LAYOUTS.contains(&mode) {
        return Ok(format!("layout {mode}"));
    }
    Err(WlError::Usage(format!("sway.layout: {mode:?} is not a layout (allowed: {})", LAYOUTS.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_built_from_checked_words() {
        assert_eq!(focus("[app_id=\"foot\"]").unwrap(), "[app_id=\"foot\"] focus");
        assert_eq!(focus("app_id=foot").unwrap(), "[app_id=\"foot\"] focus");
        assert_eq!(focus("left").unwrap(), "focus left");
        assert!(
            focus("[app_id=\"x\"]; exec touch /tmp/x")
                .unwrap_err()
                .to_string()
                .contains("nothing may follow")
        );
        assert!(focus("[title=\"a]b\"]").is_ok());
        assert!(focus("app_id=a\"; exec x").is_err());
        assert!(focus("[app_id=\"x]").unwrap_err().to_string().contains("not closed"));
        assert!(focus("sideways").unwrap_err().to_string().contains("mode_toggle"));
        let words = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(move_command(&words("workspace 2")).unwrap(), "move container to workspace number 2");
        assert_eq!(move_command(&words("left 20px")).unwrap(), "move left 20 px");
        assert_eq!(move_command(&words("position 10 -5")).unwrap(), "move position 10 -5");
        assert!(move_command(&words("output HEADLESS-1;kill")).is_err());
        assert_eq!(resize("width", "-10px").unwrap(), "resize shrink width 10 px");
        assert_eq!(resize("height", "5ppt").unwrap(), "resize grow height 5 ppt");
        assert!(resize("depth", "5").is_err() && resize("width", "5em").is_err());
        assert_eq!(layout("tabbed").unwrap(), "layout tabbed");
        assert!(layout("grid").is_err());
    }
}
