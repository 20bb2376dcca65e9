//! The rules of a plan file (`charly check run plan.yml`) beyond those of each check: such a
//! file holds checks and nothing else, and runs with no container. A project file's checks
//! sit beside boxes and candies, and run in a box's container, so these rules are a plan
//! file's alone ([`Plan::parse_file`]).
//!
//! Each rule stops a plan that looks fine and checks nothing (trial 28, M1, M6):
//! - a top-level node with a verb but no `check:` (keys written at column 0 under its name,
//!   say) was skipped, and the plan passed with `0 checks`;
//! - a node that is not a map was skipped too;
//! - a plan with no check passed;
//! - a step that runs inside a box's container (`file:`, `command:`, `port:` ...) failed
//!   each run with "no container to run in", after validation had said `ok`.

use serde_json::Value;

use super::plan::{Plan, Problem, VERBS, top_level_lines};

impl Plan {
    /// Parses a plan file's text as [`Plan::parse`] does, then adds the problems of a plan
    /// file ([module](self)): nodes that are not checks, no check at all, steps that need a
    /// box's container.
    pub fn parse_file(text: &str, source: &str) -> Plan {
        let mut plan = Plan::parse(text, source);
        if !plan.problems.is_empty() && plan.checks.is_empty() && !parses_as_map(text) {
            return plan;
        }
        let lines = top_level_lines(text);
        let line_of = |name: &str| lines.iter().find(|(k, _)| k == name).map_or(0, |(_, l)| *l);
        let problem = |check: &str, message: String| Problem {
            source: source.to_owned(),
            line: line_of(check),
            check: check.to_owned(),
            message,
        };
        let doc: yaml_serde::Value = yaml_serde::from_str(text).unwrap_or(yaml_serde::Value::Null);
        for (key, node) in doc.as_mapping().into_iter().flatten() {
            let name = key.as_str().map_or_else(|| format!("{key:?}"), str::to_owned);
            match node.as_mapping() {
                Some(map) if map.contains_key("check") => {}
                Some(map) => {
                    let verbs: Vec<&str> = VERBS.iter().copied().filter(|v| map.contains_key(*v)).collect();
                    let has = match verbs.first() {
                        Some(verb) => format!("has {verb}: but no check:"),
                        None => "has no check: (and no verb)".to_owned(),
                    };
                    plan.problems.push(problem(
                        &name,
                        format!(
                            "{has}; a plan's top-level nodes are checks, each a map with check: (what it \
                             checks) and one verb"
                        ),
                    ));
                }
                None => plan.problems.push(problem(
                    &name,
                    format!(
                        "is {}, not a check; a plan's top-level nodes are checks, each a map with check: and \
                         one verb (are its keys indented under it?)",
                        shape(node)
                    ),
                )),
            }
        }
        for check in plan.checks.iter().filter(|c| !c.skip) {
            let Some(verb) = check.system.as_ref().and_then(|s| s.verb).filter(|v| !v.host_only()) else {
                continue;
            };
            plan.problems.push(Problem {
                source: source.to_owned(),
                line: check.line,
                check: check.name.clone(),
                message: format!(
                    "{verb}: steps run inside a box's container, and a plan file runs with none; put this \
                     check in the box's project (charly.yml or a candy's file) and run `charly check box BOX` \
                     or `charly check live BOX`"
                ),
            });
        }
        if plan.checks.is_empty() && plan.problems.is_empty() {
            plan.problems.push(Problem {
                source: source.to_owned(),
                line: 0,
                check: String::new(),
                message:
                    "the plan holds no checks; a check is a top-level node with check: (what it checks) \
                          and one verb (mcp:, http:, cdp:, ...)"
                        .into(),
            });
        }
        plan
    }
}

/// Whether `text` is YAML whose top level is a map (or empty): the node rules apply to it.
fn parses_as_map(text: &str) -> bool {
    matches!(yaml_serde::from_str::<yaml_serde::Value>(text), Ok(yaml_serde::Value::Mapping(_)))
}

fn shape(node: &yaml_serde::Value) -> String {
    match node {
        yaml_serde::Value::Null => "empty".into(),
        yaml_serde::Value::Sequence(_) => "a list".into(),
        other => format!("the value {}", serde_json::to_value(other).unwrap_or(Value::Null)),
    }
}
