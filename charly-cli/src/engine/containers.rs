//! The container operations of [`Engine`]: list, inspect, run, stop, remove, logs, volumes
//! and image pruning (`exec` is in [`super::exec`]).

use super::claim::{self, Owner};
use super::error::{is_no_container, no_container, not_running, start_args};
use super::ps::{self, BOX_LABEL, ContainerSummary, INSTANCE_LABEL, ImageSummary, OWNER_LABEL};
use super::spec::RunSpec;

/// One data seed of a box's image ([`Engine::seed`]): its staging directory in the image,
/// copied into the volume or bind mounted at `path` (under `dest`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seed {
    /// Where the volume or bind is mounted in the container.
    pub path: String,
    /// The staging directory in the image (`/usr/share/charly/data/...`).
    pub staging: String,
    /// The subdirectory of `path` it goes to (empty: `path` itself).
    pub dest: String,
}
use super::{Engine, EngineError, Output, Target};

impl Engine {
    /// Every container charly started (`ai.opencharly.box` label), running or not.
    ///
    /// # Errors
    ///
    /// As [`query`](Self::query); [`EngineError::Output`] for unreadable JSON.
    pub async fn charly_containers(&self) -> Result<Vec<ContainerSummary>, EngineError> {
        let filter = format!("label={BOX_LABEL}");
        ps::parse_ps(&self.query(&["ps", "--all", "--format", "json", "--filter", &filter]).await?)
    }

    /// The container named exactly `name`, whoever made it, or `None`.
    ///
    /// # Errors
    ///
    /// As [`charly_containers`](Self::charly_containers).
    pub async fn container(&self, name: &str) -> Result<Option<ContainerSummary>, EngineError> {
        let filter = format!("name=^{}$", regex::escape(name));
        let all =
            ps::parse_ps(&self.query(&["ps", "--all", "--format", "json", "--filter", &filter]).await?)?;
        Ok(all.into_iter().find(|c| c.name() == name))
    }

    /// The box and instance whose container `name` is, for messages: its `ai.opencharly.box`
    /// and `ai.opencharly.instance` labels, or (without them, or when podman fails) the name
    /// after `charly-` as the box.
    pub async fn target_of(&self, name: &str) -> (String, Option<String>) {
        let fallback = || (name.strip_prefix("charly-").unwrap_or(name).to_owned(), None);
        match self.container(name).await {
            Ok(Some(c)) => match c.label(BOX_LABEL) {
                Some(b) => (b.to_owned(), c.label(INSTANCE_LABEL).map(str::to_owned)),
                None => fallback(),
            },
            _ => fallback(),
        }
    }

    /// The container of `target`, which must be running and be `target`'s own (its labels,
    /// [`claimed`](Self::claimed)).
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`], [`EngineError::NotRunning`], [`EngineError::Claimed`],
    /// and as [`container`](Self::container).
    pub async fn running(&self, target: &Target) -> Result<ContainerSummary, EngineError> {
        match self.claimed(target).await? {
            None => Err(self.missing(target)),
            Some(c) if c.is_running() => Ok(c),
            Some(c) => Err(not_running(target, &c)),
        }
    }

    /// Why `target` has no container: [`EngineError::UnknownBox`] when the project's boxes are
    /// known ([`Engine::knowing`]) and its box is none of them, else
    /// [`EngineError::NoContainer`] (saying how to start it).
    pub fn missing(&self, target: &Target) -> EngineError {
        self.unknown_box(target).unwrap_or_else(|| no_container(target))
    }

    /// [`EngineError::UnknownBox`] when the project's boxes are known and `target`'s box is not
    /// one of them (it has no container either: starting it cannot help).
    fn unknown_box(&self, target: &Target) -> Option<EngineError> {
        let known = self.boxes.as_ref()?;
        let names = known.names.as_deref().unwrap_or_default();
        (!names.contains(&target.box_name)).then(|| EngineError::UnknownBox {
            box_name: target.box_name.clone(),
            known: match &known.names {
                Some(names) if names.is_empty() => {
                    format!("{}/charly.yml defines no box", known.root.display())
                }
                Some(names) => {
                    format!("the boxes of {}/charly.yml: {}", known.root.display(), names.join(", "))
                }
                None => format!("there is no charly.yml in {}", known.root.display()),
            },
            fix: match &known.names {
                Some(names) if !names.is_empty() => {
                    "name one of its boxes, or give the directory of the project that has it with -C DIR"
                }
                _ => "give the directory of the project that has it with -C DIR",
            },
        })
    }

    /// `podman image inspect <reference>`, or `None` when it is not in local storage.
    ///
    /// Only podman's "`<reference>`: image not known" means `None`. A "not known" of another
    /// image is the store changing under the lookup (another podman removed an image while
    /// this one walked the store; seen with parallel test cleanups): the inspect is run again,
    /// up to three times.
    ///
    /// # Errors
    ///
    /// As [`query`](Self::query) for other failures.
    pub async fn image(&self, reference: &str) -> Result<Option<ImageSummary>, EngineError> {
        let args = ["image", "inspect", reference];
        let out = self.read(&args, &[reference]).await?;
        if out.success() {
            return ps::parse_image(&out.stdout).map(Some);
        }
        if out.stderr.contains(&format!("{reference}: image not known"))
            || out.stderr.contains("no such image")
        {
            return Ok(None);
        }
        Err(self.failed(&args, &out))
    }

    /// `podman run -d` of `spec` as `target`'s container: its id. Named volumes are created
    /// first, labelled as the container's own.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoImage`] (the image is not local: nothing is pulled),
    /// [`EngineError::AlreadyRunning`], [`EngineError::Cancelled`], [`EngineError::Failed`].
    pub async fn run(&self, target: &Target, spec: &RunSpec) -> Result<String, EngineError> {
        for volume in &spec.volumes {
            self.ensure_volume(target, &volume.name).await?;
        }
        let args = spec.run_args(target);
        self.check_cancelled()?;
        // A run that fails in its image lookup has created nothing: it is as safe to run again
        // as a read.
        let out = self.read(&args, &[&spec.image]).await?;
        if out.success() {
            return Ok(out.stdout.trim().to_owned());
        }
        if out.stderr.contains(&format!("{}: image not known", spec.image)) {
            return Err(EngineError::NoImage {
                box_name: target.box_name.clone(),
                image: spec.image.clone(),
            });
        }
        if out.stderr.contains("is already in use") {
            return Err(EngineError::AlreadyRunning {
                container: target.container.clone(),
                stop: start_args(target),
            });
        }
        Err(self.failed(&args, &out))
    }

    /// Seeds data into `spec`'s volumes and binds before the container starts, once: one
    /// disposable `podman run --rm` of the image with each seeded volume or bind mounted
    /// apart (`/charly-seed/<n>`), so that podman's copy-up does not fill it first. A target
    /// that is empty (a volume never used, an empty bind directory) gets, for a named volume,
    /// the image's own files at that path (as podman's copy-up would have), then each seed's
    /// entries over them (`cp -a`); a target that holds anything is left as it is (the
    /// deployment's data since). Returns the container paths that were seeded. Named volumes
    /// are created first, as [`run`](Self::run) does.
    ///
    /// # Errors
    ///
    /// [`EngineError::Cancelled`], [`EngineError::Failed`] (the copy failed: nothing started).
    pub async fn seed(
        &self,
        target: &Target,
        spec: &RunSpec,
        seeds: &[Seed],
    ) -> Result<Vec<String>, EngineError> {
        if seeds.is_empty() {
            return Ok(Vec::new());
        }
        for volume in &spec.volumes {
            self.ensure_volume(target, &volume.name).await?;
        }
        let q = |s: &str| format!("'{}'", s.replace('\'', "'\\''"));
        // The mount paths seeded, each mounted once at /charly-seed/<n>.
        let mut paths: Vec<&str> = Vec::new();
        for s in seeds {
            if !paths.contains(&s.path.as_str()) {
                paths.push(&s.path);
            }
        }
        let mut args: Vec<String> =
            ["run", "--rm", "--pull=never", "--user", "0:0", "--entrypoint", ""].map(str::to_owned).to_vec();
        let mut script: Vec<String> = Vec::new();
        // Entry by entry: busybox's `cp -a src/. dst/` writes beside `dst` instead of into it.
        let copy = |from: &str, to: &str| {
            format!(
                "mkdir -p {to} && (cd {from} && for f in * .[!.]* ..?*; do [ -e \"$f\" ] || continue; \
                 cp -a \"$f\" {to}/ || exit 1; done) || exit 1",
                to = q(to),
                from = q(from)
            )
        };
        for (n, path) in paths.iter().enumerate() {
            let at = format!("/charly-seed/{n}");
            let named = spec.volumes.iter().find(|v| v.path == *path);
            let source = match named {
                Some(v) => v.name.clone(),
                None => match spec.binds.iter().find(|b| b.path == *path) {
                    Some(b) => b.host.clone(),
                    None => continue,
                },
            };
            args.extend(["--volume".into(), format!("{source}:{at}")]);
            let mut steps = Vec::new();
            if named.is_some() {
                steps.push(format!("if [ -d {p} ]; then {}; fi", copy(path, &at), p = q(path)));
            }
            for s in seeds.iter().filter(|s| s.path == *path) {
                let to = if s.dest.is_empty() { at.clone() } else { format!("{at}/{}", s.dest) };
                steps.push(copy(&s.staging, &to));
            }
            script.push(format!(
                "if [ -z \"$(ls -A {at})\" ]; then {}; echo {}; fi",
                steps.join(" && "),
                q(path),
                at = q(&at)
            ));
        }
        args.extend([spec.image.clone(), "sh".into(), "-c".into(), script.join("\n")]);
        let out = self.change(&args).await?;
        Ok(out.lines().map(str::to_owned).filter(|l| paths.contains(&l.as_str())).collect())
    }

    /// Creates named volume `name` for `target`, labelled as its own ([`BOX_LABEL`],
    /// [`INSTANCE_LABEL`], and [`OWNER_LABEL`] with the container name), unless it exists;
    /// whether this call created it. `extra` labels are added (`config setup`'s deploy label).
    ///
    /// # Errors
    ///
    /// [`EngineError::Claimed`] when a volume of that name exists and is not `target`'s (another
    /// box's or instance's, or unlabelled); as [`change`](Self::change).
    pub async fn ensure_volume_labelled(
        &self,
        target: &Target,
        name: &str,
        extra: &[String],
    ) -> Result<bool, EngineError> {
        if let Some(labels) = self.volume_labels(name).await? {
            return match Owner::of(&labels, target, false) {
                Owner::Ours => Ok(false),
                owner => Err(claim::claimed("volume", name, target, &owner)),
            };
        }
        let mut args: Vec<String> = vec!["volume".into(), "create".into()];
        let mut label = |l: String| args.extend(["--label".into(), l]);
        label(format!("{BOX_LABEL}={}", target.box_name));
        if let Some(i) = &target.instance {
            label(format!("{INSTANCE_LABEL}={i}"));
        }
        label(format!("{OWNER_LABEL}={}", target.container));
        for l in extra {
            label(l.clone());
        }
        args.push(name.to_owned());
        self.change(&args).await.map(|_| true)
    }

    /// [`ensure_volume_labelled`](Self::ensure_volume_labelled) without extra labels.
    ///
    /// # Errors
    ///
    /// As [`ensure_volume_labelled`](Self::ensure_volume_labelled).
    pub async fn ensure_volume(&self, target: &Target, name: &str) -> Result<bool, EngineError> {
        self.ensure_volume_labelled(target, name, &[]).await
    }

    /// `podman stop -t <timeout> <name>`.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`] when it is gone; as [`change`](Self::change).
    pub async fn stop(&self, target: &Target, timeout_secs: u32) -> Result<(), EngineError> {
        let timeout = timeout_secs.to_string();
        self.change_on(target, &["stop", "--time", &timeout, &target.container]).await.map(drop)
    }

    /// `podman rm --force <name>` (stops it first when it runs).
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`] when it is gone; as [`change`](Self::change).
    pub async fn remove(&self, target: &Target, timeout_secs: u32) -> Result<(), EngineError> {
        let timeout = timeout_secs.to_string();
        let args = ["rm", "--force", "--time", &timeout, &target.container];
        let removed = match self.change_on(target, &args).await {
            // podman 4.3 races its own SIGKILL after the timeout with the container exiting
            // by itself ("container state improper: stopped"): it has stopped, so once more.
            Err(EngineError::Failed { stderr, .. }) if stderr.contains("container state improper") => {
                self.change_on(target, &args).await?
            }
            other => other?,
        };
        // `rm --force` succeeds silently for a container that does not exist.
        if removed.trim().is_empty() { Err(self.missing(target)) } else { Ok(()) }
    }

    async fn change_on(&self, target: &Target, args: &[&str]) -> Result<String, EngineError> {
        self.check_cancelled()?;
        let out = self.output(args, None, false).await?;
        if out.success() {
            return Ok(out.stdout);
        }
        if is_no_container(&out.stderr) {
            return Err(self.missing(target));
        }
        Err(self.failed(args, &out))
    }

    /// The last `lines` lines of the container's log, stdout and stderr in their order.
    ///
    /// # Errors
    ///
    /// [`EngineError::NoContainer`]; as [`query`](Self::query).
    pub async fn logs(&self, target: &Target, lines: u32) -> Result<String, EngineError> {
        let tail = lines.to_string();
        let args = ["logs", "--tail", &tail, &target.container];
        let out = self.output(&args, None, true).await?;
        if out.success() {
            return Ok(out.stdout);
        }
        if is_no_container(&out.stdout) {
            return Err(self.missing(target));
        }
        Err(self.failed(&args, &Output { stderr: out.stdout.clone(), ..out }))
    }

    /// Removes the dangling images (earlier builds, their build cache) labelled as `box_name`'s:
    /// the short ids (12 hex digits) of those that are gone afterwards.
    ///
    /// The report compares the box's untagged images before and after `podman image prune`
    /// rather than reading prune's output: a prune that walks the image store while another
    /// podman removes an image fails ("image not known") after it has removed some of ours,
    /// and its output is lost with it (seen with parallel builds). Such a prune is run again,
    /// up to three times.
    ///
    /// # Errors
    ///
    /// As [`change`](Self::change), from the last prune or either listing.
    pub async fn prune_box_images(&self, box_name: &str) -> Result<Vec<String>, EngineError> {
        let label = format!("label={BOX_LABEL}={box_name}");
        let untagged =
            ["images", "--all", "--quiet", "--no-trunc", "--filter", "dangling=true", "--filter", &label];
        let before = self.query(&untagged).await?;
        if before.trim().is_empty() {
            return Ok(Vec::new());
        }
        let prune = ["image", "prune", "--force", "--filter", &label];
        for attempt in 1..=3 {
            match self.change(&prune).await {
                Ok(_) => break,
                Err(e @ (EngineError::Cancelled | EngineError::Missing { .. })) => return Err(e),
                Err(e) if attempt == 3 => return Err(e),
                Err(_) => {}
            }
        }
        let after = self.query(&untagged).await?;
        let short = |id: &str| id.trim_start_matches("sha256:").chars().take(12).collect::<String>();
        let left: Vec<String> = after.lines().map(short).collect();
        let mut gone: Vec<String> = before
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(short)
            .filter(|id| !left.contains(id))
            .collect();
        gone.dedup();
        Ok(gone)
    }

    /// Whether podman network `name` exists (`podman network exists`).
    ///
    /// # Errors
    ///
    /// [`EngineError::Missing`].
    pub async fn network_exists(&self, name: &str) -> Result<bool, EngineError> {
        Ok(self.output(&["network", "exists", name], None, false).await?.success())
    }

    /// `podman volume rm <name>`.
    ///
    /// # Errors
    ///
    /// As [`change`](Self::change).
    pub async fn remove_volume(&self, name: &str) -> Result<(), EngineError> {
        self.change(&["volume", "rm", name]).await.map(drop)
    }
}
