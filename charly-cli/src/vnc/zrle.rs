//! ZRLE decoding (RFC 6143 §7.7.6) into an RGB framebuffer, for the pixel format charly
//! asks for (32 bpp, depth 24, little-endian, RGB shifts 16/8/0: a CPIXEL is 3 bytes B, G, R).
//!
//! The zlib stream lasts the whole connection ([`Zrle`] keeps it); each rectangle's bytes are
//! inflated with a sync flush, then read as 64×64 tiles left to right, top to bottom.

use flate2::{Decompress, FlushDecompress, Status};

use super::VncError;
use super::frame::Framebuffer;

/// The connection's ZRLE state: its zlib stream.
#[allow(missing_debug_implementations)]
pub struct Zrle {
    z: Decompress,
    out: Vec<u8>,
}

impl Default for Zrle {
    fn default() -> Self {
        Zrle { z: Decompress::new(true), out: Vec::new() }
    }
}

/// The most bytes a `w`×`h` rectangle's tiles take once inflated: per 64×64 tile a
/// subencoding byte, a palette of up to 127 CPIXELs, and at most 4 bytes a pixel (a plain RLE
/// run of 1: a CPIXEL and a length byte).
pub fn max_inflated(w: u16, h: u16) -> u64 {
    let tiles = u64::from(w).div_ceil(64) * u64::from(h).div_ceil(64);
    tiles * (1 + 127 * 3) + 4 * u64::from(w) * u64::from(h)
}

/// The most compressed bytes charly reads for a `w`×`h` ZRLE rectangle: what
/// [`max_inflated`] allows, with room for zlib's stored blocks and flush markers.
pub fn max_compressed(w: u16, h: u16) -> u64 {
    let inflated = max_inflated(w, h);
    inflated + inflated / 8 + 1024
}

fn short(what: &str) -> VncError {
    VncError::Protocol(format!("ZRLE: data ends inside {what}"))
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn u8(&mut self) -> Result<u8, VncError> {
        let b = *self.data.get(self.pos).ok_or_else(|| short("a tile"))?;
        self.pos += 1;
        Ok(b)
    }
    fn cpixel(&mut self) -> Result<[u8; 3], VncError> {
        let s = self.data.get(self.pos..self.pos + 3).ok_or_else(|| short("a pixel"))?;
        self.pos += 3;
        Ok([s[2], s[1], s[0]])
    }
    fn run(&mut self) -> Result<usize, VncError> {
        let mut n = 1usize;
        loop {
            let b = self.u8()?;
            n += usize::from(b);
            if b != 255 {
                return Ok(n);
            }
        }
    }
}

impl Zrle {
    /// Inflates `compressed` (one rectangle's zlib bytes) and paints the rectangle
    /// `(x, y, w, h)` of `fb`.
    ///
    /// # Errors
    ///
    /// [`VncError::Protocol`] for a broken zlib stream, an unused subencoding, a palette index
    /// out of range, a run past the tile, or data that ends early.
    pub fn decode(
        &mut self,
        compressed: &[u8],
        fb: &mut Framebuffer,
        rect: (u16, u16, u16, u16),
    ) -> Result<(), VncError> {
        self.inflate(compressed, max_inflated(rect.2, rect.3))?;
        let data = std::mem::take(&mut self.out);
        let result = paint(&data, fb, rect);
        self.out = data;
        result
    }

    /// Inflates `compressed` (one `w`×`h` rectangle's bytes) without painting: the zlib stream
    /// stays whole for the rectangles after it.
    ///
    /// # Errors
    ///
    /// As [`Zrle::decode`]'s zlib errors.
    pub fn skip(&mut self, compressed: &[u8], (w, h): (u16, u16)) -> Result<(), VncError> {
        self.inflate(compressed, max_inflated(w, h))
    }

    /// Inflates `input` into `self.out`; more than `cap` bytes is an error (a zlib bomb cannot
    /// grow the buffer past what the rectangle's tiles can hold).
    fn inflate(&mut self, input: &[u8], cap: u64) -> Result<(), VncError> {
        self.out.clear();
        let mut pos = 0usize;
        loop {
            if self.out.capacity() - self.out.len() < 16 * 1024 {
                self.out.reserve(self.out.len().max(input.len() * 4).max(64 * 1024));
            }
            let before = self.z.total_in();
            let status = self
                .z
                .decompress_vec(&input[pos..], &mut self.out, FlushDecompress::Sync)
                .map_err(|e| VncError::Protocol(format!("ZRLE: zlib: {e}")))?;
            let used = usize::try_from(self.z.total_in() - before).unwrap_or(usize::MAX);
            pos += used;
            if self.out.len() as u64 > cap {
                return Err(VncError::Protocol(format!(
                    "ZRLE: a rectangle inflates to more than the {cap} bytes its tiles can hold"
                )));
            }
            let room = self.out.capacity() - self.out.len();
            if matches!(status, Status::StreamEnd) || (pos >= input.len() && room > 0) {
                return Ok(());
            }
            if used == 0 && room > 0 && pos < input.len() {
                return Err(VncError::Protocol("ZRLE: zlib made no progress".into()));
            }
        }
    }
}

fn paint(data: &[u8], fb: &mut Framebuffer, (rx, ry, rw, rh): (u16, u16, u16, u16)) -> Result<(), VncError> {
    let mut c = Cursor { data, pos: 0 };
    let mut palette = [[0u8; 3]; 128];
    let (rx, ry, rw, rh) = (usize::from(rx), usize::from(ry), usize::from(rw), usize::from(rh));
    let mut ty = 0;
    while ty < rh {
        let th = 64.min(rh - ty);
        let mut tx = 0;
        while tx < rw {
            let tw = 64.min(rw - tx);
            let (x0, y0) = (rx + tx, ry + ty);
            let sub = c.u8()?;
            match sub {
                0 => {
                    for y in 0..th {
                        for x in 0..tw {
                            fb.put(x0 + x, y0 + y, c.cpixel()?);
                        }
                    }
                }
                1 => {
                    let p = c.cpixel()?;
                    fb.fill(x0, y0, tw, th, p);
                }
                2..=16 => {
                    let n = usize::from(sub);
                    for p in palette.iter_mut().take(n) {
                        *p = c.cpixel()?;
                    }
                    let bits = match n {
                        2 => 1,
                        3 | 4 => 2,
                        _ => 4,
                    };
                    let mask = (1u8 << bits) - 1;
                    for y in 0..th {
                        let mut byte = 0u8;
                        let mut left = 0;
                        for x in 0..tw {
                            if left == 0 {
                                byte = c.u8()?;
                                left = 8;
                            }
                            left -= bits;
                            let i = usize::from((byte >> left) & mask);
                            if i >= n {
                                return Err(VncError::Protocol(format!("ZRLE: palette index {i} of {n}")));
                            }
                            fb.put(x0 + x, y0 + y, palette[i]);
                        }
                    }
                }
                128 | 130..=255 => {
                    let n = usize::from(sub - 128);
                    for p in palette.iter_mut().take(n) {
                        *p = c.cpixel()?;
                    }
                    let total = tw * th;
                    let mut i = 0;
                    while i < total {
                        let (p, len) = if sub == 128 {
                            let p = c.cpixel()?;
                            (p, c.run()?)
                        } else {
                            let b = c.u8()?;
                            let idx = usize::from(b & 0x7f);
                            if idx >= n {
                                return Err(VncError::Protocol(format!("ZRLE: palette index {idx} of {n}")));
                            }
                            (palette[idx], if b & 0x80 != 0 { c.run()? } else { 1 })
                        };
                        if i + len > total {
                            return Err(VncError::Protocol("ZRLE: a run goes past its tile".into()));
                        }
                        for k in i..i + len {
                            fb.put(x0 + k % tw, y0 + k / tw, p);
                        }
                        i += len;
                    }
                }
                other => return Err(VncError::Protocol(format!("ZRLE: unused subencoding {other}"))),
            }
            tx += 64;
        }
        ty += 64;
    }
    Ok(())
}
