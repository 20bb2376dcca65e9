//! X keysyms (X11 `keysymdef.h`) for `check.vnc.key` and `check.vnc.type`.

/// The key names `key` accepts and their keysyms.
pub const KEYS: &[(&str, u32)] = &[
    ("Return", 0xff0d),
    ("Enter", 0xff0d),
    ("Escape", 0xff1b),
    ("Tab", 0xff09),
    ("BackSpace", 0xff08),
    ("Delete", 0xffff),
    ("Home", 0xff50),
    ("End", 0xff57),
    ("Page_Up", 0xff55),
    ("Page_Down", 0xff56),
    ("Left", 0xff51),
    ("Up", 0xff52),
    ("Right", 0xff53),
    ("Down", 0xff54),
    ("Insert", 0xff63),
    ("F1", 0xffbe),
    ("F2", 0xffbf),
    ("F3", 0xffc0),
    ("F4", 0xffc1),
    ("F5", 0xffc2),
    ("F6", 0xffc3),
    ("F7", 0xffc4),
    ("F8", 0xffc5),
    ("F9", 0xffc6),
    ("F10", 0xffc7),
    ("F11", 0xffc8),
    ("F12", 0xffc9),
    ("Shift_L", 0xffe1),
    ("Shift_R", 0xffe2),
    ("Control_L", 0xffe3),
    ("Control_R", 0xffe4),
    ("Caps_Lock", 0xffe5),
    ("Meta_L", 0xffe7),
    ("Meta_R", 0xffe8),
    ("Alt_L", 0xffe9),
    ("Alt_R", 0xffea),
    ("Super_L", 0xffeb),
    ("Super_R", 0xffec),
    ("space", 0x0020),
];

/// The keysym of `name` (as X names them, in any case; a single Latin-1 character is its
/// own keysym, case and all).
///
/// # Errors
///
/// A message listing the table, for a name outside it.
pub fn keysym(name: &str) -> Result<u32, String> {
    if let Some((_, k)) = KEYS.iter().find(|(n, _)| *n == name) {
        return Ok(*k);
    }
    // A name of several characters in another case names one key too (`return`, `PAGE_UP`);
    // a single character's case is the character's (`a` and `A` are two keysyms).
    if name.chars().nth(1).is_some()
        && let Some((_, k)) = KEYS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        return Ok(*k);
    }
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next())
        && ('\u{20}'..='\u{ff}').contains(&c)
    {
        return Ok(u32::from(c));
    }
    if let Some((held, _)) = name.split_once('+').filter(|_| name.len() > 1) {
        // `ctrl+a`: one key per call; a held modifier is `rfb key` events, in order.
        return Err(format!(
            "key {name:?}: `key` presses one key, not a combination; hold a modifier with rfb key \
             events: `rfb key '{{\"key\": KEYSYM, \"down\": true}}'` for {held:?}, the key, then \
             `\"down\": false` for each (keysyms: Control_L 65507, Shift_L 65505, Alt_L 65513)"
        ));
    }
    let names = KEYS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    Err(format!(
        "key {name:?} is not a key name charly knows; use one of {names}, or a single Latin-1 character"
    ))
}

/// The keysym that types `c`: `\n`/`\r` Return, `\t` Tab, `\u{8}` BackSpace, U+0020–U+00FF
/// the code point.
///
/// # Errors
///
/// A message naming the character, for anything else.
pub fn char_keysym(c: char) -> Result<u32, String> {
    match c {
        '\n' | '\r' => Ok(0xff0d),
        '\t' => Ok(0xff09),
        '\u{8}' => Ok(0xff08),
        '\u{20}'..='\u{ff}' => Ok(u32::from(c)),
        other => Err(format!(
            "text: {other:?} cannot be typed over VNC by charly (U+0020-U+00FF, newline, tab and backspace can)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A combination is named as such (trial 2: `ctrl+a` got the key table); `+` alone is a key.
    #[test]
    fn a_combination_says_key_takes_one() {
        let e = keysym("ctrl+a").unwrap_err();
        assert!(e.contains("not a combination") && e.contains("65507"), "{e}");
        assert_eq!(keysym("+"), Ok(0x2b));
    }

    #[test]
    fn names_and_characters() {
        assert_eq!(keysym("Return"), Ok(0xff0d));
        assert_eq!(keysym("return"), Ok(0xff0d));
        assert_eq!(keysym("PAGE_UP"), Ok(0xff55));
        assert_eq!((keysym("a"), keysym("A")), (Ok(0x61), Ok(0x41)));
        assert_eq!(keysym("F12"), Ok(0xffc9));
        assert_eq!(keysym("a"), Ok(0x61));
        let err = keysym("Hyper").unwrap_err();
        assert!(err.contains("\"Hyper\"") && err.contains("Page_Up"), "{err}");
        assert_eq!(char_keysym('\n'), Ok(0xff0d));
        assert!(char_keysym('€').unwrap_err().contains('€'));
    }
}
