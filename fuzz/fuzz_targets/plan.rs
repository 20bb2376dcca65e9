//! The check-plan parser (charly-cli/src/check/plan.rs `Plan::parse`): YAML text to checks
//! and problems.
//!
//! Input: the plan's text. Checked: nothing panics; every problem names the plan; parsing is
//! deterministic; `check validate`'s report renders as text and JSON.
#![no_main]

use charly_cli::check::{self, Plan};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let plan = Plan::parse(text, "plan.yml");
    assert!(plan.problems.iter().all(|p| p.source == "plan.yml"), "{:?}", plan.problems);
    assert_eq!(plan, Plan::parse(text, "plan.yml"), "two parses of the same text differ");
    let report = check::validate(&plan);
    let _ = report.to_string();
    serde_json::to_string(&report).expect("the report serialises");
});
