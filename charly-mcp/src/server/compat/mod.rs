//! Every place where charly corrects or bypasses rmcp 3.11, one small file each.
//!
//! Each file's doc names the rmcp behaviour it corrects, the spec section it follows and the
//! test that proves it. The tests live in `tests/test_compat/` (`http.rs`, `limits.rs`, `stdio.rs`): each sends the same request
//! to a bare rmcp server and to charly and asserts both answers, so when an rmcp upgrade
//! fixes a behaviour, the bare-rmcp assertion fails and says which workaround can go.
//!
//! | file | rmcp 3.11 does | charly does | test (`tests/test_compat/`) |
//! |---|---|---|---|
//! | `accept` | 406 to a POST with `Accept: */*` or none | serves it | `wildcard_or_missing_accept` |
//! | `unreadable_body` | 415 and a text reason for a body that is not JSON-RPC | 400 with a JSON-RPC error | `unreadable_bodies` |
//! | `long_header` | quotes a mismatched `Mcp-Name`/`Mcp-Param-*` header whole in its -32020 message | cuts the message to 300 characters | `a_huge_mismatched_header_is_not_echoed_whole` |
//! | `too_large` | 413 with a plain-text body for a body over the limit | 413 with a JSON-RPC error, `"id": null` | `bodies_over_the_limit_are_refused` (`tests/test_http.rs`) |
//! | `delete` | 202 to a DELETE of any session id | 200 for a live session, 404 for an unknown one | `delete_status` |
//! | `ended_session` | 500 to a session whose worker ended while a request finishes | 404 | `an_ended_session_whose_last_request_is_finishing` |
//! | `keep_alive` | closes a session with a call running or a GET stream open | keeps it | `a_running_call_keeps_its_session`, `an_open_get_stream_keeps_its_session` |
//! | `session_end` | lets a deleted session's calls run through a 5 s drain | stops them at once | `deleting_a_session_cancels_its_running_call` |
//! | `malformed` | -32601 for params that do not fit their method | -32602 with the reason | `params_that_do_not_fit_their_method` |
//! | `malformed` | -32602 (or a result) for 2026-07-28 requests of removed methods | -32601, HTTP 404 | `methods_removed_in_2026_07_28` |
//! | `priming` | starts every SSE stream with a priming event, whatever version the session negotiated | only for sessions of 2025-11-25 or later | `priming_event_only_from_2025_11_25` |
//! | `list_cache` | serialises every `tools/list` page anew, as SSE | answers from pages serialised once, after rmcp's checks | `tools_list_from_pages_serialised_once` |
//! | `unreadable_line` | drops a stdio line that is not JSON; -32600 without the id for JSON that is no message | -32700 / -32600, with the id where it can be read, `"id": null` where not | `unreadable_stdio_lines`, `an_unreadable_id_is_null` |
//! | `list_params` | reads list params that do not fit (`{"cursor": 5}`) as none: the first page | -32602 naming the method and the reason, over stdio and HTTP | `a_cursor_that_is_not_a_string` |
//! | `uninitialized` | refuses a stdio request before `initialize` for lacking 2026-07-28's `_meta` | -32602 saying the session is not initialized and what to send | `a_request_before_initialize` |
//! | `open_sessions` | opens a session for every `initialize`, without limit | at most `HttpOptions::max_sessions`; past it 503 + `Retry-After` | `sessions_past_the_cap` |
//! | `calls_in_flight` | runs every request of a session at once, without limit | at most `HttpOptions::max_requests_per_session` (HTTP: past it 503 + `Retry-After`, a JSON-RPC error with the id) and `StdioOptions::max_requests_per_session` (stdio: past it -32000 with the id) | `requests_past_the_per_session_cap`, `requests_past_the_cap_over_stdio` |
//! | `client_gone` | leaves a stateful session's request running when its client drops the POST's stream | cancels it (`notifications/cancelled`) when the client has not resumed the stream within `HttpOptions::disconnect_grace`, at once when it cannot | `a_dropped_post_cancels_its_call_and_reaps_its_child` (`tests/test_cancellation.rs`) |
//! | `request_ids` (+ `request_ids_http`) | a second request with the id of one in flight takes or loses a result | -32600 naming the id for the second; over stdio, ids of cancelled requests kept apart | `a_reused_request_id_gets_its_own_error_over_stdio`, `..._over_http`, `an_id_reused_after_a_cancel_gets_its_own_result` |
//!
//! [`Endpoint`] chains the HTTP corrections around rmcp's `StreamableHttpService`; the
//! session handler calls [`custom_request_error`] and [`SessionWatch`]; [`StdioTransport`]
//! carries the stdio corrections. `sessions` holds the bookkeeping several of them share.
//! Nothing else in the server works around rmcp, except `server/replica.rs`, which adds what
//! rmcp has no hook for (session ids that name their replica) by wrapping its session manager,
//! not a correction of what it does; that wrapper also holds `open_sessions`'s exact check.

#[cfg(feature = "http")]
mod accept;
mod calls_in_flight;
#[cfg(feature = "http")]
mod client_gone;
#[cfg(feature = "http")]
mod delete;
#[cfg(feature = "http")]
mod ended_session;
#[cfg(feature = "http")]
mod endpoint;
#[cfg(feature = "http")]
mod keep_alive;
#[cfg(feature = "http")]
mod list_cache;
mod list_params;
#[cfg(feature = "http")]
mod long_header;
mod malformed;
#[cfg(feature = "http")]
mod open_sessions;
#[cfg(feature = "http")]
mod priming;
mod request_ids;
#[cfg(feature = "http")]
mod request_ids_http;
mod session_end;
#[cfg(feature = "http")]
mod sessions;
mod stdio_transport;
#[cfg(feature = "http")]
mod too_large;
mod uninitialized;
#[cfg(feature = "http")]
mod unreadable_body;
mod unreadable_line;

#[cfg(feature = "http")]
pub(crate) use endpoint::Endpoint;
pub(crate) use malformed::{custom_request_error, removed_method};
#[cfg(feature = "http")]
pub(crate) use open_sessions::at_session_cap;
pub(crate) use session_end::SessionWatch;
#[cfg(feature = "http")]
pub(crate) use sessions::{SessionKeeper, Sessions};
pub(crate) use stdio_transport::StdioTransport;
#[cfg(fuzzing)]
pub(crate) use unreadable_line::{Line, read_line};
