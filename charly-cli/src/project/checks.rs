//! The `ai.opencharly.check` label a box's image carries: the check nodes of its candies'
//! files (section `candy`, in the box's candy order) and of charly.yml (section `box`), the
//! same checks `charly check box` reads from the files, so `box.test <image>` can run them
//! from the image alone.

use serde_json::Value;

use super::image::ResolvedCandy;
use super::model::{Kind, Node, PROJECT_FILE, Project};
use crate::check::{Plan, check_label};

/// The label value for a box with `candies`, from the project's `nodes`; `None` when no
/// candy file and not charly.yml has a check.
pub(super) fn label(nodes: &[Node], candies: &[ResolvedCandy]) -> Option<String> {
    let plan = |file: &std::path::Path| {
        let entries: Vec<Value> = nodes
            .iter()
            .filter(|n| n.kind == Some(Kind::Check) && n.file == file)
            .filter_map(|n| {
                let mut body = n.body.as_object()?.clone();
                body.insert("id".into(), Value::String(n.name.clone()));
                Some(Value::Object(body))
            })
            .collect();
        Plan::from_entries(&entries, &file.display().to_string())
    };
    let mut candy = Plan::default();
    for c in candies {
        candy.merge(plan(&Project::candy_file(&c.name)));
    }
    let project = plan(std::path::Path::new(PROJECT_FILE));
    if candy.checks.is_empty() && project.checks.is_empty() {
        return None;
    }
    Some(check_label(&[("candy", &candy), ("box", &project)]))
}
