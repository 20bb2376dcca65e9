//! charly's dot-path syntax, and its translation into yaml-edit's.
//!
//! A charly path names a value by the map keys that lead to it: `hello.box.base`. Every segment is a
//! map key, never a list index, so `ports.8080` is the key `8080`. A segment may contain any
//! character:
//!
//! | write            | to mean the key     |
//! |------------------|---------------------|
//! | `a\.b`           | `a.b`               |
//! | `"a.b"`          | `a.b` (whole segment quoted; `\"` and `\\` inside) |
//! | `a\\b`           | `a\b`               |
//! | `debian,ubuntu`  | `debian,ubuntu` (commas, brackets and digits need nothing) |
//!
//! yaml-edit gives `\`, `.`, `[` and `]` a meaning and reads an all-digit segment as a list index,
//! so [`KeyPath::to_yaml_edit`] escapes those before a path is handed over.

use std::fmt;

use super::error::{ProjectError, Result};

/// A parsed dot path: a non-empty list of map keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPath {
    keys: Vec<String>,
}

impl KeyPath {
    /// Parses charly's dot-path syntax (see the module docs).
    pub fn parse(path: &str) -> Result<Self> {
        let err = |message: &str| ProjectError::PathSyntax { path: path.to_owned(), message: message.into() };
        let mut keys = Vec::new();
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
                if !matches!(chars.peek(), None | Some('.')) {
                    return Err(err("a quoted segment must be followed by `.` or the end of the path"));
                }
            } else {
                while let Some(&c) = chars.peek() {
                    match c {
                        '.' => break,
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
                    return Err(err("empty segment (a leading, trailing or doubled `.`)"));
                }
            }
            keys.push(key);
            if chars.next().is_none() {
                break;
            }
        }
        Ok(KeyPath { keys })
    }

    /// A path from keys given one by one (no escaping needed).
    ///
    /// # Panics
    /// When `keys` is empty: a path names at least one key.
    #[track_caller]
    pub fn from_keys<I, S>(keys: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let keys: Vec<String> = keys.into_iter().map(Into::into).collect();
        assert!(!keys.is_empty(), "a KeyPath needs at least one key");
        KeyPath { keys }
    }

    /// The keys, outermost first.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// The path in yaml-edit's syntax, every segment escaped so that it is read as a map key.
    pub fn to_yaml_edit(&self) -> String {
        let mut out = String::new();
        for (i, key) in self.keys.iter().enumerate() {
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

    /// The prefix made of the first `n` keys, in charly's syntax (for error messages).
    pub(crate) fn prefix_display(&self, n: usize) -> String {
        KeyPath { keys: self.keys[..n].to_vec() }.to_string()
    }
}

impl fmt::Display for KeyPath {
    /// Writes the path back in charly's syntax, quoting segments that need it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, key) in self.keys.iter().enumerate() {
            if i > 0 {
                f.write_str(".")?;
            }
            // An empty key is written `""`: unquoted, it would read as an empty segment.
            if key.is_empty() || key.contains(['.', '\\', '"']) {
                f.write_str("\"")?;
                for c in key.chars() {
                    if matches!(c, '"' | '\\') {
                        f.write_str("\\")?;
                    }
                    write!(f, "{c}")?;
                }
                f.write_str("\"")?;
            } else {
                f.write_str(key)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use yaml_edit::path::{PathSegment, try_parse_path};

    use super::*;

    #[test]
    fn parses_escapes_and_quotes() {
        for (input, keys) in [
            ("hello.box.base", vec!["hello", "box", "base"]),
            (r"a\.b.c", vec!["a.b", "c"]),
            (r#"distro."debian,ubuntu".package"#, vec!["distro", "debian,ubuntu", "package"]),
            (r#"x."a.b""#, vec!["x", "a.b"]),
            (r#""q\"uote""#, vec!["q\"uote"]),
            (r"back\\slash", vec![r"back\slash"]),
            ("ports.8080", vec!["ports", "8080"]),
            ("a[0].b]", vec!["a[0]", "b]"]),
        ] {
            assert_eq!(KeyPath::parse(input).unwrap().keys(), keys, "{input}");
        }
    }

    #[test]
    fn rejects_malformed_paths() {
        for input in ["", ".a", "a.", "a..b", r"a\", r#""open"#, r#""a"b"#] {
            let err = KeyPath::parse(input).unwrap_err();
            assert!(matches!(err, ProjectError::PathSyntax { .. }), "{input}: {err}");
        }
    }

    #[test]
    fn yaml_edit_reads_every_segment_back_as_the_same_key() {
        let path = KeyPath::from_keys(["a.b", r"c\d", "[0]", "8080", "0", "debian,ubuntu", "x]y"]);
        let segments = try_parse_path(&path.to_yaml_edit()).unwrap();
        let expected: Vec<PathSegment> = path.keys().iter().cloned().map(PathSegment::Key).collect();
        assert_eq!(segments, expected);
    }

    #[test]
    fn display_round_trips() {
        let path = KeyPath::from_keys(["a.b", "q\"", "plain", "debian,ubuntu"]);
        assert_eq!(KeyPath::parse(&path.to_string()).unwrap(), path);
    }

    /// Found by the `keypath` fuzz target: `"".b` (an empty quoted key) was displayed as `.b`,
    /// which does not parse.
    #[test]
    fn an_empty_key_displays_quoted() {
        let path = KeyPath::parse("\"\".b\u{7}").unwrap();
        assert_eq!(path.keys(), ["", "b\u{7}"]);
        assert_eq!(path.to_string(), "\"\".b\u{7}");
        assert_eq!(KeyPath::parse(&path.to_string()).unwrap(), path);
    }
}
