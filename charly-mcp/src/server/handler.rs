//! [`Session`]: the per-connection [`ServerHandler`] behind every transport.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams, CompleteResult,
    CompletionInfo, CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse,
    GetSkillRequestParams, GetSkillResult, GetTaskParams, GetTaskResult, Implementation, InputRequiredResult,
    InputResponses, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListSkillsResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceDirectoryRequestParams,
    ReadResourceDirectoryResult, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
    Reference, ServerConfig, SetLevelRequestParams, SubscribeRequestParams, SubscriptionFilter,
    UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;

#[cfg(feature = "http")]
use super::compat::SessionKeeper;
use super::compat::{SessionWatch, custom_request_error, removed_method};
use super::context::{CallContext, ContextParts};
use super::input::{Channel, RoundEnd, Rounds};
use super::logging::LevelFilter;
use super::progress::{Gate, check_progress_token};
use super::prompts::Prompt;
use super::request_state::Binding;
use super::state::ServerState;
use super::tasks::{Mode, TaskSlot};
use crate::catalog::JsonObject;
use crate::quote::Quoted;

mod call;

use call::asked;

/// Meta a host application attaches to an HTTP request (as an `http` request extension,
/// e.g. from its authentication middleware); merged last into the call's meta, so neither
/// the client nor the server's constructor meta can override it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HostMeta(pub JsonObject);

/// The meta key of the caller's verified identity: set by the HTTP layer of a server that
/// checks OAuth access tokens (`HttpOptions::oauth`) to
/// `{"subject": sub, "scopes": [..], "issuer": iss, "clientId": client_id or azp}` from the
/// token (a claim the token lacks is `null`). A client's `_meta` never sets it: the server
/// drops this key from every request's `_meta`, on every transport, so a tool that finds it
/// in [`CallContext::meta`] can trust it came from a verified token (or from a host's own
/// [`HostMeta`]).
pub const AUTH_META_KEY: &str = "charly/auth";

/// One client connection's view of a [`super::Server`]: an [`rmcp::ServerHandler`] with its
/// own logging level. Made by [`super::Server::session`].
#[derive(Clone)]
pub struct Session {
    server: Arc<ServerState>,
    id: u64,
    levels: LevelFilter,
    /// Served by stateless Streamable HTTP: no session, so no server-to-client requests.
    stateless: bool,
    /// Over stateful Streamable HTTP, what a call watches for its session's deletion (keeping
    /// the session alive meanwhile); nothing on other transports.
    watch: SessionWatch,
    /// Over Streamable HTTP, the endpoint's tool calls in flight, which
    /// [`super::ServerHandle::shutdown`] stops and waits for; `None` on other transports.
    #[cfg(feature = "http")]
    calls: Option<Calls>,
}

/// The tool calls of one HTTP endpoint: counted while they run, and stopped together when
/// the server shuts down (before rmcp tears the sessions down, which may drop a call
/// without letting it reap its children).
#[cfg(feature = "http")]
#[derive(Clone, Debug, Default)]
pub(crate) struct Calls {
    /// Holds a token per call in flight.
    pub(crate) running: tokio_util::task::TaskTracker,
    /// Cancelled when the server shuts down: every call in flight, and any that starts, is
    /// cancelled.
    pub(crate) stop: CancellationToken,
}

/// Most completion values sent in one `completion/complete` result (MCP's limit).
const MAX_COMPLETIONS: usize = 100;

impl Session {
    pub(crate) fn new(server: Arc<ServerState>, id: u64) -> Session {
        Session {
            server,
            id,
            levels: LevelFilter::default(),
            stateless: false,
            watch: SessionWatch::default(),
            #[cfg(feature = "http")]
            calls: None,
        }
    }

    /// This session, its tool calls counted in `calls` while they run (until they return or
    /// are dropped).
    #[cfg(feature = "http")]
    pub(crate) fn with_calls(mut self, calls: Calls) -> Session {
        self.calls = Some(calls);
        self
    }

    /// This session, keeping its HTTP session alive through `keeper` while a call runs.
    #[cfg(feature = "http")]
    pub(crate) fn with_keeper(mut self, keeper: SessionKeeper) -> Session {
        self.watch = SessionWatch::http(keeper);
        self
    }

    /// This session, served by stateless Streamable HTTP: its calls' sampling and elicitation
    /// requests fail at once instead of waiting for an answer no client can send.
    #[cfg(feature = "http")]
    pub(crate) fn stateless(mut self) -> Session {
        self.stateless = true;
        self
    }

    /// The call's meta: the client's `_meta` (without [`AUTH_META_KEY`], which only the
    /// server's side sets), then the constructor meta, then the host's.
    fn merged_meta(&self, context: &RequestContext<RoleServer>) -> JsonObject {
        let mut meta = context.meta.0.0.clone();
        meta.remove(AUTH_META_KEY);
        meta.extend(self.server.meta.iter().map(|(k, v)| (k.clone(), v.clone())));
        if let Some(host) = host_meta(context) {
            meta.extend(host.0.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        meta
    }

    /// Whether this request speaks protocol 2026-07-28 or later (its `_meta` says so; a
    /// session that negotiated an older version in `initialize` does not).
    fn is_modern(context: &RequestContext<RoleServer>) -> bool {
        context.protocol_version().is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str())
    }

    /// How a call of `method` for `name` with `arguments` asks its client for input: rounds
    /// of input-required results for 2026-07-28 (the sealed answers of earlier rounds opened
    /// from `state`), requests over the session otherwise.
    fn channel(
        &self,
        context: &RequestContext<RoleServer>,
        binding: Option<&Binding>,
        state: Option<&str>,
        responses: Option<InputResponses>,
    ) -> Result<Channel, McpError> {
        match binding {
            Some(binding) => {
                let sealed = self.server.seal.open(binding, state)?;
                let capabilities = context.client_capabilities().unwrap_or_default();
                Ok(Channel::Rounds(Box::new(Rounds::new(capabilities, sealed, responses))))
            }
            None => Ok(Channel::Requests { peer: Some(context.peer.clone()), stateless: self.stateless }),
        }
    }

    /// The context of one call of `name` (a tool, or a prompt), asking through `channel`.
    fn context_for(
        &self,
        name: &str,
        context: &RequestContext<RoleServer>,
        channel: Channel,
        gate: &Gate,
        mode: Mode,
    ) -> CallContext {
        let levels = if Self::is_modern(context) {
            LevelFilter::for_request(context.meta.log_level())
        } else {
            self.levels.clone()
        };
        CallContext::from_parts(ContextParts {
            tool: name.into(),
            meta: self.merged_meta(context),
            // A child: the end of a round cancels what the handler left running. A call that
            // may become a task has its own (see `call`).
            ct: if mode == Mode::OnRequest { CancellationToken::new() } else { context.ct.child_token() },
            progress_token: context.meta.get_progress_token(),
            peer: Some(context.peer.clone()),
            channel,
            levels,
            gate: gate.clone(),
            task: TaskSlot::new(mode),
        })
    }

    /// `prompts/get` of `prompt`: its `get`, in rounds on 2026-07-28.
    async fn prompt(
        &self,
        prompt: &Prompt,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        check_progress_token(&context)?;
        let args = request.arguments.take().unwrap_or_default();
        let binding = Self::is_modern(&context).then(|| {
            Binding::new("prompts/get", &prompt.model.name, &args, host_meta(&context).map(|h| &h.0))
        });
        let channel = self.channel(
            &context,
            binding.as_ref(),
            request.request_state.as_deref(),
            request.input_responses.take(),
        )?;
        let gate = Gate::open();
        let cx = self.context_for(&prompt.model.name, &context, channel, &gate, Mode::Plain);
        let outcome = tokio::select! {
            biased;
            outcome = (prompt.get)(args, cx.clone()) => Some(outcome),
            () = asked(&cx) => None,
        };
        gate.close().await;
        let outcome = match (cx.rounds(), binding) {
            (Some(rounds), Some(binding)) => match rounds.end(outcome) {
                RoundEnd::Done(outcome) => outcome,
                RoundEnd::Asked { requests, used } => {
                    cx.cancellation_token().cancel();
                    let state = self.server.seal.seal(&binding, used, rounds.round());
                    return Ok(InputRequiredResult::new(Some(requests), Some(state)).into());
                }
                RoundEnd::Failed(error) => return Err(error),
            },
            _ => outcome.unwrap_or_else(|| Err(McpError::internal_error("the prompt stopped", None))),
        };
        Ok(outcome?.into())
    }

    /// MCP "Prompts" (Capabilities): a server without prompts declares no `prompts`
    /// capability, and then answers the prompt methods as methods it does not serve.
    fn serves_prompts(&self, method: &str) -> Result<(), McpError> {
        match self.server.capabilities.prompts {
            Some(_) => Ok(()),
            None => Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "unknown method `{method}`: this server has no prompts (it declares no `prompts` capability)"
                ),
                None,
            )),
        }
    }

    fn find_prompt(&self, name: &str) -> Result<&Prompt, McpError> {
        self.server.prompts.iter().find(|p| p.model.name == name).ok_or_else(|| {
            let known = match self.server.prompts.is_empty() {
                true => "this server has no prompts (it declares no `prompts` capability)",
                false => "prompts/list names the prompts",
            };
            McpError::invalid_params(format!("unknown prompt `{name}`: {known}"), None)
        })
    }

    /// Tells this session about resource list changes from now on, unless it cannot hear
    /// them: a request over stateless HTTP has no session, and a 2026-07-28 request none either
    /// (that revision's clients ask with `subscriptions/listen`).
    fn register(&self, context: &RequestContext<RoleServer>) {
        if !self.stateless && !Self::is_modern(context) {
            self.server.subscribers.register(self.id, context.peer.clone());
        }
    }
}

#[cfg(feature = "http")]
fn host_meta(context: &RequestContext<RoleServer>) -> Option<&HostMeta> {
    context.extensions.get::<http::request::Parts>().and_then(|parts| parts.extensions.get::<HostMeta>())
}

#[cfg(not(feature = "http"))]
fn host_meta(_: &RequestContext<RoleServer>) -> Option<&HostMeta> {
    None
}

/// Whether the request came over HTTP without a session (stateless HTTP), so no
/// `initialize` of its client is known.
#[cfg(feature = "http")]
fn sessionless(context: &RequestContext<RoleServer>) -> bool {
    context
        .extensions
        .get::<http::request::Parts>()
        .is_some_and(|parts| !parts.headers.contains_key("mcp-session-id"))
}

#[cfg(not(feature = "http"))]
fn sessionless(_: &RequestContext<RoleServer>) -> bool {
    false
}

fn cursor(request: &Option<PaginatedRequestParams>) -> Option<&str> {
    request.as_ref().and_then(|r| r.cursor.as_deref())
}

impl ServerHandler for Session {
    /// A request rmcp could not read: known methods with params that do not fit them, and
    /// unknown methods (see `compat/malformed.rs`).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        Err(custom_request_error(&request.method, request.params, Self::is_modern(&context)))
    }

    /// `notifications/initialized`: the session hears about resource list changes from now on.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tracing::debug!(session = self.id, "client initialized");
        if !self.stateless {
            self.server.subscribers.register(self.id, context.peer.clone());
        }
    }

    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(self.server.capabilities.clone());
        info.server_info = Implementation::new(&self.server.name, &self.server.version);
        info.instructions = self.server.instructions.clone();
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        // Every revision rmcp knows, 2024-11-05 to 2026-07-28: `initialize` negotiates up to
        // 2025-11-25 (the last revision with a handshake), per-request `_meta` names 2026-07-28.
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    /// The tools, their names spelled for the client (`ToolNameStyle`): on protocol 2026-07-28
    /// the one the request's `_meta` names; on earlier revisions the one the session's
    /// `initialize` named (a `_meta` clientInfo does not override it), and for a request with no
    /// session (stateless HTTP) the `_`-joined names every client accepts.
    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let spelling = self.spelling_of(&context);
        let (tools, next) = self.server.tool_pages(spelling).page(cursor(&request))?;
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.call(request, context).await
    }

    /// `tasks/get` (the tasks extension; rmcp refuses it with -32021 unless the request
    /// declared the extension): the task's status, with its result or error once it ended.
    async fn get_task(
        &self,
        request: GetTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.server.tasks.get_task(&request.task_id)?))
    }

    /// `tasks/update`: answers to the task's `inputRequests` (unknown keys are ignored).
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.server.tasks.update_task(&request.task_id, request.input_responses)
    }

    /// `tasks/cancel`: stops the task's call (it ends `cancelled`); a no-op for a task that
    /// has ended.
    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.server.tasks.cancel_task(&request.task_id)
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.server.routes.get(name).map(|&i| self.server.models[i].clone())
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if Self::is_modern(&context) {
            return Err(removed_method("logging/setLevel"));
        }
        self.levels.set(request.level);
        Ok(())
    }

    /// The fixed resources and skills, then what the `ResourceList` gives now.
    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        self.register(&context);
        let (items, next) = self.server.resource_page(cursor(&request)).await?;
        let mut result = ListResourcesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let (items, next) = self.server.template_pages.page(cursor(&request))?;
        let mut result = ListResourceTemplatesResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        let uri = request.uri;
        if let Some(file) = self.server.skills.read(&uri) {
            return Ok(file.into());
        }
        let contents = if let Some(read) = self.server.read(&uri).await {
            read?
        } else {
            // SEP-2164: the URI in `data`; rmcp turns the code into -32602 for 2026-07-28.
            return Err(McpError::resource_not_found(
                format!(
                    "no resource at `{uri}`: resources/list and resources/templates/list name what exists"
                ),
                Some(serde_json::json!({"uri": uri})),
            ));
        };
        Ok(ReadResourceResult::new(contents).into())
    }

    /// `skills/list` (the skills extension; rmcp answers -32601 when the server has no skills
    /// and so does not declare it): every skill's entry, in pages.
    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let (items, next) = self.server.skills.pages.page(cursor(&request))?;
        let mut result = ListSkillsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    /// `skills/get`: the entry of the skill whose `SKILL.md` is at `uri`; -32602 for a URI
    /// that names no served skill.
    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        Ok(GetSkillResult::new(self.server.skills.get(&request.uri)?))
    }

    /// `resources/directory/read`: the direct children of a skill folder, on one page;
    /// -32602 for a URI that is no skill folder.
    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, McpError> {
        Ok(ReadResourceDirectoryResult::with_all_items(self.server.skills.directory(&request.uri)?))
    }

    /// `subscriptions/listen` (protocol 2026-07-28): the resources among `resourceSubscriptions`
    /// that this server has, and `resourcesListChanged` when its resource list can change (a
    /// `ResourceList`). Its tool and prompt lists never change, so it offers neither.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut accepted = SubscriptionFilter::new();
        let known: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| self.server.known_uri(uri))
            .cloned()
            .collect();
        accepted.resource_subscriptions = (!known.is_empty()).then_some(known);
        accepted.resources_list_changed = (requested.resources_list_changed == Some(true)
            && self.server.resource_list.is_some())
        .then_some(true);
        Some(accepted)
    }

    /// An open `subscriptions/listen` stream: the changes a tool call makes to the resources
    /// it accepted (and to the resource list) and [`super::Server::notify_resource_updated`]
    /// reach it until the client cancels it or goes away.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), McpError> {
        for uri in context.sink().accepted().resource_subscriptions.iter().flatten() {
            self.server.watch(uri).await;
        }
        let id = self.server.subscribers.listen(context.sink().clone());
        context.cancelled().await;
        self.server.subscribers.unlisten(id);
        Ok(())
    }

    #[allow(deprecated)] // resources/subscribe is legacy only from protocol 2026-07-28 on.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        if !self.server.knows(&request.uri).await {
            return Err(McpError::resource_not_found(
                format!("no resource at `{}` to subscribe to", Quoted::new(&*request.uri)),
                None,
            ));
        }
        self.server.watch(&request.uri).await;
        self.server.subscribers.subscribe(&request.uri, self.id, context.peer.clone());
        self.register(&context);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.server.subscribers.unsubscribe(&request.uri, self.id);
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        self.serves_prompts("prompts/list")?;
        let (items, next) = self.server.prompt_pages.page(cursor(&request))?;
        let mut result = ListPromptsResult::with_all_items(items);
        result.next_cursor = next;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        mut request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        self.serves_prompts("prompts/get")?;
        let prompt = self.find_prompt(&request.name)?;
        let args = request.arguments.take().unwrap_or_default();
        if let Some(missing) = prompt.missing_argument(&args) {
            return Err(McpError::invalid_params(
                format!("prompt `{}` needs the argument `{missing}`", request.name),
                None,
            ));
        }
        request.arguments = Some(args);
        self.prompt(prompt, request, context).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        let arg = &request.argument;
        let mut values = match &request.r#ref {
            Reference::Prompt(p) => match &self.find_prompt(&p.name)?.complete {
                Some(complete) => complete(&arg.name, &arg.value),
                None => Vec::new(),
            },
            Reference::Resource(r) => self
                .server
                .templates
                .iter()
                .find(|t| t.model.uri_template == r.uri)
                .and_then(|t| t.complete.as_ref())
                .map(|complete| complete(&arg.name, &arg.value))
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        let mut info = CompletionInfo::new(values).map_err(|e| McpError::internal_error(e, None))?;
        info.total = u32::try_from(total).ok();
        info.has_more = Some(total > MAX_COMPLETIONS);
        Ok(CompleteResult::new(info))
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").field("server", &self.server.name).field("id", &self.id).finish()
    }
}
