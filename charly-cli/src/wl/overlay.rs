//! `overlay.show|hide|list|status`: on-screen overlays drawn by `charly-overlay` (this
//! workspace's own program: a wlr-layer-shell client on smithay-client-toolkit; Debian bookworm
//! has none that fits) inside the target, always as an argv.
//!
//! `charly-overlay daemon` owns the surfaces and listens on
//! `$XDG_RUNTIME_DIR/charly-overlay-$WAYLAND_DISPLAY.sock`; its client commands print the
//! daemon's reply as one JSON line and exit 0 (done), 1 (refused: the reason on stderr), 2
//! (bad arguments, checked before anything reaches the desktop) or 3 (no daemon). `show`
//! starts the daemon when none answers, as the desktop's user with the session's environment
//! (REFERENCE.md §15 started `ov-overlay daemon` in tmux; charly needs no tmux), and waits up
//! to 5 s for it. `hide`, `list` and `status` never start one: without a daemon nothing is
//! shown.
//!
//! A target without the program is told how to get it there: bind-mounted (what the tests do)
//! or in the image ([`CANDY`]).

use std::fmt;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::WlError;
use super::session::Place;
use super::tool::{Ran, Tools};
use crate::report::Report;

/// The program.
pub const PROGRAM: &str = "charly-overlay";

/// The candy name a box's image carries [`PROGRAM`] under. Candies cannot copy a file into an
/// image yet (no `file:` node kind), so the error says how to bind-mount it too.
pub const CANDY: &str = "charly-overlay";

/// How long `show` waits for a daemon it started.
const START: Duration = Duration::from_secs(5);

/// The kinds of overlay (charly-overlay's `--type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum OverlayKind {
    /// A box of text (default centred, white on translucent black, 48 px).
    Text,
    /// A name band: --text as the title, --subtitle under it (default bottom left).
    LowerThird,
    /// Small text in a corner, half transparent (default bottom right, 28 px).
    Watermark,
    /// A number counting down from --seconds (default 3) to 1, then gone.
    Countdown,
    /// A frame around --region X,Y,W,H with a light fill (default yellow).
    Highlight,
    /// The whole output in --bg (default black), faded in and out over --duration (default
    /// 2 s), then gone.
    Fade,
}

impl OverlayKind {
    /// `text`, `lower-third`, ...
    pub fn word(self) -> &'static str {
        match self {
            OverlayKind::Text => "text",
            OverlayKind::LowerThird => "lower-third",
            OverlayKind::Watermark => "watermark",
            OverlayKind::Countdown => "countdown",
            OverlayKind::Highlight => "highlight",
            OverlayKind::Fade => "fade",
        }
    }

    /// The kind `word` names.
    ///
    /// # Errors
    ///
    /// The kinds there are.
    pub fn parse(word: &str) -> Result<OverlayKind, String> {
        use clap::ValueEnum as _;
        OverlayKind::from_str(word, false).map_err(|_| {
            format!(
                "type: {word:?} is not an overlay type (allowed: text, lower-third, watermark, countdown, highlight, fade)"
            )
        })
    }
}

/// An overlay to show; unset fields take the kind's defaults (charly-overlay's).
#[derive(Clone, Debug, Default, PartialEq)]
#[allow(missing_docs)]
pub struct OverlaySpec {
    pub kind: Option<OverlayKind>,
    pub text: Option<String>,
    pub subtitle: Option<String>,
    pub name: Option<String>,
    /// center, top, bottom, left, right, top-left, top-right, bottom-left, bottom-right.
    pub position: Option<String>,
    pub bg: Option<String>,
    pub color: Option<String>,
    pub font_size: Option<f64>,
    pub opacity: Option<f64>,
    /// Seconds.
    pub duration: Option<f64>,
    pub seconds: Option<u32>,
    /// `X,Y,W,H`.
    pub region: Option<String>,
}

/// An overlay operation.
#[derive(Clone, Debug, PartialEq)]
pub enum OverlayOp {
    /// Show one.
    Show(Box<OverlaySpec>),
    /// Hide the named one, or all.
    Hide {
        /// The name.
        name: Option<String>,
        /// All.
        all: bool,
    },
    /// The overlays shown.
    List,
    /// The daemon.
    Status,
}

impl OverlayOp {
    /// `overlay.show`, ...
    pub fn leaf(&self) -> &'static str {
        match self {
            OverlayOp::Show(_) => "overlay.show",
            OverlayOp::Hide { .. } => "overlay.hide",
            OverlayOp::List => "overlay.list",
            OverlayOp::Status => "overlay.status",
        }
    }

    /// The client's argv; the options given only, each value its own argument.
    fn argv(&self) -> Result<Vec<String>, WlError> {
        let mut argv = vec![PROGRAM.to_owned()];
        match self {
            OverlayOp::Show(s) => {
                let Some(kind) = s.kind else {
                    return Err(WlError::Usage("overlay.show needs --type".into()));
                };
                argv.extend(["show".into(), "--type".into(), kind.word().into()]);
                let mut opt = |flag: &str, value: Option<String>| {
                    if let Some(v) = value {
                        argv.push(format!("--{flag}={v}"));
                    }
                };
                opt("text", s.text.clone());
                opt("subtitle", s.subtitle.clone());
                opt("name", s.name.clone());
                opt("position", s.position.clone());
                opt("bg", s.bg.clone());
                opt("color", s.color.clone());
                opt("font-size", s.font_size.map(|v| v.to_string()));
                opt("opacity", s.opacity.map(|v| v.to_string()));
                opt("duration", s.duration.map(|v| v.to_string()));
                opt("seconds", s.seconds.map(|v| v.to_string()));
                opt("region", s.region.clone());
            }
            OverlayOp::Hide { name, all } => {
                argv.push("hide".into());
                match (name, all) {
                    (Some(_), true) => {
                        return Err(WlError::Usage("overlay.hide: give --name or --all, not both".into()));
                    }
                    (Some(n), false) => argv.push(format!("--name={n}")),
                    (None, true) => argv.push("--all".into()),
                    (None, false) => {
                        return Err(WlError::Usage("overlay.hide needs --name N or --all".into()));
                    }
                }
            }
            OverlayOp::List => argv.push("list".into()),
            OverlayOp::Status => argv.push("status".into()),
        }
        Ok(argv)
    }
}

/// An overlay on the output, as charly-overlay reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OverlayInfo {
    /// Its name (`hide --name`).
    pub name: String,
    /// Its kind.
    #[serde(rename = "type")]
    pub kind: OverlayKind,
    /// Its text, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Left edge on the output, pixels.
    pub x: i64,
    /// Top edge.
    pub y: i64,
    /// Width.
    pub width: i64,
    /// Height.
    pub height: i64,
    /// Milliseconds until it goes by itself (absent: until hidden).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining_ms: Option<u64>,
}

/// `overlay.show`, `overlay.hide`, `overlay.list`: the overlays shown, hidden or there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WlOverlays {
    /// `overlay.show`, `overlay.hide` or `overlay.list`.
    pub what: String,
    /// `this machine` or `container charly-web`.
    pub place: String,
    /// The overlays.
    pub overlays: Vec<OverlayInfo>,
}

impl fmt::Display for WlOverlays {
    /// show: `Showing NAME (TYPE) at WxH+X+Y`; hide: `Hid NAME`; list: one line each,
    /// `NAME<TAB>TYPE<TAB>WxH+X+Y<TAB>"text"<TAB>Ns left`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = |o: &OverlayInfo| format!("{}x{}+{}+{}", o.width, o.height, o.x, o.y);
        match self.what.as_str() {
            "overlay.show" => {
                for o in &self.overlays {
                    writeln!(f, "Showing {} ({}) at {} {}", o.name, o.kind.word(), at(o), self.place)?;
                }
            }
            "overlay.hide" if self.overlays.is_empty() => writeln!(f, "No overlay was shown {}", self.place)?,
            "overlay.hide" => {
                for o in &self.overlays {
                    writeln!(f, "Hid {} ({})", o.name, o.kind.word())?;
                }
            }
            _ => {
                for o in &self.overlays {
                    write!(f, "{}\t{}\t{}", o.name, o.kind.word(), at(o))?;
                    if let Some(t) = &o.text {
                        write!(f, "\t{t:?}")?;
                    }
                    if let Some(ms) = o.remaining_ms {
                        write!(f, "\t{:.1}s left", ms as f64 / 1000.0)?;
                    }
                    writeln!(f)?;
                }
            }
        }
        Ok(())
    }
}

impl Report for WlOverlays {}

/// `overlay.status`: whether the daemon runs, and what it shows.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WlOverlayStatus {
    /// `this machine` or `container charly-web`.
    pub place: String,
    /// Whether a daemon answers.
    pub running: bool,
    /// Its pid in the target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// The output the overlays go on, `NAME WxH`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<String>,
    /// The font file text is drawn with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub font: Option<String>,
    /// The overlays shown.
    pub overlays: Vec<OverlayInfo>,
}

impl fmt::Display for WlOverlayStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.running {
            return writeln!(f, "Overlay:    - (no charly-overlay daemon: {}; show starts one)", self.place);
        }
        writeln!(f, "Overlay:    ok (charly-overlay daemon, pid {}, {})", self.pid.unwrap_or(0), self.place)?;
        writeln!(f, "Output:     {}", self.output.as_deref().unwrap_or("-"))?;
        writeln!(f, "Font:       {}", self.font.as_deref().unwrap_or("- (text cannot be drawn)"))?;
        writeln!(f, "Overlays:   {}", self.overlays.len())
    }
}

impl Report for WlOverlayStatus {}

/// The daemon's reply line.
#[derive(Debug, Default, Deserialize)]
struct Reply {
    #[serde(default)]
    overlays: Vec<OverlayInfo>,
    pid: Option<u32>,
    output: Option<String>,
    font: Option<String>,
}

/// What an overlay operation gave.
#[derive(Clone, Debug, PartialEq)]
pub enum OverlayOutcome {
    /// show, hide, list.
    Overlays(WlOverlays),
    /// status.
    Status(WlOverlayStatus),
}

/// Runs `op` in the target.
///
/// # Errors
///
/// [`WlError::Missing`] (no charly-overlay: the candy that adds it), [`WlError::Usage`] (what
/// charly-overlay refused before reaching the desktop), [`WlError::NoWindow`] (no overlay of
/// that name), [`WlError::Tool`], [`WlError::Timeout`].
pub async fn run(tools: &Tools<'_>, op: &OverlayOp) -> Result<OverlayOutcome, WlError> {
    let what = format!("check.wl.{}", op.leaf());
    let argv = op.argv()?;
    require(tools, &what)?;
    let args: Vec<&str> = argv.iter().map(String::as_str).collect();
    let mut ran = tools.run(&args, None).await?;
    if ran.status == 3 && matches!(op, OverlayOp::Show(_)) {
        start(tools, &what).await?;
        ran = tools.run(&args, None).await?;
    }
    let place = tools.session.at();
    let reply: Reply = match ran.status {
        0 => serde_json::from_slice(&ran.stdout).map_err(|e| WlError::Tool {
            tool: PROGRAM.into(),
            place: place.clone(),
            status: 0,
            stderr: format!("its reply is not the JSON charly reads: {e}"),
        })?,
        3 => match op {
            OverlayOp::Hide { name: Some(n), .. } => {
                return Err(WlError::NoWindow(format!(
                    "{what}: no overlay named {n:?} {place} (no charly-overlay daemon runs: nothing is shown)"
                )));
            }
            OverlayOp::Show(_) => return Err(failed(&ran, &place)),
            _ => Reply::default(),
        },
        1 if ran.stderr.contains("no overlay named") => {
            return Err(WlError::NoWindow(format!("{what}: {}", last_line(&ran.stderr))));
        }
        1 if ran.stderr.contains("is off the output") => {
            return Err(WlError::Usage(format!("{what}: {}", last_line(&ran.stderr))));
        }
        2 => return Err(WlError::Usage(format!("{what}: {}", usage_text(&ran.stderr)))),
        _ => return Err(failed(&ran, &place)),
    };
    let place = tools.session.describe();
    Ok(match op {
        OverlayOp::Status => OverlayOutcome::Status(WlOverlayStatus {
            place,
            running: ran.status == 0,
            pid: reply.pid,
            output: reply.output,
            font: reply.font,
            overlays: reply.overlays,
        }),
        _ => OverlayOutcome::Overlays(WlOverlays { what: op.leaf().into(), place, overlays: reply.overlays }),
    })
}

/// `Ok` when charly-overlay is in the target; else the candy (or build) that brings it.
fn require(tools: &Tools<'_>, what: &str) -> Result<(), WlError> {
    if tools.has(PROGRAM) {
        return Ok(());
    }
    let fix = match &tools.session.place {
        Place::Local => {
            "build it with `cargo build -p charly-overlay` (this workspace) and put it on PATH".to_owned()
        }
        Place::Container { fix, .. } => {
            let box_name = fix.split(' ').next().unwrap_or(fix);
            format!(
                "build it with `cargo build -p charly-overlay` (this workspace) and bind-mount it into the box \
                 (`charly start {box_name} --bind /path/to/charly-overlay:/usr/local/bin/charly-overlay:ro`), \
                 or install it in the box's image under the candy name {CANDY}"
            )
        }
    };
    Err(WlError::Missing(format!(
        "{what} needs {PROGRAM}, which is not installed {}: {fix}",
        tools.session.at()
    )))
}

/// Starts the daemon, detached, as the desktop's user, and waits until it answers.
async fn start(tools: &Tools<'_>, what: &str) -> Result<(), WlError> {
    tools.launch(&[PROGRAM, "daemon"]).await?;
    let started = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let ran = tools.run(&[PROGRAM, "status"], None).await?;
        if ran.status == 0 {
            return Ok(());
        }
        if started.elapsed() > START {
            return Err(WlError::Tool {
                tool: format!("{PROGRAM} daemon"),
                place: tools.session.at(),
                status: ran.status,
                stderr: format!(
                    "{what}: the daemon it started did not answer within {} s (run `charly-overlay daemon` there to see why: \
                     the compositor may lack wlr-layer-shell); {}",
                    START.as_secs(),
                    last_line(&ran.stderr)
                ),
            });
        }
    }
}

fn last_line(stderr: &str) -> String {
    let line = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or_default();
    line.trim_start_matches("charly-overlay: ").to_owned()
}

/// clap's or charly-overlay's usage error, without the usage lines.
fn usage_text(stderr: &str) -> String {
    stderr
        .lines()
        .find(|l| l.starts_with("error: ") || l.starts_with("charly-overlay show: "))
        .map(|l| l.trim_start_matches("error: ").trim_start_matches("charly-overlay show: ").to_owned())
        .unwrap_or_else(|| last_line(stderr))
}

fn failed(ran: &Ran, place: &str) -> WlError {
    WlError::Tool {
        tool: PROGRAM.into(),
        place: place.to_owned(),
        status: ran.status,
        stderr: ran.stderr.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_argv_carries_each_value_as_one_argument_and_only_the_options_given() {
        let spec = OverlaySpec {
            kind: Some(OverlayKind::LowerThird),
            text: Some("--all $(x) `y`".into()),
            subtitle: Some("b".into()),
            opacity: Some(0.5),
            ..OverlaySpec::default()
        };
        assert_eq!(
            OverlayOp::Show(Box::new(spec)).argv().unwrap(),
            [
                "charly-overlay",
                "show",
                "--type",
                "lower-third",
                "--text=--all $(x) `y`",
                "--subtitle=b",
                "--opacity=0.5"
            ]
        );
        assert_eq!(OverlayOp::Hide { name: Some("a".into()), all: false }.argv().unwrap()[2], "--name=a");
        assert!(OverlayOp::Hide { name: None, all: false }.argv().is_err());
        assert!(OverlayKind::parse("banner").unwrap_err().contains("allowed: text, lower-third"));
    }
}
