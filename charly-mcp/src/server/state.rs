//! [`ServerState`]: what a `Server` and every one of its sessions share, built once
//! from [`ServerOptions`]. It sits below both the server and the session handler, which use it.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::ErrorData as McpError;
use rmcp::model::{ResourceContents, ServerCapabilities};
use rmcp::task_manager::TaskManager;
use serde_json::Value;

use super::changes::{Subscribers, contents_hash};
use super::options::{ServerOptions, ToolNameStyle};
use super::pages::Pages;
use super::prompts::Prompt;
use super::request_state::StateSeal;
use super::resources::{Resource, ResourceList, ResourceTemplate};
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
    /// The `resources/list` pages of the fixed resources and the skills, built once (a server
    /// with a [`ResourceList`] builds its pages per call).
    pub(crate) resource_pages: Pages<rmcp::model::Resource>,
    /// Resources listed afresh on every call.
    pub(crate) resource_list: Option<ResourceList>,
    /// With a [`ResourceList`], the entries listed before its own: the fixed resources' and
    /// the skills'.
    fixed_listed: Option<Vec<rmcp::model::Resource>>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) template_pages: Pages<rmcp::model::ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) prompt_pages: Pages<rmcp::model::Prompt>,
    /// The skills (the skills extension), checked and indexed once.
    pub(crate) skills: SkillSet,
    pub(crate) capabilities: ServerCapabilities,
    /// Who hears about resources that changed, and what they were last seen as.
    pub(crate) subscribers: Subscribers,
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
            resource_list,
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
        if !resources.is_empty()
            || resource_list.is_some()
            || !resource_templates.is_empty()
            || !skills.is_empty()
        {
            // `notifications/resources/updated` after a tool call changed a subscribed
            // resource (`after_call`); `list_changed` when a ResourceList's set changed.
            let mut resources_cap = rmcp::model::ResourcesCapability::default();
            resources_cap.subscribe = Some(true);
            resources_cap.list_changed = resource_list.is_some().then_some(true);
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
        // The list as the server starts: changes are announced against it.
        let first_list = resource_list.as_ref().map(|list| {
            let taken = |uri: &str| listed_resources.iter().any(|r| r.uri == uri);
            list.now().into_iter().filter(|r| !taken(&r.model.uri)).map(|r| r.model).collect()
        });

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
            fixed_listed: resource_list.as_ref().map(|_| listed_resources.clone()),
            resource_pages: Pages::new("resources", listed_resources, page_size),
            resources,
            resource_list,
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
            subscribers: Subscribers::new(first_list),
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

    /// The resources of the [`ResourceList`] now, without the URIs the fixed resources and
    /// the skills have; empty without a list.
    async fn listed_now(&self) -> Vec<Resource> {
        let Some(list) = &self.resource_list else { return Vec::new() };
        let taken =
            |uri: &str| self.resources.iter().any(|r| r.model.uri == uri) || self.skills.has_file(uri);
        list.listed().await.into_iter().filter(|r| !taken(&r.model.uri)).collect()
    }

    /// The `resources/list` page `cursor` points at, and the next page's cursor: from the
    /// pages built once, or with a [`ResourceList`], from pages of the resources now.
    pub(crate) async fn resource_page(
        &self,
        cursor: Option<&str>,
    ) -> Result<(Vec<rmcp::model::Resource>, Option<String>), McpError> {
        let Some(fixed) = &self.fixed_listed else { return self.resource_pages.page(cursor) };
        let mut items = fixed.clone();
        items.extend(self.listed_now().await.into_iter().map(|r| r.model));
        Pages::new("resources", items, self.page_size).page(cursor)
    }

    /// Whether `uri` names a resource: a fixed one, a skill file, one the [`ResourceList`]
    /// lists (listed on the calling thread), or one a template matches.
    pub(crate) fn known_uri(&self, uri: &str) -> bool {
        self.resources.iter().any(|r| r.model.uri == uri)
            || self.skills.has_file(uri)
            || self.templates.iter().any(|t| t.matches(uri).is_some())
            || self.resource_list.as_ref().is_some_and(|list| list.now().iter().any(|r| r.model.uri == uri))
    }

    /// [`ServerState::known_uri`], with the [`ResourceList`] listed on the blocking pool.
    pub(crate) async fn knows(&self, uri: &str) -> bool {
        self.resources.iter().any(|r| r.model.uri == uri)
            || self.skills.has_file(uri)
            || self.templates.iter().any(|t| t.matches(uri).is_some())
            || self.listed_now().await.iter().any(|r| r.model.uri == uri)
    }

    /// `resources/read` of `uri` by a fixed resource, the [`ResourceList`] or a template;
    /// `None` when none has it (skill files are read apart).
    pub(crate) async fn read(&self, uri: &str) -> Option<Result<Vec<ResourceContents>, McpError>> {
        if let Some(resource) = self.resources.iter().find(|r| r.model.uri == uri) {
            return Some((resource.read)(uri.to_owned()).await);
        }
        if self.resource_list.is_some()
            && let Some(resource) = self.listed_now().await.into_iter().find(|r| r.model.uri == uri)
        {
            return Some((resource.read)(uri.to_owned()).await);
        }
        let (template, vars) = self.templates.iter().find_map(|t| t.matches(uri).map(|vars| (t, vars)))?;
        Some((template.read)(uri.to_owned(), vars).await)
    }

    /// The hash of `uri`'s contents now (`None` when it cannot be read).
    async fn hash_now(&self, uri: &str) -> Option<u64> {
        match self.read(uri).await {
            Some(Ok(contents)) => contents_hash(Some(&contents)),
            _ => None,
        }
    }

    /// Starts watching `uri` for changes (a subscription or a listen stream took it): its
    /// contents hash now, unless it is already watched.
    pub(crate) async fn watch(&self, uri: &str) {
        let mut seen = self.subscribers.seen.lock().await;
        if !seen.contents.contains_key(uri) {
            let hash = self.hash_now(uri).await;
            seen.contents.insert(uri.to_owned(), hash);
        }
    }

    /// After a call of a tool that is not read-only: `notifications/resources/list_changed`
    /// when the [`ResourceList`]'s set is not the one last seen, and
    /// `notifications/resources/updated` for each watched resource whose contents hash is not
    /// the one last seen. Checks run one at a time; a server no one watches checks nothing.
    pub(crate) async fn after_call(&self) {
        if self.subscribers.is_idle() {
            return;
        }
        let mut seen = self.subscribers.seen.lock().await;
        if self.resource_list.is_some() {
            let now: Vec<rmcp::model::Resource> =
                self.listed_now().await.into_iter().map(|r| r.model).collect();
            if seen.list.as_ref() != Some(&now) {
                let sent = self.subscribers.notify_list_changed().await;
                tracing::debug!(sent, resources = now.len(), "resource list changed");
                seen.list = Some(now);
            }
        }
        let watched = self.subscribers.watched();
        seen.contents.retain(|uri, _| watched.binary_search(uri).is_ok());
        for uri in watched {
            let hash = self.hash_now(&uri).await;
            if seen.contents.insert(uri.clone(), hash).is_some_and(|before| before != hash) {
                let sent = self.subscribers.notify_updated(&uri).await;
                tracing::debug!(%uri, sent, "resource updated");
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
