//! Benchmarks of the derive's runtime: building and serialising a 200-leaf catalog (20 groups
//! of 10 generated leaves, each with a positional, a defaulted integer, a switch, a list and a
//! value enum), and one argv rebuild of such a leaf.
//!
//! `cargo bench --bench catalog -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use charly::{JsonObject, McpTool};
use clap::{Parser, Subcommand, ValueEnum};
use criterion::{Criterion, criterion_group, criterion_main};

/// How loud a generated leaf is.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Level {
    Low,
    High,
}

/// A `Subcommand` enum named `$enum` with one leaf per identifier in `$leaf`.
macro_rules! group {
    ($enum:ident: $($leaf:ident)*) => {
        /// A group of generated leaves
        #[derive(Subcommand, McpTool, Debug)]
        enum $enum {
            $(
                /// A generated leaf command
                #[mcp_tool(idempotent)]
                $leaf {
                    /// Name of the thing
                    name: String,
                    /// How many
                    #[arg(long, default_value_t = 3)]
                    count: u32,
                    /// Do it anyway
                    #[arg(short, long)]
                    force: bool,
                    /// Labels, repeatable
                    #[arg(long)]
                    tags: Vec<String>,
                    /// How loud
                    #[arg(long, value_enum)]
                    level: Option<Level>,
                },
            )*
        }
    };
}

/// The root `Parser` holding one `#[command(subcommand)]` variant per group.
macro_rules! tree {
    ($($variant:ident($enum:ident))*) => {
        $( group!($enum: A B C D E F G H I J); )*

        /// A 200-leaf command tree
        #[derive(Subcommand, McpTool, Debug)]
        enum Top {
            $(
                /// A group
                #[command(subcommand)]
                $variant($enum),
            )*
        }
    };
}

tree! {
    G00(Group00) G01(Group01) G02(Group02) G03(Group03) G04(Group04)
    G05(Group05) G06(Group06) G07(Group07) G08(Group08) G09(Group09)
    G10(Group10) G11(Group11) G12(Group12) G13(Group13) G14(Group14)
    G15(Group15) G16(Group16) G17(Group17) G18(Group18) G19(Group19)
}

/// The benchmark CLI.
#[derive(Parser, McpTool, Debug)]
#[command(name = "bench")]
struct Cli {
    #[command(subcommand)]
    cmd: Top,
}

fn catalog(c: &mut Criterion) {
    let catalog = Cli::catalog();
    assert_eq!(catalog.len(), 200);
    c.bench_function("catalog/build 200 leaves", |b| b.iter(|| black_box(Cli::catalog())));
    c.bench_function("catalog/serialise 200 leaves", |b| {
        b.iter(|| black_box(serde_json::to_string(&black_box(&catalog).to_json()).unwrap()))
    });
    c.bench_function("catalog/build + serialise 200 leaves", |b| {
        b.iter(|| black_box(serde_json::to_string(&Cli::catalog().to_json()).unwrap()))
    });
}

fn argv(c: &mut Criterion) {
    let catalog = Cli::catalog();
    let tool = catalog.get("g07.c").expect("a generated leaf");
    let args: JsonObject = serde_json::from_value(serde_json::json!({
        "name": "web", "count": 5, "force": true, "tags": ["a", "-b", "c d"], "level": "high"
    }))
    .unwrap();
    let argv = tool.argv(&args).unwrap();
    assert_eq!(
        argv,
        [
            "g07",
            "c",
            "--count=5",
            "--force",
            "--tags=a",
            "--tags=-b",
            "--tags=c d",
            "--level=high",
            "--",
            "web"
        ]
    );
    Cli::try_parse_from(std::iter::once("bench".to_owned()).chain(argv)).expect("clap takes the argv");
    c.bench_function("argv/rebuild one leaf (5 arguments)", |b| {
        b.iter(|| black_box(tool.argv(black_box(&args)).unwrap()))
    });
}

criterion_group!(benches, catalog, argv);
criterion_main!(benches);
