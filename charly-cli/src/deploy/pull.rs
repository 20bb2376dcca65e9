//! `box.pull`: pulls (refreshes) a box's base image into local storage, from its registry or
//! from a local source (`oci-archive:FILE`, `docker-archive:FILE`, `containers-storage:REF`,
//! `dir:PATH`), tagged as the base the box names.

use std::fmt;

use schemars::JsonSchema;
use serde::Serialize;

use super::{Deploy, DeployError, short_id};
use crate::engine::EngineError;

/// The transports `--from` accepts.
pub const SOURCES: [&str; 4] = ["oci-archive:", "docker-archive:", "containers-storage:", "dir:"];

/// `box.pull`: what was pulled.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Pulled {
    /// The box.
    #[serde(rename = "box")]
    pub box_name: String,
    /// Its base image reference (the tag now in local storage).
    pub base: String,
    /// Where it came from: the registry reference, or `--from`.
    pub source: String,
    /// The image id now tagged as the base (12 hex digits).
    pub image_id: String,
    /// The id the tag had before, when it was in local storage (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_image_id: Option<String>,
    /// Whether the tag now names another image.
    pub changed: bool,
}

impl fmt::Display for Pulled {
    /// `pulled <base> from <source>: <id> (changed|unchanged)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = match (&self.previous_image_id, self.changed) {
            (None, _) => "new".to_owned(),
            (Some(p), true) => format!("was {p}"),
            (Some(_), false) => "unchanged".to_owned(),
        };
        writeln!(f, "pulled {} from {}: {} ({state})", self.base, self.source, self.image_id)
    }
}

impl crate::report::Report for Pulled {}

/// The registry host of `reference` (`docker.io` for a bare name such as `busybox`).
pub fn registry_of(reference: &str) -> &str {
    match reference.split_once('/') {
        Some((first, _)) if first.contains(['.', ':']) || first == "localhost" => first,
        _ => "docker.io",
    }
}

impl Deploy<'_> {
    /// `box.pull <box> [--from SOURCE]`.
    ///
    /// # Errors
    ///
    /// An unknown box, a `--from` with another transport (the message lists them), a
    /// `localhost/` base without `--from` (a local image: no registry to pull from), a registry
    /// that cannot be reached (the message names it and the local sources), podman failures.
    pub fn pull(&self, box_name: &str, from: Option<&str>) -> Result<Pulled, DeployError> {
        let base = self.project.resolve_box(box_name)?.base;
        if let Some(source) = from
            && !SOURCES.iter().any(|s| source.starts_with(s) && source.len() > s.len())
        {
            return Err(DeployError::Argument {
                argument: "--from",
                value: source.to_owned(),
                problem: format!("a local image source is one of {}<path or ref>", SOURCES.join(", ")),
            });
        }
        let source = from.unwrap_or(&base).to_owned();
        // `localhost/` names no registry (podman would dial https://localhost): such a base was
        // built or loaded here, and only a local source can replace it.
        if from.is_none() && registry_of(&base) == "localhost" {
            let local = self.block(self.engine.image(&base))?;
            let state = match local {
                Some(image) => {
                    format!("it is in local storage (image {}), nothing to pull", short_id(&image.id))
                }
                None => {
                    "it is not in local storage: build or load it with podman (podman build -t/podman load)"
                        .into()
                }
            };
            return Err(DeployError::NeedsArgument(format!(
                "box {box_name}: its base {base} is a local image (`localhost/` names no registry); {state}; \
                 to replace it from a local copy: charly box pull {box_name} --from oci-archive:FILE \
                 (or docker-archive:FILE, containers-storage:REF, dir:PATH)"
            )));
        }
        self.block(async {
            let previous = self.engine.image(&base).await?.map(|i| short_id(&i.id));
            let out = self.engine.output(&["pull", source.as_str()], None, false).await?;
            if out.status != 0 {
                let why = out.stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim_start_matches("Error: ");
                if from.is_none() {
                    let registry = registry_of(&base);
                    return Err(EngineError::Failed {
                        command: format!("podman pull {base}"),
                        status: out.status,
                        stderr: format!(
                            "box {box_name}: cannot pull its base {base}: registry {registry} cannot be reached ({why}); \
                             pull from a local copy instead: charly box pull {box_name} --from oci-archive:FILE \
                             (or docker-archive:FILE, containers-storage:REF)"
                        ),
                    });
                }
                return Err(EngineError::Failed {
                    command: format!("podman pull {source}"),
                    status: out.status,
                    stderr: format!("box {box_name}: cannot pull --from {source}: {why}"),
                });
            }
            let id = out.stdout.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("").trim().to_owned();
            if from.is_some() {
                self.engine.change(&["tag", id.as_str(), base.as_str()]).await?;
            }
            let image_id = short_id(&id);
            Ok(Pulled {
                box_name: box_name.to_owned(),
                base: base.clone(),
                source: source.clone(),
                changed: previous.as_deref() != Some(image_id.as_str()),
                previous_image_id: previous,
                image_id,
            })
        })
    }
}
