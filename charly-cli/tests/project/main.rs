//! Tests of the project authoring library, one binary with a module per area.
//!
//! Every test works on real files in its own temporary directory.

mod util;

/// One malformed file does not block the leaves that only read.
mod broken;
/// Edits are checked against the whole project before they land.
mod checked;
/// Lossless edits: every editing command, byte for byte outside the edit.
mod comments;
/// Concurrent edits of one file lose nothing.
mod concurrency;
/// `box.write`/`box.cat`: each way of escaping the root is refused.
mod escapes;
/// The Containerfile `box.generate` writes, `box.inspect` and `box.build`.
mod generate;
/// The editor's refusals in charly's words.
mod messages;
/// `candy.add-*`: each section gets its own list (the reference tool's argv defect).
mod packages;
/// The repository cache, with a local git repository.
mod repo;
/// The deploy-time nodes (service, volume, env, ...): labels, validation, the list leaves.
mod runtime;
/// Scaffolding, `set` errors, the sample project, lists and doctor.
mod scaffold;
/// `box.validate` messages.
mod validate;
/// `box.set`/`candy.set` values and paths: written as given, list indexes, aliases.
mod values;
