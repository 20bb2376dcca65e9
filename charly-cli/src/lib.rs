//! The `charly` command-line tool, as a library.
//!
//! [`project`] holds the work behind the project authoring commands (`box.*`, `candy.*`, `doctor`):
//! plain functions with typed arguments that write to an output sink, independent of clap and MCP,
//! so the same code serves a terminal and an MCP call.

pub mod check;
pub mod cli;
pub mod commands;
pub mod project;
pub mod serve;
