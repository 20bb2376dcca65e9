//! Container names: `charly-<box>` or `charly-<box>-<instance>` (a `/` in a box name becomes
//! `-`), checked against the rule podman applies before podman sees them.

use super::EngineError;

/// What podman accepts as a container name: `[a-zA-Z0-9][a-zA-Z0-9_.-]*`.
pub const PODMAN_NAME_RULE: &str = "[a-zA-Z0-9][a-zA-Z0-9_.-]*";

/// The longest container name charly makes, in bytes.
pub const MAX_CONTAINER_NAME: usize = 128;

/// A box (and instance) as the container it runs as.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// The box name as given.
    pub box_name: String,
    /// The instance, when one was given (never empty).
    pub instance: Option<String>,
    /// `charly-<box>[-<instance>]`.
    pub container: String,
}

impl Target {
    /// The container of `box_name` (instance `instance`), validated.
    ///
    /// # Errors
    ///
    /// [`EngineError::BadName`] when the box or instance holds a character podman refuses in
    /// a container name, or is empty; the message names the argument and the rule.
    pub fn new(box_name: &str, instance: Option<&str>) -> Result<Target, EngineError> {
        check("box", box_name, true)?;
        if instance == Some("") {
            return Err(EngineError::BadName {
                what: "instance",
                name: String::new(),
                reason: "it is empty (leave -i out for the box's own container)".into(),
            });
        }
        if let Some(instance) = instance {
            check("instance", instance, false)?;
        }
        let stem = box_name.replace('/', "-");
        let container = match instance {
            Some(instance) => format!("charly-{stem}-{instance}"),
            None => format!("charly-{stem}"),
        };
        // Volume, unit and directory names grow from the container's: past this, podman and the
        // file system refuse them ("file name too long").
        if container.len() > MAX_CONTAINER_NAME {
            let (what, name) = match instance {
                Some(i) => ("instance", i),
                None => ("box", box_name),
            };
            return Err(EngineError::TooLong { what, name: name.to_owned(), len: container.len() });
        }
        Ok(Target { box_name: box_name.to_owned(), instance: instance.map(str::to_owned), container })
    }

    /// The box with its instance, as people write it: `web` or `web -i 2` → `web/2`.
    pub fn key(&self) -> String {
        match &self.instance {
            Some(instance) => format!("{}/{instance}", self.box_name),
            None => self.box_name.clone(),
        }
    }

    /// The `-i <instance>` part of a command line that acts on this target again.
    pub fn instance_flag(&self) -> String {
        self.instance.as_ref().map(|i| format!(" -i {i}")).unwrap_or_default()
    }

    /// The name of this target's named volume `volume`: `<container>-<volume>`.
    pub fn volume(&self, volume: &str) -> String {
        format!("{}-{volume}", self.container)
    }
}

fn check(what: &'static str, name: &str, slash_ok: bool) -> Result<(), EngineError> {
    let bad = |reason: String| EngineError::BadName { what, name: name.to_owned(), reason };
    if name.is_empty() {
        return Err(bad("it is empty".into()));
    }
    let first = name.chars().next().expect("not empty");
    if !first.is_ascii_alphanumeric() {
        return Err(bad(format!(
            "it starts with {first:?}, and a container name starts with a letter or digit"
        )));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') || (slash_ok && *c == '/')))
    {
        return Err(bad(format!("{c:?} is not allowed in a container name")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(Target::new("web", None).unwrap().container, "charly-web");
        // An empty instance is not the box's own container by accident (issue 14's second trial).
        assert!(Target::new("web", Some("")).unwrap_err().to_string().contains("it is empty"));
        let long = "i".repeat(200);
        assert!(
            Target::new("web", Some(&long)).unwrap_err().to_string().contains("charly keeps them to 128")
        );
        assert_eq!(Target::new("web", Some("2")).unwrap().container, "charly-web-2");
        assert_eq!(Target::new("team/web", Some("a.b")).unwrap().container, "charly-team-web-a.b");
        assert_eq!(Target::new("web", Some("2")).unwrap().key(), "web/2");
        assert_eq!(Target::new("web", Some("2")).unwrap().volume("data"), "charly-web-2-data");
    }

    #[test]
    fn refused_names_name_the_argument() {
        let err = Target::new("web app", None).unwrap_err().to_string();
        assert!(err.starts_with("box \"web app\": ' ' is not allowed"), "{err}");
        assert!(err.contains(PODMAN_NAME_RULE), "{err}");
        let err = Target::new("web", Some("a/b")).unwrap_err().to_string();
        assert!(err.starts_with("instance \"a/b\": '/' is not allowed"), "{err}");
        assert!(err.contains("choose an instance name"), "{err}");
        let err = Target::new("-web", None).unwrap_err().to_string();
        assert!(err.contains("starts with '-'"), "{err}");
        assert!(Target::new("", None).is_err());
        // Too long: said so, without the character rule, which the name meets (trial LOW).
        let err = Target::new("web", Some(&"a".repeat(130))).unwrap_err().to_string();
        assert!(err.ends_with("choose a shorter instance name"), "{err}");
        assert!(
            err.contains("makes the container name 141 characters long") && !err.contains("must match"),
            "{err}"
        );
    }
}
