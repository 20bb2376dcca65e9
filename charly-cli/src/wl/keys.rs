//! Key names (XKB keysym names, as `wtype -k` takes them) and key combos (`ctrl+shift+t`),
//! checked before anything reaches the desktop: a name outside the table is an error that
//! lists the table and suggests the nearest name.

/// The key names `key` and the last part of a combo accept (XKB keysym names, case as XKB
/// spells them), besides a single printable character.
pub const KEYS: [&str; 40] = [
    "Return",
    "Escape",
    "Tab",
    "BackSpace",
    "Delete",
    "Insert",
    "Home",
    "End",
    "Page_Up",
    "Page_Down",
    "space",
    "Up",
    "Down",
    "Left",
    "Right",
    "F1",
    "F2",
    "F3",
    "F4",
    "F5",
    "F6",
    "F7",
    "F8",
    "F9",
    "F10",
    "F11",
    "F12",
    "Shift_L",
    "Shift_R",
    "Control_L",
    "Control_R",
    "Alt_L",
    "Alt_R",
    "Super_L",
    "Super_R",
    "Meta_L",
    "Meta_R",
    "Caps_Lock",
    "Menu",
    "Print",
];

/// A combo's modifiers as written and as `wtype -M` names them.
pub const MODIFIERS: [(&str, &str); 8] = [
    ("ctrl", "ctrl"),
    ("control", "ctrl"),
    ("alt", "alt"),
    ("meta", "alt"),
    ("shift", "shift"),
    ("super", "logo"),
    ("win", "logo"),
    ("logo", "logo"),
];

/// A key as wtype is given it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// A keysym name: `wtype -k NAME`.
    Named(&'static str),
    /// A printable character, typed as text (so punctuation needs no keysym name).
    Char(char),
}

impl Key {
    /// wtype's arguments that press and release this key.
    pub fn wtype_args(&self) -> Vec<String> {
        match self {
            Key::Named(name) => vec!["-k".into(), (*name).into()],
            // `-` would be an option: its keysym name instead.
            Key::Char('-') => vec!["-k".into(), "minus".into()],
            Key::Char(c) => vec![c.to_string()],
        }
    }
}

/// The key `name` names: a name of [`KEYS`] (exact case; a different case is refused with the
/// right spelling, unless `any_case`), or a single printable character.
///
/// # Errors
///
/// A message that names the key, lists the table and suggests the nearest name.
pub fn key(name: &str, any_case: bool) -> Result<Key, String> {
    if let Some(k) = KEYS.iter().find(|k| **k == name) {
        return Ok(Key::Named(k));
    }
    let folded = KEYS.iter().find(|k| k.eq_ignore_ascii_case(name));
    if let (true, Some(k)) = (any_case, folded) {
        return Ok(Key::Named(k));
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && !c.is_control()
    {
        return Ok(Key::Char(c));
    }
    // `ctrl+q` is a combination, which a key leaf or step does not take.
    let hint = if folded.is_none() && name.len() > 1 && name.contains('+') {
        " (a combination such as ctrl+q goes to key-combo)".to_owned()
    } else {
        folded.copied().or_else(|| nearest(name)).map(|k| format!(" (did you mean {k}?)")).unwrap_or_default()
    };
    Err(format!(
        "key {name:?} is not a key name charly knows{hint}; use one of {}, or a single printable character",
        KEYS.join(", ")
    ))
}

/// A parsed combo: `wtype -M` modifier names, then the key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Combo {
    /// wtype's names, in the order written, without repeats.
    pub modifiers: Vec<&'static str>,
    /// The key.
    pub key: Key,
}

impl Combo {
    /// wtype's arguments: press the modifiers, the key, release the modifiers in reverse.
    pub fn wtype_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for m in &self.modifiers {
            args.extend(["-M".to_owned(), (*m).to_owned()]);
        }
        args.extend(self.key.wtype_args());
        for m in self.modifiers.iter().rev() {
            args.extend(["-m".to_owned(), (*m).to_owned()]);
        }
        args
    }
}

/// Parses `combo` (`ctrl+shift+t`, `alt+F4`, `super+Return`): modifiers in any case, then one
/// key ([`key`], any case; a letter is taken in lower case, as the reference does).
///
/// # Errors
///
/// A message naming the combo: empty, an empty part (`ctrl++t`), an unknown modifier, no key
/// after the modifiers (`ctrl+shift`), a key outside the table.
pub fn combo(combo: &str) -> Result<Combo, String> {
    let allowed = || MODIFIERS.iter().map(|(m, _)| *m).collect::<Vec<_>>().join(", ");
    let parts: Vec<&str> = combo.split('+').collect();
    if combo.is_empty() || parts.iter().any(|p| p.trim().is_empty()) {
        return Err(format!(
            "key combo {combo:?}: expects modifiers and a key joined by +, e.g. ctrl+shift+t (no empty part)"
        ));
    }
    let (last, mods) = parts.split_last().expect("split gives one part at least");
    let modifier =
        |p: &str| MODIFIERS.iter().find(|(m, _)| m.eq_ignore_ascii_case(p.trim())).map(|(_, w)| *w);
    let mut modifiers: Vec<&'static str> = Vec::new();
    for part in mods {
        match modifier(part) {
            Some(m) if !modifiers.contains(&m) => modifiers.push(m),
            Some(_) => {}
            None => {
                return Err(format!(
                    "key combo {combo:?}: {part:?} is not a modifier (allowed: {}); the key comes last",
                    allowed()
                ));
            }
        }
    }
    if modifier(last).is_some() {
        return Err(format!(
            "key combo {combo:?} has no key: a combo needs a key after its modifiers, e.g. {}+t",
            parts.join("+")
        ));
    }
    let last = last.trim();
    let key = match key(last, true)? {
        Key::Char(c) => Key::Char(c.to_lowercase().next().unwrap_or(c)),
        named => named,
    };
    Ok(Combo { modifiers, key })
}

/// Names other tools give keys of [`KEYS`] (DOM `KeyboardEvent.key` values, xdotool and
/// common shorthand), lower case: a measure of likeness cannot know that Enter is Return.
const ALIASES: [(&str, &str); 20] = [
    ("enter", "Return"),
    ("esc", "Escape"),
    ("del", "Delete"),
    ("ins", "Insert"),
    ("pgup", "Page_Up"),
    ("pageup", "Page_Up"),
    ("pgdn", "Page_Down"),
    ("pagedown", "Page_Down"),
    ("arrowup", "Up"),
    ("arrowdown", "Down"),
    ("arrowleft", "Left"),
    ("arrowright", "Right"),
    ("spacebar", "space"),
    ("ctrl", "Control_L"),
    ("control", "Control_L"),
    ("shift", "Shift_L"),
    ("alt", "Alt_L"),
    ("super", "Super_L"),
    ("win", "Super_L"),
    ("meta", "Meta_L"),
];

/// The name of [`KEYS`] that `name` most likely means, ignoring case: its alias
/// ([`ALIASES`]), else the most alike when one is alike enough (Jaro similarity over 0.7, the
/// measure and threshold of clap's "a similar value exists" hint), the first in table order
/// on a tie (`Shift_L` before `Shift_R`). `Nope` gets none, rather than a far-off `Home`.
fn nearest(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    if let Some((_, key)) = ALIASES.iter().find(|(alias, _)| *alias == lower) {
        return Some(key);
    }
    let mut best: Option<(f64, &'static str)> = None;
    for key in KEYS {
        let similar = strsim::jaro(&lower, &key.to_ascii_lowercase());
        if similar > 0.7 && best.is_none_or(|(b, _)| similar > b) {
            best = Some((similar, key));
        }
    }
    best.map(|(_, key)| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_are_checked_with_a_suggestion() {
        assert_eq!(key("Return", false), Ok(Key::Named("Return")));
        assert_eq!(key("/", false), Ok(Key::Char('/')));
        let err = key("Retrun", false).unwrap_err();
        assert!(
            err.contains("\"Retrun\"") && err.contains("did you mean Return?") && err.contains("Page_Up"),
            "{err}"
        );
        let err = key("return", false).unwrap_err();
        assert!(err.contains("did you mean Return?"), "{err}");
        assert!(key("Hyper_L", false).unwrap_err().contains("did you mean Super_L?"));
        // Other tools' names, ties and combinations (the second trial of stop 26).
        for (given, meant) in
            [("Enter", "Return"), ("Esc", "Escape"), ("Ctrl", "Control_L"), ("Shift", "Shift_L")]
        {
            assert!(key(given, false).unwrap_err().contains(&format!("did you mean {meant}?")), "{given}");
        }
        assert!(
            key("ctrl+q", false).unwrap_err().contains("(a combination such as ctrl+q goes to key-combo)")
        );
        let err = key("Nope", false).unwrap_err();
        assert!(err.starts_with("key \"Nope\" is not a key name charly knows; use one of Return,"), "{err}");
        assert_eq!(Key::Char('-').wtype_args(), ["-k", "minus"]);
    }

    #[test]
    fn combos() {
        let c = combo("ctrl+shift+t").unwrap();
        assert_eq!(c.wtype_args(), ["-M", "ctrl", "-M", "shift", "t", "-m", "shift", "-m", "ctrl"]);
        assert_eq!(combo("Super+return").unwrap().wtype_args(), ["-M", "logo", "-k", "Return", "-m", "logo"]);
        assert_eq!(combo("alt+F4").unwrap().key, Key::Named("F4"));
        assert_eq!(combo("Return").unwrap().modifiers, Vec::<&str>::new());
        let err = combo("ctrl+shift").unwrap_err();
        assert!(err.contains("has no key") && err.contains("ctrl+shift+t"), "{err}");
        assert!(combo("ctrl++t").unwrap_err().contains("no empty part"));
        assert!(combo("hyper+t").unwrap_err().contains("\"hyper\" is not a modifier"));
        assert!(combo("ctrl+Retrun").unwrap_err().contains("did you mean Return?"));
    }
}
