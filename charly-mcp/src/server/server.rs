//! [`Server`]: one server type for every transport, built once from [`ServerOptions`].

use std::fmt;
use std::sync::Arc;

use super::handler::Session;
use super::options::ServerOptions;
use super::state::ServerState;
use super::tool::Tool;

/// An MCP server: tools, resources, prompts, completion and logging, served over stdio
/// ([`Server::serve_stdio`]), any async byte stream ([`Server::serve_io`]) or Streamable
/// HTTP (`serve_http`, `http_router`). Cheap to clone; every connection shares the same
/// tool index, validators and pre-built pages.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerState>,
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
        Server { inner: Arc::new(ServerState::new(options)) }
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
        Session::new(self.inner.clone(), self.inner.next_session_id())
    }

    /// Sends `notifications/resources/updated` for `uri` to every session subscribed to it
    /// (`resources/subscribe`, before protocol 2026-07-28) and to every open
    /// `subscriptions/listen` stream that accepted it (2026-07-28); returns how many were
    /// notified. Sessions whose connection is gone are forgotten.
    ///
    /// The server sends these itself for changes made by its own tools (a subscribed
    /// resource whose contents differ after a call of a tool that is not read-only); this is
    /// for changes it cannot see that way, made by another process or by a task.
    pub async fn notify_resource_updated(&self, uri: &str) -> usize {
        self.inner.subscribers.notify_updated(uri).await
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
