//! What an overlay is: its kind, its text and style, where it goes and how long it stays
//! ([`Spec`]), checked before anything reaches the compositor; and the JSON that the control
//! socket carries ([`Request`], [`Reply`], [`Shown`]).

use serde::{Deserialize, Serialize};

/// The kinds of overlay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Kind {
    /// A box of text (default: centred, white on translucent black).
    Text,
    /// A name band: the text as a title and --subtitle under it (default: bottom left).
    LowerThird,
    /// Small text in a corner, half transparent (default: bottom right).
    Watermark,
    /// A number counting down from --seconds to 1, one a second, then gone.
    Countdown,
    /// A frame around --region X,Y,W,H with a light fill of its colour (default yellow).
    Highlight,
    /// The whole output in --bg (default black), faded in and out again over --duration, then gone.
    Fade,
}

impl Kind {
    /// `text`, `lower-third`, ...
    pub(crate) fn word(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::LowerThird => "lower-third",
            Kind::Watermark => "watermark",
            Kind::Countdown => "countdown",
            Kind::Highlight => "highlight",
            Kind::Fade => "fade",
        }
    }
}

/// Where an overlay sits on the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Position {
    /// The middle of the output.
    Center,
    /// Top edge, centred.
    Top,
    /// Bottom edge, centred.
    Bottom,
    /// Left edge, centred.
    Left,
    /// Right edge, centred.
    Right,
    /// Top left corner.
    TopLeft,
    /// Top right corner.
    TopRight,
    /// Bottom left corner.
    BottomLeft,
    /// Bottom right corner.
    BottomRight,
}

/// A colour, straight (not premultiplied) RGBA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rgba(pub(crate) [u8; 4]);

/// The colour names accepted besides `#RGB`, `#RRGGBB` and `#RRGGBBAA`.
const NAMES: [(&str, [u8; 4]); 12] = [
    ("white", [255, 255, 255, 255]),
    ("black", [0, 0, 0, 255]),
    ("red", [255, 0, 0, 255]),
    ("green", [0, 128, 0, 255]),
    ("lime", [0, 255, 0, 255]),
    ("blue", [0, 0, 255, 255]),
    ("yellow", [255, 255, 0, 255]),
    ("orange", [255, 165, 0, 255]),
    ("cyan", [0, 255, 255, 255]),
    ("magenta", [255, 0, 255, 255]),
    ("gray", [128, 128, 128, 255]),
    ("transparent", [0, 0, 0, 0]),
];

impl Rgba {
    /// Parses `#RGB`, `#RRGGBB`, `#RRGGBBAA` or a name (white, black, red, ...).
    ///
    /// # Errors
    ///
    /// What is allowed.
    pub(crate) fn parse(text: &str) -> Result<Rgba, String> {
        let lower = text.trim().to_ascii_lowercase();
        if let Some((_, c)) = NAMES.iter().find(|(n, _)| *n == lower) {
            return Ok(Rgba(*c));
        }
        let bad = || {
            let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
            format!("{text:?} is not a colour (#RGB, #RRGGBB, #RRGGBBAA or one of {})", names.join(", "))
        };
        let hex = lower.strip_prefix('#').ok_or_else(bad)?;
        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let byte = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|_| bad());
        match hex.len() {
            3 => {
                let nib = |i: usize| u8::from_str_radix(&hex[i..=i], 16).map(|n| n * 17).map_err(|_| bad());
                Ok(Rgba([nib(0)?, nib(1)?, nib(2)?, 255]))
            }
            6 => Ok(Rgba([byte(0)?, byte(2)?, byte(4)?, 255])),
            8 => Ok(Rgba([byte(0)?, byte(2)?, byte(4)?, byte(6)?])),
            _ => Err(bad()),
        }
    }
}

/// A rectangle in output pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rect {
    /// Left edge.
    pub(crate) x: i32,
    /// Top edge.
    pub(crate) y: i32,
    /// Width (at least 1).
    pub(crate) width: i32,
    /// Height (at least 1).
    pub(crate) height: i32,
}

impl Rect {
    /// Parses `X,Y,W,H`.
    ///
    /// # Errors
    ///
    /// What is expected.
    pub(crate) fn parse(text: &str) -> Result<Rect, String> {
        let parts: Vec<Option<i32>> = text.split(',').map(|p| p.trim().parse().ok()).collect();
        match parts.as_slice() {
            [Some(x), Some(y), Some(w), Some(h)] if *x >= 0 && *y >= 0 && *w > 0 && *h > 0 => {
                Ok(Rect { x: *x, y: *y, width: *w, height: *h })
            }
            _ => Err(format!(
                "{text:?} is not a region: expects X,Y,W,H in pixels (X, Y at least 0; W, H at least 1), e.g. 100,80,400,300"
            )),
        }
    }
}

/// An overlay to show, as `show` is asked for it (unset style fields take the kind's defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Spec {
    /// The kind.
    pub(crate) kind: Kind,
    /// Its name (default `<kind>-<n>`); showing a name again replaces that overlay.
    pub(crate) name: Option<String>,
    /// The text (text, lower-third, watermark).
    pub(crate) text: Option<String>,
    /// The line under the text (lower-third).
    pub(crate) subtitle: Option<String>,
    /// Where on the output.
    pub(crate) position: Option<Position>,
    /// The background colour.
    pub(crate) bg: Option<Rgba>,
    /// The text (or frame) colour.
    pub(crate) color: Option<Rgba>,
    /// The text's size in pixels.
    pub(crate) font_size: Option<f32>,
    /// The whole overlay's opacity, 0 to 1.
    pub(crate) opacity: Option<f32>,
    /// Seconds it stays (fade: its whole length); none: until hidden.
    pub(crate) duration: Option<f32>,
    /// Where countdown starts.
    pub(crate) seconds: Option<u32>,
    /// The highlighted rectangle.
    pub(crate) region: Option<Rect>,
}

impl Spec {
    /// Checks that the fields fit the kind and are in range.
    ///
    /// # Errors
    ///
    /// The first problem, naming the option.
    pub(crate) fn check(&self) -> Result<(), String> {
        let kind = self.kind.word();
        let needs_text = matches!(self.kind, Kind::Text | Kind::LowerThird | Kind::Watermark);
        if needs_text && self.text.as_deref().is_none_or(|t| t.trim().is_empty()) {
            return Err(format!("--type {kind} needs --text"));
        }
        if !needs_text && self.text.is_some() {
            return Err(format!("--text does not apply to --type {kind}"));
        }
        if self.subtitle.is_some() && self.kind != Kind::LowerThird {
            return Err(format!("--subtitle applies to --type lower-third, not {kind}"));
        }
        if self.kind == Kind::Highlight && self.region.is_none() {
            return Err("--type highlight needs --region X,Y,W,H".into());
        }
        if self.kind != Kind::Highlight && self.region.is_some() {
            return Err(format!("--region applies to --type highlight, not {kind}"));
        }
        if self.seconds.is_some() && self.kind != Kind::Countdown {
            return Err(format!("--seconds applies to --type countdown, not {kind}"));
        }
        if matches!(self.kind, Kind::Highlight | Kind::Fade) && self.position.is_some() {
            return Err(format!("--position does not apply to --type {kind}"));
        }
        if let Some(s) = self.seconds
            && !(1..=3600).contains(&s)
        {
            return Err(format!("--seconds {s}: expects 1 to 3600"));
        }
        if let Some(size) = self.font_size
            && !(6.0..=400.0).contains(&size)
        {
            return Err(format!("--font-size {size}: expects 6 to 400 pixels"));
        }
        if let Some(o) = self.opacity
            && !(0.0..=1.0).contains(&o)
        {
            return Err(format!("--opacity {o}: expects 0 to 1"));
        }
        if let Some(d) = self.duration
            && !(d > 0.0 && d <= 86_400.0)
        {
            return Err(format!("--duration {d}: expects more than 0 and at most 86400 seconds"));
        }
        if self.kind == Kind::Countdown && self.duration.is_some() {
            return Err("--duration does not apply to --type countdown (it lasts --seconds)".into());
        }
        if let Some(name) = &self.name
            && (name.is_empty()
                || name.len() > 64
                || !name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)))
        {
            return Err(format!("--name {name:?}: expects 1 to 64 letters, digits, `-`, `_` or `.`"));
        }
        Ok(())
    }
}

/// A request on the control socket (one JSON line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub(crate) enum Request {
    /// Show an overlay (or replace the one of its name).
    Show(Spec),
    /// Hide the named overlay, or all.
    Hide {
        /// The name.
        name: Option<String>,
        /// All of them.
        all: bool,
    },
    /// The overlays shown.
    List,
    /// The daemon's state.
    Status,
}

/// An overlay as shown: where it is on the output and how long it stays.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Shown {
    /// Its name.
    pub(crate) name: String,
    /// Its kind.
    #[serde(rename = "type")]
    pub(crate) kind: Kind,
    /// Its text, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) text: Option<String>,
    /// Left edge on the output, in pixels.
    pub(crate) x: i32,
    /// Top edge.
    pub(crate) y: i32,
    /// Width.
    pub(crate) width: i32,
    /// Height.
    pub(crate) height: i32,
    /// Milliseconds until it goes by itself (none: it stays until hidden).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) remaining_ms: Option<u64>,
}

/// The daemon's answer (one JSON line).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Reply {
    /// Whether the request was done.
    pub(crate) ok: bool,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The overlays concerned: shown (show), hidden (hide), all (list, status).
    #[serde(default)]
    pub(crate) overlays: Vec<Shown>,
    /// status: the daemon's pid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) pid: Option<u32>,
    /// status: the output the overlays go on, `NAME WxH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) output: Option<String>,
    /// status: the font file text is drawn with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) font: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_regions_parse_and_bad_ones_say_what_is_allowed() {
        assert_eq!(Rgba::parse("#ff8000"), Ok(Rgba([255, 128, 0, 255])));
        assert_eq!(Rgba::parse("#F80"), Ok(Rgba([255, 136, 0, 255])));
        assert_eq!(Rgba::parse("#00000080"), Ok(Rgba([0, 0, 0, 128])));
        assert_eq!(Rgba::parse("White"), Ok(Rgba([255, 255, 255, 255])));
        assert!(Rgba::parse("#12345").unwrap_err().contains("#RRGGBB"));
        assert!(Rgba::parse("purple-ish").is_err());
        assert_eq!(Rect::parse("1, 2,30,40"), Ok(Rect { x: 1, y: 2, width: 30, height: 40 }));
        assert!(Rect::parse("1,2,0,4").unwrap_err().contains("X,Y,W,H"));
        assert!(Rect::parse("1,2,3").is_err());
    }

    #[test]
    fn specs_are_checked_against_their_kind() {
        let spec = |kind| Spec {
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
        };
        assert_eq!(spec(Kind::Text).check().unwrap_err(), "--type text needs --text");
        assert!(spec(Kind::Countdown).check().is_ok());
        assert!(spec(Kind::Fade).check().is_ok());
        assert!(spec(Kind::Highlight).check().unwrap_err().contains("--region"));
        let mut s = spec(Kind::Countdown);
        s.seconds = Some(0);
        assert!(s.check().unwrap_err().contains("1 to 3600"));
        let mut s = spec(Kind::Fade);
        s.opacity = Some(1.5);
        assert!(s.check().unwrap_err().contains("--opacity"));
        let mut s = spec(Kind::Watermark);
        s.text = Some("w".into());
        s.name = Some("a b".into());
        assert!(s.check().unwrap_err().contains("--name"));
    }
}
