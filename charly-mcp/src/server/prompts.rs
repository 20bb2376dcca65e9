//! [`Prompt`]: a prompt template (`prompts/list`, `prompts/get`, completion of its arguments).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::ErrorData as McpError;
use rmcp::model::{GetPromptResult, PromptArgument};

use super::context::CallContext;
use crate::catalog::JsonObject;

/// The future a prompt returns.
pub type PromptFuture = Pin<Box<dyn Future<Output = Result<GetPromptResult, McpError>> + Send + 'static>>;

type GetFn = Arc<dyn Fn(JsonObject, CallContext) -> PromptFuture + Send + Sync>;
type CompleteFn = Arc<dyn Fn(&str, &str) -> Vec<String> + Send + Sync>;

/// A prompt the server offers.
///
/// `prompts/get` checks that every required argument is present (a missing one is an
/// invalid-params error naming it) and then calls `get(arguments)`, or, for a prompt made
/// with [`Prompt::with_context`], `get(arguments, context)`: a [`CallContext`] whose input
/// methods ask the client (an input-required result on protocol 2026-07-28).
#[derive(Clone)]
pub struct Prompt {
    pub(crate) model: rmcp::model::Prompt,
    pub(crate) get: GetFn,
    pub(crate) complete: Option<CompleteFn>,
}

impl Prompt {
    /// A prompt named `name` with these arguments, rendered by `get`.
    pub fn new<F, Fut>(name: &str, description: &str, arguments: Vec<PromptArgument>, get: F) -> Prompt
    where
        F: Fn(JsonObject) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, McpError>> + Send + 'static,
    {
        Prompt::with_context(name, description, arguments, move |args, _| get(args))
    }

    /// A prompt whose `get` also receives the call's context, to ask the client for input
    /// ([`CallContext::elicit`], [`CallContext::input`]; a `?` on their [`super::ToolError`]
    /// gives the right error). Like a tool, on protocol 2026-07-28 it runs once per round.
    pub fn with_context<F, Fut>(
        name: &str,
        description: &str,
        arguments: Vec<PromptArgument>,
        get: F,
    ) -> Prompt
    where
        F: Fn(JsonObject, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, McpError>> + Send + 'static,
    {
        let arguments = (!arguments.is_empty()).then_some(arguments);
        Prompt {
            model: rmcp::model::Prompt::new(name, Some(description), arguments),
            get: Arc::new(move |args, cx| Box::pin(get(args, cx))),
            complete: None,
        }
    }

    /// Completes an argument: `complete(argument, typed_so_far)` returns candidate values
    /// (at most 100 are sent; `hasMore` tells the client there were more).
    pub fn with_completion<F>(mut self, complete: F) -> Prompt
    where
        F: Fn(&str, &str) -> Vec<String> + Send + Sync + 'static,
    {
        self.complete = Some(Arc::new(complete));
        self
    }

    /// The prompt name.
    pub fn name(&self) -> &str {
        &self.model.name
    }

    pub(crate) fn missing_argument(&self, args: &JsonObject) -> Option<&str> {
        self.model
            .arguments
            .iter()
            .flatten()
            .find(|a| a.required == Some(true) && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
    }
}

impl fmt::Debug for Prompt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Prompt").field("name", &self.model.name).finish_non_exhaustive()
    }
}
