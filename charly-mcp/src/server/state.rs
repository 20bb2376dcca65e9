//! [`ServerState`]: what a `Server` and every one of its sessions share, built once
//! from [`ServerOptions`]. It sits below both the server and the session handler, which use it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use rmcp::model::ServerCapabilities;
use rmcp::service::SubscriptionSink;
use rmcp::task_manager::TaskManager;
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::options::{ServerOptions, ToolNameStyle};
use super::pages::Pages;
use super::prompts::Prompt;
use super::request_state::StateSeal;
use super::resources::{Resource, ResourceTemplate};
use super::skills::SkillSet;
use super::tasks::TaskSupport;
use super::tool::Tool;
use crate::catalog::JsonObject;

/// How the tool names of one `tools/list` are spelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// As given: `box.new.project`.
    Dotted = 0,
    /// `_`-joined: `box_new_project`.
    Underscored = 1,
}

/// What every session of a `Server` shares: the served tools, their routes and
/// validators, resources, prompts, and the list pages built once.
pub(crate) struct ServerState {
    pub(crate) name: String,
    pub(crate) version: String,
    pub(crate) instructions: Option<String>,
    pub(crate) meta: JsonObject,
    pub(crate) tools: Vec<Tool>,
    /// Each hand-written tool's compiled input validator, built on the tool's first call:
    /// compiling all of them up front (and jsonschema's meta-schema validator with them) made
    /// a 200-tool server start 2.5x slower than a bare rmcp server. CLI leaves never use
    /// theirs: their argv rebuild validates.
    validators: Vec<OnceLock<Result<jsonschema::Validator, String>>>,
    /// Both spellings of every served tool name → index into `tools`.
    pub(crate) routes: HashMap<String, usize>,
    /// The `tools/list` entry of every served tool, dotted (rmcp reads input schemas here).
    pub(crate) models: Vec<rmcp::model::Tool>,
    /// How tool names are published.
    pub(crate) tool_names: ToolNameStyle,
    /// The `tools/list` pages with the names as given, built once.
    dotted_pages: Pages<rmcp::model::Tool>,
    /// The `tools/list` pages with `_`-joined names, built on first use: only clients that
    /// reject dots see them, and respelling every description and schema at start touched
    /// code (and heap) an idle server never needs.
    underscored_pages: OnceLock<Pages<rmcp::model::Tool>>,
    /// The size of a `tools/list` page (`ServerOptions::page_size`).
    page_size: usize,
    pub(crate) resources: Vec<Resource>,
    pub(crate) resource_pages: Pages<rmcp::model::Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) template_pages: Pages<rmcp::model::ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) prompt_pages: Pages<rmcp::model::Prompt>,
    /// The skills (the skills extension), checked and indexed once.
    pub(crate) skills: SkillSet,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) subscriptions: Mutex<HashMap<String, HashMap<u64, Peer<RoleServer>>>>,
    /// Open `subscriptions/listen` streams (protocol 2026-07-28), by listener number.
    pub(crate) listeners: Mutex<HashMap<u64, SubscriptionSink>>,
    /// Seals the request states of input-required results.
    pub(crate) seal: StateSeal,
    /// The tasks of tools that run as tasks (every session's: a 2026-07-28 client polls
    /// with requests of their own, and task ids are random UUIDs).
    pub(crate) tasks: TaskManager,
    next_session: AtomicU64,
}

impl ServerState {
    /// Builds the state: filters destructive tools in read-only mode, indexes the tools and
    /// builds the list pages once (see `Server::new`, whose panics these are).
    #[track_caller]
    pub(crate) fn new(options: ServerOptions) -> ServerState {
        let ServerOptions {
            name,
            version,
            instructions,
            tools,
            resources,
            resource_templates,
            prompts,
            skills,
            meta,
            read_only,
            tool_names,
            page_size,
            request_state_key,
        } = options;
        // A read-only server keeps no trace of its destructive tools: calling one is calling
        // a tool that does not exist, under any spelling, as in a build without them (the
        // `read-only` feature). Saying "it is destructive" would confirm the tool is there.
        let served: Vec<Tool> =
            tools.into_iter().filter(|tool| !(read_only && tool.is_destructive())).collect();
        let mut routes: HashMap<String, usize> = HashMap::new();
        for (index, tool) in served.iter().enumerate() {
            let underscored = crate::names::underscored(&tool.name);
            for spelling in [tool.name.clone(), underscored] {
                if let Some(&other) = routes.get(&spelling)
                    && other != index
                {
                    panic!(
                        "charly: tools `{}` and `{}` are both reachable as `{spelling}`; rename one",
                        served[other].name, tool.name
                    );
                }
                routes.insert(spelling, index);
            }
        }
        // Checking the schemas compiles jsonschema's meta-schema validator (about 1.2 ms and
        // 3 MiB of RSS), so release builds leave it to each tool's first call.
        if cfg!(debug_assertions) {
            for tool in &served {
                if let Err(e) = jsonschema::meta::validate(&Value::Object((*tool.input_schema).clone())) {
                    panic!("charly: the input schema of tool `{}` is not valid JSON Schema: {e}", tool.name)
                }
            }
        }
        let validators = served.iter().map(|_| OnceLock::new()).collect();
        let listed: Vec<rmcp::model::Tool> = served.iter().map(|tool| tool.to_model(&tool.name)).collect();
        let skills = SkillSet::new(skills, page_size).unwrap_or_else(|e| panic!("charly: {e}"));

        assert_unique(
            "resource URI",
            resources
                .iter()
                .map(|r| r.model.uri.as_str())
                .chain(skills.listed.iter().map(|r| r.uri.as_str())),
        );
        assert_unique("resource template", resource_templates.iter().map(|r| r.model.uri_template.as_str()));
        assert_unique("prompt name", prompts.iter().map(|p| p.model.name.as_str()));

        let mut caps =
            ServerCapabilities::builder().enable_tools().enable_logging().enable_completions().build();
        if !resources.is_empty() || !resource_templates.is_empty() || !skills.is_empty() {
            let mut resources_cap = rmcp::model::ResourcesCapability::default();
            resources_cap.subscribe = Some(true);
            caps.resources = Some(resources_cap);
        }
        if !prompts.is_empty() {
            caps.prompts = Some(Default::default());
        }
        if served.iter().any(|tool| tool.task_support() != TaskSupport::Forbidden) {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        }

        if !skills.is_empty() {
            // SEP-2640: the settings inline under the identifier; skill folders are served
            // by resources/directory/read.
            let settings = rmcp::model::SkillsCapability::new().with_directory_read();
            let Ok(Value::Object(settings)) = serde_json::to_value(settings) else {
                unreachable!("the skills capability serialises to an object")
            };
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::SKILLS_EXTENSION_ID.to_owned(), settings);
        }
        let mut listed_resources: Vec<rmcp::model::Resource> =
            resources.iter().map(|r| r.model.clone()).collect();
        listed_resources.extend(skills.listed.iter().cloned());

        ServerState {
            name,
            version,
            instructions,
            meta,
            validators,
            routes,
            dotted_pages: Pages::new("tools", listed.clone(), page_size),
            underscored_pages: OnceLock::new(),
            page_size,
            models: listed,
            tool_names,
            tools: served,
            resource_pages: Pages::new("resources", listed_resources, page_size),
            resources,
            template_pages: Pages::new(
                "resources/templates",
                resource_templates.iter().map(|t| t.model.clone()).collect(),
                page_size,
            ),
            templates: resource_templates,
            prompt_pages: Pages::new("prompts", prompts.iter().map(|p| p.model.clone()).collect(), page_size),
            prompts,
            skills,
            capabilities: caps,
            subscriptions: Mutex::default(),
            listeners: Mutex::default(),
            seal: StateSeal::new(request_state_key.as_ref().map(|k| &*k.0)),
            tasks: TaskManager::new(),
            next_session: AtomicU64::new(1),
        }
    }

    /// The spelling of tool names for a client that calls itself `client`, as
    /// [`ToolNameStyle`] decides. `None` is a client the server cannot know (an old-protocol
    /// request with no session, as on stateless HTTP): under `auto` it gets the `_`-joined
    /// names, which every client accepts.
    pub(crate) fn spelling(&self, client: Option<&str>) -> Spelling {
        self.spelling_for(client.is_none_or(super::clients::rejects_dots))
    }

    /// The spelling of tool names for a client that rejects dots or not.
    pub(crate) fn spelling_for(&self, rejects_dots: bool) -> Spelling {
        match self.tool_names {
            ToolNameStyle::Underscored => Spelling::Underscored,
            ToolNameStyle::Auto if rejects_dots => Spelling::Underscored,
            _ => Spelling::Dotted,
        }
    }

    /// The text blocks of `content` with the dotted names of this server's tools spelled
    /// `_`-joined ([`crate::names::respell`]).
    pub(crate) fn respell_texts(&self, content: &mut [rmcp::model::ContentBlock]) {
        for block in content {
            if let rmcp::model::ContentBlock::Text(t) = block
                && let Some(text) = crate::names::respell(&t.text, |name| self.routes.contains_key(name))
            {
                t.text = text;
            }
        }
    }

    /// The `tools/list` pages in `spelling`.
    pub(crate) fn tool_pages(&self, spelling: Spelling) -> &Pages<rmcp::model::Tool> {
        match spelling {
            Spelling::Dotted => &self.dotted_pages,
            Spelling::Underscored => self.underscored_pages.get_or_init(|| {
                // Descriptions (the tool's and its schemas') that name other tools name them
                // as this list does.
                let is_tool = |name: &str| self.routes.contains_key(name);
                let models = self
                    .tools
                    .iter()
                    .map(|tool| {
                        let mut model = tool.to_model(&crate::names::underscored(&tool.name));
                        respell_model(&mut model, &is_tool);
                        model
                    })
                    .collect();
                Pages::new("tools", models, self.page_size)
            }),
        }
    }

    /// A fresh session number (for resource subscriptions).
    pub(crate) fn next_session_id(&self) -> u64 {
        self.next_session.fetch_add(1, Ordering::Relaxed)
    }
    /// The input validator of tool `index`, compiled on first use; the error says why the
    /// schema (valid against its meta-schema) still cannot be compiled, e.g. a `$ref` that
    /// does not resolve.
    pub(crate) fn validator(&self, index: usize) -> Result<&jsonschema::Validator, &str> {
        self.validators[index]
            .get_or_init(|| {
                let tool = &self.tools[index];
                jsonschema::validator_for(&Value::Object((*tool.input_schema).clone()))
                    .map_err(|e| format!("the input schema of tool `{}` cannot be compiled: {e}", tool.name))
            })
            .as_ref()
            .map_err(String::as_str)
    }

    pub(crate) fn subscribe(&self, uri: &str, session: u64, peer: Peer<RoleServer>) {
        let mut subs = self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner);
        subs.entry(uri.to_owned()).or_default().insert(session, peer);
    }

    /// Registers an open `subscriptions/listen` stream; its number unregisters it.
    pub(crate) fn listen(&self, sink: SubscriptionSink) -> u64 {
        let id = self.next_session_id();
        self.listeners.lock().unwrap_or_else(PoisonError::into_inner).insert(id, sink);
        id
    }

    pub(crate) fn unlisten(&self, id: u64) {
        self.listeners.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
    }

    pub(crate) fn unsubscribe(&self, uri: &str, session: u64) {
        let mut subs = self.subscriptions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = subs.get_mut(uri) {
            m.remove(&session);
            if m.is_empty() {
                subs.remove(uri);
            }
        }
    }
}

#[track_caller]
fn assert_unique<'a>(what: &str, items: impl Iterator<Item = &'a str>) {
    let mut seen = std::collections::HashSet::new();
    for item in items {
        assert!(seen.insert(item), "charly: {what} `{item}` is given twice; each must be unique");
    }
}

/// A tool's description, title and schema descriptions with the dotted tool names in them
/// spelled `_`-joined ([`crate::names::respell`]).
fn respell_model(model: &mut rmcp::model::Tool, is_tool: &dyn Fn(&str) -> bool) {
    use crate::names::{respell, respell_descriptions};
    if let Some(text) = model.description.as_deref().and_then(|d| respell(d, is_tool)) {
        model.description = Some(text.into());
    }
    if let Some(text) = model.title.as_deref().and_then(|t| respell(t, is_tool)) {
        model.title = Some(text);
    }
    let mut schemas = vec![&mut model.input_schema];
    schemas.extend(model.output_schema.as_mut());
    for schema in schemas {
        let mut value = Value::Object((**schema).clone());
        if respell_descriptions(&mut value, is_tool) {
            let Value::Object(map) = value else { unreachable!("an object stays an object") };
            *schema = std::sync::Arc::new(map);
        }
    }
}
