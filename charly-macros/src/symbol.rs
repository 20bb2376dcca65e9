//! The attribute keys the derive reads, each spelled once.

use std::fmt;

use syn::{Ident, Path};

#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) struct Symbol(pub(crate) &'static str);

// Attribute namespaces.
pub(crate) const MCP_TOOL: Symbol = Symbol("mcp_tool");
pub(crate) const ARG: Symbol = Symbol("arg");
pub(crate) const COMMAND: Symbol = Symbol("command");
pub(crate) const CLAP: Symbol = Symbol("clap");

// Our own keys, in #[mcp_tool(...)].
pub(crate) const DESTRUCTIVE: Symbol = Symbol("destructive");
pub(crate) const SKIP: Symbol = Symbol("skip");
pub(crate) const NAME: Symbol = Symbol("name");
pub(crate) const IDEMPOTENT: Symbol = Symbol("idempotent");
pub(crate) const OPEN_WORLD: Symbol = Symbol("open_world");
pub(crate) const OUTPUT: Symbol = Symbol("output");
pub(crate) const CRATE: Symbol = Symbol("crate");
/// On a field only: the argument is the command line's, left out of the tool.
pub(crate) const CLI_ONLY: Symbol = Symbol("cli_only");
/// Every key `#[mcp_tool(...)]` accepts, for error messages and suggestions.
pub(crate) const MCP_TOOL_KEYS: &[Symbol] = &[DESTRUCTIVE, SKIP, NAME, IDEMPOTENT, OPEN_WORLD, OUTPUT, CRATE];

// clap keys that change the schema or the argv; the rest are clap's business.
pub(crate) const ID: Symbol = Symbol("id");
pub(crate) const LONG: Symbol = Symbol("long");
pub(crate) const SHORT: Symbol = Symbol("short");
pub(crate) const ACTION: Symbol = Symbol("action");
pub(crate) const VALUE_ENUM: Symbol = Symbol("value_enum");
pub(crate) const VALUE_PARSER: Symbol = Symbol("value_parser");
/// `value_parser!(T).range(..)`: a method call inside `value_parser`, not a key.
pub(crate) const RANGE: Symbol = Symbol("range");
pub(crate) const NUM_ARGS: Symbol = Symbol("num_args");
pub(crate) const LAST: Symbol = Symbol("last");
pub(crate) const INDEX: Symbol = Symbol("index");
pub(crate) const VALUE_DELIMITER: Symbol = Symbol("value_delimiter");
pub(crate) const VALUE_NAME: Symbol = Symbol("value_name");
pub(crate) const DEFAULT_VALUE: Symbol = Symbol("default_value");
pub(crate) const DEFAULT_VALUE_T: Symbol = Symbol("default_value_t");
pub(crate) const DEFAULT_VALUES: Symbol = Symbol("default_values");
pub(crate) const DEFAULT_VALUES_T: Symbol = Symbol("default_values_t");
pub(crate) const REQUIRED: Symbol = Symbol("required");
pub(crate) const ENV: Symbol = Symbol("env");
pub(crate) const HIDE: Symbol = Symbol("hide");
pub(crate) const HELP: Symbol = Symbol("help");
pub(crate) const LONG_HELP: Symbol = Symbol("long_help");
pub(crate) const ABOUT: Symbol = Symbol("about");
pub(crate) const LONG_ABOUT: Symbol = Symbol("long_about");
pub(crate) const FLATTEN: Symbol = Symbol("flatten");
pub(crate) const SUBCOMMAND: Symbol = Symbol("subcommand");
pub(crate) const EXTERNAL_SUBCOMMAND: Symbol = Symbol("external_subcommand");
pub(crate) const RENAME_ALL: Symbol = Symbol("rename_all");
pub(crate) const RENAME_ALL_ENV: Symbol = Symbol("rename_all_env");
pub(crate) const VERBATIM_DOC_COMMENT: Symbol = Symbol("verbatim_doc_comment");
/// Keys under which an explicit value acts unlike clap's default (a default does not count as
/// present for conflicts, requirements and groups), so a positional's default is not written
/// out in its place.
pub(crate) const PRESENCE_KEYS: &[Symbol] = &[
    Symbol("conflicts_with"),
    Symbol("conflicts_with_all"),
    Symbol("requires"),
    Symbol("requires_if"),
    Symbol("requires_ifs"),
    Symbol("overrides_with"),
    Symbol("overrides_with_all"),
    Symbol("group"),
    Symbol("default_value_if"),
    Symbol("default_value_ifs"),
    Symbol("default_missing_value"),
    Symbol("default_missing_values"),
    Symbol("exclusive"),
];

impl PartialEq<Symbol> for Ident {
    fn eq(&self, word: &Symbol) -> bool {
        self == word.0
    }
}

impl PartialEq<Symbol> for &Ident {
    fn eq(&self, word: &Symbol) -> bool {
        *self == word.0
    }
}

impl PartialEq<Symbol> for Path {
    fn eq(&self, word: &Symbol) -> bool {
        self.is_ident(word.0)
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}
