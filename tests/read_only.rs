//! Read-only catalogs: `Catalog::read_only()` in the default build, and the `read-only` cargo
//! feature, which compiles destructive leaves out. Both equal the same snapshot
//! (`snapshots/test_cli_catalog_read_only.snap`), so the feature build serves exactly what
//! `--read-only` serves in a default build.
//!
//! Run the feature side with `cargo test --features read-only --test read_only`.

mod common;

use charly::{Catalog, McpTool};
use common::test_cli::Cli;

/// The test CLI's tools that are not `#[mcp_tool(destructive)]`, in declaration order.
const READ_ONLY_TOOLS: [&str; 7] = ["version", "scalars", "flags", "lists", "edge", "fetch", "pull-all"];

fn names(catalog: &Catalog) -> Vec<&str> {
    catalog.tools().iter().map(|t| t.name()).collect()
}

fn snapshot(catalog: &Catalog) {
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("test_cli_catalog_read_only", catalog.to_json());
    });
}

fn assert_no_destructive(catalog: &Catalog) {
    for tool in catalog.tools() {
        let a = tool.annotations();
        assert!(!tool.is_destructive() && !a.destructive_hint && a.read_only_hint, "{}: {a:?}", tool.name());
        assert!(!tool.description().contains("[destructive: "), "{}", tool.name());
    }
}

#[cfg(not(feature = "read-only"))]
#[test]
fn read_only_drops_exactly_the_destructive_tools() {
    let catalog = Cli::catalog();
    let destructive: Vec<&str> =
        catalog.tools().iter().filter(|t| t.is_destructive()).map(|t| t.name()).collect();
    // `NewCmd` is destructive as a whole; `box.set` and `box.remove` are marked per variant.
    assert_eq!(destructive, ["box.new.project", "box.new.box", "box.set", "box.remove"]);
    let read_only = catalog.read_only();
    let kept: Vec<&str> = names(&catalog).into_iter().filter(|n| !destructive.contains(n)).collect();
    assert_eq!(names(&read_only), kept);
    assert_eq!(names(&read_only), READ_ONLY_TOOLS);
    assert_eq!(read_only.len() + destructive.len(), catalog.len());
    assert_no_destructive(&read_only);
    // The tools that stay are unchanged.
    for tool in read_only.tools() {
        let full = catalog.get(tool.name()).unwrap();
        assert_eq!(tool.input_schema(), full.input_schema());
        assert_eq!(tool.description(), full.description());
        assert_eq!(tool.annotations(), full.annotations());
    }
    snapshot(&read_only);
}

#[cfg(feature = "read-only")]
#[test]
fn read_only_build_compiles_destructive_tools_out() {
    let catalog = Cli::catalog();
    assert_no_destructive(&catalog);
    assert_eq!(names(&catalog), READ_ONLY_TOOLS);
    assert_eq!(names(&catalog.read_only()), READ_ONLY_TOOLS);
    // Same snapshot as the default build's `read_only()`.
    snapshot(&catalog);
}
