//! Deploy mode: boxes run as containers named `charly-<box>[-<instance>]`, in run mode
//! `direct` (`podman run -d`), through the [`crate::engine`].
//!
//! | module | leaves |
//! |---|---|
//! | [`lifecycle`] | `start`, `stop`, `remove` |
//! | [`update`] | `update`: rebuilt, then recreated as a `start` with the same flags would run it |
//! | [`hooks`] | the image's `post_enable` and `pre_remove` hooks, each within a time limit |
//! | [`systemd`] | `start`/`stop` of a deployment in run mode `quadlet` |
//! | [`signals`] | on a terminal, SIGINT/SIGTERM/SIGHUP stop what charly waits on in a container |
//! | [`status`] | `status` (probes run concurrently) |
//! | [`exec`] | `logs`, `shell`, `cmd` |
//! | [`pull`] | `box.pull` (a box's base image, from its registry or a local source) |
//! | [`service`] | `service.{start,stop,restart,status}` (supervisorctl in the container) |
//! | [`merge`] | `box.merge` (a built image's layers merged into fewer) |
//! | [`args`] | the `--env`, `--port`, `--volume`, `--bind` values, checked |
//! | [`plan`] | what `start` runs: image labels, deploy entry and flags merged |
//! | [`refresh`] | what `update` changed, in words; new box ports at a free host port |
//! | [`report`] | the reports |
//!
//! Every podman call runs on a private current-thread runtime and stops when the command is
//! cancelled (the podman child is killed); a leaf that changes a container checks the
//! cancellation before each state-changing call, and a sequence that must not be cut in
//! half (`update`'s remove-then-run) runs its second half uncancelled.

pub mod args;
pub mod exec;
pub mod hooks;
pub mod lifecycle;
pub mod merge;
pub mod plan;
pub mod pull;
pub mod refresh;
pub mod report;
pub mod service;
pub mod signals;
pub mod status;
pub mod systemd;
pub mod update;

use std::future::Future;

use tokio_util::sync::CancellationToken;

use crate::context::{Ctx, Scope};
use crate::engine::{Engine, EngineError};
use crate::project::{Project, ProjectError};

pub use self::report::{
    ContainerStatus, Executed, ForeignContainer, HookRun, Logs, Probe, Removed, Started, StatusReport,
    Stopped, Updated,
};
pub use self::service::{ServiceAction, ServiceReport, ServiceState};

/// Why a lifecycle leaf could not do its work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeployError {
    /// podman refused or failed (the message names the container and the fix).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The project could not be read (an unknown box, a broken file).
    #[error(transparent)]
    Project(#[from] ProjectError),
    /// An argument is not usable.
    #[error("{argument} {value:?}: {problem}")]
    Argument {
        /// The argument, as spelled on the command line (`--bind`).
        argument: &'static str,
        /// Its value.
        value: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// A value of the box's deploy entry is not usable now (a bind directory gone, an
    /// encrypted volume not mounted).
    #[error("{at} {value:?}: {problem}; nothing was started")]
    Saved {
        /// Where: `deploy entry web: volume data`.
        at: String,
        /// The value.
        value: String,
        /// What is wrong and how to fix it.
        problem: String,
    },
    /// The deploy file could not be read.
    #[error(transparent)]
    DeployFile(#[from] crate::deployfile::DeployFileError),
    /// `remove --purge` could not take away the deployment's configuration (entry, secrets,
    /// units, encrypted directories); the container and its volumes are gone.
    #[error(transparent)]
    Setup(Box<crate::setup::SetupError>),
    /// `update`'s new container did not run; what became of the old one.
    #[error("update {container}: the new container did not run: {problem}; {then}")]
    Recreate {
        /// The container.
        container: String,
        /// Why the new one did not run.
        problem: String,
        /// What became of the old one.
        then: String,
    },
    /// A leaf that needs a terminal (or an argument instead) was called as a tool.
    #[error("{0}")]
    NeedsArgument(String),
    /// The runtime for podman calls could not start, or a terminal child failed to run.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What the lifecycle leaves share: the engine, the project, who calls, the cancellation.
#[derive(Debug)]
pub struct Deploy<'a> {
    engine: Engine,
    project: &'a Project,
    scope: Scope,
    cancel: CancellationToken,
}

impl<'a> Deploy<'a> {
    /// The leaves of `ctx`'s run on `project`, with podman from PATH.
    pub fn new(ctx: &Ctx, project: &'a Project) -> Deploy<'a> {
        Deploy {
            engine: Engine::podman(ctx.cancel_token()).knowing(crate::resolve::project_boxes(project.root())),
            project,
            scope: ctx.scope(),
            cancel: ctx.cancel_token(),
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Drives `future` on a private current-thread runtime, stopping it (and its podman
    /// child) when the command is cancelled.
    fn block<T>(&self, future: impl Future<Output = Result<T, EngineError>>) -> Result<T, DeployError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        runtime.block_on(async {
            tokio::select! {
                result = future => Ok(result?),
                () = self.cancel.cancelled() => Err(EngineError::Cancelled.into()),
            }
        })
    }

    /// [`block`](Self::block) for a wait on something charly started in a container (a
    /// command, a hook, a followed log): on a terminal, SIGINT, SIGTERM and SIGHUP cancel it
    /// instead of ending charly at once ([`signals`]), so what it started is stopped.
    fn block_exec<T>(&self, future: impl Future<Output = Result<T, EngineError>>) -> Result<T, DeployError> {
        let _guard = (self.scope == Scope::Terminal).then(|| signals::guard(&self.cancel));
        self.block(future)
    }

    /// Removes `box_name`'s dangling images (by its label: what earlier builds or a merge left
    /// untagged, with their build cache) after a build, a merge or an update: their short ids.
    /// Best effort: the work before it is done, so a failure here is not that work's.
    pub fn prune_images(&self, box_name: &str) -> Vec<String> {
        self.block(self.engine.prune_box_images(box_name)).unwrap_or_default()
    }

    /// Drives `future` to its end whatever happens to the command: the second half of a
    /// sequence that must not stop in the middle.
    fn block_through<T>(
        &self,
        future: impl Future<Output = Result<T, EngineError>>,
    ) -> Result<T, DeployError> {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        Ok(runtime.block_on(future)?)
    }

    /// An engine that no cancellation stops (for [`block_through`](Self::block_through)).
    fn uncancelled_engine(&self) -> Engine {
        Engine::with_program(self.engine.program(), CancellationToken::new())
    }
}

/// The first 12 hex digits of an id.
fn short_id(id: &str) -> String {
    id.trim_start_matches("sha256:").chars().take(12).collect()
}
