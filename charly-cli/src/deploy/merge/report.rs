//! The `box.merge` report.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

/// `box.merge`: what was merged, box by box.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct MergeReport {
    /// One entry per box merged (or planned, with `--dry-run`).
    pub boxes: Vec<BoxMerge>,
    /// Boxes `--all` could not merge, each with why.
    pub warnings: Vec<String>,
}

/// One box's image, merged.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BoxMerge {
    /// The box.
    #[serde(rename = "box")]
    pub box_name: String,
    /// Its image reference (the same before and after).
    pub image: String,
    /// Only the plan: nothing was changed.
    pub dry_run: bool,
    /// The group limit, in MB.
    pub max_mb: u64,
    /// The total limit, in MB (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_total_mb: Option<u64>,
    /// Layers before.
    pub layers_before: usize,
    /// Layers after (planned, with `--dry-run`).
    pub layers_after: usize,
    /// Bytes of the uncompressed layers before.
    pub bytes_before: u64,
    /// Bytes of the uncompressed layers after (absent when nothing was merged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_after: Option<u64>,
    /// The groups, lowest layers first; a group of one layer is kept as it is.
    pub groups: Vec<LayerGroup>,
    /// The image id before (12 hex digits).
    pub image_id_before: String,
    /// The image id now (the same when nothing was merged).
    pub image_id: String,
    /// Why nothing was merged, when nothing was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    /// After a merge: whether the image the reference named before was removed (it is left
    /// untagged by the load). It stays while a container uses it or another reference names
    /// it; `previous_kept` then says why.
    pub previous_removed: bool,
    /// Why the earlier image was kept (podman's refusal), when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_kept: Option<String>,
    /// After a merge: the box's dangling images removed (the earlier image's build cache,
    /// earlier builds), short ids.
    pub pruned_images: Vec<String>,
}

/// Consecutive layers `first..=last`, merged into one when there are two or more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LayerGroup {
    /// The index of its first layer (0: the lowest).
    pub first: usize,
    /// The index of its last layer.
    pub last: usize,
    /// Each layer's size in bytes.
    pub sizes: Vec<u64>,
    /// Their sum.
    pub bytes: u64,
    /// The merged layer's size (absent for a kept layer, or with `--dry-run`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_bytes: Option<u64>,
}

/// `x.x MB`, or `x.x KB` under a megabyte.
fn mb(bytes: u64) -> String {
    let b = bytes as f64;
    if b < 1024.0 * 1024.0 {
        format!("{:.1} KB", b / 1024.0)
    } else {
        format!("{:.1} MB", b / (1024.0 * 1024.0))
    }
}

impl fmt::Display for BoxMerge {
    /// The plan (`layer i: x MB [keep]`, or a bracket of layers `> merge (y MB)`), then
    /// `N layers -> M layers` and what happened.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "box {}: {} (max {} MB per layer)", self.box_name, self.image, self.max_mb)?;
        for g in &self.groups {
            if g.first == g.last {
                writeln!(f, "  layer {:>3}: {:>9}  [keep]", g.first, mb(g.bytes))?;
                continue;
            }
            for (i, size) in g.sizes.iter().enumerate() {
                let mark = if i == 0 {
                    '\\'
                } else if i + 1 == g.sizes.len() {
                    '/'
                } else {
                    '|'
                };
                let tail = if i + 1 == g.sizes.len() {
                    let merged = g.merged_bytes.map(|m| format!(" -> {}", mb(m))).unwrap_or_default();
                    format!("  > merge ({}{merged})", mb(g.bytes))
                } else {
                    String::new()
                };
                writeln!(f, "{mark} layer {:>3}: {:>9}{tail}", g.first + i, mb(*size))?;
            }
        }
        let after =
            self.bytes_after.map(|b| format!(", {} -> {}", mb(self.bytes_before), mb(b))).unwrap_or_default();
        match (&self.skipped, self.dry_run) {
            (Some(why), _) => writeln!(f, "{} layers: nothing merged ({why})", self.layers_before),
            (None, true) => {
                writeln!(
                    f,
                    "{} layers -> {} layers (dry run: nothing changed)",
                    self.layers_before, self.layers_after
                )
            }
            (None, false) => {
                writeln!(
                    f,
                    "merged: {} layers -> {} layers{after}; {} is image {} (was {})",
                    self.layers_before, self.layers_after, self.image, self.image_id, self.image_id_before
                )?;
                match (&self.previous_kept, self.previous_removed) {
                    (Some(why), _) => {
                        writeln!(f, "  kept the earlier image {}: {why}", self.image_id_before)?
                    }
                    (None, true) => writeln!(f, "  removed the earlier image {}", self.image_id_before)?,
                    (None, false) => {}
                }
                if !self.pruned_images.is_empty() {
                    let ids = self.pruned_images.join(", ");
                    writeln!(
                        f,
                        "  removed {} dangling image(s) of the box: {ids}",
                        self.pruned_images.len()
                    )?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for MergeReport {
    /// Each box's plan and result.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.boxes.iter().try_for_each(|b| write!(f, "{b}"))
    }
}

impl crate::report::Report for MergeReport {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}
