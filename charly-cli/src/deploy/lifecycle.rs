//! `start`, `stop`, `update`, `remove`: a box's container made, stopped, recreated, removed.

use std::path::Path;

use super::args;
use super::report::{HookRun, Removed, Started, Stopped, Updated};
use super::{Deploy, DeployError, short_id};
use crate::engine::{
    BOX_LABEL, ContainerSummary, Engine, EngineError, INSTANCE_LABEL, PortMap, RUN_LABEL, RunSpec, Target,
    start_args, state_word,
};
use crate::project::runtime::{Hooks, Runtime, label};

/// What a box's container runs when the image is given no command: a keep-alive under a tiny
/// init, so `podman exec` has a container to run in and `stop` ends it on SIGTERM.
pub const KEEP_ALIVE: [&str; 2] = ["sleep", "infinity"];

/// The arguments of `start`.
#[derive(Debug, Clone, Default)]
pub struct StartRequest<'r> {
    /// The box.
    pub box_name: &'r str,
    /// The instance.
    pub instance: Option<&'r str>,
    /// `KEY=VALUE` lines (checked by [`args::env_line`]).
    pub env: &'r [String],
    /// Port values (checked by [`args::port_spec`]): remap or add published ports.
    pub ports: &'r [String],
    /// `NAME:PATH` named volumes, made `charly-<box>[-<instance>]-NAME`.
    pub volumes: &'r [String],
    /// `HOST_PATH:PATH[:ro]` bind mounts; the host path must exist.
    pub binds: &'r [String],
    /// The command instead of [`KEEP_ALIVE`].
    pub command: &'r [String],
}

impl Deploy<'_> {
    /// `start`: runs the box's image as `charly-<box>[-<instance>]`, detached, with what its
    /// image labels, its deploy entry and the flags say ([`super::plan`]): its ports published
    /// on 127.0.0.1 (remapped or added by `--port`), its secrets, volumes, binds and env. A
    /// running container is an error; an exited one of the same name is removed first; one of
    /// that name that is another box's or instance's, or not charly's, and a volume of another's,
    /// are refused ([`crate::engine::claim`]). A start that fails or is cancelled removes the
    /// container and the volumes it made: nothing half-done is left. Once
    /// it runs, the image's `post_enable` hooks run in it (in direct mode a start is what
    /// enables a deployment; a quadlet unit runs them as `ExecStartPost=`).
    ///
    /// # Errors
    ///
    /// A bad name, an unknown box, a bind path that does not exist, a port already taken,
    /// an image never built: each before anything changed.
    pub fn start(&self, r: &StartRequest<'_>) -> Result<Started, DeployError> {
        self.start_with(r, &crate::deployfile::deploy_path())
    }

    /// [`start`](Self::start) with the deploy file at `deploy_file`.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with(&self, r: &StartRequest<'_>, deploy_file: &Path) -> Result<Started, DeployError> {
        let target = Target::new(r.box_name, r.instance)?;
        let resolved = self.project.resolve_box(r.box_name)?;
        let entry = super::plan::entry(deploy_file, &target)?;
        // The image and the container of that name are asked for together (two podman calls
        // of ~40 ms each); a missing image is said first.
        let (image, claimed) = self.block(async {
            let (image, claimed) =
                tokio::join!(self.engine.image(&resolved.image), self.engine.claimed(&target));
            Ok((image?, claimed))
        })?;
        let image = image.ok_or_else(|| EngineError::NoImage {
            box_name: r.box_name.to_owned(),
            image: resolved.image.clone(),
        })?;
        let labels = Runtime::from_labels(&image.labels.unwrap_or_default());
        let spec = self.plan(&target, &resolved.image, &resolved.ports(), &labels, entry.as_ref(), r)?;
        let ports_given: Vec<PortMap> = r.ports.iter().filter_map(|p| args::parse_port(p).ok()).collect();
        let seeds = seeds(&labels, &spec);
        let copies: Vec<(String, String)> = seeds.iter().map(|(_, s, t)| (s.clone(), t.clone())).collect();
        // What this start made, for the undo when it fails or is cancelled: the volumes it
        // created, and whether a `podman run` of it may have made the container.
        let made = Made::default();
        let started = self.block(async {
            // A container of that name that is not this target's is refused before anything.
            let existing = claimed?;
            if existing.as_ref().is_some_and(ContainerSummary::is_running) {
                return Err(EngineError::AlreadyRunning {
                    container: target.container.clone(),
                    stop: start_args(&target),
                });
            }
            preflight(&self.engine, &target, &spec.ports, &ports_given).await?;
            for v in &spec.volumes {
                if self.engine.volume_labels(&v.name).await?.is_none() {
                    made.volumes.borrow_mut().push(v.name.clone());
                }
                self.engine.ensure_volume(&target, &v.name).await?;
            }
            self.engine.seed(&target, &spec, &copies).await?;
            let replaced_exited = existing.is_some();
            if replaced_exited {
                self.engine.remove(&target, 0).await?;
            }
            made.container.set(true);
            let id = match self.engine.run(&target, &spec).await {
                // Another start of the same name got there first: nothing of it is ours.
                Err(e @ EngineError::AlreadyRunning { .. }) => {
                    made.container.set(false);
                    return Err(e);
                }
                other => other?,
            };
            let post_enable = self.hooks(&target, labels.hooks.post_enable.clone()).await?;
            Ok(Started {
                post_enable,
                box_name: target.box_name.clone(),
                instance: target.instance.clone(),
                container: target.container.clone(),
                id: short_id(&id),
                image: spec.image.clone(),
                ports: spec.ports.clone(),
                command: spec.command.clone(),
                replaced_exited,
                seeded: seeds.iter().map(|(volume, _, _)| volume.clone()).collect(),
            })
        });
        if started.is_err() {
            // Nothing half-done: the container this start made and the volumes it created go,
            // also when the command was cancelled (so the undo itself is not).
            let engine = self.uncancelled_engine();
            let _ = self.block_through(made.undo(&engine, &target));
        }
        started
    }

    /// `stop`: stops the running container (SIGTERM, then SIGKILL after `timeout_secs`); the
    /// exited container stays until `start` or `remove`.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`], [`EngineError::NotRunning`] (stopping a stopped box is an
    /// error that says so), podman failures.
    pub fn stop(
        &self,
        box_name: &str,
        instance: Option<&str>,
        timeout_secs: u32,
    ) -> Result<Stopped, DeployError> {
        let target = Target::new(box_name, instance)?;
        self.block(async {
            self.engine.running(&target).await?;
            self.engine.stop(&target, timeout_secs).await?;
            Ok(Stopped { container: target.container.clone(), timeout_secs })
        })
    }

    /// `update`: rebuilds the box's image (`box build`; `pull` refreshes its base first),
    /// then, when the container runs, recreates it from the new image with the arguments it
    /// was started with (its `ai.opencharly.run` label) but for what the image contributed to
    /// them (ports it newly declares, its env: [`super::refresh`]), and prunes the box's
    /// dangling images.
    ///
    /// # Errors
    ///
    /// A failed build (nothing else changes), a container charly did not start, podman
    /// failures.
    pub fn update(&self, box_name: &str, instance: Option<&str>, pull: bool) -> Result<Updated, DeployError> {
        let target = Target::new(box_name, instance)?;
        let existing = self.block(self.engine.claimed(&target))?;
        let mut spec = match &existing {
            Some(c) if c.is_running() => Some(run_spec(&target, c)?),
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
        // What the image contributed follows the image ([`super::refresh`]): the old image's
        // labels (gone already: none), the deploy entry's ports.
        let mut changes = Vec::new();
        if let (Some(spec), Some(previous)) = (spec.as_mut(), previous.as_deref()) {
            let old = self.block(self.engine.image(previous))?.and_then(|i| i.labels).unwrap_or_default();
            let entry = super::plan::entry(&crate::deployfile::deploy_path(), &target)?;
            let entry_ports = !super::plan::EntryValues::of(entry.as_ref()).ports.is_empty();
            let new = image.labels.clone().unwrap_or_default();
            changes = super::refresh::refresh(spec, &old, &new, entry_ports, crate::engine::ports::is_free);
        }
        let mut updated = Updated {
            container: target.container.clone(),
            image: built.image.clone(),
            previous_image_id: previous.as_deref().map(short_id),
            image_id: short_id(&image.id),
            image_changed,
            restarted: false,
            pruned_images: Vec::new(),
            changes,
            summary: String::new(),
            build_log: built.log,
        };
        let Some(mut spec) = spec else {
            updated.summary = match existing {
                Some(c) => format!(
                    "rebuilt {}; {} is {}: `charly start {}` runs the new image",
                    built.image,
                    target.container,
                    state_word(&c),
                    start_args(&target)
                ),
                None => format!("rebuilt {}; {} is not started", built.image, target.container),
            };
            return Ok(updated);
        };
        spec.image = built.image.clone();
        // The point of no return: from here the container is recreated even if the command
        // is cancelled, so it is never left removed.
        self.engine.check_cancelled()?;
        let engine = self.uncancelled_engine();
        self.block_through(async {
            engine.remove(&target, 10).await?;
            engine.run(&target, &spec).await
        })?;
        updated.restarted = true;
        // The image the container ran before is unused now (unless another instance runs it:
        // podman keeps images in use); best effort, the update itself is done.
        updated.pruned_images = self.block(self.engine.prune_box_images(box_name)).unwrap_or_default();
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

    /// `remove`: removes the container (stopping it first); `purge` also removes the named
    /// volumes labelled with this box and instance (never another's, never by name) and, as
    /// `config remove --purge` does, the deployment's entry in the deploy file, its podman
    /// secrets, its quadlet unit files and its encrypted volumes' directories: nothing of the
    /// deployment is left. Removing what is not there is no error.
    ///
    /// # Errors
    ///
    /// A bad name, podman failures, a deploy file that cannot be rewritten.
    pub fn remove(
        &self,
        box_name: &str,
        instance: Option<&str>,
        purge: bool,
        timeout_secs: u32,
    ) -> Result<Removed, DeployError> {
        self.remove_with(
            box_name,
            instance,
            purge,
            timeout_secs,
            &crate::deployfile::deploy_path(),
            &crate::deployfile::quadlet_dir(),
        )
    }

    /// [`remove`](Self::remove) with the deploy file at `deploy_file` and the quadlet units in
    /// `units_dir`.
    ///
    /// # Errors
    ///
    /// As [`remove`](Self::remove).
    pub fn remove_with(
        &self,
        box_name: &str,
        instance: Option<&str>,
        purge: bool,
        timeout_secs: u32,
        deploy_file: &Path,
        units_dir: &Path,
    ) -> Result<Removed, DeployError> {
        let target = Target::new(box_name, instance)?;
        let mut removed = self.block(async {
            // Another box's or instance's container of that name (or one charly did not
            // create) is refused before anything, --purge included.
            self.engine.claimed(&target).await?;
            let pre_remove = self.pre_remove(&target).await?;
            let removed_container = match self.engine.remove(&target, timeout_secs).await {
                Ok(()) => true,
                Err(EngineError::NoContainer { .. }) => false,
                Err(e) => return Err(e),
            };
            let mut volumes = Vec::new();
            if purge {
                for volume in self.engine.volumes_of(&target).await? {
                    self.engine.remove_volume(&volume).await?;
                    volumes.push(volume);
                }
            }
            Ok(Removed {
                container: target.container.clone(),
                removed_container,
                volumes,
                units: Vec::new(),
                entry_removed: false,
                secrets: Vec::new(),
                encrypted: Vec::new(),
                pre_remove,
            })
        })?;
        if purge {
            // The container is gone: the rest runs to its end (no cancellation cuts the
            // deployment's removal in half).
            let engine = self.uncancelled_engine();
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let config = runtime
                .block_on(crate::setup::remove(
                    &engine,
                    deploy_file,
                    units_dir,
                    &target,
                    true,
                    &crate::project::Cancel::default(),
                ))
                .map_err(|e| DeployError::Setup(Box::new(e)))?;
            removed.entry_removed = config.entry_removed;
            removed.secrets = config.secrets_removed;
            removed.units = config.units_removed;
            removed.encrypted = config.encrypted_removed;
            for v in config.volumes_removed {
                if !removed.volumes.contains(&v) {
                    removed.volumes.push(v);
                }
            }
        }
        Ok(removed)
    }

    /// Runs the image's `pre_remove` hooks (`ai.opencharly.hook`) in `target`'s container when
    /// it runs, in order, with `$CHARLY_CONTAINER` set; best effort: a failing hook is
    /// reported, and the removal goes on.
    async fn pre_remove(&self, target: &Target) -> Result<Vec<HookRun>, EngineError> {
        let Some(c) = self.engine.container(&target.container).await? else { return Ok(Vec::new()) };
        if !c.is_running() {
            return Ok(Vec::new());
        }
        let hooks: Hooks =
            c.label(label::HOOK).and_then(|v| serde_json::from_str(v).ok()).unwrap_or_default();
        self.hooks(target, hooks.pre_remove).await
    }

    /// Runs hook `commands` in `target`'s running container, in order, with
    /// `$CHARLY_CONTAINER` set; best effort: each one's exit status and output is reported.
    async fn hooks(&self, target: &Target, commands: Vec<String>) -> Result<Vec<HookRun>, EngineError> {
        let env = [format!("CHARLY_CONTAINER={}", target.container)];
        let mut runs = Vec::new();
        for command in commands {
            let argv = ["sh".to_owned(), "-c".to_owned(), command.clone()];
            let (exit_status, output) = match self.engine.exec(target, &env, &argv).await {
                Ok(out) => (out.status, format!("{}{}", out.stdout, out.stderr)),
                Err(EngineError::Cancelled) => return Err(EngineError::Cancelled),
                Err(e) => (-1, e.to_string()),
            };
            runs.push(HookRun { command, exit_status, output });
        }
        Ok(runs)
    }
}

/// What a `start` made so far, undone when it fails or is cancelled.
#[derive(Default)]
struct Made {
    /// The volumes it found missing (and created, or was creating).
    volumes: std::cell::RefCell<Vec<String>>,
    /// Whether its `podman run` may have made the container.
    container: std::cell::Cell<bool>,
}

impl Made {
    /// Removes the container (when this start made it and it is `target`'s) and the volumes
    /// this start created (when they are `target`'s): best effort, each step on its own.
    async fn undo(&self, engine: &Engine, target: &Target) -> Result<(), EngineError> {
        if self.container.get()
            && let Ok(Some(c)) = engine.container(&target.container).await
            && crate::engine::claim::check_container(target, &c).is_ok()
        {
            let _ = engine.remove(target, 0).await;
        }
        let volumes = self.volumes.borrow().clone();
        for name in &volumes {
            if let Ok(Some(labels)) = engine.volume_labels(name).await
                && crate::engine::Owner::of(&labels, target, false) == crate::engine::Owner::Ours
            {
                let _ = engine.remove_volume(name).await;
            }
        }
        Ok(())
    }
}

/// The image's data seeds whose volume `spec` mounts: `(volume, staging, target path)`.
fn seeds(labels: &Runtime, spec: &RunSpec) -> Vec<(String, String, String)> {
    labels
        .data
        .iter()
        .filter_map(|d| {
            let path = &labels.volumes.iter().find(|v| v.name == d.volume)?.path;
            let mounted =
                spec.volumes.iter().any(|v| v.path == *path) || spec.binds.iter().any(|b| b.path == *path);
            let to = if d.dest.is_empty() { path.clone() } else { format!("{path}/{}", d.dest) };
            mounted.then(|| (d.volume.clone(), d.staging.clone(), to))
        })
        .collect()
}

/// The [`RunSpec`] a running container was started with.
fn run_spec(target: &Target, c: &ContainerSummary) -> Result<RunSpec, DeployError> {
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

/// Every host port of `ports` must be free on its address: a port in use is an error naming
/// its owner (a container, or another process) and the remap flag.
async fn preflight(
    engine: &Engine,
    target: &Target,
    ports: &[PortMap],
    given: &[PortMap],
) -> Result<(), EngineError> {
    let Some(taken) = crate::engine::ports::preflight(engine, target, ports, false).await? else {
        return Ok(());
    };
    let p = &taken.port;
    let argument = if given.contains(p) {
        format!("--port {}", crate::engine::ports::spec(p))
    } else {
        format!("port {} of box {}", p.container, target.box_name)
    };
    Err(EngineError::PortInUse {
        argument,
        address: p.host_ip.clone(),
        port: p.host,
        container_port: p.container,
        remap: crate::engine::ports::remap(p, ports),
        owner: taken.owner,
        fix: taken.fix,
    })
}
