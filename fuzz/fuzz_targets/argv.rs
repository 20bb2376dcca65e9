//! `CliTool::argv` over the workspace tests' CLI (tests/common/test_cli.rs): JSON arguments
//! to an argv, then clap.
//!
//! Input: one byte choosing the leaf, then JSON text for its arguments. Checked:
//! - nothing panics;
//! - an argv starts with the leaf's command path, and until `--` every element is a flag
//!   (`-x`/`--long[=value]`): a value can never be read as another flag or a subcommand;
//! - arguments valid under the leaf's input schema that `argv` accepts are parsed by clap
//!   (or refused only by a value parser or a conflict the schema cannot describe).
#![no_main]

use std::sync::OnceLock;

use charly::{CliTool, McpTool as _};
use clap::Parser as _;
use clap::error::ErrorKind;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[path = "../../tests/common/test_cli.rs"]
mod test_cli;

struct Leaf {
    tool: CliTool,
    schema: jsonschema::Validator,
}

fn leaves() -> &'static [Leaf] {
    static LEAVES: OnceLock<Vec<Leaf>> = OnceLock::new();
    LEAVES.get_or_init(|| {
        test_cli::Cli::catalog()
            .into_iter()
            .map(|tool| {
                let schema = jsonschema::draft202012::new(&Value::Object((**tool.input_schema()).clone()))
                    .expect("the input schema compiles");
                Leaf { tool, schema }
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else { return };
    let leaves = leaves();
    let leaf = &leaves[usize::from(pick) % leaves.len()];
    let Ok(Value::Object(args)) = serde_json::from_slice::<Value>(json) else { return };
    let Ok(argv) = leaf.tool.argv(&args) else { return };
    let path = leaf.tool.path();
    assert_eq!(&argv[..path.len()], path, "argv does not start with the command path: {argv:?}");
    for arg in argv[path.len()..].iter().take_while(|a| *a != "--") {
        assert!(arg.starts_with('-') && arg.len() > 1, "{arg:?} before `--` is not a flag: {argv:?}");
    }
    if leaf.schema.is_valid(&Value::Object(args.clone())) {
        let parsed = test_cli::Cli::try_parse_from(std::iter::once("tcli").chain(argv.iter().map(String::as_str)));
        // A value parser of the CLI's own (`parse_seconds`) or a conflict between arguments may
        // refuse what the schema cannot describe: clap's error is then the tool's answer. Any
        // other refusal (an unknown argument, a value read as a flag, `--help`, a missing
        // required argument) is an argv rebuild that says something else than the arguments.
        if let Err(e) = parsed
            && !matches!(e.kind(), ErrorKind::ValueValidation | ErrorKind::ArgumentConflict)
        {
            panic!("schema-valid arguments {args:?} of {} gave argv {argv:?} that clap refuses: {e}", leaf.tool.name());
        }
    }
});
