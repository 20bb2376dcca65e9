//! [`Cancel`]: how a project operation learns that its call was cancelled.

use std::path::Path;
use std::sync::Arc;

use super::error::{ProjectError, Result};

/// Asked by every change before its point of no return (the rename that makes a written file
/// visible), and while an edit waits for its lock. Once it says yes, the change stops with
/// [`ProjectError::Cancelled`] and nothing is written.
///
/// The default never cancels (a terminal run, where Ctrl-C ends the process). A served call
/// passes its cancellation token's `is_cancelled` with [`Cancel::when`], through
/// [`super::Project::with_cancel`].
#[derive(Clone, Default)]
pub struct Cancel(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl Cancel {
    /// Cancelled once `cancelled` returns true (it is called from the thread doing the work,
    /// and should be cheap: an atomic load).
    pub fn when(cancelled: impl Fn() -> bool + Send + Sync + 'static) -> Cancel {
        Cancel(Some(Arc::new(cancelled)))
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f())
    }

    /// Whether anything can cancel: waits poll only then, and block otherwise.
    pub(crate) fn can_cancel(&self) -> bool {
        self.0.is_some()
    }

    /// [`ProjectError::Cancelled`] naming `file`, once cancelled.
    pub(crate) fn check(&self, file: &Path) -> Result<()> {
        if self.is_cancelled() { Err(ProjectError::Cancelled { file: file.to_owned() }) } else { Ok(()) }
    }
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Cancel(when)" } else { "Cancel(never)" })
    }
}
