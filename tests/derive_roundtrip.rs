//! Property test of the argv rebuild, for every leaf of the test CLI.
//!
//! Arguments are generated from each leaf's own input schema (type, bounds, `enum`,
//! `minItems`, `pattern`, `required`), with strings that start with `-`, spell `--help` or
//! `--`, hold whitespace or non-ASCII text, or are empty. Each object must validate under the
//! schema, rebuild into an argv with `CliTool::argv`, and parse with
//! `Cli::try_parse_from(["tcli", ..argv])` into exactly the given values, with clap's defaults
//! (which are the schema's `default`s) where a key was left out. Objects with an unknown key,
//! a value of the wrong JSON type, an out-of-range number or a missing required key are
//! rejected by `argv()` itself, before clap runs, with an error naming the tool and the key.
//!
//! Two things the schema cannot say come from clap's own `Command`: which properties are
//! positional (a later positional cannot be given without the earlier ones), and that
//! `scalars.timeout` is read by a custom parser (`parse_seconds`), whose text is checked
//! against that parser rather than assumed valid.

mod common;

use std::path::Path;

use charly::{ArgError, CliTool, JsonObject, McpTool};
use clap::{CommandFactory, Parser, ValueEnum};
use common::test_cli::{BoxCmd, Cli, Cmd, Extra, Level, NewCmd, parse_seconds};
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use serde_json::{Value, json};

/// Cases per leaf and per property.
const CASES: u32 = 256;

/// Strings chosen to break a naive argv: flags, `--`, subcommand names, whitespace, unicode.
const TRICKY: &[&str] = &[
    "",
    " ",
    "  lead",
    "trail  ",
    "\t",
    "a\nb",
    "-",
    "--",
    "---",
    "-x",
    "-1",
    "--help",
    "-h",
    "--version",
    "-V",
    "--dir=/tmp",
    "-C",
    "--text=x",
    "help",
    "version",
    "box",
    "=",
    "a=b",
    "é",
    "日本語",
    "🦀",
    "\u{7f}",
    "'quoted'",
    "\"dq\"",
    "$HOME",
    "*",
];

fn string() -> BoxedStrategy<String> {
    prop_oneof![
        3 => select(TRICKY).prop_map(str::to_owned),
        3 => any::<String>(),
        2 => (select(TRICKY), any::<String>()).prop_map(|(a, b)| format!("{a}{b}")),
        2 => "[- =a-zé\t]{0,6}",
        // Numbers and durations (`30s`), so a parser such as `parse_seconds` also says yes.
        1 => "[0-9]{1,4}[sm]?",
    ]
    .boxed()
}

fn int(n: i128) -> Value {
    i64::try_from(n).map(Value::from).unwrap_or_else(|_| Value::from(u64::try_from(n).expect("JSON integer")))
}

fn bound(v: &Value) -> i128 {
    v.as_i64().map(i128::from).or(v.as_u64().map(i128::from)).expect("integer bound")
}

/// A strategy for one value valid under `schema` (a property or an `items` schema).
fn value_strategy(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(values) = schema.get("enum") {
        return select(values.as_array().unwrap().clone()).boxed();
    }
    let strategy = match schema["type"].as_str().unwrap() {
        "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
        "integer" => {
            let (min, max) = (bound(&schema["minimum"]), bound(&schema["maximum"]));
            prop_oneof![
                1 => Just(min),
                1 => Just(max),
                2 => (-3i128..=3).prop_map(move |n| n.clamp(min, max)),
                4 => min..=max,
            ]
            .prop_map(int)
            .boxed()
        }
        "number" => {
            let min = schema.get("minimum").and_then(Value::as_f64).unwrap_or(f64::MIN);
            let max = schema.get("maximum").and_then(Value::as_f64).unwrap_or(f64::MAX);
            prop_oneof![
                1 => Just(min),
                1 => Just(max),
                3 => any::<f32>().prop_filter("finite", |f| f.is_finite()).prop_map(f64::from),
                3 => any::<f64>().prop_filter("finite", |f| f.is_finite()),
                2 => (-1000i32..1000).prop_map(f64::from),
            ]
            .prop_map(move |f| Value::from(f.clamp(min, max)))
            .boxed()
        }
        "string" if schema.get("maxLength") == Some(&json!(1)) => {
            prop_oneof![select(vec!['-', ' ', ',', '=', 'é', '🦀']), any::<char>()]
                .prop_map(|c| Value::String(c.into()))
                .boxed()
        }
        "string" => {
            let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
            string()
                .prop_filter("minLength", move |s| s.chars().count() >= min)
                .prop_map(Value::String)
                .boxed()
        }
        "array" => {
            let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0) as usize;
            proptest::collection::vec(value_strategy(&schema["items"]), min..=min + 4)
                .prop_map(Value::Array)
                .boxed()
        }
        other => panic!("no strategy for type {other}"),
    };
    if schema.get("pattern").is_some() {
        let validator = jsonschema::draft202012::new(schema).expect("item schema compiles");
        return strategy.prop_filter("pattern", move |v| validator.is_valid(v)).boxed();
    }
    strategy
}

/// A leaf with what the test needs to know about it.
struct Leaf {
    tool: CliTool,
    /// Property names of positionals, in clap's index order.
    positionals: Vec<String>,
    validator: jsonschema::Validator,
}

fn leaves() -> Vec<Leaf> {
    let mut root = Cli::command();
    root.build();
    Cli::catalog()
        .into_iter()
        .map(|tool| {
            let mut cmd = &root;
            for segment in tool.path() {
                cmd = cmd.find_subcommand(segment).expect("the tool's path is a clap command");
            }
            let mut positionals: Vec<_> = cmd.get_positionals().collect();
            positionals.sort_by_key(|a| a.get_index());
            let positionals = positionals.iter().map(|a| a.get_id().to_string()).collect();
            let validator = jsonschema::draft202012::new(&Value::Object((**tool.input_schema()).clone()))
                .expect("schema compiles");
            Leaf { tool, positionals, validator }
        })
        .collect()
}

fn properties(tool: &CliTool) -> &JsonObject {
    tool.input_schema()["properties"].as_object().unwrap()
}

fn required(tool: &CliTool) -> Vec<String> {
    tool.input_schema()
        .get("required")
        .map(|r| r.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

/// Objects valid under the leaf's schema, keys in random order, positionals in order.
fn object_strategy(leaf: &Leaf) -> BoxedStrategy<JsonObject> {
    let required = required(&leaf.tool);
    let entries: Vec<BoxedStrategy<Option<(String, Value)>>> = properties(&leaf.tool)
        .iter()
        .map(|(key, prop)| {
            let key = key.clone();
            let value = value_strategy(prop);
            if required.contains(&key) {
                value.prop_map(move |v| Some((key.clone(), v))).boxed()
            } else {
                proptest::option::of(value.prop_map(move |v| (key.clone(), v))).boxed()
            }
        })
        .collect();
    let positionals = leaf.positionals.clone();
    entries
        .prop_map(move |entries| {
            let mut entries: Vec<(String, Value)> = entries.into_iter().flatten().collect();
            // Once a positional is left out, the later ones must be too.
            if let Some(gap) = positionals.iter().position(|p| !entries.iter().any(|(k, _)| k == p)) {
                entries.retain(|(k, _)| !positionals[gap..].contains(k));
            }
            entries
        })
        .prop_shuffle()
        .prop_map(|entries| entries.into_iter().collect())
        .boxed()
}

fn path_text(p: &Path) -> Value {
    Value::String(p.to_str().expect("UTF-8 path").to_owned())
}

fn level(l: &Level) -> Value {
    Value::String(l.to_possible_value().expect("visible level").get_name().to_owned())
}

fn opt<T>(v: &Option<T>, f: impl Fn(&T) -> Value) -> Value {
    v.as_ref().map_or(Value::Null, f)
}

/// What clap parsed: the leaf's tool name and its values keyed by argument id.
fn observed(cli: &Cli) -> (&'static str, JsonObject) {
    let (name, values) = match &cli.cmd {
        Cmd::Version => ("version", json!({})),
        Cmd::Scalars(s) => (
            "scalars",
            json!({
                "i8": s.i8, "i16": s.i16, "i32": s.i32, "i64": s.i64, "isize": s.isize,
                "u8": s.u8, "u16": s.u16, "u32": s.u32, "u64": s.u64, "usize": s.usize,
                "i128": s.i128.map(int), "u128": s.u128.map(|n| int(i128::try_from(n).unwrap())),
                "nice": s.nice,
                "f32": s.f32.map(f64::from), "f64": s.f64, "text": s.text,
                "path": opt(&s.path, |p| path_text(p)), "letter": opt(&s.letter, |c| json!(c.to_string())),
                "timeout": s.timeout, "port": s.port, "level": level(&s.level), "color": s.color,
                "retries": s.retries, "ratio": s.ratio, "token": s.token,
            }),
        ),
        Cmd::Flags(f) => (
            "flags",
            json!({
                "force": f.force, "color": f.color, "refresh": f.refresh, "confirm": f.confirm,
                "verbose": f.common.verbose, "dry_run": f.common.dry_run,
            }),
        ),
        Cmd::Lists(l) => (
            "lists",
            json!({
                "target": l.target, "labels": l.labels, "numbers": l.numbers, "csv": l.csv,
                "levels": l.levels.iter().map(level).collect::<Vec<_>>(),
                "files": l.files.iter().map(|p| path_text(p)).collect::<Vec<_>>(),
                "the-mode": l.mode, "out_format": l.out_format,
            }),
        ),
        Cmd::Edge(e) => (
            "edge",
            json!({
                "branch": e.branch, "sign": e.sign,
                // Over MCP an absent list and an empty one are the same request.
                "opt_list": e.opt_list.clone().unwrap_or_default(),
                "ports": e.ports, "words": e.words, "ch": e.ch.to_string(), "delta": e.delta,
                "pick": e.pick, "quiet": e.quiet,
            }),
        ),
        Cmd::Box(BoxCmd::New(NewCmd::Project { dir })) => ("box.new.project", json!({"dir": path_text(dir)})),
        Cmd::Box(BoxCmd::New(NewCmd::NewBox(b))) => {
            ("box.new.box", json!({"name": b.name, "base": b.base, "packages": b.packages}))
        }
        Cmd::Box(BoxCmd::Set { path, value }) => ("box.set", json!({"path": path, "value": value})),
        Cmd::Box(BoxCmd::RmCandy(r)) => ("box.remove", json!({"box": r.r#box, "candy": r.candy})),
        Cmd::Extra(Extra::Fetch { spec }) => ("fetch", json!({"spec": spec})),
        Cmd::Extra(Extra::Pull(p)) => ("pull-all", json!({"disabled": p.disabled})),
        Cmd::Serve { .. } | Cmd::Secret | Cmd::Internal(_) => panic!("not a tool: {cli:?}"),
    };
    (name, values.as_object().unwrap().clone())
}

/// `given` and `got` hold the same value for a property with this schema: numbers by value
/// (an `f32` property holds the nearest `f32`, give or take the rounding of the decimal text).
fn same(key: &str, schema: &Value, given: &Value, got: &Value) -> bool {
    match (schema["type"].as_str(), given, got) {
        (Some("array"), Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(key, &schema["items"], x, y))
        }
        (Some("number"), Value::Number(x), Value::Number(y)) if key == "f32" => {
            let (x, y) = (x.as_f64().unwrap() as f32, y.as_f64().unwrap() as f32);
            x == y || x.next_up() == y || x.next_down() == y
        }
        (Some("number"), Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => given == got,
    }
}

fn tcli(argv: &[String]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("tcli").chain(argv.iter().map(String::as_str)))
}

/// One valid object: schema-valid, rebuilt, parsed by clap into exactly its values.
fn check_valid(leaf: &Leaf, args: &JsonObject) -> Result<(), TestCaseError> {
    let name = leaf.tool.name();
    prop_assert!(
        leaf.validator.is_valid(&Value::Object(args.clone())),
        "{name}: generated {args:?} is not schema-valid"
    );
    let argv =
        leaf.tool.argv(args).map_err(|e| TestCaseError::fail(format!("{name}: argv({args:?}): {e}")))?;
    prop_assert_eq!(&argv[..leaf.tool.path().len()], leaf.tool.path());

    // `parse_seconds` decides about its own text; a text it refuses is clap's error for
    // `--timeout`, never anything else.
    let mut args = args.clone();
    if let Some(Value::String(text)) = args.get("timeout").cloned() {
        match parse_seconds(&text) {
            Ok(seconds) => {
                args.insert("timeout".into(), json!(seconds));
            }
            Err(_) => {
                let err = tcli(&argv).expect_err("parse_seconds refuses it");
                prop_assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation, "{}", err);
                prop_assert!(err.to_string().contains("--timeout"), "{}", err);
                return Ok(());
            }
        }
    }
    let cli = tcli(&argv).map_err(|e| TestCaseError::fail(format!("{name}: clap rejects {argv:?}: {e}")))?;
    // The root's global `--dir` is never set by a tool call. In `box.new.project` the leaf's
    // own positional `dir` shadows it, and clap reports that value at the root too.
    let root_dir = match name {
        "box.new.project" => args.get("dir").and_then(Value::as_str).map(std::path::PathBuf::from),
        _ => None,
    };
    prop_assert_eq!(&cli.dir, &root_dir, "{}: {:?}", name, argv);
    let (parsed_name, got) = observed(&cli);
    prop_assert_eq!(parsed_name, name, "argv {:?}", argv);
    let props = properties(&leaf.tool);
    prop_assert_eq!(
        got.keys().collect::<Vec<_>>(),
        props.keys().collect::<Vec<_>>(),
        "{}: observed keys",
        name
    );
    for (key, prop) in props {
        let expected = match (args.get(key), prop.get("default")) {
            (Some(given), _) => given.clone(),
            (None, Some(default)) => default.clone(),
            (None, None) if prop["type"] == "array" => json!([]),
            (None, None) => Value::Null,
        };
        prop_assert!(
            same(key, prop, &expected, &got[key]),
            "{name}.{key}: expected {expected}, clap parsed {} from argv {argv:?}",
            got[key]
        );
    }
    Ok(())
}

#[test]
fn valid_objects_parse_into_exactly_their_values() {
    for leaf in leaves() {
        let mut runner =
            TestRunner::new(Config { cases: CASES, failure_persistence: None, ..Config::default() });
        if let Err(e) = runner.run(&object_strategy(&leaf), |args| check_valid(&leaf, &args)) {
            panic!("{}: {e}", leaf.tool.name());
        }
    }
}

/// JSON values of every type but the one(s) `schema` allows, plus values of the right type that
/// the argv rebuild refuses itself (out-of-range integers, fractions, long `char`s, delimiters,
/// too few items).
fn wrong_values(schema: &Value) -> Vec<Value> {
    let others = [json!(null), json!(true), json!(7), json!(2.5), json!("7"), json!([]), json!({})];
    let ty = schema["type"].as_str().unwrap();
    let mut wrong: Vec<Value> = others
        .into_iter()
        .filter(|v| match (ty, v) {
            ("boolean", Value::Bool(_)) | ("string", Value::String(_)) | ("array", Value::Array(_)) => false,
            ("number", Value::Number(_)) => false,
            ("integer", Value::Number(n)) => n.as_f64().is_some_and(|f| f.fract() != 0.0),
            _ => true,
        })
        .collect();
    match ty {
        "integer" => {
            let (min, max) = (bound(&schema["minimum"]), bound(&schema["maximum"]));
            if min > i128::from(i64::MIN) {
                wrong.push(int(min - 1));
            }
            if max < i128::from(u64::MAX) {
                wrong.push(int(max + 1));
            }
        }
        "string" if schema.get("maxLength") == Some(&json!(1)) => wrong.extend([json!(""), json!("ab")]),
        "string" if schema.get("minLength") == Some(&json!(1)) => wrong.push(json!("")),
        "array" => {
            let item = wrong_values(&schema["items"]).swap_remove(0);
            wrong.push(json!([item]));
            if schema.get("minItems").is_some() {
                wrong.push(json!([]));
            }
        }
        _ => {}
    }
    if schema.get("enum").is_some() {
        wrong.push(json!("not-a-possible-value"));
    }
    if schema.get("pattern").is_some() {
        // The only pattern the derive writes: no value delimiter.
        wrong.push(json!("a,b"));
    }
    if ty == "array" && schema["items"].get("enum").is_some() {
        wrong.push(json!(["not-a-possible-value"]));
    }
    if ty == "array" && schema["items"].get("pattern").is_some() {
        wrong.push(json!(["ok", "a,b"]));
    }
    wrong
}

#[test]
fn wrong_types_and_unknown_keys_are_rejected_before_clap() {
    for leaf in leaves() {
        let name = leaf.tool.name().to_owned();
        let props = properties(&leaf.tool).clone();
        let keys: Vec<String> = props.keys().cloned().collect();
        let mut runner =
            TestRunner::new(Config { cases: CASES, failure_persistence: None, ..Config::default() });

        // An unknown key.
        let unknown = (
            object_strategy(&leaf),
            string().prop_filter("not a property", {
                let keys = keys.clone();
                move |k| !keys.contains(k)
            }),
        );
        let result = runner.run(&unknown, |(mut args, key)| {
            args.insert(key.clone(), json!(1));
            prop_assert!(!leaf.validator.is_valid(&Value::Object(args.clone())));
            match leaf.tool.argv(&args) {
                Err(ArgError::Unknown { tool, key: k, .. }) => {
                    prop_assert_eq!(&tool, &name);
                    prop_assert_eq!(&k, &key);
                }
                other => prop_assert!(false, "{name}: unknown key `{key}` gave {other:?}"),
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{name}: {e}");
        }

        // A wrong value for each property.
        for key in &keys {
            let wrong = select(wrong_values(&props[key]));
            let result = runner.run(&(object_strategy(&leaf), wrong), |(mut args, value)| {
                args.insert(key.clone(), value.clone());
                prop_assert!(
                    !leaf.validator.is_valid(&Value::Object(args.clone())),
                    "{name}.{key}: the schema takes {value}"
                );
                match leaf.tool.argv(&args) {
                    Err(ArgError::Invalid { tool, key: k, .. }) => {
                        prop_assert_eq!(&tool, &name);
                        prop_assert_eq!(&k, key);
                    }
                    other => prop_assert!(false, "{name}.{key} = {value}: argv gave {other:?}"),
                }
                Ok(())
            });
            if let Err(e) = result {
                panic!("{name}.{key}: {e}");
            }
        }

        // A missing required key.
        for key in required(&leaf.tool) {
            let result = runner.run(&object_strategy(&leaf), |mut args| {
                args.remove(&key);
                prop_assert!(!leaf.validator.is_valid(&Value::Object(args.clone())));
                match leaf.tool.argv(&args) {
                    Err(ArgError::Missing { tool, key: k, .. }) => {
                        prop_assert_eq!(&tool, &name);
                        prop_assert_eq!(&k, &key);
                    }
                    other => prop_assert!(false, "{name}: without `{key}` argv gave {other:?}"),
                }
                Ok(())
            });
            if let Err(e) = result {
                panic!("{name}.{key}: {e}");
            }
        }
    }
}

/// A value outside an `enum` is refused by `argv()` itself, as the schema refuses it, and
/// the message lists the possible values.
#[test]
fn values_outside_an_enum_are_refused() {
    let catalog = Cli::catalog();
    let tool = catalog.get("scalars").unwrap();
    for (key, bad) in [("level", "loud"), ("color", "RED")] {
        let args = json!({ key: bad });
        let schema = Value::Object((**tool.input_schema()).clone());
        assert!(!jsonschema::draft202012::is_valid(&schema, &args));
        match tool.argv(args.as_object().unwrap()) {
            Err(ArgError::Invalid { key: k, problem, .. }) => {
                assert_eq!(k, key);
                assert!(
                    problem.contains(&format!("\"{bad}\" is not a possible value (allowed: ")),
                    "{problem}"
                );
            }
            other => panic!("{key} = {bad}: argv gave {other:?}"),
        }
    }
}
