//! A terminal progress bar for `notifications/progress` (indicatif, drawn on stderr).

use std::io::IsTerminal as _;
use std::sync::Arc;

use charly::client::{ProgressFn, ProgressUpdate};

/// Fixed-point scale: MCP progress values are floats, indicatif counts in integers.
const SCALE: f64 = 1000.0;

/// A progress bar on stderr. Made only when stderr is a terminal, so piped or captured
/// output never carries bar frames.
#[derive(Debug, Clone)]
pub struct ProgressBar {
    bar: indicatif::ProgressBar,
}

impl ProgressBar {
    /// A hidden-until-first-update bar when stderr is a terminal; `None` otherwise.
    pub fn on_terminal() -> Option<Self> {
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        Some(ProgressBar { bar })
    }

    /// The callback to pass in [`crate::client::ConnectOptions::progress`].
    pub fn callback(&self) -> ProgressFn {
        let bar = self.bar.clone();
        Arc::new(move |update: &ProgressUpdate| apply(&bar, update))
    }

    /// Clears the bar.
    pub fn finish(self) {
        self.bar.finish_and_clear();
    }
}

fn apply(bar: &indicatif::ProgressBar, update: &ProgressUpdate) {
    let style = match update.total {
        Some(total) if total > 0.0 => {
            bar.set_length((total * SCALE) as u64);
            indicatif::ProgressStyle::with_template("{bar:40} {percent:>3}% {msg}")
        }
        _ => indicatif::ProgressStyle::with_template("{spinner} {msg}"),
    };
    if let Ok(style) = style {
        bar.set_style(style);
    }
    bar.set_position((update.progress.max(0.0) * SCALE) as u64);
    match &update.message {
        Some(message) => bar.set_message(message.clone()),
        None if update.total.is_none() => bar.set_message(format!("progress {}", update.progress)),
        None => {}
    }
}
