//! charly's dot-path syntax, and its translation into yaml-edit's.
//!
//! A charly path names a value by the map keys and list indexes that lead to it:
//! `hello.box.base`, `hello.box.candy[0]`. A path starts with a key. A key segment may contain
//! any character; an index is `[N]` (decimal digits) right after a key or another index, and
//! names item N of a list (an edit may replace an item, or append with N equal to the length).
//! A bare number is a key, never an index: `ports.8080` is the key `8080`.
//!
//! | write            | to mean                 |
//! |------------------|-------------------------|
//! | `a.b`            | key `a`, then key `b`   |
//! | `a[0]`           | key `a`, then item 0    |
//! | `a\.b`           | the key `a.b`           |
//! | `"a.b"`          | the key `a.b` (a whole segment quoted; `\"` and `\\` inside) |
//! | `a\[0\]`         | the key `a[0]`          |
//! | `a\\b`           | the key `a\b`           |
//! | `debian,ubuntu`  | the key `debian,ubuntu` (commas and digits need nothing) |
//!
//! yaml-edit gives `\`, `.`, `[` and `]` a meaning and reads an all-digit segment as a list index,
//! so [`KeyPath::to_yaml_edit`] escapes those in keys before a path is handed over.

use std::fmt;

use super::error::{ProjectError, Result};

/// One step of a [`KeyPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A map key.
    Key(String),
    /// A list index (`[N]`).
    Index(usize),
}

impl fmt::Display for Segment {
    /// The segment alone, in charly's syntax: a key as [`KeyPath`] writes it, an index as `[N]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Segment::Key(key) => write_key(f, key),
            Segment::Index(index) => write!(f, "[{index}]"),
        }
    }
}

/// A parsed dot path: a map key, then any number of keys and list indexes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPath {
    segments: Vec<Segment>,
}

impl KeyPath {
    /// Parses charly's dot-path syntax (see the module docs).
    pub fn parse(path: &str) -> Result<Self> {
        let err = |message: &str| ProjectError::PathSyntax { path: path.to_owned(), message: message.into() };
        let mut segments = Vec::new();
        let mut chars = path.chars().peekable();
        loop {
            let mut key = String::new();
            if chars.peek() == Some(&'"') {
                chars.next();
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => key.push(chars.next().ok_or_else(|| err("unclosed quote"))?),
                        Some(c) => key.push(c),
                        None => return Err(err("unclosed quote")),
                    }
                }
                if !matches!(chars.peek(), None | Some('.' | '[')) {
                    return Err(err(
                        "a quoted segment must be followed by `.`, `[N]` or the end of the path",
                    ));
                }
            } else {
                while let Some(&c) = chars.peek() {
                    match c {
                        '.' | '[' => break,
                        ']' => return Err(err("a `]` without its `[`; write `\\]` for a `]` in a key")),
                        '\\' => {
                            chars.next();
                            key.push(chars.next().ok_or_else(|| err("the path ends with a lone `\\`"))?);
                        }
                        _ => {
                            key.push(c);
                            chars.next();
                        }
                    }
                }
                if key.is_empty() {
                    let message = if segments.is_empty() && chars.peek() == Some(&'[') {
                        "a path starts with a key (`[N]` follows the key of a list)"
                    } else {
                        "empty segment (a leading, trailing or doubled `.`)"
                    };
                    return Err(err(message));
                }
            }
            segments.push(Segment::Key(key));
            while chars.peek() == Some(&'[') {
                chars.next();
                let mut digits = String::new();
                loop {
                    match chars.next() {
                        Some(']') => break,
                        Some(c) => digits.push(c),
                        None => return Err(err("an unclosed `[`; write `\\[` for a `[` in a key")),
                    }
                }
                let index = digits
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                    .then(|| digits.parse::<usize>().ok())
                    .flatten()
                    .ok_or_else(|| {
                        err(&format!("`[{digits}]` is not a list index (`[0]`, `[1]`, ...); write `\\[` for a `[` in a key"))
                    })?;
                segments.push(Segment::Index(index));
            }
            match chars.next() {
                None => break,
                Some('.') => {}
                Some(_) => {
                    return Err(err("a `[N]` must be followed by `.`, another `[N]` or the end of the path"));
                }
            }
        }
        Ok(KeyPath { segments })
    }

    /// A path made of map keys given one by one (no escaping needed).
    ///
    /// # Panics
    /// When `keys` is empty: a path names at least one key.
    #[track_caller]
    pub fn from_keys<I, S>(keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let segments: Vec<Segment> = keys.into_iter().map(|k| Segment::Key(k.into())).collect();
        assert!(!segments.is_empty(), "a KeyPath needs at least one key");
        KeyPath { segments }
    }

    /// The segments, outermost first; the first is always a key.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// The first key (the node the path starts at).
    pub fn first_key(&self) -> &str {
        match &self.segments[0] {
            Segment::Key(key) => key,
            Segment::Index(_) => unreachable!("a KeyPath starts with a key"),
        }
    }

    /// The path in yaml-edit's syntax, every key escaped so that it is read as a map key.
    pub fn to_yaml_edit(&self) -> String {
        let mut out = String::new();
        for (i, segment) in self.segments.iter().enumerate() {
            let key = match segment {
                Segment::Index(index) => {
                    out.push_str(&format!("[{index}]"));
                    continue;
                }
                Segment::Key(key) => key,
            };
            if i > 0 {
                out.push('.');
            }
            // A segment with an escape in it is always a key for yaml-edit; escaping the first
            // digit keeps `8080` from becoming a list index.
            let all_digits = key.bytes().all(|b| b.is_ascii_digit());
            for (j, c) in key.chars().enumerate() {
                if matches!(c, '\\' | '.' | '[' | ']') || (all_digits && j == 0) {
                    out.push('\\');
                }
                out.push(c);
            }
        }
        out
    }

    /// The prefix made of the first `n` segments (`n` at least 1).
    pub(crate) fn prefix(&self, n: usize) -> KeyPath {
        KeyPath { segments: self.segments[..n].to_vec() }
    }
}

/// Writes `key` in charly's syntax, quoting it when it needs it.
fn write_key(f: &mut fmt::Formatter<'_>, key: &str) -> fmt::Result {
    // An empty key is written `""`: unquoted, it would read as an empty segment.
    if key.is_empty() || key.contains(['.', '\\', '"', '[', ']']) {
        f.write_str("\"")?;
        for c in key.chars() {
            if matches!(c, '"' | '\\') {
                f.write_str("\\")?;
            }
            write!(f, "{c}")?;
        }
        f.write_str("\"")
    } else {
        f.write_str(key)
    }
}

impl fmt::Display for KeyPath {
    /// Writes the path back in charly's syntax, quoting keys that need it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            if i > 0 && matches!(segment, Segment::Key(_)) {
                f.write_str(".")?;
            }
            write!(f, "{segment}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use yaml_edit::path::{PathSegment, try_parse_path};

    use super::*;

    fn keys(path: &KeyPath) -> Vec<String> {
        path.segments().iter().map(ToString::to_string).collect()
    }

    #[test]
    fn parses_escapes_quotes_and_indexes() {
        for (input, segments) in [
            ("hello.box.base", vec!["hello", "box", "base"]),
            (r"a\.b.c", vec!["\"a.b\"", "c"]),
            (r#"distro."debian,ubuntu".package"#, vec!["distro", "debian,ubuntu", "package"]),
            (r#"x."a.b""#, vec!["x", "\"a.b\""]),
            (r#""q\"uote""#, vec![r#""q\"uote""#]),
            (r"back\\slash", vec![r#""back\\slash""#]),
            ("ports.8080", vec!["ports", "8080"]),
            ("web.box.candy[0]", vec!["web", "box", "candy", "[0]"]),
            ("a[1][2].b", vec!["a", "[1]", "[2]", "b"]),
            (r#""a.b"[3]"#, vec!["\"a.b\"", "[3]"]),
            (r"a\[0\].b\]", vec!["\"a[0]\"", "\"b]\""]),
        ] {
            assert_eq!(keys(&KeyPath::parse(input).unwrap()), segments, "{input}");
        }
        assert_eq!(KeyPath::parse("web.box.candy[10]").unwrap().segments()[3..], [Segment::Index(10)]);
    }

    #[test]
    fn rejects_malformed_paths() {
        for input in [
            "", ".a", "a.", "a..b", r"a\", r#""open"#, r#""a"b"#, "[0]", "a[", "a[x]", "a[]", "a[-1]",
            "a[0]b", "a]", "a.[0]", "a[0].",
        ] {
            let err = KeyPath::parse(input).unwrap_err();
            assert!(matches!(err, ProjectError::PathSyntax { .. }), "{input}: {err}");
        }
        let err = KeyPath::parse("web.box.candy[x]").unwrap_err().to_string();
        assert!(
            err.contains("`[x]` is not a list index (`[0]`, `[1]`, ...); write `\\[` for a `[` in a key"),
            "{err}"
        );
    }

    #[test]
    fn yaml_edit_reads_every_segment_back_the_same() {
        let mut path = KeyPath::from_keys(["a.b", r"c\d", "[0]", "8080", "0", "debian,ubuntu", "x]y"]);
        path.segments.insert(3, Segment::Index(4));
        let parsed = try_parse_path(&path.to_yaml_edit()).unwrap();
        let expected: Vec<PathSegment> = path
            .segments()
            .iter()
            .map(|s| match s {
                Segment::Key(k) => PathSegment::Key(k.clone()),
                Segment::Index(i) => PathSegment::Index(*i),
            })
            .collect();
        assert_eq!(parsed, expected);
    }

    #[test]
    fn display_round_trips() {
        let mut path = KeyPath::from_keys(["a.b", "q\"", "plain", "debian,ubuntu", "l[1]"]);
        path.segments.push(Segment::Index(2));
        path.segments.push(Segment::Index(0));
        path.segments.push(Segment::Key("k".into()));
        assert_eq!(path.to_string(), r#""a.b"."q\"".plain.debian,ubuntu."l[1]"[2][0].k"#);
        assert_eq!(KeyPath::parse(&path.to_string()).unwrap(), path);
    }

    /// Found by the `keypath` fuzz target: `"".b` (an empty quoted key) was displayed as `.b`,
    /// which does not parse.
    #[test]
    fn an_empty_key_displays_quoted() {
        let path = KeyPath::parse("\"\".b\u{7}").unwrap();
        assert_eq!(path, KeyPath::from_keys(["", "b\u{7}"]));
        assert_eq!(path.to_string(), "\"\".b\u{7}");
        assert_eq!(KeyPath::parse(&path.to_string()).unwrap(), path);
    }
}
