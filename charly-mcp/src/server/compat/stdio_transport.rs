//! The stdio (and any byte stream) transport: rmcp's newline-delimited JSON framing, with an
//! answer to every line and with request ids kept apart.
//!
//! rmcp's `AsyncRwTransport` drops the lines it cannot read and lets a reused id mix two
//! requests up; this transport reads lines the same way (bounded, cancel-safe: `receive` is
//! polled inside the service loop's `select!`) and answers them as [`super::unreadable_line`]
//! says, and keeps ids apart as [`super::request_ids`] says, and refuses requests past the
//! session's cap as [`super::calls_in_flight`] says, and requests before a session begins as
//! [`super::uninitialized`] says. Writing is rmcp's codec.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex as SyncMutex, PoisonError};

use futures::SinkExt as _;
use rmcp::RoleServer;
use rmcp::model::{ClientNotification, JsonRpcError, JsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::JsonRpcMessageCodec;
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, BufReader};
use tokio::sync::Mutex;
use tokio_util::codec::FramedWrite;

use super::calls_in_flight::busy;
use super::request_ids::RequestIds;
use super::uninitialized::Lifecycle;
use super::unreadable_line::{Line, leading_id, read_line};
use crate::server::options::MAX_REQUEST_BYTES;

/// Longest line read: [`MAX_REQUEST_BYTES`] (4 MiB), the default HTTP body limit, newline
/// included. (rmcp's own stdio transport reads 16 MiB lines; charly reads no more over stdio
/// than over HTTP.)
const MAX_LINE: usize = MAX_REQUEST_BYTES;
/// How much of an over-long line is kept to find its id.
const HEAD: usize = 4096;

type Writer<W> = FramedWrite<W, JsonRpcMessageCodec<TxJsonRpcMessage<RoleServer>>>;

/// A server transport over a reader and a writer of newline-delimited JSON-RPC.
pub(crate) struct StdioTransport<R, W> {
    read: BufReader<R>,
    /// The line read so far (its head only, once it is too long).
    line: Vec<u8>,
    /// The line being read is longer than [`MAX_LINE`]; the rest of it is skipped.
    oversized: bool,
    write: Arc<Mutex<Option<Writer<W>>>>,
    /// Answers this transport owes the client (errors for lines it could not hand on), as the
    /// lines written, oldest first, and whether the oldest is already in the writer's buffer
    /// waiting for its flush.
    answers: VecDeque<Vec<u8>>,
    fed: bool,
    ids: Arc<SyncMutex<RequestIds>>,
    /// Whether a session has begun (`uninitialized`).
    lifecycle: Lifecycle,
    /// Most requests in flight (`StdioOptions::max_requests_per_session`).
    max_in_flight: Option<usize>,
}

enum Read {
    Line,
    Oversized,
    Eof,
    Io(std::io::Error),
}

impl<R: AsyncRead + Send + Unpin, W: AsyncWrite + Send + Unpin + 'static> StdioTransport<R, W> {
    pub(crate) fn new(read: R, write: W, max_in_flight: Option<usize>) -> Self {
        StdioTransport {
            read: BufReader::new(read),
            line: Vec::new(),
            oversized: false,
            write: Arc::new(Mutex::new(Some(FramedWrite::new(write, JsonRpcMessageCodec::default())))),
            answers: VecDeque::new(),
            fed: false,
            ids: Arc::default(),
            lifecycle: Lifecycle::default(),
            max_in_flight,
        }
    }

    /// Reads up to the end of a line into `self.line`. Cancel-safe: bytes are taken from the
    /// reader and put into `self.line` with no await in between.
    async fn read_line(&mut self) -> Read {
        loop {
            let (taken, ended) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => return Read::Io(e),
                };
                if available.is_empty() {
                    return Read::Eof;
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if !self.oversized && self.line.len() + take > MAX_LINE {
                    self.oversized = true;
                    self.line.truncate(HEAD);
                    self.line.shrink_to(HEAD);
                }
                let room = if self.oversized { HEAD.saturating_sub(self.line.len()) } else { take };
                self.line.extend_from_slice(&available[..take.min(room)]);
                (take, newline.is_some())
            };
            self.read.consume(taken);
            if ended {
                return if std::mem::take(&mut self.oversized) { Read::Oversized } else { Read::Line };
            }
        }
    }

    /// Writes the answers owed, oldest first. `false` when the writer is gone.
    async fn flush_answers(&mut self) -> bool {
        while let Some(front) = self.answers.front() {
            let mut write = self.write.lock().await;
            let Some(framed) = write.as_mut() else { return false };
            if !self.fed {
                // Into the codec's buffer, behind any message rmcp's codec put there first.
                framed.write_buffer_mut().extend_from_slice(front);
                self.fed = true;
            }
            if framed.flush().await.is_err() {
                return false;
            }
            self.fed = false;
            self.answers.pop_front();
        }
        true
    }

    /// Owes the client `error`. One whose id could not be read carries `"id": null` (JSON-RPC
    /// 2.0, section 5.1), which rmcp's `JsonRpcError` cannot say: it leaves an unknown id out.
    fn owe(&mut self, error: JsonRpcError) {
        let unknown = error.id.is_none();
        let message: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::Error(error);
        let mut message = serde_json::to_value(message).expect("a JSON-RPC error serialises");
        if unknown && let Some(object) = message.as_object_mut() {
            object.insert("id".to_owned(), serde_json::Value::Null);
        }
        self.owe_line(message);
    }

    fn owe_line(&mut self, message: serde_json::Value) {
        let mut line = message.to_string().into_bytes();
        line.push(b'\n');
        self.answers.push_back(line);
    }

    /// What to hand rmcp for `message`, after the id bookkeeping; `None` when this transport
    /// answered it itself.
    fn admit(&mut self, mut message: RxJsonRpcMessage<RoleServer>) -> Option<RxJsonRpcMessage<RoleServer>> {
        if let JsonRpcMessage::Request(request) = &message
            && let Err(error) = self.lifecycle.admit(&request.request, &request.id)
        {
            self.owe(*error);
            return None;
        }
        let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        match &mut message {
            JsonRpcMessage::Request(request)
                if let Some(max) = self.max_in_flight
                    && ids.len() >= max
                    && !ids.has(&request.id) =>
            {
                drop(ids);
                self.owe(busy(&request.id, max));
                return None;
            }
            JsonRpcMessage::Request(request) => match ids.arrive(&request.id, request.request.method()) {
                Ok(inner) => request.id = inner,
                Err(error) => {
                    drop(ids);
                    tracing::debug!(id = %request.id, "refusing a request whose id is in flight");
                    self.owe(*error);
                    return None;
                }
            },
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) = &mut notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    // An id not in flight passes as it came: rmcp ignores it.
                    if let Some(inner) = ids.cancel(id) {
                        cancelled.params.request_id = Some(inner);
                    }
                }
            }
            _ => {}
        }
        Some(message)
    }

    /// The line in `self.line` as a message for rmcp, or `None` (answered or skipped).
    fn take_line(&mut self, oversized: bool) -> Option<RxJsonRpcMessage<RoleServer>> {
        let line = std::mem::take(&mut self.line);
        let read = if oversized {
            let message = format!(
                "invalid request: the line is longer than {} MiB, the most one message may be",
                MAX_LINE >> 20
            );
            // The id where the line's first 4 KiB show it, `null` otherwise (JSON-RPC 2.0,
            // section 5), as the HTTP 413 body has (`too_large`); rmcp's `JsonRpcError` can
            // only leave an unknown id out.
            let id = leading_id(&String::from_utf8_lossy(&line));
            let error = rmcp::model::ErrorData::invalid_request(message, None);
            let answer = serde_json::json!({"jsonrpc": "2.0", "id": id, "error": error});
            self.line = line;
            self.line.clear();
            self.line.shrink_to(64 * 1024);
            tracing::debug!("answering a line over the limit");
            self.owe_line(answer);
            return None;
        } else {
            read_line(&line)
        };
        // Keep the buffer (and its capacity) for the next line, unless a long line grew it.
        self.line = line;
        self.line.clear();
        self.line.shrink_to(64 * 1024);
        match read {
            Line::Message(message) => self.admit(*message),
            Line::Skip => None,
            Line::Answer(error) => {
                // The code only: the parser's message can quote a value from the line.
                tracing::debug!(code = error.error.code.0, "answering a line that is no message");
                self.owe(error);
                None
            }
        }
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &mut item {
            JsonRpcMessage::Response(response) => Some(&mut response.id),
            JsonRpcMessage::Error(error) => error.id.as_mut(),
            _ => None,
        };
        if let Some(id) = answered
            && let Some(client) = self.ids.lock().unwrap_or_else(PoisonError::into_inner).answered(id)
        {
            *id = client;
        }
        let write = self.write.clone();
        async move {
            let mut write = write.lock().await;
            match write.as_mut() {
                Some(framed) => framed.send(item).await.map_err(Into::into),
                None => Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "the transport is closed")),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.flush_answers().await {
                return None;
            }
            let oversized = match self.read_line().await {
                Read::Line => false,
                Read::Oversized => true,
                // A last line without its newline is still a line.
                Read::Eof if !self.line.is_empty() => false,
                Read::Eof => return None,
                Read::Io(e) => {
                    tracing::error!("cannot read from the client: {e}");
                    return None;
                }
            };
            if let Some(message) = self.take_line(oversized) {
                return Some(message);
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Answers still owed go out first (an unreadable last line before EOF).
        self.flush_answers().await;
        drop(self.write.lock().await.take());
        Ok(())
    }
}
