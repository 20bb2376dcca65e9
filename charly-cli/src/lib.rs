//! The `charly` command-line tool, as a library.
//!
//! [`project`] holds the work behind the project authoring commands (`box.*`, `candy.*`, `doctor`):
//! plain functions with typed arguments that write to an output sink, independent of clap and MCP,
//! so the same code serves a terminal and an MCP call. [`check`] runs YAML check plans,
//! [`probe`] runs one MCP client method, [`resolve`] finds the endpoint a command names.

pub mod check;
pub mod cli;
pub mod commands;
pub mod probe;
pub mod project;
pub mod resolve;
pub mod serve;
