//! Errors for requests rmcp could not read into a known request: -32602 or a clear -32601.
//!
//! - rmcp 3.11: a request whose params do not fit its method (`tools/call` with `{}` or a
//!   numeric `name`) is read as a custom request, which rmcp's default handler answers with
//!   -32601 "method not found" and the bare method name as the message.
//! - Spec: JSON-RPC 2.0, section 5.1: -32602 for invalid params, -32601 for a method that does
//!   not exist. Here a known method gets -32602 with serde's reason, and an unknown one a
//!   message that says so.
//! - Test: `tests/test_compat/http.rs`, `params_that_do_not_fit_their_method`; the reasons for more
//!   methods in `tests/test_http.rs`.
//!
//! Also: rmcp 3.11 reads a 2026-07-28 request for a method that revision removed
//! (`initialize` without handshake params, `logging/setLevel`, `resources/subscribe` with
//! params that do not fit) as a custom request, and serves a well-formed `logging/setLevel`;
//! the revision (SEP-2575, "Removed methods") wants -32601, which the HTTP transport answers
//! with 404. Test: `tests/test_compat.rs`, `methods_removed_in_2026_07_28`.

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CompleteRequestParams, ErrorCode, GetPromptRequestParams, GetSkillRequestParams,
    InitializeRequestParams, PaginatedRequestParams, ReadResourceDirectoryRequestParams,
    ReadResourceRequestParams, SetLevelRequestParams, SubscribeRequestParams, UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Methods protocol 2026-07-28 removed (SEP-2575, SEP-2567): a request that names them on
/// that revision gets -32601 whatever its params.
pub(crate) const REMOVED_IN_2026: [&str; 5] =
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"];

/// The -32601 error for `method`, removed in protocol 2026-07-28 (the HTTP transport answers
/// it with 404).
pub(crate) fn removed_method(method: &str) -> McpError {
    McpError::new(
        ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: `{method}` is not part of protocol 2026-07-28"),
        None,
    )
}

/// The error answering the request `method` with `params` that rmcp passed on as a custom
/// request: -32602 naming the method and what in its params is wrong, or -32601 for a method
/// this server does not serve (or that protocol 2026-07-28 removed, for a `modern` request).
pub(crate) fn custom_request_error(method: &str, params: Option<Value>, modern: bool) -> McpError {
    if modern && REMOVED_IN_2026.contains(&method) {
        return removed_method(method);
    }
    let reason = match method {
        "initialize" => reason::<InitializeRequestParams>(params),
        "tools/call" => reason::<CallToolRequestParams>(params),
        "resources/read" => reason::<ReadResourceRequestParams>(params),
        "resources/subscribe" => reason::<SubscribeRequestParams>(params),
        "resources/unsubscribe" => reason::<UnsubscribeRequestParams>(params),
        "prompts/get" => reason::<GetPromptRequestParams>(params),
        "completion/complete" => reason::<CompleteRequestParams>(params),
        "logging/setLevel" => reason::<SetLevelRequestParams>(params),
        "skills/get" => reason::<GetSkillRequestParams>(params),
        "resources/directory/read" => reason::<ReadResourceDirectoryRequestParams>(params),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" | "skills/list" => {
            reason::<Option<PaginatedRequestParams>>(params)
        }
        "ping" => Some("takes no params, or an object".to_owned()),
        _ => {
            return McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("unknown method `{method}`: this MCP server does not serve it"),
                None,
            );
        }
    };
    let reason = reason.unwrap_or_else(|| "they do not fit the method".to_owned());
    McpError::invalid_params(format!("invalid params for `{method}`: {reason}"), None)
}

/// serde's reason why `params` (absent: `{}`) is not a `T`, if it is not.
fn reason<T: DeserializeOwned>(params: Option<Value>) -> Option<String> {
    let params = params.unwrap_or_else(|| Value::Object(Default::default()));
    serde_json::from_value::<T>(params).err().map(|e| e.to_string())
}
