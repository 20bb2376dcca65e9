//! The `.env` file of the project directory: `KEY=VALUE` lines that count as environment
//! variables for settings (after the real environment, before config.yml), as the reference
//! loads it at start-up without overriding real variables. charly does not change its own
//! environment for this: [`super::Settings`] consults the map.

use std::collections::BTreeMap;
use std::path::Path;

/// Parses dotenv text: `KEY=VALUE`, optional `export `, `#` comments, single or double quotes
/// around the value (no escapes inside single quotes; `\n`, `\"`, `\\` inside double quotes).
pub fn parse(text: &str) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let Some((key, value)) = line.split_once('=') else { continue };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        vars.insert(key.to_owned(), unquote(value.trim()));
    }
    vars
}

/// The value of one dotenv line, quotes removed.
pub fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('\'') && value.ends_with('\'') {
        return value[1..value.len() - 1].to_owned();
    }
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        let mut out = String::new();
        let mut chars = value[1..value.len() - 1].chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('n') => out.push('\n'),
                    Some(other) => out.push(other),
                    None => out.push('\\'),
                }
            } else {
                out.push(c);
            }
        }
        return out;
    }
    // An unquoted value ends at ` #` (an inline comment).
    value.split(" #").next().unwrap_or_default().trim_end().to_owned()
}

/// The variables of `dir/.env`; none when it is missing or unreadable.
pub fn load(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(dir.join(".env")).map(|text| parse(&text)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_comments_and_export() {
        let vars = super::parse("# c\nexport A=1\nB='x y'\nC=\"a\\\"b\"\nD=v # note\nbad line\n");
        assert_eq!(vars["A"], "1");
        assert_eq!(vars["B"], "x y");
        assert_eq!(vars["C"], "a\"b");
        assert_eq!(vars["D"], "v");
        assert_eq!(vars.len(), 4);
    }
}
