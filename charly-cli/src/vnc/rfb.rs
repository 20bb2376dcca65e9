//! The RFB 3.8 client state machine (RFC 6143), blocking, over any `Read + Write`.
//!
//! Written by hand: the one maintained Rust client found, `vnc-rs` (0.5/0.6), is an event
//! engine for a viewer (a poll loop of render events, no VeNCrypt), where charly needs one
//! synchronous screenshot or input event per call; the state machine below is ~300 lines.
//! DES, zlib and PNG come from the `des`, `flate2` and `png` crates.
//!
//! Handshake: version (3.3, 3.7 and 3.8 servers; charly answers the lower of 3.8 and the
//! server's), security (None preferred, then VNC authentication), SecurityResult, ClientInit
//! `shared = 1`, ServerInit; then SetPixelFormat 32 bpp / depth 24 / little-endian true colour
//! RGB shifts 16/8/0 and SetEncodings ZRLE (16), Raw (0).

use std::io::{BufReader, BufWriter, Read, Write};

use super::VncError;
use super::frame::Framebuffer;
use super::zrle::Zrle;

/// RFB security type None.
pub const SEC_NONE: u8 = 1;
/// RFB security type VNC authentication.
pub const SEC_VNC_AUTH: u8 = 2;

/// The name of a security type number (RFC 6143 §7.1.2 and the IANA registry).
pub fn security_name(t: u8) -> String {
    let name = match t {
        0 => "Invalid",
        1 => "None",
        2 => "VNC authentication",
        5 => "RA2",
        6 => "RA2ne",
        16 => "Tight",
        17 => "Ultra",
        18 => "TLS",
        19 => "VeNCrypt",
        20 => "SASL",
        21 => "MD5",
        22 => "xvp",
        30 => "Apple ARD",
        113 => "MS-Logon II",
        129 => "Unix login",
        _ => return format!("unknown ({t})"),
    };
    format!("{name} ({t})")
}

/// What the handshake learnt about the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerInfo {
    /// The server's banner, e.g. `RFB 003.008`.
    pub version: String,
    /// The security types the server offered (3.7+), or the one it imposed (3.3).
    pub offered: Vec<u8>,
    /// The type used.
    pub security: u8,
    /// Framebuffer width in pixels.
    pub width: u16,
    /// Framebuffer height in pixels.
    pub height: u16,
    /// The desktop name from ServerInit.
    pub name: String,
}

/// A connected, initialised RFB session.
#[allow(missing_debug_implementations)]
pub struct Client<S: Read + Write> {
    r: BufReader<S>,
    w: BufWriter<S>,
    /// What the handshake learnt.
    pub info: ServerInfo,
    zrle: Zrle,
    fb: Framebuffer,
    /// Text the server put on its clipboard (ServerCutText), the last one seen.
    pub cut_text: Option<String>,
}

fn read_n<R: Read>(r: &mut R, n: usize) -> Result<Vec<u8>, VncError> {
    let mut v = vec![0u8; n];
    r.read_exact(&mut v)?;
    Ok(v)
}
fn u8_<R: Read>(r: &mut R) -> Result<u8, VncError> {
    let mut b = [0u8; 1];
    r.read_exact(&mut b)?;
    Ok(b[0])
}
fn u16_<R: Read>(r: &mut R) -> Result<u16, VncError> {
    let mut b = [0u8; 2];
    r.read_exact(&mut b)?;
    Ok(u16::from_be_bytes(b))
}
fn u32_<R: Read>(r: &mut R) -> Result<u32, VncError> {
    let mut b = [0u8; 4];
    r.read_exact(&mut b)?;
    Ok(u32::from_be_bytes(b))
}
fn string<R: Read>(r: &mut R, limit: u32) -> Result<String, VncError> {
    let n = u32_(r)?;
    if n > limit {
        return Err(VncError::Protocol(format!("a string of {n} bytes (limit {limit})")));
    }
    let bytes = read_n(r, n as usize)?;
    // RFB strings are Latin-1 in 3.8 (UTF-8 in practice for names): keep valid UTF-8, map the rest.
    Ok(String::from_utf8(bytes.clone()).unwrap_or_else(|_| bytes.iter().map(|&b| char::from(b)).collect()))
}

impl<S: Read + Write> Client<S> {
    /// Runs the handshake on a fresh connection. `read_half` and `write_half` are the same
    /// socket (e.g. a `TcpStream` and its `try_clone`). `password` is needed only when the
    /// server offers VNC authentication and not None; `hint` names the target in the
    /// missing-password error.
    ///
    /// # Errors
    ///
    /// [`VncError::Protocol`] (not RFB), [`VncError::Refused`], [`VncError::UnsupportedSecurity`]
    /// with the offered list, [`VncError::NoPassword`], [`VncError::AuthFailed`].
    pub fn handshake(
        read_half: S,
        write_half: S,
        password: Option<&str>,
        hint: (&str, &str),
    ) -> Result<Self, VncError> {
        let mut r = BufReader::with_capacity(256 * 1024, read_half);
        let mut w = BufWriter::new(write_half);
        let banner = read_n(&mut r, 12)?;
        let version = String::from_utf8_lossy(&banner).trim_end().to_string();
        let minor = parse_version(&banner)
            .ok_or_else(|| VncError::Protocol(format!("not an RFB server: banner {version:?}")))?;
        let minor = match minor {
            m if m >= 8 => 8,
            7 => 7,
            _ => 3,
        };
        w.write_all(format!("RFB 003.{minor:03}\n").as_bytes())?;
        w.flush()?;
        let offered = if minor == 3 {
            let t = u32_(&mut r)?;
            if t == 0 {
                return Err(VncError::Refused(string(&mut r, 64 * 1024)?));
            }
            vec![u8::try_from(t).unwrap_or(0)]
        } else {
            let n = u8_(&mut r)?;
            if n == 0 {
                return Err(VncError::Refused(string(&mut r, 64 * 1024)?));
            }
            read_n(&mut r, usize::from(n))?
        };
        let security = if offered.contains(&SEC_NONE) {
            SEC_NONE
        } else if offered.contains(&SEC_VNC_AUTH) {
            SEC_VNC_AUTH
        } else {
            let offered = offered.iter().map(|&t| security_name(t)).collect::<Vec<_>>().join(", ");
            return Err(VncError::UnsupportedSecurity { offered });
        };
        if security == SEC_VNC_AUTH && password.is_none() {
            return Err(VncError::NoPassword { addr: hint.0.into(), target: hint.1.into() });
        }
        if minor >= 7 {
            w.write_all(&[security])?;
            w.flush()?;
        }
        if security == SEC_VNC_AUTH {
            let mut challenge = [0u8; 16];
            r.read_exact(&mut challenge)?;
            w.write_all(&super::auth::response(&challenge, password.unwrap_or_default()))?;
            w.flush()?;
        }
        // 3.8 sends SecurityResult for None too; 3.3/3.7 only after VNC authentication.
        if minor == 8 || security == SEC_VNC_AUTH {
            let result = u32_(&mut r)?;
            if result != 0 {
                let reason = if minor == 8 { string(&mut r, 64 * 1024)? } else { String::new() };
                return Err(if security == SEC_VNC_AUTH {
                    VncError::AuthFailed(if reason.is_empty() { "the server said no".into() } else { reason })
                } else {
                    VncError::Refused(reason)
                });
            }
        }
        w.write_all(&[1])?; // ClientInit: shared
        w.flush()?;
        let width = u16_(&mut r)?;
        let height = u16_(&mut r)?;
        let _server_format = read_n(&mut r, 16)?;
        let name = string(&mut r, 64 * 1024)?;
        // SetPixelFormat: 32 bpp, depth 24, little-endian, true colour, max 255, shifts 16/8/0.
        let mut msg = vec![0u8, 0, 0, 0, 32, 24, 0, 1];
        msg.extend_from_slice(&255u16.to_be_bytes());
        msg.extend_from_slice(&255u16.to_be_bytes());
        msg.extend_from_slice(&255u16.to_be_bytes());
        msg.extend_from_slice(&[16, 8, 0, 0, 0, 0]);
        // SetEncodings: ZRLE, Raw.
        msg.extend_from_slice(&[2, 0, 0, 2]);
        msg.extend_from_slice(&16i32.to_be_bytes());
        msg.extend_from_slice(&0i32.to_be_bytes());
        w.write_all(&msg)?;
        w.flush()?;
        let info = ServerInfo { version, offered, security, width, height, name };
        let fb = Framebuffer::new(usize::from(width), usize::from(height));
        Ok(Client { r, w, info, zrle: Zrle::default(), fb, cut_text: None })
    }

    /// Asks for the whole screen (non-incremental) and reads server messages until
    /// FramebufferUpdates have covered it (at most 16 updates), skipping colour maps, bells
    /// and cut text (the last kept in [`Client::cut_text`]).
    ///
    /// # Errors
    ///
    /// [`VncError::Protocol`] for an encoding charly did not ask for, a broken ZRLE stream,
    /// an unknown message, or a dropped connection.
    pub fn screenshot(&mut self) -> Result<&Framebuffer, VncError> {
        let (w, h) = (self.info.width, self.info.height);
        self.update_request(false, 0, 0, w, h)?;
        let total = u64::from(w) * u64::from(h);
        let mut covered = 0u64;
        for _ in 0..16 {
            covered += self.read_update()?;
            if covered >= total {
                break;
            }
        }
        Ok(&self.fb)
    }

    /// Sends FramebufferUpdateRequest.
    ///
    /// # Errors
    ///
    /// A write failure.
    pub fn update_request(
        &mut self,
        incremental: bool,
        x: u16,
        y: u16,
        w: u16,
        h: u16,
    ) -> Result<(), VncError> {
        let mut m = vec![3u8, u8::from(incremental)];
        for v in [x, y, w, h] {
            m.extend_from_slice(&v.to_be_bytes());
        }
        self.send(&m)
    }

    /// Reads messages until one FramebufferUpdate is decoded; returns the pixels it painted.
    fn read_update(&mut self) -> Result<u64, VncError> {
        loop {
            match u8_(&mut self.r)? {
                0 => {
                    let _pad = u8_(&mut self.r)?;
                    let n = u16_(&mut self.r)?;
                    let mut painted = 0u64;
                    for _ in 0..n {
                        let (x, y, w, h) =
                            (u16_(&mut self.r)?, u16_(&mut self.r)?, u16_(&mut self.r)?, u16_(&mut self.r)?);
                        let enc = u32_(&mut self.r)? as i32;
                        match enc {
                            0 => self.raw(x, y, w, h)?,
                            16 => {
                                let len = u32_(&mut self.r)?;
                                if len > 256 * 1024 * 1024 {
                                    return Err(VncError::Protocol(format!("ZRLE rectangle of {len} bytes")));
                                }
                                let data = read_n(&mut self.r, len as usize)?;
                                self.zrle.decode(&data, &mut self.fb, (x, y, w, h))?;
                            }
                            other => {
                                return Err(VncError::Protocol(format!(
                                    "the server sent encoding {other}, which charly did not ask for (ZRLE 16, Raw 0)"
                                )));
                            }
                        }
                        painted += u64::from(w) * u64::from(h);
                    }
                    return Ok(painted);
                }
                1 => {
                    let _ = read_n(&mut self.r, 3)?;
                    let n = u16_(&mut self.r)?;
                    let _ = read_n(&mut self.r, usize::from(n) * 6)?;
                }
                2 => {}
                3 => {
                    let _ = read_n(&mut self.r, 3)?;
                    self.cut_text = Some(string(&mut self.r, 16 * 1024 * 1024)?);
                }
                other => return Err(VncError::Protocol(format!("unknown server message type {other}"))),
            }
        }
    }

    fn raw(&mut self, x: u16, y: u16, w: u16, h: u16) -> Result<(), VncError> {
        let row = usize::from(w) * 4;
        let mut buf = vec![0u8; row];
        for yy in 0..usize::from(h) {
            self.r.read_exact(&mut buf)?;
            for (xx, px) in buf.chunks_exact(4).enumerate() {
                self.fb.put(usize::from(x) + xx, usize::from(y) + yy, [px[2], px[1], px[0]]);
            }
        }
        Ok(())
    }

    /// SetEncodings: replaces the ZRLE + Raw list the handshake sent (e.g. Raw only).
    ///
    /// # Errors
    ///
    /// A write failure.
    pub fn set_encodings(&mut self, encodings: &[i32]) -> Result<(), VncError> {
        let mut m = vec![2u8, 0];
        m.extend_from_slice(&u16::try_from(encodings.len()).unwrap_or(u16::MAX).to_be_bytes());
        for e in encodings {
            m.extend_from_slice(&e.to_be_bytes());
        }
        self.send(&m)
    }

    /// KeyEvent: `keysym` down or up.
    ///
    /// # Errors
    ///
    /// A write failure.
    pub fn key(&mut self, keysym: u32, down: bool) -> Result<(), VncError> {
        let mut m = vec![4u8, u8::from(down), 0, 0];
        m.extend_from_slice(&keysym.to_be_bytes());
        self.send(&m)
    }

    /// PointerEvent: the pointer at `(x, y)` with `mask` (bit 0 left, 1 middle, 2 right).
    ///
    /// # Errors
    ///
    /// A write failure.
    pub fn pointer(&mut self, x: u16, y: u16, mask: u8) -> Result<(), VncError> {
        let mut m = vec![5u8, mask];
        m.extend_from_slice(&x.to_be_bytes());
        m.extend_from_slice(&y.to_be_bytes());
        self.send(&m)
    }

    /// ClientCutText with `text` (Latin-1; other characters are an error).
    ///
    /// # Errors
    ///
    /// [`VncError::Usage`] for a character above U+00FF, or a write failure.
    pub fn cut_text(&mut self, text: &str) -> Result<(), VncError> {
        let bytes = text
            .chars()
            .map(|c| {
                u8::try_from(u32::from(c)).map_err(|_| {
                    VncError::Usage(format!("cut-text: {c:?} is not Latin-1 (RFB cut text is U+0000-U+00FF)"))
                })
            })
            .collect::<Result<Vec<u8>, _>>()?;
        let mut m = vec![6u8, 0, 0, 0];
        m.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
        m.extend_from_slice(&bytes);
        self.send(&m)
    }

    fn send(&mut self, m: &[u8]) -> Result<(), VncError> {
        self.w.write_all(m)?;
        self.w.flush()?;
        Ok(())
    }

    /// The framebuffer as last decoded.
    pub fn framebuffer(&self) -> &Framebuffer {
        &self.fb
    }
}

/// The minor version of an `RFB 003.00x\n` banner.
fn parse_version(b: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(b).ok()?;
    let rest = s.strip_prefix("RFB ")?.strip_suffix('\n')?;
    let (major, minor) = rest.split_once('.')?;
    (major.parse::<u32>().ok()? == 3).then_some(())?;
    minor.parse().ok()
}
