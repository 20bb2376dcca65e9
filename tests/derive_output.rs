//! `#[mcp_tool(output = Report)]`: a leaf's report type as its `outputSchema`, made strict
//! (inlined, no `$schema`/`$ref`/`$defs`, standard formats only, no `null` types), and true of
//! what the report serialises to.

mod common;

use std::collections::BTreeMap;

use charly::McpTool;
use charly::schema::{output_schema, strict_violations};
use common::test_cli::{Cli, FetchReport, Image, Outcome, PullReport};
use serde_json::{Value, json};

fn output_of(catalog: &charly::Catalog, tool: &str) -> Option<Value> {
    let tool = catalog.get(tool).unwrap_or_else(|| panic!("no tool `{tool}`"));
    tool.output_schema().map(|schema| Value::Object((**schema).clone()))
}

/// The `Image` schema, as it appears inlined (once under `images`, once under `slowest`).
fn image_schema(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "reference": {"type": "string", "description": "The reference pulled"},
            "digest": {"type": "string", "description": "Its digest, once known"},
            "size": {"type": "integer", "description": "Size in bytes", "minimum": 0},
            "layers": {"type": "array", "description": "Layers, top first",
                       "items": {"type": "integer", "minimum": 0, "maximum": 65535}},
            "state": {"type": "string", "description": "What happened to it",
                      "enum": ["pulled", "up-to-date", "failed"]}
        },
        "required": ["reference", "size", "layers", "state"]
    })
}

/// On a leaf `Args` struct: nested structs (in a list and optional), a unit enum, lists,
/// optional fields, integers of several widths and a `BTreeMap<String, String>`.
#[test]
fn a_report_schema_is_inlined_and_strict() {
    let catalog = Cli::catalog();
    assert_eq!(
        output_of(&catalog, "pull-all").expect("pull-all declares PullReport"),
        json!({
            "type": "object",
            "properties": {
                "images": {"type": "array", "description": "Every image looked at, in order",
                           "items": image_schema("One image of a pull.")},
                "unchanged": {"type": "integer", "description": "How many were already current", "minimum": 0},
                "bytes": {"type": "integer", "description": "Bytes fetched in all", "minimum": 0},
                "skew": {"type": "integer",
                         "description": "Seconds the slowest pull took behind the fastest (may be negative)"},
                "labels": {"type": "object", "description": "Labels put on the run", "properties": {},
                           "additionalProperties": {"type": "string"}},
                "mirror": {"type": "string", "description": "The registry mirror used, when one was"},
                "slowest": image_schema("The slowest image, when any was pulled"),
                "outcome": {"type": "string", "description": "How the run ended",
                            "enum": ["pulled", "up-to-date", "failed"]}
            },
            "required": ["images", "unchanged", "bytes", "skew", "labels", "outcome"]
        })
    );
    // On a struct-like variant.
    assert_eq!(
        output_of(&catalog, "fetch").expect("fetch declares FetchReport"),
        json!({"type": "object",
               "properties": {"fetched": {"type": "array", "description": "The fetched specs, in order",
                                          "items": {"type": "string"}}},
               "required": ["fetched"]})
    );
    assert_eq!(output_of(&catalog, "lists"), None, "a leaf without `output` has no output schema");
}

fn report(slowest: bool) -> PullReport {
    let image = |reference: &str, digest: Option<&str>, state| Image {
        reference: reference.into(),
        digest: digest.map(Into::into),
        size: u64::MAX,
        layers: vec![0, 65535],
        state,
    };
    PullReport {
        images: vec![
            image("docker.io/library/busybox", Some("sha256:abc"), Outcome::Pulled),
            image("quay.io/fedora/fedora:43", None, Outcome::UpToDate),
        ],
        unchanged: 1,
        bytes: 1 << 40,
        skew: -3,
        labels: BTreeMap::from([("run".to_owned(), "nightly".to_owned())]),
        mirror: None,
        slowest: slowest.then(|| image("ghcr.io/x/y", None, Outcome::Failed)),
        outcome: Outcome::Failed,
    }
}

/// The schema is true of what the report serialises to: `None` fields are left out (the
/// rule report types follow), and nothing the schema forbids is written.
#[test]
fn serialised_reports_validate_against_their_schema() {
    let catalog = Cli::catalog();
    let schema = output_of(&catalog, "pull-all").unwrap();
    jsonschema::draft202012::meta::validate(&schema).expect("a valid 2020-12 schema");
    let validator = jsonschema::draft202012::new(&schema).expect("the schema compiles");
    for slowest in [false, true] {
        let instance = serde_json::to_value(report(slowest)).unwrap();
        let errors: Vec<String> = validator.iter_errors(&instance).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{instance}: {errors:?}");
    }
    let fetch = output_of(&catalog, "fetch").unwrap();
    let fetched = serde_json::to_value(FetchReport { fetched: vec!["a".into()] }).unwrap();
    assert!(jsonschema::draft202012::is_valid(&fetch, &fetched));

    // And it still refuses what a PullReport cannot be.
    let good = serde_json::to_value(report(true)).unwrap();
    let bad = |edit: fn(&mut Value)| {
        let mut instance = good.clone();
        edit(&mut instance);
        !validator.is_valid(&instance)
    };
    assert!(bad(|r| r["outcome"] = json!("exploded")));
    assert!(bad(|r| r["unchanged"] = json!(-1)));
    assert!(bad(|r| r["images"][0]["layers"][0] = json!(65536)));
    assert!(bad(|r| r["labels"]["run"] = json!(1)));
    assert!(bad(|r| r["mirror"] = Value::Null));
    assert!(bad(|r| r["slowest"]["digest"] = Value::Null));
    assert!(bad(|r| {
        r.as_object_mut().unwrap().remove("skew");
    }));
}

#[test]
fn every_tool_schema_of_the_test_cli_is_strict() {
    let catalog = Cli::catalog();
    let mut outputs = 0;
    for tool in catalog.tools() {
        let violations = strict_violations(tool.input_schema());
        assert!(violations.is_empty(), "{} input: {violations:#?}", tool.name());
        if let Some(output) = tool.output_schema() {
            outputs += 1;
            let violations = strict_violations(output);
            assert!(violations.is_empty(), "{} output: {violations:#?}", tool.name());
        }
    }
    assert_eq!(outputs, 2, "fetch and pull-all declare report types");
}

/// `Catalog::to_json` lists `outputSchema` right after `inputSchema`, and only for leaves that
/// have one (so catalogs without report types serialise as before).
#[test]
fn to_json_lists_output_schemas_only_where_declared() {
    let catalog = Cli::catalog();
    let json = catalog.to_json();
    for tool in json.as_array().unwrap() {
        let keys: Vec<&str> = tool.as_object().unwrap().keys().map(String::as_str).collect();
        match tool["name"].as_str().unwrap() {
            "fetch" | "pull-all" => {
                assert_eq!(keys, ["name", "description", "inputSchema", "outputSchema", "annotations"])
            }
            _ => assert_eq!(keys, ["name", "description", "inputSchema", "annotations"]),
        }
    }
}

mod precedence {
    //! As with the other node attributes, a variant's `output` wins over its struct's.

    use charly::McpTool;
    use clap::{Args, Parser, Subcommand};
    use schemars::JsonSchema;
    use serde::Serialize;

    /// The variant's report.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct VariantReport {
        /// From the variant
        variant: bool,
    }

    /// The struct's report.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct StructReport {
        /// From the struct
        structure: bool,
    }

    /// A leaf with its own report type.
    #[derive(Args, McpTool)]
    #[mcp_tool(output = StructReport)]
    struct Leaf {
        #[arg(long)]
        force: bool,
    }

    /// A leaf without one.
    #[derive(Args, McpTool)]
    struct Plain {}

    #[derive(Subcommand, McpTool)]
    enum Cmd {
        /// The variant names its own report type
        #[mcp_tool(output = VariantReport)]
        Overridden(Leaf),
        /// The struct's report type
        Inherited(Leaf),
        /// A variant gives a struct without one a report type
        #[mcp_tool(output = VariantReport)]
        Given(Plain),
        /// Neither has one
        Neither(Plain),
    }

    #[derive(Parser, McpTool)]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[test]
    fn the_variant_wins() {
        let catalog = Cli::catalog();
        let property = |tool: &str| {
            let output = catalog.get(tool).unwrap().output_schema()?;
            Some(output["properties"].as_object().unwrap().keys().next().unwrap().clone())
        };
        assert_eq!(property("overridden").as_deref(), Some("variant"));
        assert_eq!(property("inherited").as_deref(), Some("structure"));
        assert_eq!(property("given").as_deref(), Some("variant"));
        assert_eq!(property("neither"), None);
    }
}

mod refused {
    //! What an output schema cannot say truthfully panics when it is built, naming the type.

    use std::collections::BTreeMap;

    use charly::schema::output_schema;
    use schemars::JsonSchema;
    use serde::Serialize;

    /// A recursive type: no inlined form.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Tree {
        name: String,
        children: Vec<Tree>,
    }

    /// Holds a recursive type below the root.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Forest {
        trees: Vec<Tree>,
    }

    /// `None` written as `null`.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct NullField {
        /// No `skip_serializing_if`
        digest: Option<String>,
    }

    /// `null` inside a list.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct NullItems {
        #[serde(skip_serializing_if = "Option::is_none")]
        items: Option<Vec<Option<u8>>>,
    }

    /// `null` as a map value.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct NullValues {
        values: BTreeMap<String, Option<String>>,
    }

    #[test]
    #[should_panic(expected = "output type `derive_output::refused::Tree` is recursive")]
    fn a_recursive_root() {
        let _ = output_schema::<Tree>();
    }

    #[test]
    #[should_panic(expected = "output type `derive_output::refused::Forest` is recursive (`Tree` contains \
                               itself: Tree > Tree)")]
    fn a_recursive_field() {
        let _ = output_schema::<Forest>();
    }

    #[test]
    #[should_panic(expected = "a report's JSON has an object at its root")]
    fn a_list_at_the_root() {
        let _ = output_schema::<Vec<String>>();
    }

    #[test]
    #[should_panic(expected = "a report's JSON has an object at its root")]
    fn a_string_at_the_root() {
        let _ = output_schema::<String>();
    }

    #[test]
    #[should_panic(expected = "`core::option::Option<derive_output::refused::NullField>` may be `null`")]
    fn an_option_at_the_root() {
        let _ = output_schema::<Option<NullField>>();
    }

    #[test]
    #[should_panic(
        expected = "`derive_output::refused::NullField` writes `null` for `None` at #/properties/digest, \
                    but an output schema has no `null` type (hosts reject type arrays): add \
                    `#[serde(skip_serializing_if = \"Option::is_none\")]` to that field"
    )]
    fn an_option_written_as_null() {
        let _ = output_schema::<NullField>();
    }

    #[test]
    #[should_panic(expected = "may write `null` (an `Option` inside a list, a map or an enum) at \
                               #/properties/items/items")]
    fn null_items() {
        let _ = output_schema::<NullItems>();
    }

    #[test]
    #[should_panic(expected = "at #/properties/values/additionalProperties")]
    fn null_map_values() {
        let _ = output_schema::<NullValues>();
    }
}

/// The report types of the test CLI are plain schemars types: `output_schema` is what the
/// catalog put there.
#[test]
fn the_catalog_holds_output_schema_of_the_type() {
    let catalog = Cli::catalog();
    assert_eq!(
        output_of(&catalog, "pull-all").unwrap(),
        Value::Object((*output_schema::<PullReport>()).clone())
    );
}
