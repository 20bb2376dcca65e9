//! `update`: the box's image rebuilt, and its running container recreated from it as a `stop`
//! and a `start` with the same flags would run it: the new image's labels (env, services with
//! supervisord as init, volumes, security, hooks), the deploy entry as it is now (env, ports,
//! volumes, secrets, network), and the flags of the `start` that made the container (kept in
//! its run label, [`crate::engine::Given`]). A port the box newly declares goes to the next
//! free host port when its own is taken ([`super::refresh`]). A container started before
//! charly kept its flags is recreated from its stored arguments, with what the image
//! contributed to them refreshed.
//!
//! The new arguments are checked before the old container goes (bind directories, mounted
//! encrypted volumes, free ports); if the new container still does not run, the old one is
//! run again from the image it ran, and the update is an error saying so.

use std::path::Path;

use super::hooks::HookPolicy;
use super::lifecycle::StartRequest;
use super::plan::{EntryValues, When};
use super::report::Updated;
use super::{Deploy, DeployError, short_id};
use crate::engine::{
    BOX_LABEL, ContainerSummary, EngineError, INSTANCE_LABEL, RUN_LABEL, RunSpec, Target, start_args,
    state_word,
};
use crate::project::runtime::Runtime;

impl Deploy<'_> {
    /// `update`: see the [module](self) docs; prunes the box's dangling images once the
    /// container runs from the new one.
    ///
    /// # Errors
    ///
    /// A failed build (nothing else changes), a container charly did not start, a new
    /// argument that is not usable now (the old container keeps running), a new container that
    /// does not run (the old one is run again), podman failures.
    pub fn update(&self, box_name: &str, instance: Option<&str>, pull: bool) -> Result<Updated, DeployError> {
        self.update_with(box_name, instance, pull, &crate::deployfile::deploy_path())
    }

    /// [`update`](Self::update) with the deploy file at `deploy_file`.
    ///
    /// # Errors
    ///
    /// As [`update`](Self::update).
    pub fn update_with(
        &self,
        box_name: &str,
        instance: Option<&str>,
        pull: bool,
        deploy_file: &Path,
    ) -> Result<Updated, DeployError> {
        let target = Target::new(box_name, instance)?;
        let _held = super::lifecycle::hold(&target, deploy_file)?;
        let existing = self.block(self.engine.claimed(&target))?;
        let old = match &existing {
            Some(c) if c.is_running() => Some(stored_spec(&target, c)?),
            _ => None,
        };
        self.engine.check_cancelled()?;
        let built =
            self.project.build_with_pull(std::ffi::OsStr::new(&self.engine.program()), box_name, pull)?;
        let image = self.block(async {
            // Seen once under parallel builds: the tag was not visible to the inspect right
            // after `podman build` returned; one short retry.
            if let Some(image) = self.engine.image(&built.image).await? {
                return Ok(image);
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            self.engine.image(&built.image).await?.ok_or_else(|| EngineError::NoImage {
                box_name: box_name.to_owned(),
                image: built.image.clone(),
            })
        })?;
        let previous = existing.as_ref().map(|c| c.image_id.clone());
        let image_changed = previous.as_deref().is_none_or(|p| short_id(p) != short_id(&image.id));
        let mut updated = Updated {
            container: target.container.clone(),
            image: built.image.clone(),
            previous_image_id: previous.as_deref().map(short_id),
            image_id: short_id(&image.id),
            image_changed,
            restarted: false,
            pruned_images: Vec::new(),
            changes: Vec::new(),
            summary: String::new(),
            build_log: built.log,
        };
        let (Some(old), Some(c)) = (old, existing.as_ref().filter(|c| c.is_running())) else {
            updated.summary = match &existing {
                Some(c) => format!(
                    "rebuilt {}; {} is {}: `charly start {}` runs the new image",
                    built.image,
                    target.container,
                    state_word(c),
                    start_args(&target)
                ),
                None => format!("rebuilt {}; {} is not started", built.image, target.container),
            };
            return Ok(updated);
        };
        let new_labels = image.labels.clone().unwrap_or_default();
        let entry = super::plan::entry(deploy_file, &target)?;
        let values = EntryValues::of(entry.as_ref());
        let spec = match &old.given {
            Some(given) => {
                let r = StartRequest {
                    box_name,
                    instance,
                    env: &given.env,
                    ports: &given.ports,
                    volumes: &given.volumes,
                    binds: &[],
                    command: &given.command,
                    hooks: HookPolicy::default(),
                };
                let box_ports = self.project.resolve_box(box_name)?.ports();
                let labels = Runtime::from_labels(&new_labels);
                let mut spec = super::plan::run_spec(
                    &target,
                    &built.image,
                    &box_ports,
                    &labels,
                    &values,
                    &r,
                    given.binds.clone(),
                    When::Now,
                )?;
                spec.given = Some(given.clone());
                let given_ports: Vec<u16> = given
                    .ports
                    .iter()
                    .filter_map(|p| super::args::parse_port(p).ok())
                    .map(|p| p.container)
                    .collect();
                let movable: Vec<u16> = if values.ports.is_empty() {
                    box_ports.iter().copied().filter(|p| !given_ports.contains(p)).collect()
                } else {
                    Vec::new()
                };
                super::refresh::move_new_ports(&mut spec, &old, &movable, crate::engine::ports::is_free);
                updated.changes = super::refresh::changes(&old, &spec);
                spec
            }
            None => {
                // Started before charly kept its flags: the stored arguments, refreshed.
                let mut spec = old.clone();
                let old_labels =
                    self.block(self.engine.image(&c.image_id))?.and_then(|i| i.labels).unwrap_or_default();
                updated.changes = super::refresh::refresh(
                    &mut spec,
                    &old_labels,
                    &new_labels,
                    !values.ports.is_empty(),
                    crate::engine::ports::is_free,
                );
                spec.image = built.image.clone();
                spec
            }
        };
        self.check_network(&target, &spec)?;
        // Ports others hold are refused while the old container still runs.
        self.block(super::lifecycle::preflight(&self.engine, &target, &spec.ports, &[], true))?;
        // The point of no return: from here the container is recreated even if the command
        // is cancelled, so it is never left removed.
        self.engine.check_cancelled()?;
        let engine = self.uncancelled_engine();
        let recreated = self.block_through(async {
            engine.remove(&target, 10).await?;
            let run = match engine.run(&target, &spec).await {
                Ok(_) => super::lifecycle::verify_running(&engine, &target, &spec).await,
                Err(e) => Err(e),
            };
            let Err(problem) = run else { return Ok(Ok(())) };
            // The new container does not run: the old one, from the image it ran.
            if let Ok(Some(c)) = engine.container(&target.container).await
                && crate::engine::claim::check_container(&target, &c).is_ok()
            {
                let _ = engine.remove(&target, 0).await;
            }
            let mut back = old.clone();
            back.image = c.image_id.clone();
            let restored = engine.run(&target, &back).await.map(drop);
            Ok(Err((problem, restored)))
        })?;
        if let Err((problem, restored)) = recreated {
            return Err(DeployError::Recreate {
                container: target.container.clone(),
                problem: problem.to_string(),
                then: match restored {
                    Ok(()) => "the container runs again as before the update (from the image it ran)".into(),
                    Err(e) => format!(
                        "the previous container could not be run again either ({e}); start it with `charly start {}`",
                        start_args(&target)
                    ),
                },
            });
        }
        updated.restarted = true;
        // The image the container ran before is unused now (unless another instance runs it:
        // podman keeps images in use); best effort, the update itself is done.
        updated.pruned_images = self.prune_images(box_name);
        updated.summary = format!(
            "rebuilt {} ({}), recreated {} from it{}",
            built.image,
            if image_changed { "changed" } else { "unchanged" },
            target.container,
            if updated.changes.is_empty() {
                String::new()
            } else {
                format!("; {}", updated.changes.join("; "))
            }
        );
        Ok(updated)
    }
}

/// The [`RunSpec`] a running container was started with.
fn stored_spec(target: &Target, c: &ContainerSummary) -> Result<RunSpec, DeployError> {
    let spec = c.label(RUN_LABEL).and_then(RunSpec::from_label);
    let ours = c.label(BOX_LABEL) == Some(target.box_name.as_str())
        && c.label(INSTANCE_LABEL) == target.instance.as_deref();
    match spec {
        Some(spec) if ours => Ok(spec),
        _ => Err(DeployError::NeedsArgument(format!(
            "container {} was not started by `charly start` (it has no {RUN_LABEL} label for box {}); \
             remove it (`podman rm -f {}`) and `charly start {}`",
            target.container,
            target.key(),
            target.container,
            start_args(target)
        ))),
    }
}
