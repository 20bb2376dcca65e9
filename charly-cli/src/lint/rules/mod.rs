//! The lint rules, as data: one small type per rule, each registered once in [`RULES`], which
//! drives running, the report's rule list and the docs (STYLE.md §12). Above each rule, the
//! public evidence it rests on: a host's own error message, quoted from a public report.
//!
//! A rule with [`Severity::Error`] is something a host refuses (a 400 from the model API, a tool
//! list withheld, a tool dropped); [`Severity::Warning`] is advice no host enforces.

use charly::server::rmcp::model::Tool;
use serde_json::{Map, Value};

mod input;
mod names;
mod output;
mod shape;

use super::schema::walk;
use super::{Host, Severity, Violation};
use input::{
    ArrayWithoutItems, EnumValues, NonStandardFormat, ObjectWithoutProperties, SchemaKeyword, SchemaRef,
    TypeArray, UnresolvedRef,
};
use names::{DuplicateName, NameLength, NamePattern};
use output::{MissingAnnotations, MissingDescription, OutputSchemaDialect, OutputSchemaRoot};
use shape::{InputSchemaRoot, ToolShape};

/// One check over a server's tool list.
pub(crate) trait Rule: Sync {
    /// Stable id, e.g. `name-pattern`.
    fn id(&self) -> &'static str;
    /// What a violation costs.
    fn severity(&self) -> Severity;
    /// The hosts that refuse (or, for a warning, are hurt by) a violation.
    fn hosts(&self) -> &'static [Host];
    /// What the rule checks, one line.
    fn summary(&self) -> &'static str;
    /// Pushes `(tool, where, message)` for every violation in `tools`.
    fn check(&self, tools: &[Tool], found: &mut Vec<(String, String, String)>);
    /// Pushes `(tool, where, message)` for the listed tools that do not parse as a `Tool`
    /// (raw JSON): only the shape rules read them.
    fn check_malformed(&self, _malformed: &[Value], _found: &mut Vec<(String, String, String)>) {}
}

/// Every rule, in report order.
pub(crate) static RULES: &[&dyn Rule] = &[
    &NamePattern,
    &NameLength,
    &DuplicateName,
    &ToolShape,
    &InputSchemaRoot,
    &SchemaKeyword,
    &SchemaRef,
    &UnresolvedRef,
    &TypeArray,
    &ArrayWithoutItems,
    &NonStandardFormat,
    &ObjectWithoutProperties,
    &EnumValues,
    &OutputSchemaRoot,
    &OutputSchemaDialect,
    &MissingDescription,
    &MissingAnnotations,
];

/// Runs every rule over `tools`, and the shape rules over `malformed` (listed tools that do
/// not parse as a `Tool`, as JSON).
pub(crate) fn run(tools: &[Tool], malformed: &[Value]) -> Vec<Violation> {
    let mut violations = Vec::new();
    for rule in RULES {
        let mut found = Vec::new();
        rule.check(tools, &mut found);
        rule.check_malformed(malformed, &mut found);
        violations.extend(found.into_iter().map(|(tool, at, message)| Violation {
            rule: rule.id().to_owned(),
            severity: rule.severity(),
            hosts: rule.hosts().iter().map(|h| h.as_str().to_owned()).collect(),
            tool,
            at,
            message,
        }));
    }
    violations
}

/// Which schemas of a tool a schema rule reads.
#[derive(Clone, Copy)]
pub(super) enum Part {
    Input,
    Output,
}

/// Calls `visit(tool, "inputSchema/..", node)` for every subschema of each tool's `parts`.
pub(super) fn each_node(
    tools: &[Tool],
    parts: &[Part],
    mut visit: impl FnMut(&Tool, &str, &Map<String, Value>),
) {
    for tool in tools {
        for part in parts {
            let (label, schema) = match part {
                Part::Input => ("inputSchema", Some(&tool.input_schema)),
                Part::Output => ("outputSchema", tool.output_schema.as_ref()),
            };
            let Some(schema) = schema else { continue };
            walk(schema, &mut |at, node| visit(tool, &format!("{label}{at}"), node));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_ids_are_unique_and_kebab_case() {
        let mut ids: Vec<&str> = RULES.iter().map(|r| r.id()).collect();
        assert!(ids.iter().all(|id| id.chars().all(|c| c.is_ascii_lowercase() || c == '-')), "{ids:?}");
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), RULES.len());
    }

    #[test]
    fn a_suggestion_replaces_dots() {
        assert_eq!(names::suggest("box.new.project"), "box_new_project");
    }
}
