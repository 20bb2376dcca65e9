//! `charly check mcp <method>`: one client method against one server, as a report.
//!
//! | method | function | report |
//! |---|---|---|
//! | `ping` | [`ping`] | [`Pong`]: `ok` |
//! | `servers` | [`servers`] | [`ServerList`]: `name<TAB>url<TAB>transport` |
//! | `list-tools` | [`list_tools`] | [`ToolList`]: `name<TAB>first line of description` |
//! | `list-resources` | [`list_resources`] | [`ResourceList`]: `uri<TAB>name<TAB>mime` |
//! | `list-prompts` | [`list_prompts`] | [`PromptList`]: `name<TAB>description` |
//! | `call` | [`call`] | [`Called`]: text content one per line, images and audio as placeholders; a failure on `isError` |
//! | `read` | [`read`] | [`ReadContents`]: text contents, blobs as placeholders |
//! | `list-skills` | [`list_skills`] | [`SkillList`]: `uri<TAB>name<TAB>description` (skills extension) |
//! | `read-skill` | [`read_skill`] | [`SkillFiles`]: the skill's files, each checked against its entry |
//! | `lint` | [`crate::lint::lint`] | [`crate::lint::LintReport`]: a row per host, a line per violation; a failure on any error rule |
//!
//! Check plans run any method with [`run`] / [`run_on`] and read its [`Outcome`].

mod input;
mod methods;
mod print;
mod report;
mod skills;

pub use input::{InputSource, MAX_INPUT_BYTES, META_RESERVE, check_call_size, read_capped, too_large};
pub use methods::{
    Method, Request, UnknownMethod, call, list_prompts, list_resources, list_tools, parse_input, ping, read,
    run, run_on, servers,
};
pub use print::{write_call_result, write_contents, write_prompts, write_resources, write_tools};
pub use report::{
    Called, Outcome, Pong, PromptList, ReadContents, ResourceList, ServerEntry, ServerList, ToolList,
};
pub use skills::{SkillFileEntry, SkillFiles, SkillList, list_skills, read_skill};
