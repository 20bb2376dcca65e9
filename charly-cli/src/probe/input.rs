//! `check mcp call --input`: the tool's arguments inline (`--input '{"a":1}'`), from a file
//! (`--input @FILE`) or from standard input (`--input @-`), at most [`MAX_INPUT_BYTES`].
//!
//! One command-line argument is capped by Linux at 128 KiB (`MAX_ARG_STRLEN`), so larger
//! arguments come from a file or a pipe. A JSON object never starts with `@`, so the prefix is
//! unambiguous.

use std::io::Read;
use std::path::Path;

use charly::client::ClientError;
use serde_json::{Map, Value};

/// The most `--input` may hold, in bytes: 4 MiB, the longest request charly's own server reads
/// on either transport ([`charly::server::MAX_REQUEST_BYTES`]), so what fits here is not
/// refused there for its size alone.
pub const MAX_INPUT_BYTES: usize = charly::server::MAX_REQUEST_BYTES;

/// Where `--input` takes its JSON from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource<'a> {
    /// The argument itself.
    Inline(&'a str),
    /// `@FILE`: the file's contents.
    File(&'a Path),
    /// `@-`: standard input, to its end.
    Stdin,
}

impl<'a> InputSource<'a> {
    /// The source `--input ARG` names: `@-` is stdin, `@PATH` a file, anything else inline.
    pub fn of(arg: &'a str) -> InputSource<'a> {
        match arg.strip_prefix('@') {
            Some("-") => InputSource::Stdin,
            Some(path) => InputSource::File(Path::new(path)),
            None => InputSource::Inline(arg),
        }
    }
}

/// The error for an `--input` (shown as `shown`: `@FILE`, `@-`, or `JSON` inline) of more
/// than [`MAX_INPUT_BYTES`].
pub fn too_large(shown: &str) -> ClientError {
    ClientError::InvalidInput(format!(
        "--input {shown} is larger than {} MiB ({MAX_INPUT_BYTES} bytes), the most one MCP request \
         may carry to charly's server on either transport; send smaller arguments",
        MAX_INPUT_BYTES >> 20
    ))
}

/// Reads `--input` text from `reader` (a file or stdin, shown in errors as `shown`), stopping
/// one byte past [`MAX_INPUT_BYTES`], so an endless or huge source is not read whole.
///
/// # Errors
///
/// [`ClientError::InvalidInput`] when there is more than [`MAX_INPUT_BYTES`], the text is not
/// UTF-8, or reading fails (each naming `--input` and `shown`).
pub fn read_capped(reader: impl Read, shown: &str) -> Result<String, ClientError> {
    let mut bytes = Vec::new();
    reader
        .take(MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| ClientError::InvalidInput(format!("--input {shown}: cannot read it: {e}")))?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(too_large(shown));
    }
    String::from_utf8(bytes)
        .map_err(|e| ClientError::InvalidInput(format!("--input {shown} is not UTF-8 text: {e}")))
}

/// Room kept in a `tools/call` request for what charly's client adds besides the envelope
/// [`check_call_size`] counts: the request's `_meta` (a `progressToken`; on 2026-07-28 also the
/// protocol version, `clientInfo` and capabilities, under 1 KiB together): 2 KiB.
pub const META_RESERVE: usize = 2048;

/// Refuses, before anything is sent, a `tools/call` of `tool` with `args` whose JSON-RPC
/// request would be over [`MAX_INPUT_BYTES`]: the server reads the whole message, not only the
/// arguments, so `--input` text just under the limit can still make a request over it (a 413
/// over HTTP, a refused line over stdio). It counts the request as charly sends it
/// (`{"jsonrpc":"2.0","id":..,"method":"tools/call","params":{"name":..,"arguments":..}}`,
/// the arguments serialised again, as the client does) plus [`META_RESERVE`].
///
/// # Errors
///
/// [`ClientError::InvalidInput`] naming `--input {shown}`, the request's size and the limit.
pub fn check_call_size(
    tool: &str,
    args: Option<&Map<String, Value>>,
    shown: &str,
) -> Result<(), ClientError> {
    let Some(args) = args else { return Ok(()) };
    let envelope = serde_json::json!({
        "jsonrpc": "2.0", "id": u64::MAX, "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    });
    let size = serde_json::to_string(&envelope).map_or(usize::MAX, |s| s.len()) + META_RESERVE;
    if size <= MAX_INPUT_BYTES {
        return Ok(());
    }
    Err(ClientError::InvalidInput(format!(
        "--input {shown}: the tools/call request for `{tool}` would be {size} bytes with its JSON-RPC \
         envelope and `_meta` ({META_RESERVE} bytes kept for it), over the {} MiB ({MAX_INPUT_BYTES} \
         bytes) one MCP request may carry to charly's server on either transport; send {} bytes less",
        MAX_INPUT_BYTES >> 20,
        size - MAX_INPUT_BYTES
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_names_the_source() {
        assert_eq!(InputSource::of(r#"{"a":1}"#), InputSource::Inline(r#"{"a":1}"#));
        assert_eq!(InputSource::of("@-"), InputSource::Stdin);
        assert_eq!(InputSource::of("@in/a.json"), InputSource::File(Path::new("in/a.json")));
        assert_eq!(InputSource::of("@"), InputSource::File(Path::new("")));
    }

    #[test]
    fn reading_stops_past_the_limit() {
        let exact = vec![b' '; MAX_INPUT_BYTES];
        assert_eq!(read_capped(exact.as_slice(), "@f").unwrap().len(), MAX_INPUT_BYTES);
        // An endless source is refused after MAX_INPUT_BYTES + 1 bytes.
        let err = read_capped(std::io::repeat(b' '), "@-").unwrap_err().to_string();
        assert!(err.contains("--input @-") && err.contains("4 MiB"), "{err}");
        let err = read_capped(&[0xff_u8][..], "@f").unwrap_err().to_string();
        assert!(err.contains("not UTF-8"), "{err}");
    }

    #[test]
    fn a_call_just_under_the_limit_is_refused_for_its_envelope() {
        let args = |len: usize| {
            let Value::Object(map) = serde_json::json!({"content": "x".repeat(len)}) else { unreachable!() };
            map
        };
        // The arguments' text alone fits (and passes `read_capped`); with the envelope it does not.
        let near = args(MAX_INPUT_BYTES - 100);
        assert!(serde_json::to_string(&near).unwrap().len() <= MAX_INPUT_BYTES);
        let err = check_call_size("box.write", Some(&near), "@big.json").unwrap_err().to_string();
        assert!(
            err.starts_with("--input @big.json: the tools/call request for `box.write` would be "),
            "{err}"
        );
        assert!(err.contains("over the 4 MiB (4194304 bytes)"), "{err}");
        assert!(check_call_size("box.write", Some(&args(MAX_INPUT_BYTES - 4096)), "JSON").is_ok());
        assert!(check_call_size("box.write", None, "JSON").is_ok());
    }
}
