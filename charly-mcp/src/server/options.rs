//! [`ServerOptions`]: everything a [`super::Server`] is built from.

use super::prompts::Prompt;
use super::resources::{Resource, ResourceList, ResourceTemplate};
use super::skills::Skill;
use super::tool::Tool;
use crate::catalog::JsonObject;

/// How tool names are published in `tools/list`. `tools/call` routes both spellings, whatever
/// the style: `box.new.project` and `box_new_project` call the same tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolNameStyle {
    /// Per client: `_`-joined names to a client that [rejects dots](super::rejects_dots) (by
    /// the `clientInfo.name` of the session's `initialize`, which a request's `_meta` does not
    /// override; on protocol 2026-07-28, of the request's `_meta`), names as given to every
    /// other client. An older-protocol request with no session (stateless HTTP), whose client
    /// is unknown, gets `_`-joined names, which every client accepts.
    #[default]
    Auto,
    /// As given, to every client: `box.new.project`.
    Dotted,
    /// Dots replaced by `_` (`box_new_project`), to every client.
    Underscored,
}

impl ToolNameStyle {
    /// `auto`, `dotted`, `underscore` (the `--tool-names` values).
    pub const fn as_str(self) -> &'static str {
        match self {
            ToolNameStyle::Auto => "auto",
            ToolNameStyle::Dotted => "dotted",
            ToolNameStyle::Underscored => "underscore",
        }
    }
}

/// The key that seals the `requestState` of input-required results (protocol 2026-07-28,
/// SEP-2322) with HMAC-SHA256: at least 32 bytes. Replicas behind one load balancer need the
/// same key, since a client's next round may reach another replica. `Debug` never shows it.
#[derive(Clone)]
pub struct RequestStateKey(pub(crate) std::sync::Arc<[u8]>);

impl RequestStateKey {
    /// Shortest accepted key, in bytes.
    pub const MIN_LEN: usize = 32;

    /// This key.
    ///
    /// # Errors
    ///
    /// A message saying how long the key is and must be, when it is shorter than
    /// [`RequestStateKey::MIN_LEN`] bytes.
    pub fn new(key: impl Into<Vec<u8>>) -> Result<RequestStateKey, String> {
        let key = key.into();
        if key.len() < Self::MIN_LEN {
            return Err(format!(
                "the request-state key has {} bytes; it needs at least {} (random bytes, the same on every replica)",
                key.len(),
                Self::MIN_LEN
            ));
        }
        Ok(RequestStateKey(key.into()))
    }
}

impl std::fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestStateKey(..)")
    }
}

/// The largest request a server reads, in bytes (4 MiB), the same on every transport: the
/// default HTTP body limit (`HttpOptions::max_body_bytes`) and the longest stdio line. A
/// larger HTTP body gets 413; a longer stdio line gets a JSON-RPC -32600 error (with the
/// request's id when it leads the line), and the session goes on with the next line.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// Default cap on one session's requests in flight, on every transport
/// (`HttpOptions::max_requests_per_session`, [`StdioOptions::max_requests_per_session`]).
pub const DEFAULT_MAX_REQUESTS_PER_SESSION: usize = 64;

/// How a session over stdio (or any byte stream, [`super::Server::serve_io_with`]) is served.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct StdioOptions {
    /// Most requests in flight at once, from the line read to its answer written (every
    /// request counts, `ping` as much as `tools/call`; notifications such as
    /// `notifications/cancelled` never do, so a client at the cap can still cancel). A request
    /// past it is answered at once with a JSON-RPC error (code -32000, `server busy`) carrying
    /// its id, and does not run. Default: [`DEFAULT_MAX_REQUESTS_PER_SESSION`], the same cap
    /// as an HTTP session's; `None`: no cap (rmcp's behaviour: a task per request, without
    /// limit).
    pub max_requests_per_session: Option<usize>,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions { max_requests_per_session: Some(DEFAULT_MAX_REQUESTS_PER_SESSION) }
    }
}

impl StdioOptions {
    /// Sets the cap on requests in flight (see [`StdioOptions::max_requests_per_session`]).
    pub fn max_requests_per_session(mut self, max: Option<usize>) -> Self {
        self.max_requests_per_session = max;
        self
    }
}

/// Default number of items per `*/list` page.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// What a [`super::Server`] serves. Start from [`ServerOptions::new`], then set the public
/// fields or use the chained setters; the value can be built once and handed to any
/// container or transport.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ServerOptions {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// `instructions` in the initialize result.
    pub instructions: Option<String>,
    /// The tools, in listing order.
    pub tools: Vec<Tool>,
    /// Resources at fixed URIs.
    pub resources: Vec<Resource>,
    /// Resources listed afresh on every `resources/list` (see [`ResourceList`]).
    pub resource_list: Option<ResourceList>,
    /// Resource templates.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Prompts.
    pub prompts: Vec<Prompt>,
    /// Skills (the skills extension, SEP-2640): declared, listed by `skills/list`, their
    /// `SKILL.md` in `resources/list`, their files served by `resources/read`.
    pub skills: Vec<Skill>,
    /// Meta merged into every call's context, over the client's `_meta`.
    pub meta: JsonObject,
    /// Leave destructive tools out: not listed, not callable.
    pub read_only: bool,
    /// How tool names are published (default: [`ToolNameStyle::Auto`]).
    pub tool_names: ToolNameStyle,
    /// Items per `*/list` page; 0 means everything on one page.
    pub page_size: usize,
    /// The key sealing input-required request states; `None` draws a random one per server.
    pub request_state_key: Option<RequestStateKey>,
}

impl ServerOptions {
    /// Options for a server called `name` at `version`, with nothing to serve yet.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> ServerOptions {
        ServerOptions {
            name: name.into(),
            version: version.into(),
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            resource_list: None,
            resource_templates: Vec::new(),
            prompts: Vec::new(),
            skills: Vec::new(),
            meta: JsonObject::new(),
            read_only: false,
            tool_names: ToolNameStyle::default(),
            page_size: DEFAULT_PAGE_SIZE,
            request_state_key: None,
        }
    }

    /// Adds a tool.
    pub fn tool(mut self, tool: Tool) -> Self {
        self.tools.push(tool);
        self
    }

    /// Adds tools (for instance [`super::cli_tools`]).
    pub fn tools(mut self, tools: impl IntoIterator<Item = Tool>) -> Self {
        self.tools.extend(tools);
        self
    }

    /// Adds a resource.
    pub fn resource(mut self, resource: Resource) -> Self {
        self.resources.push(resource);
        self
    }

    /// Sets the resources listed afresh on every `resources/list` (see [`ResourceList`]).
    pub fn resource_list(mut self, list: ResourceList) -> Self {
        self.resource_list = Some(list);
        self
    }

    /// Adds a resource template.
    pub fn resource_template(mut self, template: ResourceTemplate) -> Self {
        self.resource_templates.push(template);
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, prompt: Prompt) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Adds a skill (see [`Skill`]).
    pub fn skill(mut self, skill: Skill) -> Self {
        self.skills.push(skill);
        self
    }

    /// Sets the instructions.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Sets the constructor meta.
    pub fn meta(mut self, meta: JsonObject) -> Self {
        self.meta = meta;
        self
    }

    /// Sets read-only mode.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Sets the tool-name style.
    pub fn tool_names(mut self, style: ToolNameStyle) -> Self {
        self.tool_names = style;
        self
    }

    /// Sets the key that seals input-required request states (see [`RequestStateKey`]).
    pub fn request_state_key(mut self, key: RequestStateKey) -> Self {
        self.request_state_key = Some(key);
        self
    }

    /// Sets the page size.
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size;
        self
    }
}
