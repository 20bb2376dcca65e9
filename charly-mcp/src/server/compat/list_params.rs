//! List requests whose params rmcp reads as none: -32602, not the first page.
//!
//! - rmcp 3.11: `tools/list`, `resources/list`, `resources/templates/list`, `prompts/list` and
//!   `skills/list` read their params through a flattened `Option`, which turns params that do
//!   not fit (`{"cursor": 5}`, a number) into no params at all: the handler serves the first
//!   page, as if no cursor had been sent. (String cursors reach the handler, which refuses
//!   those it did not issue.)
//! - Spec: 2025-11-25, "Pagination": a cursor is an opaque string, and an invalid cursor gets
//!   -32602 (invalid params).
//! - charly: -32602 with the request's id, naming the method and what is wrong (serde's reason,
//!   as `malformed` gives for other methods). Over stdio the transport answers it; over HTTP
//!   the endpoint does, from the body it reads before rmcp (`request_ids_http` for a session's
//!   request; the first 4 KiB for a stateless one: a list request is about 100 bytes).
//! - Test: `tests/test_compat/stdio.rs` and `tests/test_compat/http.rs`,
//!   `a_cursor_that_is_not_a_string`; the real binary in `charly-cli/tests/hardening/edges.rs`.

use rmcp::model::{
    ClientRequest, ErrorData, JsonRpcError, JsonRpcVersion2_0, PaginatedRequestParams, RequestId,
};
use serde::Deserialize;
use serde_json::Value;

/// The methods whose params are a `PaginatedRequestParams` that rmcp reads leniently.
const LIST_METHODS: [&str; 5] =
    ["tools/list", "resources/list", "resources/templates/list", "prompts/list", "skills/list"];

/// Whether `request` is a list request whose params rmcp read as none (left out, or not
/// readable): only then is its text worth a second look.
pub(super) fn unread_params(request: &ClientRequest) -> bool {
    match request {
        ClientRequest::ListToolsRequest(r) => r.params.is_none(),
        ClientRequest::ListResourcesRequest(r) => r.params.is_none(),
        ClientRequest::ListResourceTemplatesRequest(r) => r.params.is_none(),
        ClientRequest::ListPromptsRequest(r) => r.params.is_none(),
        ClientRequest::ListSkillsRequest(r) => r.params.is_none(),
        _ => false,
    }
}

/// The params of a JSON-RPC request, as sent.
#[derive(Deserialize)]
struct Params {
    #[serde(default)]
    params: Option<Value>,
}

/// The error answering request `id` of `method`, whose whole message is `body`, when it is a
/// list request whose params are there but do not fit (`None` otherwise, and for a body that
/// is not such a request).
pub(super) fn refusal(method: &str, id: &RequestId, body: &[u8]) -> Option<JsonRpcError> {
    if !LIST_METHODS.contains(&method) {
        return None;
    }
    let params = serde_json::from_slice::<Params>(body).ok()?.params.filter(|p| !p.is_null())?;
    let reason = serde_json::from_value::<PaginatedRequestParams>(params).err()?;
    Some(JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id: Some(id.clone()),
        // Worded as `malformed` words the params of other methods.
        error: ErrorData::invalid_params(format!("invalid params for `{method}`: {reason}"), None),
    })
}

/// The HTTP answer carrying `error`: 200 with a JSON body, as rmcp answers a JSON-RPC error.
#[cfg(feature = "http")]
pub(super) fn answer(error: &JsonRpcError) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let json = [(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"))];
    let body = serde_json::to_string(error).expect("a JSON-RPC error serialises");
    (http::StatusCode::OK, json, body).into_response()
}

/// The largest stateless request body read here: list requests are about 100 bytes.
#[cfg(feature = "http")]
const MAX_STATELESS_READ: usize = 4096;

/// A stateless POST (no session, so `request_ids_http` reads nothing): `request` to go on to
/// rmcp, its body re-attached when it was read, or the answer refusing a list request whose
/// params do not fit. Only bodies whose `Content-Length` is at most 4 KiB are read.
#[cfg(feature = "http")]
pub(super) async fn stateless(
    request: axum::extract::Request,
) -> Result<axum::extract::Request, axum::response::Response> {
    use axum::body::Body;

    #[derive(Deserialize)]
    struct Head<'a> {
        id: Option<RequestId>,
        #[serde(borrow)]
        method: Option<std::borrow::Cow<'a, str>>,
    }

    let small = request
        .headers()
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n <= MAX_STATELESS_READ);
    if request.method() != http::Method::POST || !small {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_STATELESS_READ).await else {
        // Shorter than said, or a broken connection: rmcp reports it.
        return Ok(axum::extract::Request::from_parts(parts, Body::empty()));
    };
    if let Ok(Head { id: Some(id), method: Some(method) }) = serde_json::from_slice::<Head<'_>>(&bytes)
        && let Some(error) = refusal(&method, &id, &bytes)
    {
        return Err(answer(&error));
    }
    Ok(axum::extract::Request::from_parts(parts, Body::from(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn refused(body: &str) -> Option<String> {
        let id = NumberOrString::Number(1);
        refusal("tools/list", &id, body.as_bytes()).map(|e| e.error.message.into_owned())
    }

    #[test]
    fn only_params_that_do_not_fit_are_refused() {
        let message = refused(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}"#)
            .expect("a number is no cursor");
        assert!(
            message.contains("invalid params for `tools/list`") && message.contains("string"),
            "{message}"
        );
        assert!(
            refused(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":{}}}"#).is_some()
        );
        assert!(refused(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":7}"#).is_some());
        for fits in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"x"}}"#,
        ] {
            assert_eq!(refused(fits), None, "{fits}");
        }
        let id = NumberOrString::Number(1);
        assert!(refusal("tools/call", &id, br#"{"params":{"cursor":5}}"#).is_none());
    }
}
