//! `box.new.project`, `box.new.box` and `box.new.candy`: creating projects and nodes.

use std::path::{Path, PathBuf};

use super::beneath::Beneath;
use super::cancel::Cancel;
use super::error::{ProjectError, Result};
use super::files::{Put, make_dir, put};
use super::keypath::KeyPath;
use super::model::{PROJECT_FILE, Project, to_json};
use super::names::check_name;
use super::report::{Created, Edited};
use super::yamlfile;

/// The `charly.yml` written by [`new_project`].
pub const NEW_PROJECT_FILE: &str = "\
# charly project: boxes (container images) made of candies (layers).
project:
  version: 1
";

/// `box.new.project`: scaffolds a project in `dir` (created if missing): `charly.yml` with a
/// `project:` node, `box/` and `candy/`. An existing `charly.yml` (even an empty one) is never
/// overwritten.
pub fn new_project(dir: &Path) -> Result<Created> {
    super::gitguard::refuse_git_dir(dir)?;
    std::fs::create_dir_all(dir).map_err(|e| ProjectError::io("create directory", dir, e))?;
    let root = Beneath::open(dir).map_err(|e| ProjectError::io("open directory", dir, e))?;
    scaffold(&root, dir, &Cancel::default())
}

/// Scaffolds a project in the directory `root` holds (named `shown` in errors and the report).
pub(crate) fn scaffold(root: &Beneath, shown: &Path, cancel: &Cancel) -> Result<Created> {
    super::gitguard::refuse_git_root(root, shown)?;
    let file = Path::new(PROJECT_FILE);
    if root.locate(file, super::beneath::Missing::Fail).is_ok_and(|e| e.kind.is_some()) {
        return Err(ProjectError::AlreadyExists { path: shown.join(PROJECT_FILE) });
    }
    for sub in ["box", "candy"] {
        make_dir(root, Path::new(sub)).map_err(|e| in_dir(e, shown))?;
    }
    put(root, file, NEW_PROJECT_FILE.as_bytes(), Put::CreateNew, cancel).map_err(|e| in_dir(e, shown))?;
    let created = [PROJECT_FILE, "box", "candy"].map(PathBuf::from).into();
    Ok(Created { root: shown.to_owned(), created })
}

/// An error about a file of the scaffolded directory, naming it under `dir`.
fn in_dir(e: ProjectError, dir: &Path) -> ProjectError {
    match e {
        ProjectError::AlreadyExists { path } => ProjectError::AlreadyExists { path: dir.join(path) },
        ProjectError::Io { action, path, source } => {
            ProjectError::Io { action, path: dir.join(path), source }
        }
        other => other,
    }
}

impl Project {
    /// `box.new.project <dir>` for an MCP call: like [`new_project`], in `dir` beneath the
    /// project root (created if missing), every step resolved beneath the root.
    pub fn new_project_inside(&self, dir: &Path) -> Result<Created> {
        let (inside, relative) = self.enter_dir(dir)?;
        scaffold(&inside, &self.root().join(relative), self.cancel())
    }
}

impl Project {
    /// `box.new.box`: adds a box node `name` with base image `base` and an empty candy list to
    /// `charly.yml`. The name must not be taken by any node of the project.
    pub fn new_box(&self, name: &str, base: &str) -> Result<Edited> {
        check_name(name, "box")?;
        if base.trim().is_empty() || base.contains(char::is_whitespace) {
            return Err(ProjectError::InvalidBase { base: base.to_owned() });
        }
        self.refuse_taken(name)?;
        let file = Path::new(PROJECT_FILE);
        let base_path = KeyPath::from_keys([name, "box", "base"]);
        let (_, outcome) = yamlfile::edit_text(
            self,
            file,
            |doc, text| {
                if doc.as_mapping().is_some_and(|m| m.contains_key(name)) {
                    return Err(ProjectError::DuplicateNode { name: name.to_owned(), file: file.to_owned() });
                }
                if doc.as_mapping().is_none() {
                    return Err(ProjectError::InvalidYaml {
                        what: PROJECT_FILE.to_owned(),
                        message: "the top level must be a map of named nodes".into(),
                    });
                }
                // A whole new node, appended in the file's own indentation step.
                let i = " ".repeat(yamlfile::indent_unit(text));
                let block = format!("{name}:\n{i}box:\n{i}{i}base: {}\n{i}{i}candy: []\n", scalar(base));
                Ok(((), yamlfile::append_lines(text, &block)))
            },
            |doc| match yamlfile::get(doc, &base_path) {
                Some(node) if to_json(&node) == serde_json::Value::String(base.to_owned()) => Ok(()),
                _ => {
                    Err(ProjectError::EditNotVerified { file: file.to_owned(), path: base_path.to_string() })
                }
            },
        )?;
        let summary = format!("added box {name} (base {base}) to {PROJECT_FILE}");
        Ok(outcome.report(summary.clone(), summary))
    }

    /// `box.new.candy`: creates `candy/<name>/charly.yml` with a candy node `name` and empty package
    /// lists for every distribution. An existing file is never overwritten.
    pub fn new_candy(&self, name: &str) -> Result<Edited> {
        check_name(name, "candy")?;
        self.refuse_taken(name)?;
        let file = Project::candy_file(name);
        put(&self.beneath()?, &file, candy_template(name).as_bytes(), Put::CreateNew, self.cancel())?;
        let summary = format!("created candy {name} in {}", file.display());
        Ok(Edited { file, changed: true, summary })
    }

    /// Fails when a node called `name` exists in any readable project file.
    fn refuse_taken(&self, name: &str) -> Result<()> {
        let (nodes, _) = self.load()?;
        match nodes.into_iter().find(|n| n.name == name) {
            Some(node) => Err(ProjectError::DuplicateNode { name: name.to_owned(), file: node.file }),
            None => Ok(()),
        }
    }
}

/// The file [`Project::new_candy`] writes; `name` has passed [`check_name`].
fn candy_template(name: &str) -> String {
    format!(
        "\
{name}:
  candy:
    description: \"\"
    distro:
      fedora: {{package: []}}
      \"debian,ubuntu\": {{package: []}}
      arch: {{package: [], aur: {{package: []}}}}
"
    )
}

/// `text` as a YAML scalar: plain when it is made of characters that are safe unquoted, else
/// double-quoted (JSON string syntax is YAML double-quoted syntax).
fn scalar(text: &str) -> String {
    let reads_back = || {
        yamlfile::parse_value(text).is_ok_and(|v| to_json(&v) == serde_json::Value::String(text.to_owned()))
    };
    let safe = text.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && text.chars().all(|c| c.is_ascii_alphanumeric() || "._/:@+-".contains(c))
        && reads_back();
    if safe { text.to_owned() } else { serde_json::Value::String(text.to_owned()).to_string() }
}
