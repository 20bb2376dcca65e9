//! Edits of a dotenv text (`KEY=VALUE` lines), as `secrets gpg set|unset` make them: the rest
//! of the file (comments, order, blank lines) stays as it was.

/// Whether `line` assigns `key` (`KEY=...`, `export KEY=...`, or a bare `KEY`).
fn assigns(line: &str, key: &str) -> bool {
    let line = line.trim_start();
    let line = line.strip_prefix("export ").unwrap_or(line);
    line == key || line.strip_prefix(key).is_some_and(|rest| rest.trim_start().starts_with('='))
}

/// A value as a dotenv line writes it: bare when it is plain, else double-quoted with `\`,
/// `"`, `$` and newlines escaped.
pub(crate) fn quote(value: &str) -> String {
    let plain =
        !value.is_empty() && value.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:@+,%=".contains(c));
    if plain {
        return value.to_owned();
    }
    let mut out = String::from("\"");
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// Replaces the first assignment of `key` (dropping later ones), or appends `KEY=VALUE` before
/// the trailing blank lines; the text ends with a newline.
pub(crate) fn upsert(text: &str, key: &str, value: &str) -> String {
    let line = format!("{key}={}", quote(value));
    let mut lines: Vec<String> = Vec::new();
    let mut done = false;
    for existing in text.lines() {
        if assigns(existing, key) {
            if !done {
                lines.push(line.clone());
                done = true;
            }
        } else {
            lines.push(existing.to_owned());
        }
    }
    if !done {
        let at = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(0, |i| i + 1);
        lines.insert(at, line);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Removes every assignment of `key`; `None` when there was none.
pub(crate) fn unset(text: &str, key: &str) -> Option<String> {
    let kept: Vec<&str> = text.lines().filter(|l| !assigns(l, key)).collect();
    if kept.len() == text.lines().count() {
        return None;
    }
    let mut out = kept.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    Some(out)
}

/// `export KEY='value'` with `'` written as `'\''`.
pub(crate) fn export_line(key: &str, value: &str) -> String {
    format!("export {key}='{}'", value.replace('\'', "'\\''"))
}

/// A variable name a shell accepts.
pub(crate) fn is_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_replaces_the_first_and_appends_before_trailing_blanks() {
        assert_eq!(upsert("# c\nA=1\nB=2\nA=3\n", "A", "x y"), "# c\nA=\"x y\"\nB=2\n");
        assert_eq!(upsert("A=1\n\n", "B", "2"), "A=1\nB=2\n\n");
        assert_eq!(upsert("", "B", "2"), "B=2\n");
        assert_eq!(unset("A=1\nAB=2\nexport A=3\n", "A").as_deref(), Some("AB=2\n"));
        assert_eq!(unset("A=1\n", "B"), None);
        assert_eq!(export_line("K", "it's"), "export K='it'\\''s'");
        let text = upsert("", "Q", "a\"b\\c\nd$");
        assert_eq!(crate::config::parse_dotenv(&text)["Q"], "a\"b\\c\nd$");
        assert!(is_name("_A1") && !is_name("1A") && !is_name("A-B") && !is_name(""));
    }
}
