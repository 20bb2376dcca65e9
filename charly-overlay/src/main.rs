//! `charly-overlay`: on-screen overlays for a wlroots compositor (sway), drawn on
//! wlr-layer-shell surfaces: text, lower thirds, watermarks, countdowns, highlights and fades,
//! for screen recordings and demos. charly's `check.wl.overlay.*` leaves run it inside a box
//! (or on this machine), always as an argv.
//!
//! ```text
//! charly-overlay daemon                      # owns the surfaces; exits with the compositor
//! charly-overlay show --type text --text "Hello" --bg '#0000ff' --duration 5
//! charly-overlay show --type highlight --region 100,80,400,300
//! charly-overlay list | status               # JSON on stdout
//! charly-overlay hide --name text-1 | --all
//! ```
//!
//! Every client command prints the daemon's reply as one JSON line on stdout. Exit status: 0
//! done; 1 the daemon refused (its reason on stderr); 2 bad arguments; 3 no daemon listens.
//!
//! Why its own program, not a Debian one: bookworm has layer-shell programs for one job each
//! (wob: a progress bar; mako-notifier, sway-notification-center: D-Bus notifications;
//! gtk-layer-shell-examples: a demo window), none that draws text where asked, a region frame or
//! a fade, or takes commands while it runs.

mod daemon;
mod render;
mod socket;
mod spec;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::spec::{Kind, Position, Rect, Request, Rgba, Spec};

/// On-screen overlays on a wlr-layer-shell surface.
#[derive(Parser, Debug)]
#[command(name = "charly-overlay", version)]
struct Cli {
    /// The control socket (default: $XDG_RUNTIME_DIR/charly-overlay-$WAYLAND_DISPLAY.sock)
    #[arg(long, global = true)]
    socket: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the daemon that owns the overlays (until the compositor goes away)
    Daemon {
        /// The TrueType font for text (default: DejaVu Sans from fonts-dejavu-core)
        #[arg(long)]
        font: Option<String>,
    },
    /// Show an overlay (a name shown already is replaced); prints it as JSON once it is on screen
    Show(ShowArgs),
    /// Hide the named overlay, or all
    Hide {
        /// The overlay's name
        #[arg(long, required_unless_present = "all", conflicts_with = "all")]
        name: Option<String>,
        /// Every overlay
        #[arg(long)]
        all: bool,
    },
    /// The overlays shown, as JSON
    List,
    /// The daemon's state (pid, output, font, overlays) as JSON; exit status 3 without a daemon
    Status,
}

#[derive(clap::Args, Debug)]
struct ShowArgs {
    /// The kind of overlay
    #[arg(long = "type", value_enum)]
    kind: Kind,
    /// The text (text, lower-third, watermark; `\n` breaks lines)
    #[arg(long)]
    text: Option<String>,
    /// The second line of a lower-third
    #[arg(long)]
    subtitle: Option<String>,
    /// Its name, to hide or replace it (default <type>-<n>)
    #[arg(long)]
    name: Option<String>,
    /// Where on the output (default: text and countdown center, lower-third bottom-left, watermark bottom-right)
    #[arg(long, value_enum)]
    position: Option<Position>,
    /// Background colour: #RGB, #RRGGBB, #RRGGBBAA or a name
    #[arg(long, value_parser = Rgba::parse)]
    bg: Option<Rgba>,
    /// Text (highlight: frame) colour
    #[arg(long, value_parser = Rgba::parse)]
    color: Option<Rgba>,
    /// Text size in pixels (default 48; watermark 28, countdown 200)
    #[arg(long)]
    font_size: Option<f32>,
    /// Opacity of the whole overlay, 0 to 1 (default 1; watermark 0.5)
    #[arg(long)]
    opacity: Option<f32>,
    /// Seconds until it goes by itself (fade: its length, default 2); none: until hidden
    #[arg(long)]
    duration: Option<f32>,
    /// Where a countdown starts (default 3)
    #[arg(long)]
    seconds: Option<u32>,
    /// The highlighted rectangle, X,Y,W,H in output pixels
    #[arg(long, value_parser = Rect::parse)]
    region: Option<Rect>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let path = cli.socket.clone().unwrap_or_else(socket::default_path);
    let request = match cli.command {
        Command::Daemon { font } => {
            return match daemon::run(path, font.as_deref()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("charly-overlay daemon: {e}");
                    ExitCode::from(1)
                }
            };
        }
        Command::Show(a) => {
            let spec = Spec {
                kind: a.kind,
                name: a.name,
                text: a.text,
                subtitle: a.subtitle,
                position: a.position,
                bg: a.bg,
                color: a.color,
                font_size: a.font_size,
                opacity: a.opacity,
                duration: a.duration,
                seconds: a.seconds,
                region: a.region,
            };
            if let Err(e) = spec.check() {
                eprintln!("charly-overlay show: {e}");
                return ExitCode::from(2);
            }
            Request::Show(spec)
        }
        Command::Hide { name, all } => Request::Hide { name, all },
        Command::List => Request::List,
        Command::Status => Request::Status,
    };
    match socket::call(&path, &request) {
        Ok(reply) => {
            println!("{}", serde_json::to_string(&reply).unwrap_or_default());
            match reply.error {
                Some(e) if !reply.ok => {
                    eprintln!("charly-overlay: {e}");
                    ExitCode::from(1)
                }
                _ => ExitCode::SUCCESS,
            }
        }
        Err(socket::CallError::NoDaemon(e)) => {
            eprintln!("charly-overlay: {e}");
            ExitCode::from(3)
        }
        Err(socket::CallError::Failed(e)) => {
            eprintln!("charly-overlay: {e}");
            ExitCode::from(1)
        }
    }
}
