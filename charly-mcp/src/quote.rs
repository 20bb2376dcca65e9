//! Values a client sent, quoted back in error messages and log lines: shortened, one rule for
//! all of them.
//!
//! A value of at most [`MAX_QUOTED`] characters is quoted whole; a longer one as its first
//! [`MAX_QUOTED`] characters, `…` and how long it was: `xxxx… (3145728 characters)`. So an
//! answer that names what was wrong (an unknown tool, an argument's key or value, a path) stays
//! small whatever the input, and so does the log line rmcp writes for an error answer: a 3 MiB
//! path once came back as a 3 MiB message (trial 28, M5).
//!
//! - [`Quoted`] formats one value: `Display` as it is (`` `{}` ``), `Debug` quoted and escaped
//!   as `str`'s `Debug` (`{:?}`), the length after the closing quote.
//! - [`shorten_in`] shortens the long values of a request ([`long_strings`]) wherever they
//!   appear in a message someone else wrote (clap's errors, a JSON Schema validator's, a
//!   command's).
//!
//! ```
//! use charly_mcp::quote::{Quoted, shorten_in};
//!
//! assert_eq!(format!("unknown tool `{}`", Quoted::new("echo")), "unknown tool `echo`");
//! let long = "x".repeat(100);
//! let shown = format!("refusing path {:?}", Quoted::new(long.as_str()));
//! assert_eq!(shown, format!("refusing path \"{}…\" (100 characters)", "x".repeat(80)));
//! let message = format!("invalid value '{long}' for '--timeout'");
//! assert_eq!(
//!     shorten_in(&message, [long.as_str()]),
//!     format!("invalid value '{}… (100 characters)' for '--timeout'", "x".repeat(80)),
//! );
//! ```

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// The most characters of a value quoted whole: 80.
pub const MAX_QUOTED: usize = 80;

/// One value as quoted in a message: whole up to [`MAX_QUOTED`] characters, else its head, `…`
/// and its length in characters.
#[derive(Clone, PartialEq, Eq)]
pub struct Quoted<'a>(Cow<'a, str>);

impl<'a> Quoted<'a> {
    /// `value`, to quote.
    pub fn new(value: impl Into<Cow<'a, str>>) -> Quoted<'a> {
        Quoted(value.into())
    }

    /// A path, to quote (lossily, where it is not UTF-8).
    pub fn path(path: &'a Path) -> Quoted<'a> {
        Quoted(path.to_string_lossy())
    }

    /// The head quoted and the length of the whole, when the value is too long to quote whole.
    fn cut(&self) -> Option<(&str, usize)> {
        let (at, _) = self.0.char_indices().nth(MAX_QUOTED)?;
        Some((&self.0[..at], self.0.chars().count()))
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cut() {
            None => f.write_str(&self.0),
            Some((head, chars)) => write!(f, "{head}… ({chars} characters)"),
        }
    }
}

impl fmt::Debug for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cut() {
            None => write!(f, "{:?}", self.0),
            Some((head, chars)) => {
                let quoted = format!("{head:?}");
                let open = &quoted[..quoted.len() - 1];
                write!(f, "{open}…\" ({chars} characters)")
            }
        }
    }
}

/// `message` with every value of `values` longer than [`MAX_QUOTED`] characters shortened
/// where it appears, as it is and as `str`'s `Debug` escapes it (the form `{:?}` quotes it
/// in). For messages quoting a request's values that charly did not write itself; borrowed
/// unchanged when there is nothing to shorten.
pub fn shorten_in<'m, 'v>(message: &'m str, values: impl IntoIterator<Item = &'v str>) -> Cow<'m, str> {
    let mut message = Cow::Borrowed(message);
    for value in values {
        let quoted = Quoted::new(value);
        let Some((head, chars)) = quoted.cut() else { continue };
        if message.contains(value) {
            message = Cow::Owned(message.replace(value, &quoted.to_string()));
        }
        let escaped = format!("{value:?}");
        let escaped = &escaped[1..escaped.len() - 1];
        if escaped != value && message.contains(escaped) {
            let head = format!("{head:?}");
            let shown = format!("{}… ({chars} characters)", &head[1..head.len() - 1]);
            message = Cow::Owned(message.replace(escaped, &shown));
        }
    }
    message
}

/// The strings in `args` (a request's arguments), object keys included, too long to quote
/// whole: what a message about them must not repeat in full ([`shorten_in`] them).
pub fn long_strings(args: &crate::JsonObject) -> Vec<&str> {
    fn walk<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
        use serde_json::Value;
        // Bytes first: a string of at most MAX_QUOTED bytes has at most as many characters.
        let long = |s: &str| s.len() > MAX_QUOTED && s.chars().nth(MAX_QUOTED).is_some();
        match value {
            Value::String(s) if long(s) => out.push(s),
            Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
            Value::Object(map) => {
                for (key, v) in map {
                    if long(key) {
                        out.push(key);
                    }
                    walk(v, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for (key, value) in args {
        if key.len() > MAX_QUOTED && key.chars().nth(MAX_QUOTED).is_some() {
            out.push(key.as_str());
        }
        walk(value, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_quoted_whole() {
        let exact = "é".repeat(MAX_QUOTED);
        assert_eq!(Quoted::new(exact.as_str()).to_string(), exact);
        assert_eq!(format!("{:?}", Quoted::new("a\"b")), r#""a\"b""#);
        assert_eq!(shorten_in("nothing long", ["short"]), Cow::Borrowed("nothing long"));
    }

    #[test]
    fn long_values_keep_their_head_and_say_how_long_they_were() {
        let long = format!("{}😀", "é".repeat(MAX_QUOTED));
        let shown = Quoted::new(long.as_str()).to_string();
        assert_eq!(shown, format!("{}… (81 characters)", "é".repeat(MAX_QUOTED)));
        let debug = format!("{:?}", Quoted::new(format!("\n{}", "y".repeat(100))));
        assert_eq!(debug, format!("\"\\n{}…\" (101 characters)", "y".repeat(79)));
    }

    #[test]
    fn long_values_are_shortened_where_a_message_quotes_them() {
        let long = format!("a\"{}", "b".repeat(200));
        let message = format!("invalid url {long:?}; also `{long}`");
        let shortened = shorten_in(&message, [long.as_str(), "short"]);
        assert!(shortened.len() < 250, "{shortened}");
        assert_eq!(shortened.matches("(202 characters)").count(), 2, "{shortened}");
        assert!(shortened.starts_with("invalid url \"a\\\"bbb"), "{shortened}");
    }
}
