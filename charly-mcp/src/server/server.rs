//! [`Server`]: one server type for every transport, built once from [`ServerOptions`].

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{ResourceUpdatedNotificationParam, ServerCapabilities};
use rmcp::{Peer, RoleServer};
use serde_json::Value;

use super::handler::Session;
use super::options::{ServerOptions, ToolNameStyle};
use super::pages::Pages;
use super::prompts::Prompt;
use super::resources::{Resource, ResourceTemplate};
use super::tool::Tool;
use crate::catalog::JsonObject;

/// An MCP server: tools, resources, prompts, completion and logging, served over stdio
/// ([`Server::serve_stdio`]), any async byte stream ([`Server::serve_io`]) or Streamable
/// HTTP (`serve_http`, `http_router`). Cheap to clone; every connection shares the same
/// tool index, validators and pre-built pages.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
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
    /// Destructive tools left out by read-only mode, both spellings.
    pub(crate) refused: HashMap<String, String>,
    /// The `tools/list` entry of every served tool, as published.
    pub(crate) models: Vec<rmcp::model::Tool>,
    pub(crate) tool_pages: Pages<rmcp::model::Tool>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) resource_pages: Pages<rmcp::model::Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) template_pages: Pages<rmcp::model::ResourceTemplate>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) prompt_pages: Pages<rmcp::model::Prompt>,
    pub(crate) capabilities: ServerCapabilities,
    pub(crate) subscriptions: Mutex<HashMap<String, HashMap<u64, Peer<RoleServer>>>>,
    next_session: AtomicU64,
}

impl Server {
    /// Builds the server: filters destructive tools in read-only mode, indexes the tools and
    /// builds the list pages once. Each hand-written tool's input validator is compiled on its
    /// first call; a schema that cannot be compiled makes that call an `isError` result.
    ///
    /// # Panics
    ///
    /// On setup mistakes, with a message saying which: two tools, resources or prompts with
    /// the same name/URI (also when only the `_`-joined spellings collide), or (in debug
    /// builds, where every input schema is checked against its meta-schema here) an input
    /// schema that is not valid JSON Schema.
    #[track_caller]
    pub fn new(options: ServerOptions) -> Server {
        let ServerOptions {
            name,
            version,
            instructions,
            tools,
            resources,
            resource_templates,
            prompts,
            meta,
            read_only,
            tool_names,
            page_size,
        } = options;
        let mut refused = HashMap::new();
        let mut served: Vec<Tool> = Vec::new();
        for tool in tools {
            if read_only && tool.is_destructive() {
                let why = format!(
                    "tool `{}` is destructive and this server is read-only, so it cannot be called",
                    tool.name
                );
                refused.insert(crate::names::underscored(&tool.name), why.clone());
                refused.insert(tool.name.clone(), why);
            } else {
                served.push(tool);
            }
        }
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
        let listed: Vec<rmcp::model::Tool> = served
            .iter()
            .map(|tool| match tool_names {
                ToolNameStyle::Underscored => tool.to_model(&crate::names::underscored(&tool.name)),
                _ => tool.to_model(&tool.name),
            })
            .collect();
        assert_unique("resource URI", resources.iter().map(|r| r.model.uri.as_str()));
        assert_unique("resource template", resource_templates.iter().map(|r| r.model.uri_template.as_str()));
        assert_unique("prompt name", prompts.iter().map(|p| p.model.name.as_str()));

        let mut caps =
            ServerCapabilities::builder().enable_tools().enable_logging().enable_completions().build();
        if !resources.is_empty() || !resource_templates.is_empty() {
            let mut resources_cap = rmcp::model::ResourcesCapability::default();
            resources_cap.subscribe = Some(true);
            caps.resources = Some(resources_cap);
        }
        if !prompts.is_empty() {
            caps.prompts = Some(Default::default());
        }

        Server {
            inner: Arc::new(Inner {
                name,
                version,
                instructions,
                meta,
                validators,
                routes,
                refused,
                tool_pages: Pages::new("tools", listed.clone(), page_size),
                models: listed,
                tools: served,
                resource_pages: Pages::new(
                    "resources",
                    resources.iter().map(|r| r.model.clone()).collect(),
                    page_size,
                ),
                resources,
                template_pages: Pages::new(
                    "resources/templates",
                    resource_templates.iter().map(|t| t.model.clone()).collect(),
                    page_size,
                ),
                templates: resource_templates,
                prompt_pages: Pages::new(
                    "prompts",
                    prompts.iter().map(|p| p.model.clone()).collect(),
                    page_size,
                ),
                prompts,
                capabilities: caps,
                subscriptions: Mutex::default(),
                next_session: AtomicU64::new(1),
            }),
        }
    }

    /// The served tools (destructive ones already removed in read-only mode).
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The served tool called `name` (either spelling).
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.inner.routes.get(name).map(|&i| &self.inner.tools[i])
    }

    /// A fresh per-connection handler (an [`rmcp::ServerHandler`]) for custom transports:
    /// `rmcp::serve_server(server.session(), transport)`. Each session keeps its own
    /// logging level.
    pub fn session(&self) -> Session {
        Session::new(self.inner.clone(), self.inner.next_session.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends `notifications/resources/updated` for `uri` to every session subscribed to it;
    /// returns how many were notified. Sessions whose connection is gone are forgotten.
    pub async fn notify_resource_updated(&self, uri: &str) -> usize {
        let peers: Vec<(u64, Peer<RoleServer>)> = {
            let subs = self.inner.subscriptions.lock().unwrap_or_else(PoisonError::into_inner);
            subs.get(uri).map(|m| m.iter().map(|(k, p)| (*k, p.clone())).collect()).unwrap_or_default()
        };
        let mut sent = 0;
        for (session, peer) in peers {
            if peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await.is_ok() {
                sent += 1;
            } else {
                self.inner.unsubscribe(uri, session);
            }
        }
        sent
    }
}

impl Inner {
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

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.name)
            .field("version", &self.inner.version)
            .field("tools", &self.inner.tools.len())
            .finish_non_exhaustive()
    }
}
