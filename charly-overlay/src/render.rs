//! Pixels: each kind's look ([`Look`], its defaults filled in), its size on the output
//! ([`Look::size`]) and its picture at a moment ([`Look::paint`]) in premultiplied ARGB8888,
//! the format `wl_shm` takes. Text is rasterised with fontdue from a TrueType file of the
//! system's (DejaVu Sans from fonts-dejavu-core by default).

use std::time::Duration;

use fontdue::{Font, FontSettings};

use crate::spec::{Kind, Position, Rect, Rgba, Spec};

/// The fonts looked for, in order (fonts-dejavu-core; then other common Debian paths).
pub(crate) const FONT_PATHS: [&str; 4] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
];

/// The margin between an overlay and the output's edge, in pixels.
pub(crate) const MARGIN: i32 = 40;

/// The highlight's frame width, in pixels.
pub(crate) const FRAME: i32 = 4;

/// A loaded font and where it came from.
pub(crate) struct Fonts {
    /// The font.
    pub(crate) font: Font,
    /// Its file.
    pub(crate) path: String,
}

impl std::fmt::Debug for Fonts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fonts").field("path", &self.path).finish()
    }
}

impl Fonts {
    /// Loads `path`, else the first of [`FONT_PATHS`] that exists.
    ///
    /// # Errors
    ///
    /// Which files were tried and the package that brings one.
    pub(crate) fn load(path: Option<&str>) -> Result<Fonts, String> {
        let candidates: Vec<&str> = match path {
            Some(p) => vec![p],
            None => FONT_PATHS.to_vec(),
        };
        for p in &candidates {
            if let Ok(bytes) = std::fs::read(p) {
                let font = Font::from_bytes(bytes, FontSettings::default())
                    .map_err(|e| format!("the font {p} cannot be read: {e}"))?;
                return Ok(Fonts { font, path: (*p).to_owned() });
            }
        }
        Err(format!(
            "no font to draw text with (tried {}): install fonts-dejavu-core, or name a TrueType file with --font",
            candidates.join(", ")
        ))
    }
}

/// A spec with every default filled in.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Look {
    pub(crate) kind: Kind,
    pub(crate) lines: Vec<String>,
    pub(crate) subtitle: Option<String>,
    pub(crate) position: Position,
    pub(crate) bg: Rgba,
    pub(crate) color: Rgba,
    pub(crate) font_size: f32,
    pub(crate) opacity: f32,
    /// How long it stays (fade: its length; countdown: --seconds).
    pub(crate) lasts: Option<Duration>,
    pub(crate) seconds: u32,
    pub(crate) region: Option<Rect>,
}

impl Look {
    /// `spec` with its kind's defaults: text white on `#000000b3`, 48 px, centred; lower-third
    /// bottom left on `#1e1e1ee6`; watermark 28 px, bottom right, no background, opacity 0.5;
    /// countdown 200 px from 3, centred; highlight a yellow frame; fade black over 2 s.
    pub(crate) fn of(spec: &Spec) -> Look {
        let (position, bg, color, size, opacity) = match spec.kind {
            Kind::Text => (Position::Center, [0, 0, 0, 0xb3], [255; 4], 48.0, 1.0),
            Kind::LowerThird => (Position::BottomLeft, [0x1e, 0x1e, 0x1e, 0xe6], [255; 4], 48.0, 1.0),
            Kind::Watermark => (Position::BottomRight, [0, 0, 0, 0], [255; 4], 28.0, 0.5),
            Kind::Countdown => (Position::Center, [0, 0, 0, 0xb3], [255; 4], 200.0, 1.0),
            Kind::Highlight => (Position::Center, [0, 0, 0, 0], [255, 255, 0, 255], 48.0, 1.0),
            Kind::Fade => (Position::Center, [0, 0, 0, 255], [255; 4], 48.0, 1.0),
        };
        let seconds = spec.seconds.unwrap_or(3);
        let lasts = match spec.kind {
            Kind::Countdown => Some(Duration::from_secs(seconds.into())),
            Kind::Fade => Some(Duration::from_secs_f32(spec.duration.unwrap_or(2.0))),
            _ => spec.duration.map(Duration::from_secs_f32),
        };
        Look {
            kind: spec.kind,
            lines: spec.text.as_deref().map(|t| t.lines().map(str::to_owned).collect()).unwrap_or_default(),
            subtitle: spec.subtitle.clone(),
            position: spec.position.unwrap_or(position),
            bg: spec.bg.unwrap_or(Rgba(bg)),
            color: spec.color.unwrap_or(Rgba(color)),
            font_size: spec.font_size.unwrap_or(size),
            opacity: spec.opacity.unwrap_or(opacity),
            lasts,
            seconds,
            region: spec.region,
        }
    }

    fn padding(&self) -> i32 {
        ((self.font_size * 0.4) as i32).max(8)
    }

    /// The text blocks drawn: (lines, size).
    fn blocks(&self, now: Duration) -> Vec<(Vec<String>, f32)> {
        match self.kind {
            Kind::Countdown => {
                let left = u64::from(self.seconds).saturating_sub(now.as_secs()).max(1);
                vec![(vec![left.to_string()], self.font_size)]
            }
            Kind::LowerThird => {
                let mut blocks = vec![(self.lines.clone(), self.font_size)];
                if let Some(sub) = &self.subtitle {
                    blocks.push((sub.lines().map(str::to_owned).collect(), self.font_size * 0.6));
                }
                blocks
            }
            Kind::Text | Kind::Watermark => vec![(self.lines.clone(), self.font_size)],
            Kind::Highlight | Kind::Fade => Vec::new(),
        }
    }

    /// The surface's size in pixels; `None` for the whole output (fade). A countdown is
    /// sized for its first (widest) number.
    pub(crate) fn size(&self, fonts: Option<&Fonts>) -> Option<(i32, i32)> {
        match self.kind {
            Kind::Fade => None,
            Kind::Highlight => self.region.map(|r| (r.width, r.height)),
            _ => {
                let (w, h) = fonts.map_or((1, 1), |f| measure(f, &self.blocks(Duration::ZERO)));
                let pad = self.padding();
                let (w, h) = (w + 2 * pad, h + 2 * pad);
                Some(if self.kind == Kind::Countdown { (w.max(h), w.max(h)) } else { (w, h) })
            }
        }
    }

    /// The overlay's opacity at `now` after it was shown (a fade's ramp: up over the first
    /// quarter, held, down over the last).
    pub(crate) fn alpha_at(&self, now: Duration) -> f32 {
        match (self.kind, self.lasts) {
            (Kind::Fade, Some(d)) => {
                let (t, d) = (now.as_secs_f32(), d.as_secs_f32().max(0.001));
                let ramp = d / 4.0;
                self.opacity * (t / ramp).min((d - t) / ramp).clamp(0.0, 1.0)
            }
            _ => self.opacity,
        }
    }

    /// The picture at `now`, `width` × `height` premultiplied ARGB pixels.
    pub(crate) fn paint(&self, fonts: Option<&Fonts>, width: i32, height: i32, now: Duration) -> Vec<u32> {
        let mut c = Canvas { width, height, px: vec![0; (width.max(0) * height.max(0)) as usize] };
        match self.kind {
            Kind::Fade => c.fill(0, 0, width, height, self.bg),
            Kind::Highlight => {
                let Rgba([r, g, b, _]) = self.color;
                c.fill(0, 0, width, height, Rgba([r, g, b, 0x33]));
                c.fill(0, 0, width, FRAME, self.color);
                c.fill(0, height - FRAME, width, FRAME, self.color);
                c.fill(0, 0, FRAME, height, self.color);
                c.fill(width - FRAME, 0, FRAME, height, self.color);
            }
            _ => {
                c.fill(0, 0, width, height, self.bg);
                if let Some(fonts) = fonts {
                    let blocks = self.blocks(now);
                    let (text_w, text_h) = measure(fonts, &blocks);
                    let pad = self.padding();
                    let (mut x0, mut y) = (pad, pad);
                    if self.kind == Kind::Countdown {
                        x0 = (width - text_w) / 2;
                        y = (height - text_h) / 2;
                    }
                    for (lines, size) in &blocks {
                        for line in lines {
                            y += c.text(fonts, line, x0, y, *size, self.color);
                        }
                    }
                }
            }
        }
        let alpha = self.alpha_at(now);
        if alpha < 1.0 {
            for p in &mut c.px {
                *p = scale(*p, alpha);
            }
        }
        c.px
    }
}

/// The width and height of `blocks` of lines.
fn measure(fonts: &Fonts, blocks: &[(Vec<String>, f32)]) -> (i32, i32) {
    let (mut w, mut h) = (0, 0);
    for (lines, size) in blocks {
        for line in lines {
            w = w.max(line_width(&fonts.font, line, *size));
            h += line_height(&fonts.font, *size);
        }
    }
    (w.max(1), h.max(1))
}

fn line_height(font: &Font, size: f32) -> i32 {
    font.horizontal_line_metrics(size).map_or(size * 1.2, |m| m.new_line_size).ceil() as i32
}

fn line_width(font: &Font, line: &str, size: f32) -> i32 {
    let mut w = 0.0;
    let mut prev = None;
    for ch in line.chars() {
        if let Some(p) = prev {
            w += font.horizontal_kern(p, ch, size).unwrap_or(0.0);
        }
        w += font.metrics(ch, size).advance_width;
        prev = Some(ch);
    }
    w.ceil() as i32
}

/// Multiplies a premultiplied pixel by `alpha`.
fn scale(p: u32, alpha: f32) -> u32 {
    let f = |shift: u32| (((p >> shift) & 0xff) as f32 * alpha).round() as u32;
    (f(24) << 24) | (f(16) << 16) | (f(8) << 8) | f(0)
}

struct Canvas {
    width: i32,
    height: i32,
    px: Vec<u32>,
}

impl Canvas {
    /// Blends `color` at `coverage` (0-255) over pixel (`x`, `y`).
    fn blend(&mut self, x: i32, y: i32, color: Rgba, coverage: u8) {
        if x < 0 || y < 0 || x >= self.width || y >= self.height {
            return;
        }
        let Rgba([r, g, b, a]) = color;
        let sa = u32::from(a) * u32::from(coverage) / 255;
        let at = (y * self.width + x) as usize;
        let dst = self.px[at];
        let mix = |src: u8, shift: u32| {
            let d = (dst >> shift) & 0xff;
            (u32::from(src) * sa + d * (255 - sa)) / 255
        };
        let out_a = sa + ((dst >> 24) & 0xff) * (255 - sa) / 255;
        self.px[at] = (out_a << 24) | (mix(r, 16) << 16) | (mix(g, 8) << 8) | mix(b, 0);
    }

    fn fill(&mut self, x: i32, y: i32, w: i32, h: i32, color: Rgba) {
        for yy in y.max(0)..(y + h).min(self.height) {
            for xx in x.max(0)..(x + w).min(self.width) {
                let at = (yy * self.width + xx) as usize;
                self.px[at] = 0;
                self.blend(xx, yy, color, 255);
            }
        }
    }

    /// Draws `line` with its top at `top`; its height.
    fn text(&mut self, fonts: &Fonts, line: &str, left: i32, top: i32, size: f32, color: Rgba) -> i32 {
        let font = &fonts.font;
        let ascent = font.horizontal_line_metrics(size).map_or(size, |m| m.ascent);
        let baseline = top + ascent.round() as i32;
        let mut pen = left as f32;
        let mut prev = None;
        for ch in line.chars() {
            if let Some(p) = prev {
                pen += font.horizontal_kern(p, ch, size).unwrap_or(0.0);
            }
            let (m, coverage) = font.rasterize(ch, size);
            let gx = pen.round() as i32 + m.xmin;
            let gy = baseline - m.ymin - m.height as i32;
            for row in 0..m.height {
                for col in 0..m.width {
                    let c = coverage[row * m.width + col];
                    if c > 0 {
                        self.blend(gx + col as i32, gy + row as i32, color, c);
                    }
                }
            }
            pen += m.advance_width;
            prev = Some(ch);
        }
        line_height(font, size)
    }
}

/// Where a surface of `size` lands on an output of `output` size at `position` (as sway places
/// a layer surface with these anchors and [`MARGIN`]).
pub(crate) fn place(position: Position, size: (i32, i32), output: (i32, i32)) -> (i32, i32) {
    let (w, h) = size;
    let (ow, oh) = output;
    let center = ((ow - w) / 2, (oh - h) / 2);
    let (left, right, top, bottom) = (MARGIN, ow - w - MARGIN, MARGIN, oh - h - MARGIN);
    match position {
        Position::Center => center,
        Position::Top => (center.0, top),
        Position::Bottom => (center.0, bottom),
        Position::Left => (left, center.1),
        Position::Right => (right, center.1),
        Position::TopLeft => (left, top),
        Position::TopRight => (right, top),
        Position::BottomLeft => (left, bottom),
        Position::BottomRight => (right, bottom),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: Kind) -> Spec {
        Spec {
            kind,
            name: None,
            text: None,
            subtitle: None,
            position: None,
            bg: None,
            color: None,
            font_size: None,
            opacity: None,
            duration: None,
            seconds: None,
            region: None,
        }
    }

    #[test]
    fn a_highlight_is_a_frame_of_its_colour_with_a_light_fill() {
        let mut s = spec(Kind::Highlight);
        s.region = Some(Rect { x: 10, y: 10, width: 20, height: 10 });
        let look = Look::of(&s);
        assert_eq!(look.size(None), Some((20, 10)));
        let px = look.paint(None, 20, 10, Duration::ZERO);
        assert_eq!(px[0], 0xffff_ff00);
        assert_eq!(px[5 * 20 + 10], 0x3333_3300);
    }

    #[test]
    fn a_fade_ramps_up_holds_and_ramps_down() {
        let mut s = spec(Kind::Fade);
        s.duration = Some(4.0);
        let look = Look::of(&s);
        assert_eq!(look.alpha_at(Duration::ZERO), 0.0);
        assert_eq!(look.alpha_at(Duration::from_millis(500)), 0.5);
        assert_eq!(look.alpha_at(Duration::from_secs(2)), 1.0);
        assert_eq!(look.alpha_at(Duration::from_secs(4)), 0.0);
        assert_eq!(look.paint(None, 2, 2, Duration::from_secs(2))[0], 0xff00_0000);
    }

    #[test]
    fn corners_keep_the_margin() {
        assert_eq!(place(Position::BottomRight, (100, 50), (1920, 1080)), (1780, 990));
        assert_eq!(place(Position::Center, (100, 50), (1920, 1080)), (910, 515));
    }
}
