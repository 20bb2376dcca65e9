//! The RFB 3.8 client state machine (RFC 6143), blocking, over any `Read + Write`.
//!
//! Written by hand: the one maintained Rust client found, `vnc-rs` (0.5/0.6), is an event
//! engine for a viewer (a poll loop of render events, no VeNCrypt), where charly needs one
//! synchronous screenshot or input event per call; the state machine below is ~300 lines.
//! DES, zlib and PNG come from the `des`, `flate2` and `png` crates.
//!
//! Handshake: version (3.3, 3.7 and 3.8 servers, and later ones such as RealVNC's 5.0;
//! charly answers the lower of 3.8 and the server's), security (VeNCrypt when the caller can start TLS, then None, then VNC
//! authentication; VeNCrypt in [`super::tls`]), SecurityResult, ClientInit
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
/// RFB security type VeNCrypt ([`super::tls`]).
pub const SEC_VENCRYPT: u8 = 19;
/// Not an RFB type: VeNCrypt's Plain authentication inside TLS (user and password).
const SEC_PLAIN: u8 = 0xfe;

/// The largest desktop charly decodes, in pixels: 8192x8192 (or 16384x4096 ...), whose RGB
/// framebuffer takes 192 MiB. A server announcing more gets [`VncError::TooLarge`] when a
/// screenshot is asked for (status and input need no framebuffer).
pub const MAX_PIXELS: u64 = 8192 * 8192;

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
    /// The VeNCrypt sub-type used (with security type 19).
    pub subtype: Option<u32>,
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
    /// Made on the first screenshot (at most [`MAX_PIXELS`]).
    fb: Option<Framebuffer>,
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

/// How the handshake authenticates, and whether VeNCrypt may be chosen.
#[derive(Clone, Copy, Debug)]
pub struct Auth<'a> {
    /// The password for VNC authentication / VeNCrypt's X509Vnc and X509Plain.
    pub password: Option<&'a str>,
    /// The user name of X509Plain.
    pub user: &'a str,
    /// `(host:port, target)` for the missing-password error.
    pub hint: (&'a str, &'a str),
    /// Choose VeNCrypt when offered (needs an upgrade function).
    pub vencrypt: bool,
}

/// Starts TLS on the stream's two halves (for VeNCrypt): returns the TLS session's halves.
pub type Upgrade<'u, S> = &'u mut dyn FnMut(S, S) -> Result<(S, S), VncError>;

impl<S: Read + Write> Client<S> {
    /// Runs the handshake on a fresh connection. `read_half` and `write_half` are the same
    /// socket (e.g. a `TcpStream` and its `try_clone`). `password` is needed only when the
    /// server offers VNC authentication and not None; `hint` names the target in the
    /// missing-password error. VeNCrypt is not chosen here (see [`Client::handshake_with`]).
    ///
    /// # Errors
    ///
    /// As [`Client::handshake_with`].
    pub fn handshake(
        read_half: S,
        write_half: S,
        password: Option<&str>,
        hint: (&str, &str),
    ) -> Result<Self, VncError> {
        let auth = Auth { password, user: "user", hint, vencrypt: false };
        Self::handshake_with(read_half, write_half, &auth, None)
    }

    /// The handshake, with VeNCrypt when `auth.vencrypt` and `upgrade` is given (security
    /// preference VeNCrypt > None > VNC authentication, as REFERENCE.md §16; VeNCrypt's
    /// sub-types as [`super::tls::choose`]).
    ///
    /// # Errors
    ///
    /// [`VncError::Protocol`] (not RFB), [`VncError::Refused`], [`VncError::UnsupportedSecurity`]
    /// with the offered list (and VeNCrypt's sub-types), [`VncError::NoPassword`],
    /// [`VncError::AuthFailed`], [`VncError::Tls`].
    pub fn handshake_with(
        read_half: S,
        write_half: S,
        auth: &Auth<'_>,
        upgrade: Option<Upgrade<'_, S>>,
    ) -> Result<Self, VncError> {
        let (password, hint) = (auth.password, auth.hint);
        let mut r = BufReader::with_capacity(256 * 1024, read_half);
        let mut w = BufWriter::new(write_half);
        let banner = read_n(&mut r, 12).map_err(|e| e.waiting_for(super::error::BANNER))?;
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
            let t = u32_(&mut r).map_err(|e| e.waiting_for("security types"))?;
            if t == 0 {
                return Err(VncError::Refused(string(&mut r, 64 * 1024)?));
            }
            vec![u8::try_from(t).unwrap_or(0)]
        } else {
            let n = u8_(&mut r).map_err(|e| e.waiting_for("security types"))?;
            if n == 0 {
                return Err(VncError::Refused(string(&mut r, 64 * 1024)?));
            }
            read_n(&mut r, usize::from(n))?
        };
        let vencrypt = auth.vencrypt && upgrade.is_some() && minor >= 7;
        let security = if vencrypt && offered.contains(&SEC_VENCRYPT) {
            SEC_VENCRYPT
        } else if offered.contains(&SEC_NONE) {
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
        // The authentication inside: VNC authentication, Plain (user + password), or none.
        let mut inner = security;
        let mut subtype = None;
        if security == SEC_VENCRYPT {
            let chosen = vencrypt_subtype(&mut r, &mut w, password.is_some())?;
            if !r.buffer().is_empty() {
                return Err(VncError::Protocol("the server sent data before the TLS handshake".into()));
            }
            let rs = r.into_inner();
            let ws = w.into_inner().map_err(|e| VncError::from(e.into_error()))?;
            let start = upgrade.ok_or_else(|| VncError::Protocol("VeNCrypt without TLS".into()))?;
            let (rs, ws) = start(rs, ws)?;
            r = BufReader::with_capacity(256 * 1024, rs);
            w = BufWriter::new(ws);
            inner = match chosen {
                super::tls::X509_VNC => SEC_VNC_AUTH,
                super::tls::X509_PLAIN => SEC_PLAIN,
                _ => SEC_NONE,
            };
            subtype = Some(chosen);
        }
        match inner {
            SEC_VNC_AUTH => {
                let mut challenge = [0u8; 16];
                r.read_exact(&mut challenge)?;
                w.write_all(&super::auth::response(&challenge, password.unwrap_or_default()))?;
                w.flush()?;
            }
            SEC_PLAIN => {
                let pw = password.unwrap_or_default().as_bytes();
                let user = auth.user.as_bytes();
                let mut m = u32::try_from(user.len()).unwrap_or(0).to_be_bytes().to_vec();
                m.extend_from_slice(&u32::try_from(pw.len()).unwrap_or(0).to_be_bytes());
                m.extend_from_slice(user);
                m.extend_from_slice(pw);
                w.write_all(&m)?;
                w.flush()?;
            }
            _ => {}
        }
        // 3.8 sends SecurityResult for None too; 3.7 only after an authentication.
        if minor == 8 || security != SEC_NONE {
            let result = u32_(&mut r).map_err(|e| e.waiting_for("security result"))?;
            if result != 0 {
                let reason = if minor == 8 { string(&mut r, 64 * 1024)? } else { String::new() };
                return Err(if inner != SEC_NONE {
                    VncError::AuthFailed(if reason.is_empty() { "the server said no".into() } else { reason })
                } else {
                    VncError::Refused(reason)
                });
            }
        }
        w.write_all(&[1])?; // ClientInit: shared
        w.flush()?;
        let width = u16_(&mut r).map_err(|e| e.waiting_for("ServerInit"))?;
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
        let info = ServerInfo { version, offered, security, subtype, width, height, name };
        Ok(Client { r, w, info, zrle: Zrle::default(), fb: None, cut_text: None })
    }

    /// Asks for the whole screen (non-incremental) and reads server messages until
    /// FramebufferUpdates have covered it (at most 16 updates), skipping colour maps, bells
    /// and cut text (the last kept in [`Client::cut_text`]).
    ///
    /// # Errors
    ///
    /// [`VncError::TooLarge`] for a desktop over [`MAX_PIXELS`] and [`VncError::Usage`] for
    /// an empty one (nothing is asked for then); [`VncError::Protocol`] for an encoding charly
    /// did not ask for, a rectangle outside the desktop, a broken ZRLE stream, an unknown
    /// message; [`VncError::Closed`] for a dropped connection.
    pub fn screenshot(&mut self) -> Result<&Framebuffer, VncError> {
        let (w, h) = (self.info.width, self.info.height);
        let total = u64::from(w) * u64::from(h);
        if total > MAX_PIXELS {
            return Err(VncError::TooLarge { width: w, height: h });
        }
        if total == 0 {
            return Err(VncError::Usage(format!(
                "the VNC server's desktop is {w}x{h}: there is nothing to take a screenshot of"
            )));
        }
        if self.fb.is_none() {
            self.fb = Some(Framebuffer::new(usize::from(w), usize::from(h)));
        }
        self.update_request(false, 0, 0, w, h)?;
        let mut covered = 0u64;
        for _ in 0..16 {
            covered += self.read_update(true).map_err(|e| e.waiting_for("framebuffer update"))?;
            if covered >= total {
                break;
            }
        }
        Ok(self.framebuffer())
    }

    /// A round trip: a non-incremental FramebufferUpdateRequest of `(x, y, w, h)`, then the
    /// server's messages up to the FramebufferUpdate that answers it (its pixels read and
    /// dropped). A server handles a client's messages in the order sent (RFC 6143 §7), so
    /// when this returns, every event sent before it has been taken: an input call ends with
    /// it, so that closing the connection loses nothing and the next call's events cannot
    /// overtake these (x11vnc reads the rest of a closed client's events one at a time between
    /// a new client's).
    ///
    /// # Errors
    ///
    /// As [`Client::screenshot`], but not [`VncError::TooLarge`] (nothing is decoded).
    pub fn sync(&mut self, x: u16, y: u16, w: u16, h: u16) -> Result<(), VncError> {
        self.update_request(false, x, y, w, h)?;
        self.read_update(false).map_err(|e| e.waiting_for("answer to the update request"))?;
        Ok(())
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

    /// Reads messages until one FramebufferUpdate is read; returns the pixels it covered.
    /// `paint`: into the framebuffer (made by [`Client::screenshot`]); else the pixels are
    /// read and dropped (ZRLE still inflated, to keep the connection's zlib stream whole).
    /// Every rectangle must lie inside the desktop, so what is read is bounded by its size.
    fn read_update(&mut self, paint: bool) -> Result<u64, VncError> {
        // Once a message's type has come, a read that times out cut a message the server was
        // still sending (a large desktop over a slow link, or a loaded machine), which is
        // `Overran`, not a silent server (trial 31: "no answer to the update request ...: the
        // server stopped answering" while the server streamed).
        loop {
            match u8_(&mut self.r)? {
                0 => return self.update_body(paint).map_err(VncError::mid_message),
                1 => self.skip_colour_map().map_err(VncError::mid_message)?,
                2 => {}
                3 => self.cut_text = Some(self.read_cut_text().map_err(VncError::mid_message)?),
                other => return Err(VncError::Protocol(format!("unknown server message type {other}"))),
            }
        }
    }

    /// The rest of a SetColourMapEntries after its type, dropped.
    fn skip_colour_map(&mut self) -> Result<(), VncError> {
        let _ = read_n(&mut self.r, 3)?;
        let n = u16_(&mut self.r)?;
        let _ = read_n(&mut self.r, usize::from(n) * 6)?;
        Ok(())
    }

    /// The rest of a ServerCutText after its type: the text.
    fn read_cut_text(&mut self) -> Result<String, VncError> {
        let _ = read_n(&mut self.r, 3)?;
        string(&mut self.r, 16 * 1024 * 1024)
    }

    /// The rest of a FramebufferUpdate after its type: its rectangles, painted when `paint`;
    /// returns the pixels they cover.
    fn update_body(&mut self, paint: bool) -> Result<u64, VncError> {
        let _pad = u8_(&mut self.r)?;
        let n = u16_(&mut self.r)?;
        let mut painted = 0u64;
        for _ in 0..n {
            let (x, y, w, h) =
                (u16_(&mut self.r)?, u16_(&mut self.r)?, u16_(&mut self.r)?, u16_(&mut self.r)?);
            let enc = u32_(&mut self.r)? as i32;
            let (dw, dh) = (self.info.width, self.info.height);
            if u32::from(x) + u32::from(w) > u32::from(dw) || u32::from(y) + u32::from(h) > u32::from(dh) {
                return Err(VncError::Protocol(format!(
                    "the server sent a {w}x{h} rectangle at ({x}, {y}), outside its {dw}x{dh} desktop"
                )));
            }
            match enc {
                0 => self.raw(x, y, w, h, paint)?,
                16 => {
                    let len = u32_(&mut self.r)?;
                    let bound = super::zrle::max_compressed(w, h);
                    if u64::from(len) > bound {
                        return Err(VncError::Protocol(format!(
                            "a ZRLE rectangle of {w}x{h} pixels in {len} bytes (at most {bound})"
                        )));
                    }
                    let data = read_n(&mut self.r, len as usize)?;
                    match self.fb.as_mut().filter(|_| paint) {
                        Some(fb) => self.zrle.decode(&data, fb, (x, y, w, h))?,
                        None => self.zrle.skip(&data, (w, h))?,
                    }
                }
                other => {
                    return Err(VncError::Protocol(format!(
                        "the server sent encoding {other}, which charly did not ask for (ZRLE 16, Raw 0)"
                    )));
                }
            }
            painted += u64::from(w) * u64::from(h);
        }
        Ok(painted)
    }

    fn raw(&mut self, x: u16, y: u16, w: u16, h: u16, paint: bool) -> Result<(), VncError> {
        let row = usize::from(w) * 4;
        let mut buf = vec![0u8; row];
        for yy in 0..usize::from(h) {
            self.r.read_exact(&mut buf)?;
            if let Some(fb) = self.fb.as_mut().filter(|_| paint) {
                for (xx, px) in buf.chunks_exact(4).enumerate() {
                    fb.put(usize::from(x) + xx, usize::from(y) + yy, [px[2], px[1], px[0]]);
                }
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

    /// The framebuffer as last decoded (empty before the first screenshot).
    pub fn framebuffer(&self) -> &Framebuffer {
        static EMPTY: Framebuffer = Framebuffer { width: 0, height: 0, rgb: Vec::new() };
        self.fb.as_ref().unwrap_or(&EMPTY)
    }
}

/// VeNCrypt 0.2's sub-negotiation up to the server accepting the chosen sub-type.
fn vencrypt_subtype<R: Read, W: Write>(r: &mut R, w: &mut W, have_password: bool) -> Result<u32, VncError> {
    let (major, minor) = (u8_(r)?, u8_(r)?);
    if (major, minor) < (0, 2) {
        return Err(VncError::Protocol(format!("VeNCrypt version {major}.{minor}; charly speaks 0.2")));
    }
    w.write_all(&[0, 2])?;
    w.flush()?;
    if u8_(r)? != 0 {
        return Err(VncError::Refused("the server refused VeNCrypt version 0.2".into()));
    }
    let n = u8_(r)?;
    let mut subtypes = Vec::with_capacity(usize::from(n));
    for _ in 0..n {
        subtypes.push(u32_(r)?);
    }
    let chosen = super::tls::choose(&subtypes, have_password).ok_or_else(|| {
        VncError::UnsupportedSecurity { offered: super::tls::unusable(&subtypes, have_password) }
    })?;
    w.write_all(&chosen.to_be_bytes())?;
    w.flush()?;
    if u8_(r)? != 1 {
        return Err(VncError::Refused(format!(
            "the server refused VeNCrypt sub-type {}",
            super::tls::subtype_name(chosen)
        )));
    }
    Ok(chosen)
}

/// The minor version charly may answer to an `RFB xxx.yyy\n` banner: the banner's minor of
/// a 3.x server; 8 for a later major (RealVNC's `RFB 005.000`, `RFB 004.001`): a client
/// answers with the highest version it speaks that is not above the server's (RFC 6143
/// §7.1.1), 3.8 for charly.
fn parse_version(b: &[u8]) -> Option<u32> {
    let s = std::str::from_utf8(b).ok()?;
    let rest = s.strip_prefix("RFB ")?.strip_suffix('\n')?;
    let (major, minor) = rest.split_once('.')?;
    let (major, minor) = (major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?);
    match major {
        3 => Some(minor),
        m if m > 3 => Some(8),
        _ => None,
    }
}
