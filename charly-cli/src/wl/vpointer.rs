//! A virtual pointer (wlr-virtual-pointer-unstable-v1) for the length of one pointer action.
//!
//! sway's `seat - cursor` commands move sway's cursor, but a headless sway has no pointer
//! device, so its seat offers no pointer capability and no client ever binds a `wl_pointer`:
//! the clicks change sway's focus and reach no window. A virtual pointer is a device: while
//! it exists the seat has the capability, clients bind their pointers, and the events it sends
//! reach them as a mouse's would. This is what `wlrctl pointer` does (not in Debian
//! bookworm).
//!
//! The Wayland wire protocol is spoken here by hand (a few requests, one event kind read),
//! to the session's socket from the host: each message is the object id, then the size and
//! opcode in one word, then the arguments (u32/i32, 24.8 fixed, strings with their length and
//! NUL padded to 4 bytes), all native-endian. A Wayland client library would be a new crate
//! tree for these dozen lines.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::UnixStream;

use super::WlError;

const DISPLAY: u32 = 1;
const REGISTRY: u32 = 2;
const MANAGER: u32 = 4;
const POINTER: u32 = 5;
const MANAGER_INTERFACE: &str = "zwlr_virtual_pointer_manager_v1";

/// Linux button codes (input-event-codes.h).
pub const BTN_LEFT: u32 = 0x110;
/// The right button.
pub const BTN_RIGHT: u32 = 0x111;
/// The middle button.
pub const BTN_MIDDLE: u32 = 0x112;

/// A virtual pointer on one connection to the compositor.
#[derive(Debug)]
pub struct VirtualPointer {
    stream: UnixStream,
    next_id: u32,
    /// The output layout's top left and size: absolute motion is over this box.
    layout: (i64, i64, u32, u32),
    socket: String,
}

fn message(object: u32, opcode: u16, args: &[u8]) -> Vec<u8> {
    let size = 8 + args.len() as u32;
    let mut out = Vec::with_capacity(size as usize);
    out.extend_from_slice(&object.to_ne_bytes());
    out.extend_from_slice(&((size << 16) | u32::from(opcode)).to_ne_bytes());
    out.extend_from_slice(args);
    out
}

fn string(text: &str) -> Vec<u8> {
    let len = text.len() as u32 + 1;
    let mut out = len.to_ne_bytes().to_vec();
    out.extend_from_slice(text.as_bytes());
    out.push(0);
    while !out.len().is_multiple_of(4) {
        out.push(0);
    }
    out
}

fn words(values: &[u32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_ne_bytes()).collect()
}

impl VirtualPointer {
    /// Connects to the Wayland socket at `host_path` (`socket` names it in errors), creates a
    /// virtual pointer and waits `settle` for the clients to bind their pointers; `layout` is
    /// the output layout's box (x, y, width, height).
    ///
    /// # Errors
    ///
    /// [`WlError::Missing`] when the compositor has no virtual pointer manager,
    /// [`WlError::Ipc`] for a socket that fails.
    pub async fn create(
        host_path: &std::path::Path,
        socket: &str,
        layout: (i64, i64, u32, u32),
        settle: Duration,
    ) -> Result<Self, WlError> {
        let failed =
            |e: std::io::Error| WlError::Ipc { socket: socket.to_owned(), why: format!("Wayland: {e}") };
        let stream = UnixStream::connect(host_path).await.map_err(failed)?;
        let mut vp = VirtualPointer { stream, next_id: 3, layout, socket: socket.to_owned() };
        vp.send(&message(DISPLAY, 1, &words(&[REGISTRY]))).await?;
        let globals = vp.roundtrip().await?;
        let Some((name, version)) =
            globals.iter().find(|(_, i, _)| i == MANAGER_INTERFACE).map(|(n, _, v)| (*n, *v))
        else {
            return Err(WlError::Missing(format!(
                "the compositor at {socket} offers no {MANAGER_INTERFACE}: pointer input needs it (wlroots compositors have it)"
            )));
        };
        // wl_registry.bind(name, interface, version, new_id)
        let mut args = words(&[name]);
        args.extend(string(MANAGER_INTERFACE));
        args.extend(words(&[version.min(2), MANAGER]));
        vp.send(&message(REGISTRY, 0, &args)).await?;
        // create_virtual_pointer(seat: null, id)
        vp.send(&message(MANAGER, 0, &words(&[0, POINTER]))).await?;
        vp.next_id = 6;
        vp.roundtrip().await?;
        tokio::time::sleep(settle).await;
        Ok(vp)
    }

    async fn send(&mut self, bytes: &[u8]) -> Result<(), WlError> {
        self.stream
            .write_all(bytes)
            .await
            .map_err(|e| WlError::Ipc { socket: self.socket.clone(), why: format!("Wayland: {e}") })
    }

    /// `wl_display.sync`, reading events until its callback is done: the globals announced on
    /// the way (name, interface, version). A protocol error ends it with the compositor's
    /// message.
    async fn roundtrip(&mut self) -> Result<Vec<(u32, String, u32)>, WlError> {
        let callback = self.next_id;
        self.next_id += 1;
        self.send(&message(DISPLAY, 0, &words(&[callback]))).await?;
        let socket = self.socket.clone();
        let failed =
            move |why: String| WlError::Ipc { socket: socket.clone(), why: format!("Wayland: {why}") };
        let mut globals = Vec::new();
        loop {
            let mut header = [0u8; 8];
            self.stream.read_exact(&mut header).await.map_err(|e| failed(e.to_string()))?;
            let object = u32::from_ne_bytes([header[0], header[1], header[2], header[3]]);
            let word = u32::from_ne_bytes([header[4], header[5], header[6], header[7]]);
            let (size, opcode) = ((word >> 16) as usize, word & 0xffff);
            let mut body = vec![0u8; size.saturating_sub(8)];
            self.stream.read_exact(&mut body).await.map_err(|e| failed(e.to_string()))?;
            let u32_at =
                |at: usize| body.get(at..at + 4).map_or(0, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
            match (object, opcode) {
                (DISPLAY, 0) => {
                    // error(object, code, message)
                    let len = u32_at(8) as usize;
                    let text = body
                        .get(12..12 + len.saturating_sub(1))
                        .map(String::from_utf8_lossy)
                        .unwrap_or_default();
                    return Err(failed(format!("protocol error {}: {text}", u32_at(4))));
                }
                (REGISTRY, 0) => {
                    let len = u32_at(4) as usize;
                    let interface = body
                        .get(8..8 + len.saturating_sub(1))
                        .map(String::from_utf8_lossy)
                        .unwrap_or_default();
                    let padded = (len + 3) & !3;
                    globals.push((u32_at(0), interface.into_owned(), u32_at(8 + padded)));
                }
                (id, 0) if id == callback => return Ok(globals),
                _ => {}
            }
        }
    }

    fn now() -> u32 {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        since.as_millis() as u32
    }

    /// Moves to (`x`, `y`) in layout pixels (absolute motion over the layout's extent).
    ///
    /// # Errors
    ///
    /// [`WlError::Ipc`].
    pub async fn move_to(&mut self, x: i64, y: i64) -> Result<(), WlError> {
        let (bx, by, w, h) = self.layout;
        let (x, y) = ((x - bx).clamp(0, i64::from(w) - 1) as u32, (y - by).clamp(0, i64::from(h) - 1) as u32);
        let args = words(&[Self::now(), x, y, w, h]);
        self.send(&message(POINTER, 1, &args)).await?;
        self.frame().await
    }

    async fn frame(&mut self) -> Result<(), WlError> {
        self.send(&message(POINTER, 4, &[])).await?;
        self.roundtrip().await.map(|_| ())
    }

    /// Presses (`down`) or releases `button` (a Linux button code).
    ///
    /// # Errors
    ///
    /// [`WlError::Ipc`].
    pub async fn button(&mut self, button: u32, down: bool) -> Result<(), WlError> {
        self.send(&message(POINTER, 2, &words(&[Self::now(), button, u32::from(down)]))).await?;
        self.frame().await
    }

    /// One wheel step: `vertical` (else horizontal), `forward` = down or right.
    ///
    /// # Errors
    ///
    /// [`WlError::Ipc`].
    pub async fn wheel(&mut self, vertical: bool, forward: bool) -> Result<(), WlError> {
        let axis = u32::from(!vertical);
        let sign: i32 = if forward { 1 } else { -1 };
        // axis_source(wheel), then axis_discrete(time, axis, value 15.0 in 24.8, discrete 1)
        self.send(&message(POINTER, 5, &words(&[0]))).await?;
        let value = (sign * 15 * 256) as u32;
        self.send(&message(POINTER, 7, &words(&[Self::now(), axis, value, sign as u32]))).await?;
        self.frame().await
    }

    /// Destroys the pointer and closes the connection.
    pub async fn close(mut self) {
        let _ = self.send(&message(POINTER, 8, &[])).await;
        let _ = self.roundtrip().await;
    }
}
