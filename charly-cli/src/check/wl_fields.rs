//! Reading a `wl:` step's fields ([`Fields`]): each field asked for is one of the method's, so
//! that a field of another method is named ([`foreign_field`]) instead of being ignored.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::wl::{Button, Origin, OverlayKind, OverlaySpec, Point};

/// Reads `node`'s fields for `method`; every problem goes to `problems`. The keys asked for
/// are `taken`: the method's fields, whether the step gives them or not.
pub(super) struct Fields<'a> {
    pub(super) node: &'a Map<String, Value>,
    pub(super) method: &'a str,
    pub(super) problems: &'a mut Vec<String>,
    pub(super) taken: Vec<String>,
    /// Keys of another method's that a problem already names.
    pub(super) said: Vec<&'static str>,
}

impl<'a> Fields<'a> {
    /// Whether the step gives `key`, another method's field, which the caller names in a
    /// problem of its own.
    pub(super) fn misplaced(&mut self, key: &'static str) -> bool {
        self.said.push(key);
        self.node.contains_key(key)
    }

    /// `node[key]`, with `key` taken as one of the method's fields.
    pub(super) fn get(&mut self, key: &str) -> Option<&'a Value> {
        if !self.taken.iter().any(|k| k == key) {
            self.taken.push(key.to_owned());
        }
        self.node.get(key)
    }

    pub(super) fn text(&mut self, key: &str, required: bool) -> Option<String> {
        let value = self.get(key);
        super::step::text(value, ("wl", self.method), key, required, self.problems)
    }

    pub(super) fn int(&mut self, key: &str, default: Option<i64>) -> i64 {
        match (self.get(key), default) {
            (Some(Value::Number(n)), _) if n.as_i64().is_some() => n.as_i64().unwrap_or_default(),
            // A variable: checked again once resolved, when it is the text of a number.
            (Some(Value::String(s)), _) if s.contains("${") => 0,
            (Some(Value::String(s)), _) if s.trim().parse::<i64>().is_ok() => {
                s.trim().parse().unwrap_or_default()
            }
            (None | Some(Value::Null), Some(d)) => d,
            (None | Some(Value::Null), None) => {
                self.problems.push(format!("wl: {} needs {key}: (an integer)", self.method));
                0
            }
            (Some(other), _) => {
                self.problems.push(format!("{key}: expects an integer, got {other}"));
                0
            }
        }
    }

    pub(super) fn flag(&mut self, key: &str) -> bool {
        match self.get(key) {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            // A variable, resolved or not (checked again once it is).
            Some(Value::String(s)) if s == "true" || s.contains("${") => s == "true",
            Some(Value::String(s)) if s == "false" => false,
            Some(other) => {
                self.problems.push(format!("{key}: expects true or false, got {other}"));
                false
            }
        }
    }

    /// A list of strings (`args:` of exec, `target:` of sway-move); a string is split at
    /// whitespace only for sway-move.
    pub(super) fn list(&mut self, key: &str, split: bool) -> Vec<String> {
        match self.get(key) {
            Some(Value::Array(items)) if !items.is_empty() && items.iter().all(Value::is_string) => {
                items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
            }
            Some(Value::String(s)) if split && !s.trim().is_empty() => {
                s.split_whitespace().map(str::to_owned).collect()
            }
            // One word is a one-item list; more would be one argument with spaces in it
            // (`args: "foot -a x"` ran a program named `foot -a x`).
            Some(Value::String(s)) if !s.is_empty() && !s.contains(char::is_whitespace) => vec![s.clone()],
            Some(Value::String(s)) if !s.trim().is_empty() => {
                let words: Vec<&str> = s.split_whitespace().collect();
                self.problems.push(format!(
                    "wl: {} {key}: is a list, one item per argument: {key}: [{}], not the one string {s:?}",
                    self.method,
                    words.join(", ")
                ));
                Vec::new()
            }
            _ => {
                self.problems.push(format!("wl: {} needs {key}: (a list of strings)", self.method));
                Vec::new()
            }
        }
    }

    pub(super) fn button(&mut self) -> Button {
        match self.text("button", false) {
            None => Button::Left,
            Some(b) => Button::parse(&b).unwrap_or_else(|e| {
                self.problems.push(e);
                Button::Left
            }),
        }
    }

    /// A number (integer or not), when given.
    pub(super) fn number(&mut self, key: &str) -> Option<f64> {
        match self.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => n.as_f64(),
            // A variable, resolved or not (checked again once it is).
            Some(Value::String(s)) if s.contains("${") => None,
            Some(Value::String(s)) if s.trim().parse::<f64>().is_ok_and(f64::is_finite) => {
                s.trim().parse().ok()
            }
            Some(other) => {
                self.problems.push(format!("{key}: expects a number, got {other}"));
                None
            }
        }
    }

    pub(super) fn millis(&mut self, key: &str, default: i64) -> Duration {
        Duration::from_millis(self.int(key, Some(default)).max(0) as u64)
    }

    pub(super) fn point(&mut self) -> Point {
        Point { x: self.int("x", None), y: self.int("y", None) }
    }

    pub(super) fn origin(&mut self) -> Origin {
        let sway = self.text("from_sway", false);
        let x11 = self.text("from_x11", false);
        let cdp = self.text("from_cdp", false);
        let cdp_url = self.text("cdp_url", false);
        if cdp_url.is_some() && cdp.is_none() {
            self.problems
                .push("cdp_url: only applies with from_cdp: (the browser whose tab is the origin)".into());
        }
        match (sway, x11, cdp) {
            (Some(w), None, None) => Origin::Sway(w),
            (None, Some(c), None) => Origin::X11(c),
            (None, None, Some(tab)) => {
                Origin::Cdp { tab: if tab == "first" { String::new() } else { tab }, cdp_url }
            }
            (None, None, None) => Origin::Desktop,
            _ => {
                self.problems.push("from_sway, from_x11 and from_cdp: give one at most".into());
                Origin::Desktop
            }
        }
    }
}

/// `overlay-show`'s fields: `type:` (required), `text`, `subtitle`, `name`, `position`, `bg`,
/// `color`, `font_size`, `opacity`, `duration` (seconds), `seconds`, `region` (`X,Y,W,H`).
pub(super) fn overlay_spec(f: &mut Fields<'_>) -> OverlaySpec {
    let kind = f.text("type", true).and_then(|t| match OverlayKind::parse(&t) {
        Ok(k) => Some(k),
        Err(e) => {
            f.problems.push(e);
            None
        }
    });
    let seconds = f.number("seconds").map(|s| s.clamp(0.0, f64::from(u32::MAX)) as u32);
    OverlaySpec {
        kind,
        text: f.text("text", false),
        subtitle: f.text("subtitle", false),
        name: f.text("name", false),
        position: f.text("position", false),
        bg: f.text("bg", false),
        color: f.text("color", false),
        font_size: f.number("font_size"),
        opacity: f.number("opacity"),
        duration: f.number("duration"),
        seconds,
        region: f.text("region", false),
    }
}

/// The problem of a step's field that its method does not take: `wl: key does not take text:
/// (its fields: key)`, or `wl: status takes no fields, and x: is not one`.
pub(super) fn foreign_field(verb: &str, method: &str, key: &str, fields: &[&str]) -> String {
    if fields.is_empty() {
        format!("{verb}: {method} takes no fields, and {key}: is not one")
    } else {
        format!("{verb}: {method} does not take {key}: (its fields: {})", fields.join(", "))
    }
}
