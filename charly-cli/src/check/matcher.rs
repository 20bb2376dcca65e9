//! Output matchers: `stdout:`/`stderr:` as a scalar (equals), a map, or a list of maps.
//!
//! | key | passes when the output (trailing line breaks removed) ... |
//! |---|---|
//! | `equals` | is the value |
//! | `not_equals` | is not the value |
//! | `contains` | contains the value |
//! | `not_contains` | does not contain the value |
//! | `matches` | matches the regular expression (`regex` crate syntax, unanchored) |
//! | `not_matches` | does not match it |
//! | `lt`, `le`, `gt`, `ge` | is a number `<`, `<=`, `>`, `>=` the value |

use std::fmt;

use serde_json::Value;

/// Every matcher key, in the order errors list them.
pub const MATCHER_KINDS: [&str; 10] =
    ["equals", "not_equals", "contains", "not_contains", "matches", "not_matches", "lt", "le", "gt", "ge"];

/// One condition on a check's output.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Matcher {
    /// `equals`.
    Equals(String),
    /// `not_equals`.
    NotEquals(String),
    /// `contains`.
    Contains(String),
    /// `not_contains`.
    NotContains(String),
    /// `matches`.
    Matches(regex::Regex),
    /// `not_matches`.
    NotMatches(regex::Regex),
    /// `lt`.
    Lt(f64),
    /// `le`.
    Le(f64),
    /// `gt`.
    Gt(f64),
    /// `ge`.
    Ge(f64),
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl fmt::Display for Matcher {
    /// `equals "ok"`, `matches "^a"`, `lt 5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Matcher::Equals(s) => write!(f, "equals {s:?}"),
            Matcher::NotEquals(s) => write!(f, "not_equals {s:?}"),
            Matcher::Contains(s) => write!(f, "contains {s:?}"),
            Matcher::NotContains(s) => write!(f, "not_contains {s:?}"),
            Matcher::Matches(r) => write!(f, "matches {:?}", r.as_str()),
            Matcher::NotMatches(r) => write!(f, "not_matches {:?}", r.as_str()),
            Matcher::Lt(n) => write!(f, "lt {n}"),
            Matcher::Le(n) => write!(f, "le {n}"),
            Matcher::Gt(n) => write!(f, "gt {n}"),
            Matcher::Ge(n) => write!(f, "ge {n}"),
        }
    }
}

impl Matcher {
    /// Builds one matcher from its key and YAML value (as JSON).
    ///
    /// # Errors
    ///
    /// A message for an unknown key (listing [`MATCHER_KINDS`]), a non-scalar value, a bad
    /// regex, or a non-number for `lt`/`le`/`gt`/`ge`.
    pub fn new(kind: &str, value: &Value) -> Result<Matcher, String> {
        let text = || scalar_text(value).ok_or_else(|| format!("{kind}: expects a string or number"));
        let regex = || {
            let pattern = text()?;
            regex::Regex::new(&pattern).map_err(|e| format!("{kind}: invalid regular expression: {e}"))
        };
        let number = || match value {
            Value::Number(n) => n.as_f64().ok_or_else(|| format!("{kind}: expects a number")),
            Value::String(s) => {
                s.trim().parse::<f64>().map_err(|_| format!("{kind}: expects a number, got {s:?}"))
            }
            _ => Err(format!("{kind}: expects a number")),
        };
        Ok(match kind {
            "equals" => Matcher::Equals(text()?),
            "not_equals" => Matcher::NotEquals(text()?),
            "contains" => Matcher::Contains(text()?),
            "not_contains" => Matcher::NotContains(text()?),
            "matches" => Matcher::Matches(regex()?),
            "not_matches" => Matcher::NotMatches(regex()?),
            "lt" => Matcher::Lt(number()?),
            "le" => Matcher::Le(number()?),
            "gt" => Matcher::Gt(number()?),
            "ge" => Matcher::Ge(number()?),
            other => {
                return Err(format!(
                    "unknown matcher {other:?} (expected one of: {})",
                    MATCHER_KINDS.join(", ")
                ));
            }
        })
    }

    /// Parses a `stdout:`/`stderr:` value: a scalar (equals), a map of matchers, or a list of
    /// such maps. `null` means no matcher.
    ///
    /// # Errors
    ///
    /// Every problem found, each a message without the field name.
    pub fn parse_all(value: &Value) -> Result<Vec<Matcher>, Vec<String>> {
        let mut matchers = Vec::new();
        let mut problems = Vec::new();
        let maps: Vec<&serde_json::Map<String, Value>> = match value {
            Value::Null => Vec::new(),
            Value::Object(m) => vec![m],
            Value::Array(items) => items
                .iter()
                .filter_map(|item| {
                    let map = item.as_object();
                    if map.is_none() {
                        problems.push("a list must hold maps of matchers".to_owned());
                    }
                    map
                })
                .collect(),
            scalar => {
                match scalar_text(scalar) {
                    Some(text) => matchers.push(Matcher::Equals(text)),
                    None => problems.push("expects a string, a map of matchers or a list of them".to_owned()),
                }
                Vec::new()
            }
        };
        for m in maps {
            if m.is_empty() {
                problems.push("an empty map has no matcher".to_owned());
            }
            for (kind, v) in m {
                match Matcher::new(kind, v) {
                    Ok(matcher) => matchers.push(matcher),
                    Err(e) => problems.push(e),
                }
            }
        }
        if problems.is_empty() { Ok(matchers) } else { Err(problems) }
    }

    /// Checks `output`; `Err` says why it failed, naming `what` (`stdout`, `stderr`).
    ///
    /// # Errors
    ///
    /// The failure, e.g. `stdout "pong" does not equal "ok"`.
    pub fn check(&self, what: &str, output: &str) -> Result<(), String> {
        let actual = output.trim_end_matches(['\n', '\r']);
        let shown = shorten(actual);
        let fail = |why: String| Err(format!("{what} {shown:?} {why}"));
        match self {
            Matcher::Equals(want) if actual == want.trim_end_matches(['\n', '\r']) => Ok(()),
            Matcher::Equals(want) => fail(format!("does not equal {want:?}")),
            Matcher::NotEquals(want) if actual != want.trim_end_matches(['\n', '\r']) => Ok(()),
            Matcher::NotEquals(want) => fail(format!("equals {want:?}")),
            Matcher::Contains(want) if actual.contains(want.as_str()) => Ok(()),
            Matcher::Contains(want) => fail(format!("does not contain {want:?}")),
            Matcher::NotContains(want) if !actual.contains(want.as_str()) => Ok(()),
            Matcher::NotContains(want) => fail(format!("contains {want:?}")),
            Matcher::Matches(re) if re.is_match(actual) => Ok(()),
            Matcher::Matches(re) => fail(format!("does not match /{}/", re.as_str())),
            Matcher::NotMatches(re) if !re.is_match(actual) => Ok(()),
            Matcher::NotMatches(re) => fail(format!("matches /{}/", re.as_str())),
            Matcher::Lt(n) | Matcher::Le(n) | Matcher::Gt(n) | Matcher::Ge(n) => {
                let Ok(value) = actual.trim().parse::<f64>() else {
                    return fail("is not a number".to_owned());
                };
                let (ok, op) = match self {
                    Matcher::Lt(_) => (value < *n, "<"),
                    Matcher::Le(_) => (value <= *n, "<="),
                    Matcher::Gt(_) => (value > *n, ">"),
                    _ => (value >= *n, ">="),
                };
                if ok { Ok(()) } else { fail(format!("is not {op} {n}")) }
            }
        }
    }
}

/// A scalar as text: strings as is, numbers and booleans as YAML prints them.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Output shown in a failure: at most 200 characters.
fn shorten(text: &str) -> String {
    const MAX: usize = 200;
    if text.chars().count() <= MAX {
        return text.to_owned();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(spec: Value, output: &str) -> Result<(), String> {
        let matchers = Matcher::parse_all(&spec).map_err(|p| p.join("; "))?;
        matchers.iter().try_for_each(|m| m.check("stdout", output))
    }

    #[test]
    fn every_kind_passes_and_fails() {
        let cases = [
            (json!("ok"), "ok\n", true),
            (json!("ok"), "okay\n", false),
            (json!(42), "42\n", true),
            (json!({"equals": "a"}), "a", true),
            (json!({"not_equals": "a"}), "a\n", false),
            (json!({"not_equals": "a"}), "b", true),
            (json!({"contains": "ll"}), "hello", true),
            (json!({"contains": "zz"}), "hello", false),
            (json!({"not_contains": "zz"}), "hello", true),
            (json!({"not_contains": "ll"}), "hello", false),
            (json!({"matches": "^h.*o$"}), "hello\n", true),
            (json!({"matches": "^x"}), "hello", false),
            (json!({"not_matches": "^x"}), "hello", true),
            (json!({"not_matches": "l+"}), "hello", false),
            (json!({"lt": 10}), "9\n", true),
            (json!({"lt": 10}), "10", false),
            (json!({"le": 10}), "10", true),
            (json!({"gt": "1.5"}), "2", true),
            (json!({"gt": 2}), "2", false),
            (json!({"ge": 2}), "2", true),
            (json!({"ge": 2}), "abc", false),
            (json!([{"contains": "a"}, {"contains": "b"}]), "ab", true),
            (json!([{"contains": "a"}, {"contains": "c"}]), "ab", false),
            (json!({"contains": "a", "not_contains": "z"}), "ab", true),
        ];
        for (spec, output, pass) in cases {
            assert_eq!(check(spec.clone(), output).is_ok(), pass, "{spec} on {output:?}");
        }
    }

    #[test]
    fn failure_messages() {
        assert_eq!(check(json!("ok"), "pong\n").unwrap_err(), r#"stdout "pong" does not equal "ok""#);
        assert_eq!(check(json!({"lt": 3}), "7").unwrap_err(), r#"stdout "7" is not < 3"#);
        assert_eq!(check(json!({"gt": 3}), "x").unwrap_err(), r#"stdout "x" is not a number"#);
        assert_eq!(check(json!({"matches": "^a"}), "b").unwrap_err(), r#"stdout "b" does not match /^a/"#);
    }

    #[test]
    fn bad_specs() {
        let problems = |v: Value| Matcher::parse_all(&v).unwrap_err();
        assert_eq!(
            problems(json!({"startswith": "a"})),
            [
                "unknown matcher \"startswith\" (expected one of: equals, not_equals, contains, not_contains, matches, not_matches, lt, le, gt, ge)"
            ]
        );
        assert!(problems(json!({"matches": "("}))[0].starts_with("matches: invalid regular expression"));
        assert_eq!(problems(json!({"lt": "many"})), [r#"lt: expects a number, got "many""#]);
        assert_eq!(problems(json!([1])), ["a list must hold maps of matchers"]);
        assert_eq!(problems(json!({})), ["an empty map has no matcher"]);
    }
}
