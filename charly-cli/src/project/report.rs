//! The reports of the project commands (`box.*`, `candy.*`): what each did, as data with the
//! line a person reads.

use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Serialize;

use super::problem::Problem;
use crate::report::Report;

/// A JSON object, for the parts of a report that are the project's own YAML as JSON.
type Object = serde_json::Map<String, serde_json::Value>;

/// What an edit did to a file: `box.set`, `candy.set`, `box.add-candy`, `box.rm-candy`,
/// `candy.add-*`, `box.new.box`, `box.new.candy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Edited {
    /// The file, relative to the project root.
    pub file: PathBuf,
    /// Whether the file's text changed (false: the edit was already in place).
    pub changed: bool,
    /// What was done, in words: `set hello.box.base in charly.yml`.
    pub summary: String,
}

impl fmt::Display for Edited {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary)
    }
}

impl Report for Edited {}

/// `box.new.project`: a project was created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Created {
    /// The project directory.
    pub root: PathBuf,
    /// The files and directories created, relative to it.
    pub created: Vec<PathBuf>,
}

impl Created {
    /// The project just created.
    pub fn project(&self) -> super::Project {
        super::Project::at(self.root.clone())
    }
}

impl fmt::Display for Created {
    /// `created project in DIR (charly.yml, box/, candy/)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "created project in {} (charly.yml, box/, candy/)", self.root.display())
    }
}

impl Report for Created {}

/// `box.write`: a file was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Written {
    /// The file, relative to the project root.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: usize,
}

impl fmt::Display for Written {
    /// `wrote N bytes to PATH`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "wrote {} bytes to {}", self.bytes, self.path.display())
    }
}

impl Report for Written {}

/// `box.cat`: a file's text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileText {
    /// The file, relative to the project root.
    pub path: PathBuf,
    /// Its text, unchanged.
    pub content: String,
}

impl fmt::Display for FileText {
    /// The text exactly as it is in the file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.content)
    }
}

impl Report for FileText {}

/// `box.list.boxes`: the boxes, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct BoxList {
    /// Box names.
    pub boxes: Vec<String>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for BoxList {
    /// One name per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.boxes.iter().try_for_each(|n| writeln!(f, "{n}"))
    }
}

impl Report for BoxList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `box.list.candies`: the candies, in name order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CandyList {
    /// Candy names.
    pub candies: Vec<String>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for CandyList {
    /// One name per line.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.candies.iter().try_for_each(|n| writeln!(f, "{n}"))
    }
}

impl Report for CandyList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// One check node, as listed by `box.list.checks`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct CheckSummary {
    /// The node name.
    pub name: String,
    /// The file it is in, relative to the root.
    pub file: PathBuf,
    /// Its `check:` description.
    pub description: String,
    /// Its `mcp:` method, if it is an MCP check.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
}

/// `box.list.checks`: every check node of the project and its candies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CheckList {
    /// The checks, in file order.
    pub checks: Vec<CheckSummary>,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for CheckList {
    /// `name<TAB>file<TAB>description` per check.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.checks
            .iter()
            .try_for_each(|c| writeln!(f, "{}\t{}\t{}", c.name, c.file.display(), c.description))
    }
}

impl Report for CheckList {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `box.validate`: every problem of every node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Validation {
    /// How many nodes were read.
    pub nodes: usize,
    /// The problems, in file order; empty when the project is valid.
    pub problems: Vec<Problem>,
}

impl fmt::Display for Validation {
    /// A line per problem, then `N problem(s)`; or `ok: N nodes, no problems`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for problem in &self.problems {
            writeln!(f, "{problem}")?;
        }
        if self.problems.is_empty() {
            writeln!(f, "ok: {} nodes, no problems", self.nodes)
        } else {
            writeln!(f, "{} problem(s)", self.problems.len())
        }
    }
}

impl Report for Validation {
    /// `N problem(s) found` when there are any.
    fn failure(&self) -> Option<String> {
        (!self.problems.is_empty()).then(|| format!("{} problem(s) found", self.problems.len()))
    }
}

/// One candy of an [`Inspection`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct CandyInspection {
    /// The candy's name.
    pub name: String,
    /// Its `description:`.
    pub description: String,
    /// Its package lists by section (`rpm`, `deb`, `pac`, `aur`).
    pub packages: Object,
    /// Its `port:` nodes.
    pub ports: Vec<u16>,
    /// Its `mcp_provide:` entries (`name`, `url`, `transport`).
    pub mcp_provide: Vec<Object>,
    /// The names of its check nodes.
    pub checks: Vec<String>,
}

/// `box.inspect`: a box's resolved configuration.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Inspection {
    /// The box's name.
    pub name: String,
    /// Its base image.
    pub base: String,
    /// The distribution family of the base (`fedora`, `debian`, `arch`), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distro: Option<String>,
    /// Its candies, in order.
    pub candies: Vec<CandyInspection>,
    /// The packages installed, by the family's sections.
    pub packages: Object,
    /// Every port its candies publish.
    pub ports: Vec<u16>,
    /// Every MCP server its candies provide.
    pub mcp_provide: Vec<Object>,
    /// Where `box.generate` writes its Containerfile, relative to the project root.
    pub containerfile: PathBuf,
    /// The image it builds.
    pub image: String,
    /// Files that could not be read, and were left out (`FILE is left out: WHY`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl fmt::Display for Inspection {
    /// The report as pretty JSON.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string_pretty(self).map_err(|_| fmt::Error)?;
        writeln!(f, "{text}")
    }
}

impl Report for Inspection {
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
}

/// `box.generate`: the Containerfile was written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Generated {
    /// The box.
    #[serde(rename = "box")]
    pub box_name: String,
    /// The Containerfile, relative to the project root.
    pub containerfile: PathBuf,
}

impl fmt::Display for Generated {
    /// `wrote .build/<box>/Containerfile`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "wrote {}", self.containerfile.display())
    }
}

impl Report for Generated {}

/// `box.build`: the image was built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Built {
    /// The box.
    #[serde(rename = "box")]
    pub box_name: String,
    /// The Containerfile it was built from, relative to the project root.
    pub containerfile: PathBuf,
    /// The image name and tag.
    pub image: String,
    /// What `podman build` printed (stdout, then stderr).
    pub log: String,
    /// The box's dangling images (earlier builds it replaced, their build cache) removed
    /// after the build, short ids; podman keeps those a container still uses.
    pub pruned_images: Vec<String>,
}

impl fmt::Display for Built {
    /// `wrote <Containerfile>`, podman's output, then `built <image>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "wrote {}", self.containerfile.display())?;
        f.write_str(&self.log)?;
        writeln!(f, "built {}", self.image)?;
        if !self.pruned_images.is_empty() {
            writeln!(
                f,
                "removed {} dangling image(s) of earlier builds: {}",
                self.pruned_images.len(),
                self.pruned_images.join(", ")
            )?;
        }
        Ok(())
    }
}

impl Report for Built {}

/// What `box.fetch` or `box.refresh` did to the repository cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RepoAction {
    /// The clone was already there (`box.fetch`).
    Cached,
    /// A new clone was made.
    Cloned,
    /// The clone was fetched and reset (`box.refresh`).
    Refreshed,
}

/// `box.fetch`, `box.refresh`: a project repository in the cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Fetched {
    /// The repository URL.
    pub url: String,
    /// The clone in the cache.
    pub path: PathBuf,
    /// What was done.
    pub action: RepoAction,
    /// What git printed.
    pub log: String,
}

impl fmt::Display for Fetched {
    /// git's output, then `cloned URL into PATH` (or `is cached in`, `refreshed ... in`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.log)?;
        let (url, path) = (&self.url, self.path.display());
        match self.action {
            RepoAction::Cached => writeln!(f, "{url} is cached in {path}"),
            RepoAction::Cloned => writeln!(f, "cloned {url} into {path}"),
            RepoAction::Refreshed => writeln!(f, "refreshed {url} in {path}"),
        }
    }
}

impl Report for Fetched {}
