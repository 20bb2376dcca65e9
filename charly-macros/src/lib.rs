//! `#[derive(McpTool)]`: a clap command tree as an MCP tool catalog, at compile time.
//!
//! Put it next to `#[derive(Parser)]`, `#[derive(Args)]` or `#[derive(Subcommand)]`. It reads
//! clap's own attributes and doc comments and generates, for every leaf command, one function
//! that lists its argument specs; the runtime builds the leaf's JSON Schema from them when the
//! catalog is built and rebuilds argvs from JSON arguments by walking them. Use it through the
//! `charly` crate, which re-exports it with the runtime it targets.
//!
//! The macro works in four stages, as serde_derive does: `attr` (parse), `ast` (model),
//! `check` (rules across items) and `expand` (code from the model). Every error is collected
//! with its span and reported together.

mod ast;
mod attr;
mod case;
mod check;
mod ctxt;
mod doc;
mod expand;
mod symbol;
mod ty;

use proc_macro::TokenStream;
use syn::{DeriveInput, parse_macro_input};

/// Derives `charly::McpTool` (and `charly::McpArgs` for structs without a subcommand).
///
/// Helper attribute `#[mcp_tool(...)]`, on the struct, enum or variant:
/// - `destructive` or `destructive = "reason"`: the tool changes things outside the server;
///   its description gets a `[destructive: ...]` suffix and `--read-only` servers hide it;
/// - `skip`: leave this leaf (or whole subtree) out of the catalog;
/// - `name = "..."`: the tool name of a leaf (`^[a-zA-Z0-9_.-]{1,64}$`), or the name of this
///   segment on a branch;
/// - `idempotent`, `open_world`: the MCP annotation hints;
/// - `output = Report`: the leaf's report type (`serde::Serialize + schemars::JsonSchema`, an
///   object at its JSON root); its strict schema (`charly::schema::output_schema`) becomes the
///   tool's `outputSchema`. On a leaf only: a variant (which wins over its struct's) or an
///   `Args` struct;
/// - `crate = "path"`: where the runtime is, when not `::charly`.
///
/// On a field (a clap argument, or a `#[command(flatten)]` group), `#[mcp_tool(cli_only)]`
/// keeps it on the command line (and in `--help`) but out of the tool: it is not in the
/// `inputSchema`, and a call that gives it is refused as an unknown argument. For an argument
/// a tool can never honour (a report file that a read-only tool would write). A required
/// argument cannot be `cli_only` (no call could give it); unlike clap's `hide`, the terminal
/// still shows it.
#[proc_macro_derive(McpTool, attributes(mcp_tool))]
pub fn derive_mcp_tool(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let cx = ctxt::Ctxt::new();
    let cont = ast::Container::from_ast(&cx, &input);
    if let Some(cont) = &cont {
        check::check(&cx, cont);
    }
    match cx.check() {
        Ok(()) => expand::expand(&cont.expect("a model when there are no errors")).into(),
        Err(err) => {
            let mut out = ctxt::to_compile_errors(err);
            out.extend(expand::dummy(&input));
            out.into()
        }
    }
}
