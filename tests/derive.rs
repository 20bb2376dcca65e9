//! The derive against the test CLI: catalog snapshot and worked examples.

mod common;

use charly::McpTool;
use common::test_cli::Cli;

/// The full catalog (the `read-only` build has its own snapshot, see tests/read_only.rs).
#[cfg(not(feature = "read-only"))]
#[test]
fn catalog_snapshot() {
    let catalog = Cli::catalog();
    insta::with_settings!({snapshot_path => "../snapshots", prepend_module_to_snapshot => false}, {
        insta::assert_json_snapshot!("test_cli_catalog", catalog.to_json());
    });
}
