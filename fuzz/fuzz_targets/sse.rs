//! The legacy HTTP+SSE client transport's reading half (charly-mcp/src/client/sse.rs): SSE
//! framing (charly-mcp/src/client/sse_events.rs), the `endpoint` event and the JSON-RPC
//! messages after it.
//!
//! Input: one byte `k`, then the stream's bytes, cut into chunks of `k % 17 + 1` bytes (how
//! they arrive from the network is not up to the client). Checked:
//! - nothing panics;
//! - the events do not depend on how the bytes were cut (one chunk gives the same);
//! - an endpoint that is accepted has the SSE URL's origin.
#![no_main]

use bytes::Bytes;
use charly_mcp::client::sse::fuzzing::session;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&k, body)) = data.split_first() else { return };
    let base = url::Url::parse("http://127.0.0.1:3001/sse").unwrap();
    let size = usize::from(k) % 17 + 1;
    let chunks: Vec<Bytes> = body.chunks(size).map(Bytes::copy_from_slice).collect();
    let cut = session(&base, chunks);
    let whole = session(&base, vec![Bytes::copy_from_slice(body)]);
    assert_eq!(cut.events, whole.events, "the events depend on chunking ({size}-byte chunks)");
    assert_eq!(cut.messages, whole.messages);
    if let Some(Ok(endpoint)) = &cut.endpoint {
        assert_eq!(endpoint.origin(), base.origin(), "accepted a cross-origin endpoint {endpoint}");
    }
});
