//! Tasks (the tasks extension, SEP-2663) on the client side: a call the server runs as a
//! task is followed to its end, its questions answered with `tasks/update`, and cancelled on
//! the server when the run is interrupted.

use std::collections::HashSet;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CreateTaskResult, GetTaskParams, InputRequests, TaskPayload, UpdateTaskParams,
};

use super::error::ClientError;
use super::session::Client;

impl Client {
    /// `tasks/cancel` of the task `id` after an interrupt, waiting at most
    /// [`super::CANCEL_GRACE`] for the server to confirm: the error says which happened.
    async fn cancel_interrupted(&self, id: &str) -> ClientError {
        let cancel = self.service.peer().cancel_task(rmcp::model::CancelTaskParams::new(id.to_owned()));
        let detail = match tokio::time::timeout(super::CANCEL_GRACE, cancel).await {
            Ok(Ok(_)) => format!("task {id} cancelled on the server (tasks/cancel)"),
            Ok(Err(e)) => {
                format!(
                    "tasks/cancel of task {id} failed: {}",
                    ClientError::from_service("tasks/cancel", &self.location, e)
                )
            }
            Err(_) => format!(
                "tasks/cancel of task {id} sent; the server did not confirm within {}",
                super::format_duration(super::CANCEL_GRACE)
            ),
        };
        ClientError::Interrupted { operation: "tools/call", detail }
    }

    /// Polls a task (`tasks/get`) until it ends, answering its input requests with
    /// `tasks/update`; the whole task shares one timeout. An interrupt cancels the task on
    /// the server.
    pub(crate) async fn follow_task(&self, created: CreateTaskResult) -> Result<CallToolResult, ClientError> {
        const OP: &str = "tasks/get";
        let id = created.task.task_id.clone();
        let poll = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(500).clamp(50, 5_000));
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut answered = HashSet::new();
        loop {
            if tokio::time::Instant::now() >= deadline {
                let _ = self.service.peer().cancel_task(rmcp::model::CancelTaskParams::new(id.clone())).await;
                return Err(ClientError::Timeout { operation: OP, timeout: self.timeout, endpoint: None });
            }
            let task =
                match self.within(OP, self.service.peer().get_task(GetTaskParams::new(id.clone()))).await {
                    Err(ClientError::Interrupted { .. }) => return Err(self.cancel_interrupted(&id).await),
                    other => other?,
                };
            match task.task.payload {
                TaskPayload::Completed { result } => {
                    return serde_json::from_value(serde_json::Value::Object(result)).map_err(|e| {
                        ClientError::Session {
                            operation: OP,
                            message: format!(
                                "task {id} completed with a result that is not a tools/call result: {e}"
                            ),
                        }
                    });
                }
                TaskPayload::Failed { error } => {
                    let code = error.get("code").and_then(serde_json::Value::as_i64).unwrap_or_default();
                    let message =
                        error.get("message").and_then(serde_json::Value::as_str).unwrap_or("failed");
                    return Err(ClientError::Server {
                        operation: OP,
                        code: code as i32,
                        message: format!("task {id}: {message}"),
                        data: error.get("data").cloned(),
                    });
                }
                TaskPayload::Cancelled => {
                    return Err(ClientError::Session {
                        operation: OP,
                        message: format!("task {id} was cancelled"),
                    });
                }
                TaskPayload::InputRequired { input_requests } => {
                    let fresh: InputRequests =
                        input_requests.into_iter().filter(|(key, _)| !answered.contains(key)).collect();
                    if !fresh.is_empty() {
                        let responses = self.answer(fresh).map_err(|questions| {
                            ClientError::InputRequired { operation: "tasks/update", questions }
                        })?;
                        answered.extend(responses.keys().cloned());
                        let update = UpdateTaskParams::new(id.clone(), responses);
                        self.within("tasks/update", self.service.peer().update_task(update)).await?;
                        continue;
                    }
                }
                _ => {}
            }
            tokio::select! {
                () = tokio::time::sleep(poll) => {}
                () = self.interrupted() => return Err(self.cancel_interrupted(&id).await),
            }
        }
    }
}
