//! The decoded desktop: RGB pixels, and PNG encoding.

use std::path::Path;

use super::VncError;

/// A framebuffer of `width × height` pixels, 3 bytes (R, G, B) each, rows top to bottom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Framebuffer {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// `width * height * 3` bytes.
    pub rgb: Vec<u8>,
}

impl Framebuffer {
    /// A black framebuffer.
    pub fn new(width: usize, height: usize) -> Self {
        Framebuffer { width, height, rgb: vec![0; width * height * 3] }
    }

    /// Sets one pixel; a pixel outside the framebuffer (a server bug) is dropped.
    #[inline]
    pub fn put(&mut self, x: usize, y: usize, p: [u8; 3]) {
        if x < self.width && y < self.height {
            let i = (y * self.width + x) * 3;
            self.rgb[i..i + 3].copy_from_slice(&p);
        }
    }

    /// Fills a rectangle with one colour (clipped to the framebuffer).
    pub fn fill(&mut self, x: usize, y: usize, w: usize, h: usize, p: [u8; 3]) {
        let x_end = (x + w).min(self.width);
        for yy in y..(y + h).min(self.height) {
            let row = yy * self.width * 3;
            for xx in x..x_end {
                let i = row + xx * 3;
                self.rgb[i..i + 3].copy_from_slice(&p);
            }
        }
    }

    /// The pixel at `(x, y)`, `None` outside.
    pub fn pixel(&self, x: usize, y: usize) -> Option<[u8; 3]> {
        (x < self.width && y < self.height).then(|| {
            let i = (y * self.width + x) * 3;
            [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
        })
    }

    /// The framebuffer as PNG bytes (8-bit RGB).
    ///
    /// # Errors
    ///
    /// [`VncError::Png`] if the encoder fails (a zero-sized framebuffer).
    pub fn png(&self) -> Result<Vec<u8>, VncError> {
        let mut out = Vec::new();
        let fail = |e: png::EncodingError| VncError::Png { path: "(memory)".into(), message: e.to_string() };
        let w = u32::try_from(self.width).map_err(|_| VncError::Protocol("width".into()))?;
        let h = u32::try_from(self.height).map_err(|_| VncError::Protocol("height".into()))?;
        let mut enc = png::Encoder::new(&mut out, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::Fast);
        let mut writer = enc.write_header().map_err(fail)?;
        writer.write_image_data(&self.rgb).map_err(fail)?;
        writer.finish().map_err(fail)?;
        Ok(out)
    }

    /// Writes the PNG (mode 0644) to `path` through a temporary file beside it, so a failure leaves no
    /// partial file.
    ///
    /// # Errors
    ///
    /// [`VncError::Png`] naming the path.
    pub fn save(&self, path: &Path) -> Result<Vec<u8>, VncError> {
        let bytes = self.png()?;
        let fail =
            |e: std::io::Error| VncError::Png { path: path.display().to_string(), message: e.to_string() };
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
        std::io::Write::write_all(&mut tmp, &bytes).map_err(fail)?;
        let mut p = perms(&tmp).map_err(fail)?;
        std::os::unix::fs::PermissionsExt::set_mode(&mut p, 0o644);
        tmp.as_file().set_permissions(p).map_err(fail)?;
        tmp.persist(path).map_err(|e| fail(e.error))?;
        Ok(bytes)
    }
}

fn perms(tmp: &tempfile::NamedTempFile) -> std::io::Result<std::fs::Permissions> {
    Ok(tmp.as_file().metadata()?.permissions())
}
