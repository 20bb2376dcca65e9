//! Server-sent events as the WHATWG HTML standard reads them ("Interpreting an event stream"),
//! for the legacy HTTP+SSE transport.
//!
//! The stream is cut into lines at CRLF, LF or CR; a UTF-8 byte order mark at the very start is
//! dropped; a line starting with `:` is a comment; `field: value` (one space after the colon
//! dropped), or a whole line as a field with an empty value. `data` lines are joined with `\n`,
//! `event` names the event, `id` and `retry` are read and not needed here, and any other field
//! is ignored. A blank line dispatches the event, if it has data; an event left unfinished when
//! the stream ends is dropped. Invalid UTF-8 is read as U+FFFD, as the standard says.
//!
//! This replaces the `sse-stream` crate (0.2.6) here, which the `sse` fuzz target showed to
//! give different events for the same bytes depending on how the network cut them: it fails
//! on lines the standard ignores (an unknown field, a line without a colon), then drops the
//! rest of the chunk it was reading and hands out the events parsed before the failure only
//! after it, so a client that stops at the failure loses them or not by chance.
//!
//! Lines and events are bounded by [`MAX_EVENT_BYTES`]: a server that never ends a line cannot
//! make the client buffer without end.

use std::collections::VecDeque;
use std::pin::Pin;

use futures::{Stream, StreamExt as _};

/// The most bytes one event (its unfinished line and its data) may hold: 16 MiB, the line
/// limit of rmcp's stdio transport.
pub(crate) const MAX_EVENT_BYTES: usize = 16 << 20;

/// One dispatched event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Event {
    /// The `event` field; `None` for the default type (`message`).
    pub(crate) event: Option<String>,
    /// The `data` lines, joined with `\n`; never empty.
    pub(crate) data: String,
}

/// Why the stream cannot be read further.
#[derive(Debug, thiserror::Error)]
pub(crate) enum EventError<E> {
    /// Reading the body failed.
    #[error("{0}")]
    Body(E),
    /// A line or an event grew past [`MAX_EVENT_BYTES`].
    #[error("an event larger than {} MiB", MAX_EVENT_BYTES >> 20)]
    TooLarge,
}

/// The parser: bytes in, events out, the same events however the bytes are cut.
#[derive(Debug, Default)]
pub(crate) struct EventParser {
    /// The bytes of the line being read.
    line: Vec<u8>,
    /// Whether the previous chunk ended with CR (an LF starting this one ends nothing).
    after_cr: bool,
    /// Whether the first line has been seen (the byte order mark is only dropped there).
    started: bool,
    /// The event being built.
    event: Option<String>,
    data: String,
    has_data: bool,
    /// Events ready to be taken.
    ready: VecDeque<Event>,
    /// A line or an event grew too large; nothing more is read.
    overflowed: bool,
}

impl EventParser {
    /// Reads `bytes`, the next part of the stream.
    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        if self.overflowed || bytes.is_empty() {
            return;
        }
        if self.after_cr && bytes.first() == Some(&b'\n') {
            bytes = &bytes[1..];
        }
        self.after_cr = false;
        while let Some(end) = bytes.iter().position(|b| matches!(b, b'\n' | b'\r')) {
            self.line.extend_from_slice(&bytes[..end]);
            let line = std::mem::take(&mut self.line);
            self.line_done(&line);
            if bytes[end] == b'\r' {
                match bytes.get(end + 1) {
                    Some(b'\n') => bytes = &bytes[end + 2..],
                    Some(_) => bytes = &bytes[end + 1..],
                    None => {
                        self.after_cr = true;
                        bytes = &[];
                    }
                }
            } else {
                bytes = &bytes[end + 1..];
            }
            if self.overflowed {
                return;
            }
        }
        self.line.extend_from_slice(bytes);
        if self.line.len() + self.data.len() > MAX_EVENT_BYTES {
            self.overflowed = true;
        }
    }

    /// The next dispatched event.
    pub(crate) fn next_event(&mut self) -> Option<Event> {
        self.ready.pop_front()
    }

    /// Whether a line or an event grew past [`MAX_EVENT_BYTES`] (and reading stopped).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflowed
    }

    fn line_done(&mut self, mut line: &[u8]) {
        if !self.started {
            self.started = true;
            line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        }
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
                if self.data.len() > MAX_EVENT_BYTES {
                    self.overflowed = true;
                }
            }
            // `id` and `retry` matter to a client that reconnects, which this one does not;
            // unknown fields are ignored.
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        let event = self.event.take();
        let data = std::mem::take(&mut self.data);
        // An event with no data line is not dispatched (its type is dropped with it).
        if std::mem::take(&mut self.has_data) {
            self.ready.push_back(Event { event, data });
        }
    }
}

/// The events of a body stream. A body error, or an event past [`MAX_EVENT_BYTES`], is the
/// stream's last item.
pub(crate) fn events<S, B, E>(body: S) -> Pin<Box<dyn Stream<Item = Result<Event, EventError<E>>> + Send>>
where
    S: Stream<Item = Result<B, E>> + Send + Unpin + 'static,
    B: AsRef<[u8]>,
    E: Send + 'static,
{
    let state = (body, EventParser::default(), false);
    Box::pin(futures::stream::unfold(state, |(mut body, mut parser, done)| async move {
        loop {
            if let Some(event) = parser.next_event() {
                return Some((Ok(event), (body, parser, done)));
            }
            if done {
                return None;
            }
            if parser.overflowed() {
                return Some((Err(EventError::TooLarge), (body, parser, true)));
            }
            match body.next().await {
                Some(Ok(bytes)) => parser.push(bytes.as_ref()),
                Some(Err(e)) => return Some((Err(EventError::Body(e)), (body, parser, true))),
                // The standard drops an event the stream ended in the middle of.
                None => return None,
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(chunks: &[&[u8]]) -> Vec<(Option<String>, String)> {
        let mut parser = EventParser::default();
        let mut out = Vec::new();
        for chunk in chunks {
            parser.push(chunk);
            while let Some(e) = parser.next_event() {
                out.push((e.event, e.data));
            }
        }
        out
    }

    fn ev(event: Option<&str>, data: &str) -> (Option<String>, String) {
        (event.map(str::to_owned), data.to_owned())
    }

    #[test]
    fn fields_comments_and_line_ends() {
        let text = b"\xEF\xBB\xBF: hello\r\nevent: endpoint\rdata: /m?s=1\n\ndata:a\ndata: b\ndata\n\nid: 7\nretry: 10\n\n";
        let expected = vec![ev(Some("endpoint"), "/m?s=1"), ev(None, "a\nb\n")];
        assert_eq!(parse(&[text]), expected);
        // Cut anywhere, one byte at a time: the same events.
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(parse(&bytes), expected);
    }

    /// Found by the `sse` fuzz target with sse-stream: a line without a colon and an unknown
    /// field are read as the standard says (a field with an empty value, ignored), and the
    /// events after them arrive whatever the chunking.
    #[test]
    fn lines_the_standard_ignores_do_not_end_the_stream() {
        let text = b"data\n\nevent:endpoint\ndata:/m\n\n\xEF\xBB\xBFdata: {}\n\nfoo: bar\ndata: x\n\n";
        let expected = vec![ev(None, ""), ev(Some("endpoint"), "/m"), ev(None, "x")];
        for size in 1..text.len() {
            let chunks: Vec<&[u8]> = text.chunks(size).collect();
            assert_eq!(parse(&chunks), expected, "{size}-byte chunks");
        }
    }

    #[test]
    fn crlf_split_across_chunks_is_one_line_end() {
        assert_eq!(
            parse(&[b"data: a\r", b"\n\r", b"", b"\ndata: b\n\n"]),
            vec![ev(None, "a"), ev(None, "b")]
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_and_an_unfinished_event_is_dropped() {
        assert_eq!(parse(&[b"data: \xFF\n\ndata: never dispatched\n"]), vec![ev(None, "\u{FFFD}")]);
    }

    #[test]
    fn an_endless_line_stops_the_stream() {
        let mut parser = EventParser::default();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..=(MAX_EVENT_BYTES >> 20) {
            parser.push(&chunk);
        }
        assert!(parser.overflowed());
        let stream = events(futures::stream::iter([Ok::<_, ()>(vec![b'y'; MAX_EVENT_BYTES + 1])]));
        let items = futures::executor::block_on(stream.collect::<Vec<_>>());
        assert!(matches!(items.as_slice(), [Err(EventError::TooLarge)]), "{items:?}");
    }
}
