//! Stage 3: rules that span several attributes or items, each checked once before codegen.

use std::collections::HashMap;

use crate::ast::{Container, Field, Input, VariantKind};
use crate::ctxt::Ctxt;

/// The pattern every tool name matches (MCP clients reject others).
const NAME_RULE: &str = "^[a-zA-Z0-9_.-]{1,64}$";

pub(crate) fn check(cx: &Ctxt, cont: &Container<'_>) {
    check_tool_names(cx, cont);
    check_duplicate_commands(cx, cont);
    check_duplicate_arguments(cx, cont);
    check_output_on_leaves(cx, cont);
}

/// What is wrong with a tool name, in words; `None` when it is valid.
fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".to_owned());
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || "_.-".contains(*c))) {
        return Some(format!("{c:?} is not allowed (only ASCII letters, digits, `_`, `.` and `-` are)"));
    }
    match name.len() {
        len @ 65.. => Some(format!("it is {len} characters long (at most 64)")),
        _ => None,
    }
}

// Every explicit `#[mcp_tool(name)]` and every command segment that goes into a tool name
// matches `^[a-zA-Z0-9_.-]{1,64}$`.
fn check_tool_names(cx: &Ctxt, cont: &Container<'_>) {
    let mut names = Vec::new();
    match &cont.input {
        Input::Leaf { node, .. } | Input::Root { node, .. } => names.extend(node.name_lit()),
        Input::Branch { variants, .. } => {
            for v in variants {
                names.extend(v.node.name_lit());
                if v.node.name_lit().is_none()
                    && !matches!(v.kind, VariantKind::Skip | VariantKind::Flatten(_))
                {
                    let segment = v.node.segment.as_deref().unwrap_or_default();
                    if let Some(problem) = name_problem(segment) {
                        cx.syn_error(syn::Error::new(
                            v.segment_span(),
                            format!(
                                "command name `{segment}` cannot be part of an MCP tool name: {problem} \
                                 ({NAME_RULE}); name the tool with #[mcp_tool(name = \"...\")]"
                            ),
                        ));
                    }
                }
            }
        }
    }
    for lit in names {
        let name = lit.value();
        if let Some(problem) = name_problem(&name) {
            cx.error_spanned_by(lit, format!("invalid MCP tool name `{name}`: {problem} ({NAME_RULE})"));
        }
    }
}

// Two variants of one enum cannot publish the same name (after clap's renaming and any
// `#[mcp_tool(name)]`), nor two names that are the same once dots become `_`: one tool would
// hide the other.
fn check_duplicate_commands(cx: &Ctxt, cont: &Container<'_>) {
    let Input::Branch { variants, .. } = &cont.input else { return };
    let mut seen: HashMap<String, &syn::Ident> = HashMap::new();
    let mut joined: HashMap<String, (&syn::Ident, String)> = HashMap::new();
    for v in variants {
        if matches!(v.kind, VariantKind::Skip | VariantKind::Flatten(_)) {
            continue;
        }
        let name =
            v.node.name_lit().map(|l| l.value()).or_else(|| v.node.segment.clone()).unwrap_or_default();
        // The server publishes `_`-joined names to clients that reject dots and routes both
        // spellings, so `a.b` and `a_b` would be one tool to those clients.
        let underscored = name.replace('.', "_");
        if let Some(first) = seen.get(&name) {
            cx.syn_error(syn::Error::new(
                v.name_span(),
                format!(
                    "duplicate MCP tool name `{name}`: variant `{first}` already has it; \
                     rename one with #[command(name = \"...\")] or #[mcp_tool(name = \"...\")]"
                ),
            ));
        } else if let Some((first, first_name)) = joined.get(&underscored) {
            cx.syn_error(syn::Error::new(
                v.name_span(),
                format!(
                    "MCP tool names `{name}` and `{first_name}` (variant `{first}`) are both \
                     `{underscored}` once dots become `_`, the spelling clients that reject dots get; \
                     rename one with #[command(name = \"...\")] or #[mcp_tool(name = \"...\")]"
                ),
            ));
        } else {
            joined.insert(underscored, (&v.original.ident, name.clone()));
            seen.insert(name, &v.original.ident);
        }
    }
}

// Two arguments of one command cannot share a property name.
fn check_duplicate_arguments(cx: &Ctxt, cont: &Container<'_>) {
    let mut lists = Vec::new();
    match &cont.input {
        Input::Leaf { fields, .. } => lists.push(fields),
        Input::Branch { variants, .. } => lists.extend(variants.iter().filter_map(|v| match &v.kind {
            VariantKind::Leaf(fields) => Some(fields),
            _ => None,
        })),
        Input::Root { .. } => {}
    }
    for fields in lists {
        let mut seen = HashMap::new();
        for field in fields {
            if let Field::Arg(arg) = field
                && seen.insert(arg.id.clone(), ()).is_some()
            {
                cx.syn_error(syn::Error::new(arg.span, format!("duplicate argument id `{}`", arg.id)));
            }
        }
    }
}

// `#[mcp_tool(output = T)]` is a leaf's report type: a variant or struct with subcommands
// has no report of its own (its leaves do), and a flattened variant adds no command. (On a
// `Subcommand` enum it is refused while parsing, as `name` is.)
fn check_output_on_leaves(cx: &Ctxt, cont: &Container<'_>) {
    match &cont.input {
        Input::Root { node, .. } => {
            if let Some(output) = &node.mcp.output {
                cx.error_spanned_by(
                    output,
                    "#[mcp_tool(output = ...)] is the report type of one command, and this struct \
                     has subcommands: put it on its leaves",
                );
            }
        }
        Input::Branch { variants, .. } => {
            for v in variants {
                let Some(output) = &v.node.mcp.output else { continue };
                let problem = match v.kind {
                    VariantKind::Subcommand(_) => "this variant holds subcommands: put it on its leaves",
                    VariantKind::Flatten(_) => {
                        "a flattened variant adds no command of its own: put it on the leaves it holds"
                    }
                    VariantKind::Leaf(_) | VariantKind::Newtype(_) | VariantKind::Skip => continue,
                };
                cx.error_spanned_by(
                    output,
                    format!("#[mcp_tool(output = ...)] is the report type of one command, and {problem}"),
                );
            }
        }
        Input::Leaf { .. } => {}
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names() {
        assert_eq!(super::name_problem("box.new.project"), None);
        assert_eq!(
            super::name_problem("add rpm").unwrap(),
            "' ' is not allowed (only ASCII letters, digits, `_`, `.` and `-` are)"
        );
        assert_eq!(super::name_problem("").unwrap(), "it is empty");
        assert_eq!(super::name_problem(&"x".repeat(64)), None);
        assert_eq!(super::name_problem(&"x".repeat(65)).unwrap(), "it is 65 characters long (at most 64)");
        assert_eq!(
            super::name_problem("añadir").unwrap(),
            "'ñ' is not allowed (only ASCII letters, digits, `_`, `.` and `-` are)"
        );
    }
}
