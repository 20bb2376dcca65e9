//! The derive against clap itself: for every leaf of the test CLI, the generated schema and
//! argv agree with what `Cli::command()` says about that leaf, so the two cannot drift apart.
//! Also: every schema compiles as JSON Schema 2020-12 and uses no `$schema`, `$ref`, `$defs`
//! or `format` keyword.

mod common;

use charly::{CliTool, JsonObject, McpTool};
use clap::CommandFactory;
use common::test_cli::Cli;
use serde_json::{Value, json};

/// The clap command of a tool: `Cli::command()` (built, so globals are propagated and
/// defaults filled in) walked along the tool's path.
fn command_of(root: &clap::Command, tool: &CliTool) -> clap::Command {
    let mut cmd = root;
    for segment in tool.path() {
        cmd = cmd.find_subcommand(segment).unwrap_or_else(|| {
            panic!("{}: clap has no subcommand `{segment}` under `{}`", tool.name(), cmd.get_name())
        });
    }
    cmd.clone()
}

fn built_root() -> clap::Command {
    let mut root = Cli::command();
    root.build();
    root
}

/// The arguments of a leaf that are tool inputs: not hidden, not help/version, not globals
/// inherited from the root (`--dir`).
fn tool_inputs(cmd: &clap::Command) -> Vec<&clap::Arg> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_global_set())
        .filter(|a| !matches!(a.get_action(), clap::ArgAction::Help | clap::ArgAction::Version))
        .collect()
}

fn properties(tool: &CliTool) -> &JsonObject {
    tool.input_schema()["properties"].as_object().expect("properties is an object")
}

fn required(tool: &CliTool) -> Vec<&str> {
    match tool.input_schema().get("required") {
        None => vec![],
        Some(list) => list.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect(),
    }
}

fn text(s: Option<&clap::builder::StyledStr>) -> Option<String> {
    s.map(|s| s.to_string())
}

/// A value valid under a property schema, for probing where argv puts it.
fn sample(prop: &Value) -> Value {
    let scalar = |s: &Value| -> Value {
        if let Some(values) = s.get("enum") {
            return values[0].clone();
        }
        match s["type"].as_str().unwrap() {
            "boolean" => json!(true),
            // 1, moved into the bounds.
            "integer" => json!(1.max(s["minimum"].as_i64().unwrap_or(0))),
            "number" => json!(1.5),
            "string" => json!("v"),
            other => panic!("unexpected type {other}"),
        }
    };
    match prop["type"].as_str().unwrap() {
        "array" => json!([scalar(&prop["items"])]),
        _ => scalar(prop),
    }
}

#[test]
fn clap_debug_asserts_pass() {
    Cli::command().debug_assert();
}

/// Every non-hidden leaf clap knows is a tool, except the ones the test CLI skips on purpose.
#[test]
fn catalog_has_every_visible_clap_leaf() {
    fn leaves(cmd: &clap::Command, path: &mut Vec<String>, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
            path.push(sub.get_name().to_owned());
            if sub.has_subcommands() {
                leaves(sub, path, out);
            } else {
                out.push(path.join(" "));
            }
            path.pop();
        }
    }
    let mut clap_leaves = Vec::new();
    leaves(&built_root(), &mut Vec::new(), &mut clap_leaves);
    // `serve` and the `internal` subtree are `#[mcp_tool(skip)]`.
    clap_leaves.retain(|l| l != "serve" && !l.starts_with("internal "));
    let catalog = Cli::catalog();
    let mut tool_paths: Vec<String> = catalog.tools().iter().map(|t| t.path().join(" ")).collect();
    if cfg!(feature = "read-only") {
        // Destructive leaves are compiled out of the read-only build.
        clap_leaves.retain(|l| !l.starts_with("box "));
    }
    clap_leaves.sort();
    tool_paths.sort();
    assert_eq!(tool_paths, clap_leaves);
}

#[test]
fn schemas_match_clap_commands() {
    let root = built_root();
    for tool in Cli::catalog().tools() {
        let cmd = command_of(&root, tool);
        let name = tool.name();
        let props = properties(tool);
        let inputs = tool_inputs(&cmd);

        // Argument ids: the same set, in the same order.
        let ids: Vec<&str> = inputs.iter().map(|a| a.get_id().as_str()).collect();
        let keys: Vec<&str> = props.keys().map(String::as_str).collect();
        assert_eq!(keys, ids, "{name}: properties vs clap argument ids");

        // The description: clap's long about, else its about (a variant's doc wins over the
        // struct's), then the destructive suffix.
        let about = text(cmd.get_long_about().or(cmd.get_about())).unwrap_or_default();
        let description = tool.description();
        let own = match description.rfind(" [destructive: ") {
            Some(at) if tool.is_destructive() => &description[..at],
            _ => description,
        };
        assert_eq!(own, about, "{name}: description vs clap's about");
        assert_eq!(tool.is_destructive(), description.contains("[destructive: "), "{name}: suffix");

        let required = required(tool);
        for arg in inputs {
            let id = arg.get_id().as_str();
            let prop = &props[id];
            let what = format!("{name}.{id}");

            assert_eq!(required.contains(&id), arg.is_required_set(), "{what}: required");

            // Help text, with the env variable clap reads the value from.
            let help = text(arg.get_long_help().or(arg.get_help()));
            let env = arg.get_env().map(|e| e.to_str().unwrap().to_owned());
            let expected = match (help, env) {
                (None, None) => None,
                (Some(h), None) => Some(h),
                (None, Some(e)) => Some(format!("[env: {e}]")),
                (Some(h), Some(e)) => Some(format!("{h} [env: {e}]")),
            };
            assert_eq!(
                prop.get("description").and_then(Value::as_str),
                expected.as_deref(),
                "{what}: description"
            );

            // Possible values, in clap's spelling (a bool parser's true/false is the type).
            let item = if prop["type"] == "array" { &prop["items"] } else { prop };
            let clap_values: Vec<String> = arg
                .get_possible_values()
                .iter()
                .filter(|v| !v.is_hide_set())
                .map(|v| v.get_name().to_owned())
                .collect();
            if item["type"] == "boolean" {
                assert!(
                    clap_values.is_empty() || clap_values == ["true", "false"],
                    "{what}: {clap_values:?}"
                );
                assert!(item.get("enum").is_none(), "{what}: boolean with enum");
            } else {
                let schema_values: Vec<String> = item
                    .get("enum")
                    .map(|e| e.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect())
                    .unwrap_or_default();
                assert_eq!(schema_values, clap_values, "{what}: possible values");
            }

            // Defaults: clap's default texts, read as the property's type.
            let clap_defaults: Vec<&str> =
                arg.get_default_values().iter().map(|d| d.to_str().unwrap()).collect();
            let schema_defaults: Vec<Value> = match prop.get("default") {
                None => vec![],
                Some(Value::Array(items)) => items.clone(),
                Some(one) => vec![one.clone()],
            };
            let as_text = |v: &Value| match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let schema_texts: Vec<String> = schema_defaults.iter().map(as_text).collect();
            let clap_texts: Vec<String> = clap_defaults
                .iter()
                .map(|d| match item["type"].as_str() {
                    Some("number") => {
                        d.parse::<f64>().map_or_else(|_| d.to_string(), |f| json!(f).to_string())
                    }
                    _ => d.to_string(),
                })
                .collect();
            assert_eq!(schema_texts, clap_texts, "{what}: defaults");

            // Integer bounds: clap's own value parser accepts both ends and rejects one past.
            if item["type"] == "integer" && arg.get_action().takes_values() {
                let alone = clap::Command::new("p").arg(arg.clone().required(false));
                let parses = |n: i128| {
                    let value = match (arg.get_long(), arg.get_short()) {
                        (Some(long), _) => vec![format!("--{long}={n}")],
                        (None, Some(short)) => vec![format!("-{short}={n}")],
                        (None, None) => vec!["--".to_owned(), n.to_string()],
                    };
                    alone.clone().try_get_matches_from(std::iter::once("p".to_owned()).chain(value)).is_ok()
                };
                let min = item["minimum"].as_i64().map(i128::from).unwrap();
                let max = item["maximum"]
                    .as_u64()
                    .map(i128::from)
                    .or(item["maximum"].as_i64().map(i128::from))
                    .unwrap();
                assert!(parses(min) && parses(max), "{what}: clap rejects a bound of {min}..={max}");
                // One past a bound clap refuses, unless the bound is where JSON integers end
                // (128-bit types are held there on purpose: nothing beyond can be sent).
                if min > i128::from(i64::MIN) {
                    assert!(!parses(min - 1), "{what}: clap accepts {} below {min}", min - 1);
                }
                if max < i128::from(u64::MAX) {
                    assert!(!parses(max + 1), "{what}: clap accepts {} above {max}", max + 1);
                }
            }

            // Positional vs flag, and the flag's name: where argv puts a sample value.
            let mut args = JsonObject::new();
            for key in &required {
                args.insert((*key).to_owned(), sample(&props[*key]));
            }
            let value = match (prop["type"].as_str(), prop.get("default")) {
                // `parse_seconds` reads text the schema cannot describe.
                _ if what == "scalars.timeout" => json!("30s"),
                // A flag written only when it differs from its default.
                (Some("boolean"), Some(Value::Bool(d))) => json!(!d),
                _ => sample(prop),
            };
            args.insert(id.to_owned(), value);
            let argv = tool.argv(&args).unwrap_or_else(|e| panic!("{what}: {e}"));
            let after_dashes = argv.iter().position(|a| a == "--").map_or(&argv[..0], |i| &argv[i + 1..]);
            let flags = &argv[tool.path().len()..argv.iter().position(|a| a == "--").unwrap_or(argv.len())];
            if arg.is_positional() {
                assert!(!after_dashes.is_empty(), "{what}: positional but argv is {argv:?}");
                assert!(
                    !flags.iter().any(|f| f.starts_with(&format!("--{id}"))),
                    "{what}: positional written as a flag: {argv:?}"
                );
            } else {
                let dashed = match (arg.get_long(), arg.get_short()) {
                    (Some(long), _) => format!("--{long}"),
                    (None, Some(short)) => format!("-{short}"),
                    (None, None) => panic!("{what}: neither positional nor a flag"),
                };
                assert!(
                    flags.iter().any(|f| *f == dashed || f.starts_with(&format!("{dashed}="))),
                    "{what}: expected `{dashed}` in {argv:?}"
                );
            }
            // And clap takes that argv.
            let full = std::iter::once("tcli".to_owned()).chain(argv.iter().cloned());
            if let Err(e) = root.clone().try_get_matches_from(full) {
                panic!("{what}: clap rejects {argv:?}: {e}");
            }
        }
    }
}

/// Walks a schema (not its property names) and collects every keyword that strict validators
/// warn about or that needs resolving.
fn forbidden_keywords(schema: &Value, at: &str, found: &mut Vec<String>) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map {
        let here = format!("{at}/{key}");
        if matches!(key.as_str(), "$schema" | "$ref" | "$defs" | "definitions" | "format" | "$id") {
            found.push(here.clone());
        }
        match key.as_str() {
            "properties" => {
                for (name, sub) in value.as_object().expect("properties is an object") {
                    forbidden_keywords(sub, &format!("{here}/{name}"), found);
                }
            }
            "items" => forbidden_keywords(value, &here, found),
            _ => {}
        }
    }
}

#[test]
fn schemas_compile_as_draft_2020_12_without_forbidden_keywords() {
    for tool in Cli::catalog().tools() {
        let schema = Value::Object((**tool.input_schema()).clone());
        if let Err(e) = jsonschema::draft202012::meta::validate(&schema) {
            panic!("{}: not a valid 2020-12 schema: {e}", tool.name());
        }
        if let Err(e) = jsonschema::draft202012::new(&schema) {
            panic!("{}: does not compile: {e}", tool.name());
        }
        let mut found = Vec::new();
        forbidden_keywords(&schema, "", &mut found);
        assert!(found.is_empty(), "{}: {found:?}", tool.name());
        // The shape every leaf has.
        assert_eq!(schema["type"], "object", "{}", tool.name());
        assert!(schema["properties"].is_object(), "{}", tool.name());
        assert_eq!(schema["additionalProperties"], false, "{}", tool.name());
        for (key, prop) in schema["properties"].as_object().unwrap() {
            assert!(prop["type"].is_string(), "{}.{key}: no concrete type", tool.name());
        }
    }
}

/// The walker finds what it is meant to find, and leaves property names alone.
#[test]
fn forbidden_keyword_walker_finds_nested_keywords() {
    let schema = json!({"type":"object","properties":{
        "format":{"type":"string"},
        "a":{"type":"array","items":{"type":"integer","format":"uint16"}},
        "b":{"$ref":"#/$defs/x"}},
        "$defs":{}});
    let mut found = Vec::new();
    forbidden_keywords(&schema, "", &mut found);
    assert_eq!(found, ["/properties/a/items/format", "/properties/b/$ref", "/$defs"]);
}
