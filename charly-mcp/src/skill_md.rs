//! The YAML frontmatter of a skill's `SKILL.md` (the skills extension, SEP-2640), which the
//! server lists as JSON and the client compares with the listed entry.

use serde_json::Value;

/// The frontmatter block of a `SKILL.md` as a JSON object (a leading byte-order mark is
/// skipped; lines may end in CRLF).
///
/// # Errors
///
/// No frontmatter block, YAML that does not parse, or a block that is not a mapping.
pub(crate) fn frontmatter(bytes: &[u8]) -> Result<serde_json::Map<String, Value>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "SKILL.md is not UTF-8".to_owned())?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    if lines.next().map(str::trim_end) != Some("---") {
        return Err("SKILL.md does not start with a `---` frontmatter block".into());
    }
    let start = text.find('\n').map_or(text.len(), |i| i + 1);
    let mut end = start;
    for line in lines {
        if line.trim_end() == "---" {
            let value: Value = yaml_serde::from_str(&text[start..end])
                .map_err(|e| format!("the SKILL.md frontmatter is not YAML: {e}"))?;
            return match value {
                Value::Object(object) => Ok(object),
                other => Err(format!("the SKILL.md frontmatter is {}, not a mapping", kind(&other))),
            };
        }
        end += line.len();
    }
    Err("the SKILL.md frontmatter has no closing `---`".into())
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}
