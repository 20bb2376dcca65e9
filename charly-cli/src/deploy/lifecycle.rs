//! `start`, `stop`, `update`, `remove`: a box's container made, stopped, recreated, removed.

use std::path::Path;

use super::args;
use super::hooks::HookPolicy;
use super::report::{Removed, Started, Stopped};
use super::{Deploy, DeployError, short_id};
use crate::engine::{ContainerSummary, Engine, EngineError, PortMap, RunSpec, Seed, Target, start_args};
use crate::project::runtime::Runtime;

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
    /// How the `post_enable` hooks run (`--hook-timeout`).
    pub hooks: HookPolicy,
}

impl Deploy<'_> {
    /// `start`: runs the box's image as `charly-<box>[-<instance>]`, detached, with what its
    /// image labels, its deploy entry and the flags say ([`super::plan`]): its ports published
    /// on 127.0.0.1 (remapped or added by `--port`), its secrets, volumes, binds and env. A
    /// running container is an error; an exited one of the same name is removed first; one of
    /// that name that is another box's or instance's, or not charly's, and a volume of another's,
    /// are refused ([`crate::engine::claim`]). The container must be running once `podman run`
    /// returned: one that exited at once is an error with its exit status and last log lines.
    /// A start that fails or is cancelled removes the container and the volumes it made:
    /// nothing half-done is left. Once it runs, the image's `post_enable` hooks run in it,
    /// each within its time limit ([`super::hooks`]; in direct mode a start is what enables a
    /// deployment; a quadlet unit runs them as `ExecStartPost=`). A deployment whose entry
    /// records run mode `quadlet` is started by systemd ([`super::systemd`]).
    ///
    /// # Errors
    ///
    /// A bad name, an unknown box, a bind path that does not exist, a port already taken,
    /// an image never built: each before anything changed; a container that exited at once,
    /// a `post_enable` hook that did not finish in time: each with the container removed.
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
        let _held = hold(&target, deploy_file)?;
        let resolved = self.project.resolve_box(r.box_name)?;
        let entry = super::plan::entry(deploy_file, &target)?;
        if super::plan::EntryValues::of(entry.as_ref()).quadlet() {
            return self.start_unit(&target, r, &crate::deployfile::quadlet_dir());
        }
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
        self.check_network(&target, &spec)?;
        let ports_given: Vec<PortMap> = r.ports.iter().filter_map(|p| args::parse_port(p).ok()).collect();
        let seeds = seeds(&labels, &spec);
        let copies: Vec<Seed> = seeds.iter().map(|(_, s)| s.clone()).collect();
        // What this start made, for the undo when it fails or is cancelled: the volumes it
        // created, and whether a `podman run` of it may have made the container.
        let made = Made::default();
        let started = self.block_exec(async {
            // A container of that name that is not this target's is refused before anything.
            let existing = claimed?;
            if existing.as_ref().is_some_and(ContainerSummary::is_running) {
                return Err(EngineError::AlreadyRunning {
                    container: target.container.clone(),
                    stop: start_args(&target),
                });
            }
            preflight(&self.engine, &target, &spec.ports, &ports_given, false).await?;
            for v in &spec.volumes {
                if self.engine.volume_labels(&v.name).await?.is_none() {
                    made.volumes.borrow_mut().push(v.name.clone());
                }
                self.engine.ensure_volume(&target, &v.name).await?;
            }
            let seeded = self.engine.seed(&target, &spec, &copies).await?;
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
            verify_running(&self.engine, &target, &spec).await?;
            let then = "the container was removed: nothing was started; fix the hook, or give it longer \
                        (`--hook-timeout SECS`)";
            // `post_enable` enables the deployment, once: when this start made its container
            // (a start of an exited one is a restart, as `update`'s recreation is).
            let declared = labels.hooks.post_enable.clone();
            let post_enable_skipped = (replaced_exited && !declared.is_empty()).then(|| {
                "a restart of its exited container (they run when a start makes the container)".to_owned()
            });
            let post_enable = if replaced_exited {
                Vec::new()
            } else {
                self.hooks(&target, "post_enable", declared, r.hooks, then).await?
            };
            Ok(Started {
                post_enable,
                post_enable_skipped,
                box_name: target.box_name.clone(),
                instance: target.instance.clone(),
                container: target.container.clone(),
                id: short_id(&id),
                image: spec.image.clone(),
                ports: spec.ports.clone(),
                command: spec.command.clone(),
                replaced_exited,
                seeded: seeds
                    .iter()
                    .filter(|(_, s)| seeded.contains(&s.path))
                    .map(|(volume, _)| volume.clone())
                    .fold(Vec::new(), |mut all, v| {
                        if !all.contains(&v) {
                            all.push(v);
                        }
                        all
                    }),
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
        if let Some(stopped) = self.stop_unit(&target, timeout_secs)? {
            return Ok(stopped);
        }
        self.block(async {
            self.engine.running(&target).await?;
            self.engine.stop(&target, timeout_secs).await?;
            Ok(Stopped { container: target.container.clone(), timeout_secs })
        })
    }

    /// `remove`: removes the container (stopping it first); `purge` also removes the named
    /// volumes labelled with this box and instance (never another's, never by name) and, as
    /// `config remove --purge` does, the deployment's entry in the deploy file, its podman
    /// secrets, its quadlet unit files and its encrypted volumes' directories: nothing of the
    /// deployment is left. Removing what is not there is no error. The image's `pre_remove`
    /// hooks run first when the container runs ([`super::hooks`]): one that does not finish
    /// within `hooks`' limit is stopped, and nothing is removed.
    ///
    /// # Errors
    ///
    /// A bad name, podman failures, a deploy file that cannot be rewritten, a hook that did
    /// not finish in time.
    pub fn remove(
        &self,
        box_name: &str,
        instance: Option<&str>,
        purge: bool,
        timeout_secs: u32,
        hooks: HookPolicy,
    ) -> Result<Removed, DeployError> {
        self.remove_with(
            box_name,
            instance,
            purge,
            timeout_secs,
            hooks,
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
    #[allow(clippy::too_many_arguments)] // the leaf's flags, then where its files are
    pub fn remove_with(
        &self,
        box_name: &str,
        instance: Option<&str>,
        purge: bool,
        timeout_secs: u32,
        hooks: HookPolicy,
        deploy_file: &Path,
        units_dir: &Path,
    ) -> Result<Removed, DeployError> {
        let target = Target::new(box_name, instance)?;
        let _held = hold(&target, deploy_file)?;
        let mut removed = self.block_exec(async {
            // Another box's or instance's container of that name (or one charly did not
            // create) is refused before anything, --purge included.
            self.engine.claimed(&target).await?;
            let (pre_remove, pre_remove_skipped) = match self.pre_remove(&target, hooks).await? {
                Ok(runs) => (runs, None),
                Err(why) => (Vec::new(), Some(why)),
            };
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
                pre_remove_skipped,
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
}

/// [`EngineError::ExitedAtOnce`] unless `target`'s container, just started with `spec`, is
/// running: its exit status and last log lines. Running is podman's state and, where its init's
/// pid is on this host, that process alive: podman reports a container whose command already
/// failed as running until conmon has recorded the exit.
pub(super) async fn verify_running(
    engine: &Engine,
    target: &Target,
    spec: &RunSpec,
) -> Result<(), EngineError> {
    let mut c = engine.container(&target.container).await?;
    if c.as_ref().is_some_and(ContainerSummary::is_running) {
        if !c.as_ref().is_some_and(|c| process_gone(c.pid)) {
            return Ok(());
        }
        // Its process is gone, and podman has not seen it yet (conmon records the exit a
        // while after it, later under load): wait for the exit status podman will give.
        for _ in 0..60 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            c = engine.container(&target.container).await?;
            if !c.as_ref().is_some_and(ContainerSummary::is_running) {
                break;
            }
        }
        // Still running by podman's word after 3 s (a pid of another pid namespace: a remote
        // engine): it runs.
        if c.as_ref().is_some_and(ContainerSummary::is_running) {
            return Ok(());
        }
    }
    let log = match &c {
        Some(_) => engine.logs(target, 10).await.unwrap_or_default(),
        None => String::new(),
    };
    Err(EngineError::ExitedAtOnce {
        key: target.key(),
        container: target.container.clone(),
        status: c.map_or(-1, |c| c.exit_code),
        command: spec.command.join(" "),
        fix_and_log: crate::engine::exited_log(
            &format!(
                "a box's command must keep running in the foreground; try it in a disposable container \
                 (`charly shell {} --command '...'`)",
                start_args(target)
            ),
            &log,
        ),
    })
}

/// Whether the host process `pid` (a container's init, from `podman ps`) has ended: no
/// `/proc/<pid>`, or a zombie there. An unknown pid (0) or an unreadable `/proc` is not gone.
fn process_gone(pid: i64) -> bool {
    if pid <= 0 {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last `)` (comm may hold one).
        Ok(stat) => stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
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

/// The image's data seeds whose volume `spec` mounts: `(volume, seed)`.
fn seeds(labels: &Runtime, spec: &RunSpec) -> Vec<(String, Seed)> {
    labels
        .data
        .iter()
        .filter_map(|d| {
            let path = &labels.volumes.iter().find(|v| v.name == d.volume)?.path;
            let mounted =
                spec.volumes.iter().any(|v| v.path == *path) || spec.binds.iter().any(|b| b.path == *path);
            let seed = Seed { path: path.clone(), staging: d.staging.clone(), dest: d.dest.clone() };
            mounted.then(|| (d.volume.clone(), seed))
        })
        .collect()
}

/// Every host port of `ports` must be free on its address: a port in use is an error naming
/// its owner (a container, or another process) and the remap flag.
/// With `own_ok`, ports its own running container holds count as free (`update` replaces it).
pub(super) async fn preflight(
    engine: &Engine,
    target: &Target,
    ports: &[PortMap],
    given: &[PortMap],
    own_ok: bool,
) -> Result<(), EngineError> {
    let Some(taken) = crate::engine::ports::preflight(engine, target, ports, own_ok).await? else {
        return Ok(());
    };
    let p = &taken.port;
    let argument = if given.contains(p) {
        format!("--port {}", crate::engine::ports::spec(p))
    } else {
        format!("port {} of box {}", p.container, target.box_name)
    };
    Err(EngineError::PortInUse(Box::new(crate::engine::PortConflict {
        argument,
        address: p.host_ip.clone(),
        port: p.host,
        container_port: p.container,
        remap: crate::engine::ports::remap(p, ports),
        owner: taken.owner,
        fix: taken.fix,
    })))
}

/// Holds `target`'s container lock (`<deploy file's directory>/containers/.<container>.lock`,
/// gone when released) while a `start`, `update` or `remove` of it runs: one at a time across
/// processes. Three concurrent starts of a new instance each created its volume, and the
/// winner's lost its labels, leaving an instance no later start or `--purge` would touch
/// (trial 29, M1); now the second waits, then finds the container running.
///
/// # Errors
///
/// [`DeployError::DeployFile`] when the lock file cannot be made.
pub(super) fn hold(target: &Target, deploy_file: &Path) -> Result<crate::hostfile::FileLock, DeployError> {
    let dir = deploy_file.parent().unwrap_or(Path::new(".")).join("containers");
    let at = dir.join(&target.container);
    crate::hostfile::FileLock::acquire(&at).map_err(|source| {
        crate::deployfile::DeployFileError::Write { action: "lock", path: at.clone(), source }.into()
    })
}
