//! Compile-fail cases of the derive: each tests/ui/<category>/<misuse>.rs has a reviewed
//! .stderr pointing at the offending token (regenerate with `TRYBUILD=overwrite`, then read).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
