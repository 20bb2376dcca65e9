//! charly's MCP runtime.
//!
//! | module | what it holds |
//! |---|---|
//! | [`catalog`] | [`McpTool`], [`Catalog`], [`CliTool`]: the leaves of a clap tree as MCP tools |
//! | [`schema`] | the input and output schemas of a leaf, and the strict rules they follow |
//! | [`argv`] | rebuilding an argv from JSON arguments, and [`ArgError`] |
//! | [`names`] | MCP tool-name rules |
//! | [`quote`] | values a client sent, quoted back shortened in errors and logs |
//! | [`arg`] | how one clap argument looks to MCP (the spec generated code builds) |
//! | [`model`] | [`JsonObject`] and [`Annotations`], which every module above shares |
//! | `server` | the MCP server: tools, resources, prompts over stdio and Streamable HTTP |
//! | `client` | the MCP client: Streamable HTTP, legacy HTTP+SSE, stdio, and a typed API (`ping`, `list_tools`, `call_tool`, ...) |
//!
//! Features: `server` (stdio serving, default), `http` (Streamable HTTP and the embeddable
//! axum service; implies `server`), `client` (default), `read-only` (destructive leaves compiled
//! out). With no feature the crate is the catalog alone: schemas, argv rebuild, output schemas.
//!
//! The derive, `#[derive(McpTool)]`, lives in `charly-macros` and is re-exported by the
//! `charly` facade crate; its generated code reaches this crate through `charly_mcp::__private`.

pub mod arg;
pub mod argv;
pub mod catalog;
#[cfg(feature = "client")]
pub mod client;
pub mod model;
pub mod names;
pub mod quote;
pub mod schema;
#[cfg(feature = "server")]
pub mod server;
#[cfg(any(feature = "server", feature = "client"))]
mod skill_md;

pub use argv::ArgError;
pub use catalog::{Catalog, CliTool, McpArgs, McpTool};
pub use model::{Annotations, JsonObject};

/// Support for generated code. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::arg::{
        Arg, ArgList, FlagAction, Help, Probe, ProbeBool, ProbeChar, ProbeFloat, ProbeInt, ProbeNotValueEnum,
        ProbeText, ProbeValueEnum, Scalar, Shape, parser_possible_values, value_enum_name,
    };
    pub use crate::catalog::{McpArgs, McpTool, Node, Visitor};
    pub use crate::schema::output_schema;
    pub use ::std::{option::Option, result::Result, string::String, string::ToString, vec::Vec};
}
