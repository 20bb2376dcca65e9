//! The image's hooks (`ai.opencharly.hook`): `post_enable` once `start` runs a container,
//! `pre_remove` before `remove` takes it away. Each runs with `sh -c` in the running container,
//! with `$CHARLY_CONTAINER` set, in order, within a time limit (`--hook-timeout`, default
//! [`HOOK_TIMEOUT_SECS`]).
//!
//! A hook that exits non-zero is reported and the leaf goes on (best effort, as the
//! reference's). A hook that does not finish in time is stopped in the container (the dropped
//! `podman exec` stops its processes, [`crate::engine::exec`]) and is an error: `start` removes
//! the container it made (nothing was started), `remove` removes nothing; the message names
//! the hook, the limit and the fixes (`--hook-timeout`, `remove --no-hooks`).

use std::time::Duration;

use super::Deploy;
use super::report::HookRun;
use crate::engine::{EngineError, Target};
use crate::project::runtime::{Hooks, label};

/// The default time limit of one hook, in seconds.
pub const HOOK_TIMEOUT_SECS: u32 = 60;

/// How a leaf runs the hooks (`--no-hooks`, `--hook-timeout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HookPolicy {
    /// Whether the hooks run at all.
    pub run: bool,
    /// The time limit of each hook, in seconds.
    pub timeout_secs: u32,
}

impl Default for HookPolicy {
    fn default() -> HookPolicy {
        HookPolicy { run: true, timeout_secs: HOOK_TIMEOUT_SECS }
    }
}

impl Deploy<'_> {
    /// The `pre_remove` hooks of `target`'s container (its image's hook label, as the
    /// container was made): run when it runs. `Err(reason)` when they were not run though
    /// declared (the container is not running, or `--no-hooks`).
    pub(super) async fn pre_remove(
        &self,
        target: &Target,
        policy: HookPolicy,
    ) -> Result<Result<Vec<HookRun>, String>, EngineError> {
        let Some(c) = self.engine.container(&target.container).await? else { return Ok(Ok(Vec::new())) };
        // podman gives a container its image's labels: the hooks of the image it runs.
        let hooks: Hooks =
            c.label(label::HOOK).and_then(|v| serde_json::from_str(v).ok()).unwrap_or_default();
        if hooks.pre_remove.is_empty() {
            return Ok(Ok(Vec::new()));
        }
        if !policy.run {
            return Ok(Err("--no-hooks".into()));
        }
        if !c.is_running() {
            return Ok(Err(format!(
                "container {} is {}, and hooks run in a running container",
                target.container,
                crate::engine::state_word(&c)
            )));
        }
        let then = format!(
            "nothing was removed: fix the hook, give it longer (`--hook-timeout SECS`), or remove without \
             hooks (`charly remove {} --no-hooks`)",
            crate::engine::start_args(target)
        );
        self.hooks(target, "pre_remove", hooks.pre_remove, policy, &then).await.map(Ok)
    }

    /// Runs hook `commands` in `target`'s running container, in order, with
    /// `$CHARLY_CONTAINER` set, each within `policy`'s limit: each one's exit status and output.
    ///
    /// # Errors
    ///
    /// [`EngineError::HookTimedOut`] (with `then` saying what was left) for a hook that did
    /// not finish in time, stopped; [`EngineError::Cancelled`].
    pub(super) async fn hooks(
        &self,
        target: &Target,
        hook: &'static str,
        commands: Vec<String>,
        policy: HookPolicy,
        then: &str,
    ) -> Result<Vec<HookRun>, EngineError> {
        let env = [format!("CHARLY_CONTAINER={}", target.container)];
        let mut runs = Vec::new();
        if !policy.run {
            return Ok(runs);
        }
        let limit = Duration::from_secs(policy.timeout_secs.into());
        for command in commands {
            let argv = ["sh".to_owned(), "-c".to_owned(), command.clone()];
            let ran = tokio::time::timeout(limit, self.engine.exec(target, &env, &argv)).await;
            let (exit_status, output) = match ran {
                Err(_) => {
                    return Err(EngineError::HookTimedOut(Box::new(crate::engine::HookTimeout {
                        key: target.key(),
                        hook,
                        command,
                        container: target.container.clone(),
                        secs: limit.as_secs(),
                        then: then.to_owned(),
                    })));
                }
                Ok(Ok(out)) => (out.status, format!("{}{}", out.stdout, out.stderr)),
                Ok(Err(EngineError::Cancelled)) => return Err(EngineError::Cancelled),
                Ok(Err(e)) => (-1, e.to_string()),
            };
            runs.push(HookRun { command, exit_status, output });
        }
        Ok(runs)
    }
}
