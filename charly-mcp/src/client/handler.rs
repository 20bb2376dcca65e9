//! [`Handler`]: charly's side of a session. It identifies as `charly`, declares the
//! capabilities its [`Answers`] allow, forwards progress, and answers the server's
//! server-to-client requests (protocol 2025-11-25 and before) from the answers; a question it
//! cannot answer is declined to the server and kept, so the operation fails naming it.

#![allow(deprecated)] // Sampling and roots are deprecated by SEP-2577, still part of 2026-07-28.

use std::sync::{Arc, Mutex, PoisonError};

use rmcp::RoleClient;
use rmcp::model::{
    ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Implementation, ListRootsResult, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext};

use super::answers::{Answers, Question};
use super::connect::{ProgressFn, ProgressUpdate};

/// charly's side of the session.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) answers: Arc<Answers>,
    /// The `clientInfo.name` (`charly`, or [`super::ConnectOptions::client_name`]).
    name: String,
    /// Questions of server-to-client requests that went unanswered since the last
    /// [`Handler::take_unanswered`].
    unanswered: Arc<Mutex<Vec<Question>>>,
}

impl Handler {
    pub(crate) fn new(progress: Option<ProgressFn>, answers: Answers, name: String) -> Handler {
        Handler { progress, answers: Arc::new(answers), name, unanswered: Arc::default() }
    }

    /// The questions left unanswered since the last call, emptying the list.
    pub(crate) fn take_unanswered(&self) -> Vec<Question> {
        std::mem::take(&mut *self.unanswered.lock().unwrap_or_else(PoisonError::into_inner))
    }

    fn keep(&self, question: Question) {
        self.unanswered.lock().unwrap_or_else(PoisonError::into_inner).push(question);
    }

    fn refused(&self, question: Question) -> rmcp::ErrorData {
        let error = rmcp::ErrorData::invalid_request(format!("charly cannot answer: {question}"), None);
        self.keep(question);
        error
    }
}

impl rmcp::ClientHandler for Handler {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        if let Some(callback) = &self.progress {
            callback(&ProgressUpdate {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
        std::future::ready(())
    }

    /// A form is accepted when the answers and the schema's `default`s cover every required
    /// field; otherwise it is declined and the question kept.
    fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ElicitResult, rmcp::ErrorData>> + MaybeSendFuture + '_ {
        let result = match self.answers.answer_elicitation(&request, None) {
            Ok(result) => result,
            Err(question) => {
                self.keep(question);
                ElicitResult::new(ElicitationAction::Decline)
            }
        };
        std::future::ready(Ok(result))
    }

    fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<CreateMessageResult, rmcp::ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(self.answers.answer_sampling(&params, None).map_err(|q| self.refused(q)))
    }

    fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> impl Future<Output = Result<ListRootsResult, rmcp::ErrorData>> + MaybeSendFuture + '_ {
        std::future::ready(self.answers.answer_roots(None).map_err(|q| self.refused(q)))
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            self.answers.capabilities(),
            Implementation::new(self.name.clone(), env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}
