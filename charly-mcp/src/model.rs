//! The plain types every other module shares: JSON objects and tool annotations.
//!
//! They sit below `arg`, `argv`, `schema`, `catalog` and `server`, so those modules import them
//! from here and not from each other (the module graph has no cycles). [`crate::catalog`] and
//! the crate root re-export both.

use serde::Serialize;
use serde_json::{Map, Value};

/// A JSON object: tool arguments, an input or output schema, `_meta`.
pub type JsonObject = Map<String, Value>;

/// The four MCP tool annotations, always all present (MCP 2025-06-18, `ToolAnnotations`).
///
/// Serialises as `{"readOnlyHint":..,"destructiveHint":..,"idempotentHint":..,"openWorldHint":..}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// The tool does not modify its environment.
    pub read_only_hint: bool,
    /// The tool may perform destructive updates (only meaningful when not read-only).
    pub destructive_hint: bool,
    /// Calling the tool twice with the same arguments has no further effect.
    pub idempotent_hint: bool,
    /// The tool interacts with an open world of external entities.
    pub open_world_hint: bool,
}
