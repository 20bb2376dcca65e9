//! The Wayland session a desktop recording records, found by [`crate::wl::session`] (the
//! target's listening sockets, from the host): the environment wf-recorder needs, and a frame
//! made on demand.
//!
//! wf-recorder asks the compositor for a frame only once the screen changes, and after
//! SIGINT it exits when that frame arrives (RUNTIMES.md §11): on a still desktop it would wait
//! for ever. [`damage`] makes sway draw the output once: `output * dpms off; output * dpms on`
//! in one IPC message, through `swaymsg` in the target (a fixed command line). The output is
//! drawn again as it was, so the recording's last frame shows the desktop unchanged.

use super::session::tmux_cmd;
use super::{Reach, TmuxError};
use crate::wl::{Session, session};

/// The target's Wayland session.
///
/// # Errors
///
/// [`TmuxError::Wayland`] when no compositor listens there (where charly looked).
pub async fn session_of(reach: &Reach) -> Result<Session, TmuxError> {
    Ok(match reach {
        Reach::Local { .. } => session::local()?,
        Reach::Container { engine, target } => {
            session::container(engine, &target.container, Some(target)).await?
        }
    })
}

/// What wf-recorder needs to reach the compositor: `XDG_RUNTIME_DIR` and `WAYLAND_DISPLAY`.
///
/// # Errors
///
/// As [`session_of`].
pub async fn environment(reach: &Reach) -> Result<Vec<(String, String)>, TmuxError> {
    let s = session_of(reach).await?;
    Ok(vec![("XDG_RUNTIME_DIR".into(), s.runtime_dir), ("WAYLAND_DISPLAY".into(), s.wayland_display)])
}

/// The argv that makes sway draw its outputs once; why there is none where the compositor is
/// not sway (or no session is found): the stop's time limit then ends the recorder.
pub async fn damage_argv(reach: &Reach) -> Result<Vec<String>, String> {
    let session = session_of(reach).await.map_err(|e| e.to_string())?;
    let Some(socket) = session.sway_socket else {
        return Err(format!(
            "the compositor of {} has no sway IPC socket, so charly cannot make it draw a frame",
            session.describe()
        ));
    };
    Ok(tmux_cmd!["swaymsg", "-s", socket, "output * dpms off; output * dpms on"])
}
