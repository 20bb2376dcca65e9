//! The `mcp:` step of a check: its method, request and answers, checked.

use serde_json::{Map, Value};

use super::plan::{Context, McpStep};
use crate::probe::{Method, Request};
use charly::client::Answers;

pub(super) fn parse_mcp(
    node: &Map<String, Value>,
    contexts: &[Context],
    problems: &mut Vec<String>,
) -> Option<McpStep> {
    let method = match node.get("mcp") {
        Some(Value::String(s)) => match s.parse::<Method>() {
            Ok(m) => Some(m),
            Err(_) => {
                problems.push(format!("mcp: unknown method {s:?} (allowed: {})", Method::allowed()));
                None
            }
        },
        _ => {
            problems.push(format!("mcp: needs a method (allowed: {})", Method::allowed()));
            None
        }
    };
    let text = |key: &str, problems: &mut Vec<String>| match node.get(key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(_) => {
            problems.push(format!("{key}: expects a non-empty string"));
            None
        }
    };
    let tool = text("tool", problems);
    let uri = text("uri", problems);
    let mcp_name = text("mcp_name", problems);
    let input = match node.get("input") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map.clone()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(map)) => Some(map),
            _ => {
                problems.push("input: must be a map (the tool's arguments) or a JSON object string".into());
                None
            }
        },
        Some(_) => {
            problems.push("input: must be a map (the tool's arguments) or a JSON object string".into());
            None
        }
    };
    let answers = parse_answers(node, problems);
    let headers = parse_headers(node, problems);
    let method = method?;
    if ![Method::Call, Method::Read].contains(&method) && answers != Answers::default() {
        problems.push(format!("elicit/sample/roots: only apply to mcp: call and read, not {method}"));
    }
    if !contexts.contains(&Context::Deploy) {
        problems
            .push(format!("mcp: {method} needs context: [deploy] (mcp steps talk to a running container)"));
    }
    if method != Method::Call && (tool.is_some() || input.is_some()) {
        problems.push(format!("tool/input: only apply to mcp: call, not {method}"));
    }
    if ![Method::Read, Method::ReadSkill].contains(&method) && uri.is_some() {
        problems.push(format!("uri: only applies to mcp: read and read-skill, not {method}"));
    }
    let request = match method {
        Method::Servers => None,
        Method::Ping => Some(Request::Ping),
        Method::ListTools => Some(Request::ListTools),
        Method::ListResources => Some(Request::ListResources),
        Method::ListPrompts => Some(Request::ListPrompts),
        Method::Call => match tool {
            Some(tool) => Some(Request::Call { tool, input }),
            None => {
                problems.push("mcp: call needs tool: <tool name>".into());
                return None;
            }
        },
        Method::Lint => Some(Request::Lint),
        Method::Read => match uri {
            Some(uri) => Some(Request::Read { uri }),
            None => {
                problems.push("mcp: read needs uri: <resource uri>".into());
                return None;
            }
        },
        Method::ListSkills => Some(Request::ListSkills),
        Method::ReadSkill => match uri {
            Some(uri) => Some(Request::ReadSkill { uri }),
            None => {
                problems.push("mcp: read-skill needs uri: <uri of the skill's SKILL.md>".into());
                return None;
            }
        },
        #[allow(unreachable_patterns)]
        _ => None,
    };
    Some(McpStep { method, request, mcp_name, answers, headers })
}

/// `headers:`: a map of header names to values, or a list of `Name: value` strings; a value
/// may hold `${VAR}` (expanded from the environment when the step runs). Problems name the
/// header, never its value.
fn parse_headers(node: &Map<String, Value>, problems: &mut Vec<String>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut add = |text: String, problems: &mut Vec<String>| match charly::client::parse_header(&text) {
        Ok(pair) => out.push(pair),
        Err(e) => problems.push(format!("headers: {e}")),
    };
    match node.get("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(map)) => {
            for (name, value) in map {
                match value {
                    Value::String(v) => add(format!("{name}: {v}"), problems),
                    _ => problems.push(format!("headers: {name}: expects a string value")),
                }
            }
        }
        Some(Value::Array(items)) => {
            for item in items {
                match item {
                    Value::String(text) => add(text.clone(), problems),
                    _ => problems.push("headers: expects `Name: value` strings".into()),
                }
            }
        }
        Some(_) => problems
            .push("headers: expects a map of header names to values, or a list of `Name: value`".into()),
    }
    out
}

/// `elicit:` (a map of form fields to scalars), `sample:` (text), `roots:` (a list of URIs).
fn parse_answers(node: &Map<String, Value>, problems: &mut Vec<String>) -> Answers {
    let mut answers = Answers::default();
    match node.get("elicit") {
        None | Some(Value::Null) => {}
        Some(Value::Object(fields)) => {
            for (field, value) in fields {
                match value {
                    Value::String(s) => answers.fields.insert(field.clone(), s.clone()),
                    Value::Number(_) | Value::Bool(_) => {
                        answers.fields.insert(field.clone(), value.to_string())
                    }
                    Value::Array(items) => answers.fields.insert(
                        field.clone(),
                        items
                            .iter()
                            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                            .collect::<Vec<_>>()
                            .join(","),
                    ),
                    _ => {
                        problems.push(format!("elicit: {field}: expects a string, number, boolean or list"));
                        None
                    }
                };
            }
        }
        Some(_) => problems.push("elicit: expects a map of form fields, e.g. elicit: {name: Alice}".into()),
    }
    match node.get("sample") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => answers.sample = Some(s.clone()),
        Some(_) => problems.push("sample: expects the text a sampling request is answered with".into()),
    }
    match node.get("roots") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
            answers.roots = items.iter().filter_map(Value::as_str).map(str::to_owned).collect();
        }
        Some(_) => problems.push("roots: expects a list of URIs, e.g. roots: [file:///srv]".into()),
    }
    answers
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn headers_are_a_map_or_a_list_and_problems_hide_values() {
        let mut problems = Vec::new();
        let node = json!({"headers": {"Authorization": "Bearer ${TOKEN}", "X-Team": "core"}});
        let headers = super::parse_headers(node.as_object().unwrap(), &mut problems);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(headers.contains(&("Authorization".into(), "Bearer ${TOKEN}".into())), "{headers:?}");
        let node = json!({"headers": ["X-Key: v1", "bad name: s3cret", 7]});
        let headers = super::parse_headers(node.as_object().unwrap(), &mut problems);
        assert_eq!(headers, vec![("X-Key".to_owned(), "v1".to_owned())]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems.iter().all(|p| p.starts_with("headers: ") && !p.contains("s3cret")), "{problems:?}");
    }
}
