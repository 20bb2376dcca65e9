//! Whose a container, volume or secret is. Names are `charly-<box>[-<instance>]`, and they
//! collide: box `a` instance `b-c` and box `a-b` instance `c` are both `charly-a-b-c`, and a
//! container someone made with plain `podman run --name charly-a` has charly's name too. So
//! before charly acts on an existing container (stop, remove, update, logs, cmd, shell,
//! `service.*`, `config setup`, the CDP/VNC box targets, `check live`) it reads the labels
//! charly puts on what it creates ([`BOX_LABEL`], [`INSTANCE_LABEL`]) and refuses when they
//! name another box or instance, or none.
//!
//! A container counts as created by charly only with the [`RUN_LABEL`] (`charly start`) or the
//! deploy label (`config setup`'s quadlet unit): a box's image carries [`BOX_LABEL`] itself,
//! so a plain `podman run` of it shows that label as well. Volumes and secrets are charly's
//! when they carry [`BOX_LABEL`] (images do not label them).

use std::collections::BTreeMap;

use super::ps::{BOX_LABEL, ContainerSummary, INSTANCE_LABEL, RUN_LABEL};
use super::{Engine, EngineError, Target, start_args};

/// The label `config setup` puts on its secrets, volumes and quadlet containers: the
/// deployment's key (`box[/instance]`).
pub const DEPLOY_LABEL: &str = "ai.opencharly.deploy";

/// Whose something is, by its labels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Owner {
    /// The target's own.
    Ours,
    /// Another box's or instance's.
    Other {
        /// The box its labels name.
        box_name: String,
        /// The instance its labels name (`None`: the default instance).
        instance: Option<String>,
    },
    /// Not labelled by charly.
    Foreign,
}

impl Owner {
    /// Whose a thing with `labels` is, for `target`; `container` asks for a container's
    /// creation labels ([`RUN_LABEL`] or [`DEPLOY_LABEL`]) too.
    pub fn of(labels: &BTreeMap<String, String>, target: &Target, container: bool) -> Owner {
        let created = !container || created_by_charly(labels);
        let Some(box_name) = labels.get(BOX_LABEL).filter(|_| created) else { return Owner::Foreign };
        let instance = labels.get(INSTANCE_LABEL).filter(|i| !i.is_empty());
        if *box_name == target.box_name && instance == target.instance.as_ref() {
            Owner::Ours
        } else {
            Owner::Other { box_name: box_name.clone(), instance: instance.cloned() }
        }
    }

    /// `box a-b instance c`, `box a-b (default instance)`, `not created by charly`.
    pub fn describe(&self) -> String {
        match self {
            Owner::Ours => "this box".into(),
            Owner::Other { box_name, instance: Some(i) } => format!("box {box_name} instance {i}"),
            Owner::Other { box_name, instance: None } => format!("box {box_name} (default instance)"),
            Owner::Foreign => "not created by charly".into(),
        }
    }
}

/// Whether a container with `labels` was created by charly: it carries [`RUN_LABEL`]
/// (`charly start`) or [`DEPLOY_LABEL`] (a quadlet unit of `config setup`). A plain
/// `podman run` of a box's image has the image's [`BOX_LABEL`] but neither.
pub fn created_by_charly(labels: &BTreeMap<String, String>) -> bool {
    labels.contains_key(RUN_LABEL) || labels.contains_key(DEPLOY_LABEL)
}

/// Whose (`charly-<box>[-<instance>]`) what: a box and instance as people write them.
fn whose(target: &Target) -> String {
    match &target.instance {
        Some(i) => format!("box {} instance {i}", target.box_name),
        None => format!("box {} (default instance)", target.box_name),
    }
}

/// [`EngineError::Claimed`] for `what` (`container`, `volume`, `secret`) `name`, which `owner`
/// holds instead of `target`.
pub fn claimed(what: &'static str, name: &str, target: &Target, owner: &Owner) -> EngineError {
    let held = match owner {
        Owner::Foreign => format!(
            "it was not created by charly (no {BOX_LABEL} label{}), so it is not {}'s",
            if what == "container" { format!(" with {RUN_LABEL} or {DEPLOY_LABEL}") } else { String::new() },
            whose(target)
        ),
        other => format!(
            "it belongs to {}, not to {} (charly-<box>[-<instance>] names collide)",
            other.describe(),
            whose(target)
        ),
    };
    let other_side = match (what, owner) {
        ("container", Owner::Other { box_name, instance }) => format!(
            "; to act on that one, name it: `charly stop {box_name}{}`",
            instance.as_ref().map(|i| format!(" -i {i}")).unwrap_or_default()
        ),
        ("container", Owner::Foreign) => format!("; or rename it with podman (`podman rename {name} <new>`)"),
        _ => String::new(),
    };
    EngineError::Claimed {
        what,
        name: name.to_owned(),
        owner: owner.describe(),
        problem: held,
        fix: format!(
            "use another instance name for this box (`charly start {} -i <other>`){other_side}",
            start_args(&Target { instance: None, ..target.clone() })
        ),
    }
}

/// `Ok` when `c` is `target`'s own container, else [`EngineError::Claimed`].
///
/// # Errors
///
/// [`EngineError::Claimed`].
pub fn check_container(target: &Target, c: &ContainerSummary) -> Result<(), EngineError> {
    let labels = c.labels.clone().unwrap_or_default();
    match Owner::of(&labels, target, true) {
        Owner::Ours => Ok(()),
        owner => Err(claimed("container", &target.container, target, &owner)),
    }
}

impl Engine {
    /// The container named `target.container` when it is `target`'s own; `None` when there is
    /// none.
    ///
    /// # Errors
    ///
    /// [`EngineError::Claimed`] when a container of that name belongs to another box or
    /// instance, or was not created by charly; as [`container`](Self::container).
    pub async fn claimed(&self, target: &Target) -> Result<Option<ContainerSummary>, EngineError> {
        let Some(c) = self.container(&target.container).await? else { return Ok(None) };
        check_container(target, &c)?;
        Ok(Some(c))
    }

    /// The labels of podman volume `name`, `None` when there is none.
    ///
    /// # Errors
    ///
    /// As [`output`](Self::output); [`EngineError::Output`] for unreadable JSON.
    pub async fn volume_labels(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, EngineError> {
        let out = self.output(&["volume", "inspect", name], None, false).await?;
        if out.status != 0 {
            return Ok(None);
        }
        labels_of(&out.stdout, "podman volume inspect", "/Labels").map(Some)
    }

    /// The labels of podman secret `name`, `None` when there is none.
    ///
    /// # Errors
    ///
    /// As [`output`](Self::output); [`EngineError::Output`] for unreadable JSON.
    pub async fn secret_labels(&self, name: &str) -> Result<Option<BTreeMap<String, String>>, EngineError> {
        let out = self.output(&["secret", "inspect", name], None, false).await?;
        if out.status != 0 {
            return Ok(None);
        }
        labels_of(&out.stdout, "podman secret inspect", "/Spec/Labels").map(Some)
    }

    /// The named volumes labelled as `target`'s own ([`BOX_LABEL`] and [`INSTANCE_LABEL`]
    /// exactly; never by name).
    ///
    /// # Errors
    ///
    /// As [`query`](Self::query); [`EngineError::Output`] for unreadable JSON.
    pub async fn volumes_of(&self, target: &Target) -> Result<Vec<String>, EngineError> {
        let filter = format!("label={BOX_LABEL}={}", target.box_name);
        let text = self.query(&["volume", "ls", "--format", "json", "--filter", &filter]).await?;
        let list: Vec<serde_json::Value> = if text.trim().is_empty() {
            Vec::new()
        } else {
            serde_json::from_str(&text).map_err(|e| EngineError::Output {
                command: "podman volume ls".into(),
                message: e.to_string(),
            })?
        };
        let mut names: Vec<String> = list
            .iter()
            .filter(|v| Owner::of(&labels(v.get("Labels")), target, false) == Owner::Ours)
            .filter_map(|v| v.get("Name")?.as_str().map(str::to_owned))
            .collect();
        names.sort();
        Ok(names)
    }
}

fn labels(value: Option<&serde_json::Value>) -> BTreeMap<String, String> {
    value
        .and_then(serde_json::Value::as_object)
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned()))).collect())
        .unwrap_or_default()
}

/// The labels at `pointer` of the first object of inspect output `text`.
fn labels_of(text: &str, command: &str, pointer: &str) -> Result<BTreeMap<String, String>, EngineError> {
    let list: Vec<serde_json::Value> = serde_json::from_str(text)
        .map_err(|e| EngineError::Output { command: command.into(), message: e.to_string() })?;
    Ok(labels(list.first().and_then(|v| v.pointer(pointer))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn the_colliding_pair_is_told_apart_by_labels() {
        let a = Target::new("a", Some("b-c")).unwrap();
        let ab = Target::new("a-b", Some("c")).unwrap();
        assert_eq!(a.container, ab.container);
        let of_a = map(&[(BOX_LABEL, "a"), (INSTANCE_LABEL, "b-c"), (RUN_LABEL, "{}")]);
        assert_eq!(Owner::of(&of_a, &a, true), Owner::Ours);
        let other = Owner::of(&of_a, &ab, true);
        assert_eq!(other.describe(), "box a instance b-c");
        let err = claimed("container", &ab.container, &ab, &other).to_string();
        assert!(
            err.starts_with(
                "container charly-a-b-c: it belongs to box a instance b-c, not to box a-b instance c"
            ),
            "{err}"
        );
        assert!(
            err.contains("`charly start a-b -i <other>`") && err.contains("`charly stop a -i b-c`"),
            "{err}"
        );
        // The default instance is not instance `c`.
        let default = map(&[(BOX_LABEL, "a-b"), (RUN_LABEL, "{}")]);
        assert_eq!(Owner::of(&default, &ab, true).describe(), "box a-b (default instance)");
    }

    #[test]
    fn the_image_label_alone_is_not_charlys_container() {
        let t = Target::new("a", None).unwrap();
        // `podman run --name charly-a localhost/a`: the image's box label, nothing of charly's run.
        let plain = map(&[(BOX_LABEL, "a")]);
        assert_eq!(Owner::of(&plain, &t, true), Owner::Foreign);
        let err = claimed("container", &t.container, &t, &Owner::Foreign).to_string();
        assert!(err.contains("was not created by charly") && err.contains("podman rename charly-a"), "{err}");
        // A quadlet container has the deploy label instead of the run label.
        let unit = map(&[(BOX_LABEL, "a"), (DEPLOY_LABEL, "a")]);
        assert_eq!(Owner::of(&unit, &t, true), Owner::Ours);
        // Volumes and secrets: the box label is enough (no image labels them).
        assert_eq!(Owner::of(&plain, &t, false), Owner::Ours);
        assert_eq!(Owner::of(&map(&[]), &t, false), Owner::Foreign);
    }
}
