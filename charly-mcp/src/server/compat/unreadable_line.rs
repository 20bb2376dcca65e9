//! stdio lines rmcp cannot read: an error answer for each, with the request's id where it
//! can be read, instead of silence.
//!
//! - rmcp 3.11 (`AsyncRwTransport`): a line that is not JSON (invalid UTF-8, a truncated
//!   object) is dropped with a debug log, so the client waits for its timeout; JSON that is no
//!   JSON-RPC message gets -32600 `Invalid request` without an id even when the id is plain
//!   to read; a line over 16 MiB is dropped (charly answers
//!   one over `MAX_REQUEST_BYTES`, 4 MiB, the HTTP body limit, with -32600).
//! - Spec: JSON-RPC 2.0, section 5.1: -32700 for input that is not JSON, -32600 for JSON that
//!   is no request; section 5: the answer carries the request's id, and `"id": null` when it
//!   cannot be detected (rmcp leaves the id out; `stdio_transport` writes the `null`, as the
//!   HTTP answers have it). MCP 2025-11-25, "Error Handling".
//!   Batches (JSON arrays) were removed in MCP 2025-06-18: -32600 saying so.
//! - Test: `tests/test_compat/stdio.rs`, `unreadable_stdio_lines`; the real binary in
//!   `charly-cli/tests/hardening/protocol.rs`; the `jsonrpc` fuzz target runs [`read_line`].
//!
//! A notification (no `id`) that cannot be read is answered only when its method is one MCP
//! defines, as rmcp does: a client sending other notifications (an editor's LSP traffic on the
//! same pipe) gets no answers it never asked for.

use rmcp::RoleServer;
use rmcp::model::{
    ErrorCode, ErrorData, JsonRpcError, JsonRpcMessage, JsonRpcVersion2_0, NumberOrString, RequestId,
};
use rmcp::service::RxJsonRpcMessage;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::list_params;

/// What one line from the client is.
#[derive(Debug)]
pub(crate) enum Line {
    /// A JSON-RPC message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// Nothing to answer: a blank line, or a notification of a method MCP does not define.
    Skip,
    /// Not a message: this error answers it.
    Answer(JsonRpcError),
}

/// JSON-RPC 2.0 parse error.
const PARSE_ERROR: i32 = -32700;
/// UTF-8 byte order mark (RFC 8259, section 8.1, lets a parser ignore one).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads one line (its `\n` or `\r\n` may still be on it) as rmcp would, and answers what
/// rmcp would drop or answer without an id.
pub(crate) fn read_line(line: &[u8]) -> Line {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(BOM).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            let message = format!(
                "parse error: the line is not UTF-8 (an invalid byte at offset {}); JSON-RPC messages are UTF-8 JSON, one per line",
                e.valid_up_to()
            );
            return answer(PARSE_ERROR, message, leading_id(&String::from_utf8_lossy(line)));
        }
    };
    match serde_json::from_str::<RxJsonRpcMessage<RoleServer>>(text) {
        Ok(message) => {
            // A list request whose params rmcp read as none (`list_params`).
            if let JsonRpcMessage::Request(request) = &message
                && list_params::unread_params(&request.request)
                && let Some(error) = list_params::refusal(request.request.method(), &request.id, line)
            {
                return Line::Answer(error);
            }
            Line::Message(Box::new(message))
        }
        Err(e) if e.is_syntax() || e.is_eof() => not_json(text, &e),
        // JSON (as far as the message went) that is no message: a value to look at.
        Err(e) => match serde_json::from_str::<Value>(text) {
            Ok(value) => not_a_message(&value, &e),
            Err(syntax) => not_json(text, &syntax),
        },
    }
}

/// The answer to a line that is not JSON: -32700, with the id when the object got as far.
fn not_json(text: &str, e: &serde_json::Error) -> Line {
    let what = if e.is_eof() { "it ends before the JSON value does" } else { "it is not valid JSON" };
    answer(
        PARSE_ERROR,
        format!("parse error: {what} ({e}); send one JSON-RPC message per line"),
        leading_id(text),
    )
}

/// The answer to JSON that is no JSON-RPC message, or `Skip` for a notification no one waits on.
fn not_a_message(value: &Value, e: &serde_json::Error) -> Line {
    let invalid = |message: String, id| answer(ErrorCode::INVALID_REQUEST.0, message, id);
    let object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return invalid(
                "invalid request: a JSON array (a batch) is not a message; MCP has no batches since 2025-06-18, send one message per line".into(),
                None,
            );
        }
        _ => return invalid(format!("invalid request: {value} is not a JSON-RPC message (an object)"), None),
    };
    let method = object.get("method").and_then(Value::as_str);
    if !object.contains_key("id")
        && let Some(method) = method
        && !is_mcp_method(method)
    {
        return Line::Skip;
    }
    let id = object.get("id").and_then(request_id);
    let reason = if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        "`jsonrpc` must be \"2.0\"".to_owned()
    } else if object.get("id").is_some_and(|id| request_id(id).is_none()) {
        "`id` must be a string or an integer".to_owned()
    } else if object.contains_key("method") && method.is_none() {
        "`method` must be a string".to_owned()
    } else {
        e.to_string()
    };
    invalid(format!("invalid request: {reason}"), id)
}

/// The error message `code`/`message` answering the request `id`.
fn answer(code: i32, message: String, id: Option<RequestId>) -> Line {
    Line::Answer(JsonRpcError {
        jsonrpc: JsonRpcVersion2_0,
        id,
        error: ErrorData::new(ErrorCode(code), message, None),
    })
}

/// A JSON-RPC id: a string or an integer (MCP allows no others).
pub(crate) fn request_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(NumberOrString::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(NumberOrString::Number),
        _ => None,
    }
}

/// The `id` of the JSON object `text` starts with, read member by member so that a truncated
/// or otherwise broken object still gives the id when it comes before the damage (and is
/// followed by `,` or `}`, so that it is whole).
pub(crate) fn leading_id(text: &str) -> Option<RequestId> {
    let mut rest = text.trim_start().strip_prefix('{')?;
    loop {
        let (key, after) = one::<String>(rest)?;
        let (value, after) = one::<Value>(after.trim_start().strip_prefix(':')?)?;
        let after = after.trim_start();
        // A value ends at a delimiter: `"id":4` cut short may have been `"id":45`.
        if key == "id" && after.starts_with([',', '}']) {
            return request_id(&value);
        }
        rest = after.strip_prefix(',')?;
    }
}

/// The JSON value `text` starts with (after whitespace), and what follows it.
fn one<T: DeserializeOwned>(text: &str) -> Option<(T, &str)> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<T>();
    let value = values.next()?.ok()?;
    Some((value, &text[values.byte_offset()..]))
}

/// Whether MCP defines `method` (rmcp answers unreadable notifications of these only).
fn is_mcp_method(method: &str) -> bool {
    matches!(
        method,
        "initialize"
            | "ping"
            | "prompts/get"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/subscribe"
            | "resources/unsubscribe"
            | "resources/templates/list"
            | "tools/call"
            | "tools/list"
            | "completion/complete"
            | "logging/setLevel"
            | "roots/list"
            | "sampling/createMessage"
            | "elicitation/create"
            | "notifications/cancelled"
            | "notifications/initialized"
            | "notifications/message"
            | "notifications/progress"
            | "notifications/prompts/list_changed"
            | "notifications/resources/list_changed"
            | "notifications/resources/updated"
            | "notifications/roots/list_changed"
            | "notifications/tools/list_changed"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(line: &[u8]) -> (i32, Option<RequestId>, String) {
        match read_line(line) {
            Line::Answer(e) => (e.error.code.0, e.id, e.error.message.into_owned()),
            other => panic!("{:?}: expected an answer, got {other:?}", String::from_utf8_lossy(line)),
        }
    }

    fn num(n: i64) -> Option<RequestId> {
        Some(NumberOrString::Number(n))
    }

    #[test]
    fn messages_pass_and_blank_lines_are_skipped() {
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(read_line(ping), Line::Message(_)));
        assert!(matches!(
            read_line(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n"),
            Line::Message(_)
        ));
        assert!(matches!(read_line(b"  \r\n"), Line::Skip));
        assert!(matches!(read_line(br#"{"jsonrpc":"2.0","method":"$/lsp","params":3}"#), Line::Skip));
    }

    #[test]
    fn invalid_utf8_is_a_parse_error_with_the_id() {
        let line = b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"\xff\xfe\"}}}";
        let (code, id, message) = answered(line);
        assert_eq!((code, id), (-32700, num(7)));
        assert!(message.contains("not UTF-8") && message.contains("offset 91"), "{message}");
        assert_eq!(answered(b"\xff\xff").1, None);
    }

    #[test]
    fn a_truncated_object_is_a_parse_error_with_the_id_when_it_came_first() {
        let (code, id, message) =
            answered(br#"{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"na"#);
        assert_eq!((code, id), (-32700, Some(NumberOrString::String("a-1".into()))));
        assert!(message.contains("ends before"), "{message}");
        assert_eq!(
            answered(br#"{"jsonrpc":"2.0","method":"tools/call","id":4"#).1,
            None,
            "a number not yet ended"
        );
        assert_eq!(answered(br#"{"jsonrpc":"2.0","method":"tools/call","id":4,"#).1, num(4));
        assert_eq!(
            answered(br#"{"jsonrpc":"2.0","method":tools/call","id":4}"#).1,
            None,
            "damage before the id"
        );
        assert_eq!(answered(b"not json").0, -32700);
    }

    #[test]
    fn json_that_is_no_message_is_an_invalid_request_with_the_id() {
        let (code, id, message) = answered(br#"{"jsonrpc":"1.0","id":9,"method":"ping"}"#);
        assert_eq!((code, id), (-32600, num(9)));
        assert!(message.contains("`jsonrpc` must be \"2.0\""), "{message}");
        let (code, id, message) = answered(br#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#);
        assert_eq!((code, id), (-32600, None));
        assert!(message.contains("`id` must be a string or an integer"), "{message}");
        assert_eq!(answered(br#"{"jsonrpc":"2.0","id":3,"method":5}"#).1, num(3));
        assert!(answered(b"[1,2]").2.contains("batch"));
        assert_eq!(answered(b"42").0, -32600);
        assert_eq!(answered(br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":3}"#).0, -32600);
    }

    #[test]
    fn leading_id_reads_only_the_top_level() {
        assert_eq!(leading_id(r#"{"params":{"id":1},"id":2,"#), num(2));
        assert_eq!(leading_id(r#"{"params":{"id":1},"id":2"#), None, "maybe cut short");
        assert_eq!(leading_id(r#" { "id" : -3 , "#), num(-3));
        assert_eq!(leading_id(r#"{"id":null}"#), None);
        assert_eq!(leading_id(r#"["id",1]"#), None);
        assert_eq!(leading_id(&format!("{{\"a\":{}1{}", "[".repeat(200), "]".repeat(200))), None);
    }
}
