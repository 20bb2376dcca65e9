//! The Wayland session a desktop recorder records: its environment, and a frame on demand.

use super::{Reach, TmuxError};

/// `XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY` of the target's Wayland session.
///
/// # Errors
///
/// [`TmuxError::Usage`] when no session is found.
pub async fn environment(reach: &Reach) -> Result<Vec<(String, String)>, TmuxError> {
    Err(TmuxError::Usage(format!("no Wayland session found in {}", reach.describe())))
}

/// Makes the desktop send a frame (best effort).
pub async fn damage(_reach: &Reach) {}
