//! The key tables of `check.cdp.spa.key`, `spa.key-combo` and `spa.type` (REFERENCE.md §14):
//! names to the DOM `key`, `code` and Windows virtual key code `Input.dispatchKeyEvent` takes.

/// A key as `Input.dispatchKeyEvent` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    /// DOM `key` (`Enter`, `a`, ` `).
    pub key: String,
    /// DOM `code` (`Enter`, `KeyA`, `Space`; empty when the character has none).
    pub code: String,
    /// `windowsVirtualKeyCode` (0 when none).
    pub vk: u32,
    /// The text the key types (`\r` for Enter, the character for a printable key; empty otherwise).
    pub text: String,
}

/// The named keys (`return` and `enter` are the same key), matched as [`named`] says.
pub const NAMED: [(&str, &str, u32); 28] = [
    ("return", "Enter", 13),
    ("enter", "Enter", 13),
    ("escape", "Escape", 27),
    ("tab", "Tab", 9),
    ("backspace", "Backspace", 8),
    ("delete", "Delete", 46),
    ("home", "Home", 36),
    ("end", "End", 35),
    ("page_up", "PageUp", 33),
    ("page_down", "PageDown", 34),
    ("up", "ArrowUp", 38),
    ("down", "ArrowDown", 40),
    ("left", "ArrowLeft", 37),
    ("right", "ArrowRight", 39),
    ("insert", "Insert", 45),
    ("space", "Space", 32),
    ("f1", "F1", 112),
    ("f2", "F2", 113),
    ("f3", "F3", 114),
    ("f4", "F4", 115),
    ("f5", "F5", 116),
    ("f6", "F6", 117),
    ("f7", "F7", 118),
    ("f8", "F8", 119),
    ("f9", "F9", 120),
    ("f10", "F10", 121),
    ("f11", "F11", 122),
    ("f12", "F12", 123),
];

/// Other spellings of [`NAMED`]'s keys: DOM `key` values and X keysym names whose folded
/// form (see [`named`]) is not already a table name.
const ALIASES: [(&str, &str); 8] = [
    ("arrowup", "up"),
    ("arrowdown", "down"),
    ("arrowleft", "left"),
    ("arrowright", "right"),
    ("esc", "escape"),
    ("del", "delete"),
    ("prior", "page_up"),
    ("next", "page_down"),
];

/// A name folded for lookup: lower case, without `_` and `-` (`Page_Up`, `PageUp`, `page-up`
/// and `page_up` are one name).
fn fold(name: &str) -> String {
    name.chars().filter(|c| !matches!(c, '_' | '-')).flat_map(char::to_lowercase).collect()
}

/// The named key `name`, or `None`. Names match in any case and with or without `_`/`-`, so
/// the table's names (`page_up`), DOM `key` values (`PageUp`, `ArrowUp`, `Enter`) and X
/// keysym names (`Page_Up`, `Prior`, `BackSpace`, `Return`) all work; each of them names one
/// key (REFERENCE.md §18.11: the reference took lower-case names only).
pub fn named(name: &str) -> Option<Key> {
    let folded = fold(name);
    let folded = ALIASES.iter().find(|(a, _)| *a == folded).map_or(folded, |(_, n)| fold(n));
    let (_, code, vk) = NAMED.iter().copied().find(|(n, _, _)| fold(n) == folded)?;
    let (key, text) = match code {
        "Space" => (" ", " "),
        "Enter" => ("Enter", "\r"),
        other => (other, ""),
    };
    Some(Key { key: key.into(), code: code.into(), vk, text: text.into() })
}

/// Every named key, for messages: `return, enter, escape, ...`.
pub fn named_list() -> String {
    NAMED.iter().map(|(n, _, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The key that types character `c`: `KeyX` for letters (with the virtual key code of A–Z),
/// `Digit<n>`, `Space`, `Minus`, else no code.
pub fn of_char(c: char) -> Key {
    let (code, vk) = match c {
        'a'..='z' | 'A'..='Z' => (format!("Key{}", c.to_ascii_uppercase()), c.to_ascii_uppercase() as u32),
        '0'..='9' => (format!("Digit{c}"), c as u32),
        ' ' => ("Space".into(), 32),
        '-' => ("Minus".into(), 189),
        _ => (String::new(), 0),
    };
    Key { key: c.to_string(), code, vk, text: c.to_string() }
}

/// A modifier of `spa.key-combo`: its DOM key, code, virtual key code and CDP modifier bit
/// (Alt 1, Ctrl 2, Meta 4, Shift 8).
pub fn modifier(name: &str) -> Option<(&'static str, &'static str, u32, u32)> {
    match name {
        "ctrl" | "control" => Some(("Control", "ControlLeft", 17, 2)),
        "alt" => Some(("Alt", "AltLeft", 18, 1)),
        "shift" => Some(("Shift", "ShiftLeft", 16, 8)),
        "super" | "meta" | "win" | "logo" => Some(("Meta", "MetaLeft", 91, 4)),
        _ => None,
    }
}

/// A parsed combo: its modifiers in order and the key.
pub type Combo = (Vec<(&'static str, &'static str, u32, u32)>, Key);

/// Parses `mod+...+key` (lower-cased first): at least one modifier, then a named key or one
/// character.
///
/// # Errors
///
/// A message naming the combo and what is allowed.
pub fn combo(text: &str) -> Result<Combo, String> {
    let lower = text.to_lowercase();
    let parts: Vec<&str> = lower.split('+').map(str::trim).collect();
    let Some((last, mods)) = parts.split_last() else { unreachable!("split yields one part at least") };
    let allowed = "modifiers ctrl/control, alt, shift, super/meta/win/logo, then a key name or one character";
    if mods.is_empty() {
        return Err(format!(
            "combo {text:?}: needs at least one modifier before the key (e.g. ctrl+a; {allowed})"
        ));
    }
    let mut modifiers = Vec::new();
    for m in mods {
        match modifier(m) {
            Some(found) => modifiers.push(found),
            None => return Err(format!("combo {text:?}: {m:?} is not a modifier ({allowed})")),
        }
    }
    let key = match named(last) {
        Some(k) => k,
        None => {
            let mut chars = last.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => of_char(c),
                _ => {
                    return Err(format!(
                        "combo {text:?}: key {last:?} is neither one character nor a key name ({})",
                        named_list()
                    ));
                }
            }
        }
    };
    Ok((modifiers, key))
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_chars_and_combos() {
        assert_eq!(super::named("page_up").map(|k| k.vk), Some(33));
        assert_eq!(super::named("f12").map(|k| k.code), Some("F12".into()));
        for (name, code) in [
            ("Return", "Enter"),
            ("ENTER", "Enter"),
            ("PageUp", "PageUp"),
            ("Page_Up", "PageUp"),
            ("Prior", "PageUp"),
            ("Next", "PageDown"),
            ("ArrowLeft", "ArrowLeft"),
            ("BackSpace", "Backspace"),
            ("Esc", "Escape"),
            ("F12", "F12"),
        ] {
            assert_eq!(super::named(name).map(|k| k.code), Some(code.into()), "{name}");
        }
        assert!(super::named("Hyper_Q").is_none() && super::named("pageupp").is_none());
        assert_eq!(super::of_char('q').code, "KeyQ");
        assert_eq!(super::of_char('7').code, "Digit7");
        let (mods, key) = super::combo("Ctrl+Shift+T").unwrap();
        assert_eq!(mods.iter().map(|m| m.3).sum::<u32>(), 10);
        assert_eq!(key.code, "KeyT");
        assert!(super::combo("a").unwrap_err().contains("at least one modifier"));
        assert!(super::combo("hyper+a").unwrap_err().contains("\"hyper\" is not a modifier"));
    }
}
