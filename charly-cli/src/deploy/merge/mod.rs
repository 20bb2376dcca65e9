//! `box.merge`: merges consecutive layers of a box's built image into fewer layers.
//!
//! The image is saved (`podman save --format docker-archive`) into a temporary directory
//! (removed on every path), the layers are grouped ([`plan::groups`]: consecutive layers
//! while the running size ≤ `--max-mb`), each group of two or more layers becomes one tar
//! layer ([`layers::merge`]: last writer wins, whiteouts applied), the config's
//! `rootfs.diff_ids` and history are rebuilt ([`plan::realign`]), and the result is loaded
//! back (`podman load`) under the same reference. `--dry-run` stops after the plan.
//!
//! Limits: the flag, else the box node's `merge.max_mb` / `merge.max_total_mb` in
//! charly.yml, else 128 MB / no limit. `--all` merges every box whose node says
//! `merge: {auto: true}`, in the project's order; a box that fails is a warning.

pub mod archive;
pub mod layers;
pub mod plan;
mod report;

use std::path::PathBuf;

use serde_json::Value;

pub use self::report::{BoxMerge, LayerGroup, MergeReport};
use super::{Deploy, DeployError, short_id};
use crate::engine::EngineError;
use crate::project::{Kind, ProjectError};

/// The default group size limit, in MB.
pub const DEFAULT_MAX_MB: u64 = 128;

const MB: u64 = 1024 * 1024;

/// What `box.merge` was asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// The box (none with `all`).
    pub box_name: Option<String>,
    /// Every box whose node says `merge.auto: true`.
    pub all: bool,
    /// Group limit in MB (`--max-mb`).
    pub max_mb: Option<u64>,
    /// Skip an image whose layers total more than this, in MB (`--max-total-mb`).
    pub max_total_mb: Option<u64>,
    /// The tag of the box's image (`latest`).
    pub tag: String,
    /// Print the plan only.
    pub dry_run: bool,
}

/// A box node's `merge:` settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Settings {
    auto: bool,
    max_mb: Option<u64>,
    max_total_mb: Option<u64>,
}

fn argument(argument: &'static str, value: impl ToString, problem: &str) -> DeployError {
    DeployError::Argument { argument, value: value.to_string(), problem: problem.to_owned() }
}

/// A tag podman accepts: `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && tag.len() <= 128
}

impl Deploy<'_> {
    /// `box.merge [BOX] [--all] [--max-mb N] [--max-total-mb N] [--tag T] [--dry-run]`.
    ///
    /// # Errors
    ///
    /// Neither a box nor `--all`, a limit of 0, a tag podman would refuse, an unknown box, a
    /// box never built ([`EngineError::NoImage`]), podman or archive failures (for one box;
    /// with `--all` those are warnings in the report). Nothing is loaded before every layer
    /// is merged and the archive written.
    pub fn merge(&self, options: &MergeOptions) -> Result<MergeReport, DeployError> {
        for (flag, value) in [("--max-mb", options.max_mb), ("--max-total-mb", options.max_total_mb)] {
            if value == Some(0) {
                return Err(argument(flag, 0, "a size in MB is at least 1"));
            }
        }
        if !valid_tag(&options.tag) {
            return Err(argument(
                "--tag",
                &options.tag,
                "a tag is up to 128 letters, digits, `_`, `.` and `-`, not starting with `.` or `-`",
            ));
        }
        let settings = self.settings()?;
        match (&options.box_name, options.all) {
            (Some(name), _) => {
                let found = settings.iter().find(|(n, _)| n == name).map(|(_, s)| *s);
                let Some(found) = found else {
                    let known = settings.into_iter().map(|(n, _)| n).collect();
                    return Err(ProjectError::NoSuchBox { name: name.clone(), known }.into());
                };
                Ok(MergeReport { boxes: vec![self.merge_box(name, found, options)?], warnings: Vec::new() })
            }
            (None, true) => {
                let mut report = MergeReport::default();
                for (name, s) in settings.iter().filter(|(_, s)| s.auto) {
                    match self.merge_box(name, *s, options) {
                        Ok(merged) => report.boxes.push(merged),
                        Err(e @ DeployError::Engine(EngineError::Cancelled)) => return Err(e),
                        Err(e) => report.warnings.push(format!("box {name}: {e}")),
                    }
                }
                if report.boxes.is_empty() && report.warnings.is_empty() {
                    report.warnings.push(
                        "no box says `merge: {auto: true}` in charly.yml, so --all merged nothing".to_owned(),
                    );
                }
                Ok(report)
            }
            (None, false) => Err(DeployError::NeedsArgument(
                "box.merge: name a box (charly box merge <box>) or pass --all (every box whose node says \
                 `merge: {auto: true}`)"
                    .to_owned(),
            )),
        }
    }

    /// Every box and its `merge:` settings, in the project's order.
    fn settings(&self) -> Result<Vec<(String, Settings)>, DeployError> {
        let nodes = self.project.load_strict()?;
        let boxes = nodes.iter().filter(|n| n.kind == Some(Kind::Box));
        Ok(boxes
            .map(|n| {
                let m = n.spec().get("merge");
                let number = |k: &str| m.and_then(|m| m.get(k)).and_then(Value::as_u64).filter(|v| *v > 0);
                let auto = m.and_then(|m| m.get("auto")).and_then(Value::as_bool).unwrap_or(false);
                (
                    n.name.clone(),
                    Settings { auto, max_mb: number("max_mb"), max_total_mb: number("max_total_mb") },
                )
            })
            .collect())
    }

    fn merge_box(
        &self,
        name: &str,
        settings: Settings,
        options: &MergeOptions,
    ) -> Result<BoxMerge, DeployError> {
        let image = self.project.resolve_box(name)?.image;
        let repository = image.strip_suffix(":latest").unwrap_or(&image);
        let reference = format!("{repository}:{}", options.tag);
        let max_mb = options.max_mb.or(settings.max_mb).unwrap_or(DEFAULT_MAX_MB);
        let max_total_mb = options.max_total_mb.or(settings.max_total_mb);
        let before = self
            .block(self.engine.image(&reference))?
            .ok_or_else(|| EngineError::NoImage { box_name: name.to_owned(), image: reference.clone() })?;
        let io = |what: &str, e: std::io::Error| {
            DeployError::Io(std::io::Error::new(e.kind(), format!("box {name}: {what}: {e}")))
        };
        let temp =
            tempfile::Builder::new().prefix("charly-merge-").tempdir().map_err(|e| io("temp dir", e))?;
        let saved_tar = temp.path().join("saved.tar");
        let saved_dir = temp.path().join("saved");
        std::fs::create_dir(&saved_dir).map_err(|e| io("temp dir", e))?;
        let saved_arg = saved_tar.display().to_string();
        self.block(self.engine.query(&["save", "--format", "docker-archive", "-o", &saved_arg, &reference]))?;
        let saved = archive::unpack(&saved_tar, &saved_dir).map_err(|e| io("reading the saved image", e))?;
        // The unpacked copy is all that is needed from here.
        let _ = std::fs::remove_file(&saved_tar);
        let groups = plan::groups(&saved.sizes, max_mb * MB);
        let mut report = BoxMerge {
            box_name: name.to_owned(),
            image: reference.clone(),
            dry_run: options.dry_run,
            max_mb,
            max_total_mb,
            layers_before: saved.layers.len(),
            layers_after: groups.len(),
            bytes_before: saved.sizes.iter().sum(),
            bytes_after: None,
            groups: groups
                .iter()
                .map(|g| LayerGroup {
                    first: g.start,
                    last: g.end - 1,
                    sizes: saved.sizes[g.clone()].to_vec(),
                    bytes: saved.sizes[g.clone()].iter().sum(),
                    merged_bytes: None,
                })
                .collect(),
            image_id_before: short_id(&before.id),
            image_id: short_id(&before.id),
            skipped: None,
            previous_removed: false,
            previous_kept: None,
            pruned_images: Vec::new(),
        };
        if let Some(limit) = max_total_mb.filter(|l| report.bytes_before > l * MB) {
            report.layers_after = report.layers_before;
            report.skipped = Some(format!("its layers total more than --max-total-mb {limit}"));
            return Ok(report);
        }
        if groups.iter().all(|g| g.len() < 2) {
            report.skipped = Some("no layers to merge".to_owned());
            return Ok(report);
        }
        if options.dry_run {
            return Ok(report);
        }
        let history = saved.config.get("history").and_then(Value::as_array).cloned().unwrap_or_default();
        let history = plan::realign(&history, &groups).map_err(|why| {
            io("the image history", std::io::Error::other(format!("image {reference}: {why}")))
        })?;
        let mut new_layers: Vec<(String, PathBuf)> = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            if g.len() < 2 {
                new_layers.push((saved.diff_ids[g.start].clone(), saved.layers[g.start].clone()));
                continue;
            }
            self.engine.check_cancelled()?;
            let out = temp.path().join(format!("merged-{i}.tar"));
            let merged = layers::merge(&saved.layers[g.clone()], &out)
                .map_err(|e| io(&format!("merging layers {}-{}", g.start, g.end - 1), e))?;
            report.groups[i].merged_bytes = Some(merged.size);
            new_layers.push((merged.diff_id, out));
        }
        let mut config = saved.config.clone();
        config["rootfs"]["diff_ids"] =
            Value::from(new_layers.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>());
        config["history"] = Value::from(history);
        let out = temp.path().join("merged.tar");
        let id =
            archive::write(&out, &reference, &config, &new_layers).map_err(|e| io("writing the image", e))?;
        let out_arg = out.display().to_string();
        self.engine.check_cancelled()?;
        // The load retags the reference as one step; the earlier image stays, untagged (it is
        // removed below).
        self.block_through(self.uncancelled_engine().change(&["load", "-i", out_arg.as_str()]))?;
        let after = self.block(self.engine.image(&reference))?.map(|i| i.id).unwrap_or_default();
        if after.trim_start_matches("sha256:") != id.trim_start_matches("sha256:") {
            return Err(EngineError::Failed {
                command: format!("podman load -i {out_arg}"),
                status: 0,
                stderr: format!(
                    "box {name}: {reference} names image {after} after the load, not the merged {id}"
                ),
            }
            .into());
        }
        report.image_id = short_id(&id);
        // The load left the earlier image untagged: removed (without --force, so podman keeps
        // it while a container uses it or another reference names it, and says why).
        if short_id(&before.id) != short_id(&id) {
            match self.block(self.engine.change(&["rmi", before.id.as_str()])) {
                Ok(_) => report.previous_removed = true,
                Err(e) => report.previous_kept = Some(e.to_string()),
            }
        }
        report.pruned_images = self.prune_images(name);
        report.bytes_after =
            Some(new_layers.iter().filter_map(|(_, p)| std::fs::metadata(p).ok()).map(|m| m.len()).sum());
        Ok(report)
    }
}
