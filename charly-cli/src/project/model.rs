//! The project on disk, read as a list of name-first nodes.
//!
//! A project is a directory with `charly.yml`, `box/` and `candy/`; candy `<name>` lives in
//! `candy/<name>/charly.yml`. Every YAML file is a map from node name to node, and a node's kind is
//! the one kind key it carries (`box:`, `candy:`, `check:`, ...). For reading, nodes are converted to
//! [`serde_json::Value`]; edits never go through this model (see [`super::yamlfile`]).

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use yaml_edit::{Document, YamlNode};

use super::beneath::{Beneath, Refusal};
use super::cancel::Cancel;
use super::error::{ProjectError, Result};
use super::problem::Problem;
use super::report::{BoxList, CandyList, CheckList, CheckSummary};
use super::yamlfile;

/// The file that holds the project node and the boxes.
pub const PROJECT_FILE: &str = "charly.yml";

/// A charly project: a root directory, and what cancels the changes made through it.
///
/// Every file a project operation reads or writes is resolved beneath the root (see
/// [`super::beneath`]): a symlink or a directory swapped for one while the operation runs
/// cannot lead it outside.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    cancel: Cancel,
}

/// Two projects are equal when they have the same root.
impl PartialEq for Project {
    fn eq(&self, other: &Project) -> bool {
        self.root == other.root
    }
}

impl Eq for Project {}

impl Project {
    /// Opens the project in `dir`, which must hold a `charly.yml`.
    pub fn open(dir: impl AsRef<Path>) -> Result<Project> {
        let dir = dir.as_ref();
        if !dir.join(PROJECT_FILE).is_file() {
            return Err(ProjectError::NotAProject { dir: dir.to_owned() });
        }
        Ok(Project::at(dir))
    }

    /// A project rooted at `dir`, whether or not it has been scaffolded yet (a directory named
    /// explicitly with `-C/--dir` is used before it holds a `charly.yml`).
    pub fn at(dir: impl Into<PathBuf>) -> Project {
        Project { root: dir.into(), cancel: Cancel::default() }
    }

    /// This project, with its changes stopped by `cancel` before their point of no return
    /// (a served call passes its cancellation token): a cancelled change writes nothing and
    /// fails with [`ProjectError::Cancelled`].
    pub fn with_cancel(mut self, cancel: Cancel) -> Project {
        self.cancel = cancel;
        self
    }

    /// What cancels this project's changes.
    pub(crate) fn cancel(&self) -> &Cancel {
        &self.cancel
    }

    /// The root, held open: every path is resolved beneath it.
    pub(crate) fn beneath(&self) -> Result<Beneath> {
        Beneath::open(&self.root).map_err(|e| ProjectError::io("open project root", &self.root, e))
    }

    /// The project's root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `charly.yml` in the root.
    pub fn project_file(&self) -> PathBuf {
        self.root.join(PROJECT_FILE)
    }

    /// `candy/<name>/charly.yml`, relative to the root.
    pub fn candy_file(name: &str) -> PathBuf {
        Path::new("candy").join(name).join(PROJECT_FILE)
    }

    /// The project's YAML files, relative to the root: `charly.yml`, then each
    /// `candy/<name>/charly.yml` in name order.
    /// Candy directories reached through a symlink leading outside the root are left out.
    pub fn yaml_files(&self) -> Result<Vec<PathBuf>> {
        let mut files = vec![PathBuf::from(PROJECT_FILE)];
        let beneath = self.beneath()?;
        let entries = match beneath.list(Path::new("candy")) {
            Ok(entries) => entries,
            Err(Refusal::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(files);
            }
            Err(Refusal::Io { at, error }) => return Err(ProjectError::io("list", at, error)),
            Err(refusal) => {
                tracing::warn!(?refusal, "candy/ leads outside the project root; its candies are ignored");
                return Ok(files);
            }
        };
        let mut names: Vec<String> = entries
            .into_iter()
            .map(|name| name.to_string_lossy().into_owned())
            .filter(|name| beneath.is_file(&Project::candy_file(name)))
            .collect();
        names.sort();
        files.extend(names.iter().map(|n| Project::candy_file(n)));
        Ok(files)
    }

    /// Reads every node of every YAML file. Files that cannot be read become problems rather than
    /// errors, so [`validate`](Project::validate) can report all of them.
    pub fn load(&self) -> Result<(Vec<Node>, Vec<Problem>)> {
        Ok(flatten(self.read_files(None)?))
    }

    /// Every YAML file's nodes, in [`yaml_files`](Project::yaml_files) order, or the problem
    /// that kept the file from being read; `edited` (a file as `yaml_files` names it, and its
    /// parsed text) stands in for that file's contents, so an edit is checked before it is
    /// written without reading the file again.
    pub(crate) fn read_files(&self, edited: Option<(&Path, &Document)>) -> Result<Vec<FileNodes>> {
        if !self.root.is_dir() {
            return Err(ProjectError::NoProjectDir { dir: self.root.clone() });
        }
        // A directory with nothing of a project (no charly.yml, box/ or candy/) is no project,
        // said as such (`-C /tmp` read as a project of one problem, "charly.yml is missing":
        // trial 28, L4); candies without their charly.yml stay a project with that problem.
        let there = |name: &str| std::fs::symlink_metadata(self.root.join(name)).is_ok();
        if !there("charly.yml") && !there("box") && !there("candy") {
            return Err(ProjectError::NotAProject { dir: self.root.clone() });
        }
        let beneath = self.beneath()?;
        let mut files = Vec::new();
        for file in self.yaml_files()? {
            let nodes = match edited {
                Some((path, doc)) if path == file => nodes_of(doc, &file),
                _ => match yamlfile::load(&beneath, &file) {
                    Ok(doc) => nodes_of(&doc, &file),
                    Err(e) => Err(Problem::file(&file, e.file_problem())),
                },
            };
            files.push((file, nodes));
        }
        Ok(files)
    }

    /// Reads every node, failing when any file cannot be read.
    pub fn load_strict(&self) -> Result<Vec<Node>> {
        let (nodes, problems) = self.load()?;
        if problems.is_empty() { Ok(nodes) } else { Err(ProjectError::Invalid { problems }) }
    }

    /// `box.list.boxes`: the names of the boxes, in file order.
    pub fn list_boxes(&self) -> Result<BoxList> {
        let (nodes, unreadable) = self.load()?;
        Ok(BoxList { boxes: names_of(&nodes, Kind::Box), warnings: left_out(&unreadable) })
    }

    /// `box.list.candies`: the names of the candies, in name order.
    pub fn list_candies(&self) -> Result<CandyList> {
        let (nodes, unreadable) = self.load()?;
        Ok(CandyList { candies: names_of(&nodes, Kind::Candy), warnings: left_out(&unreadable) })
    }

    /// `box.list.checks`: every check node.
    pub fn list_checks(&self) -> Result<CheckList> {
        let (nodes, unreadable) = self.load()?;
        let checks: Vec<CheckSummary> = nodes
            .iter()
            .filter(|n| n.kind == Some(Kind::Check))
            .map(|n| CheckSummary {
                name: n.name.clone(),
                file: n.file.clone(),
                description: n.body.get("check").and_then(Value::as_str).unwrap_or_default().to_owned(),
                method: n.body.get("mcp").and_then(Value::as_str).map(str::to_owned),
            })
            .collect();
        Ok(CheckList { checks, warnings: left_out(&unreadable) })
    }
}

/// The warnings of a leaf that only reads (the lists, `box.inspect`) for the files it left out,
/// `FILE is left out: WHY`: such a leaf shows what the readable files hold rather than failing
/// on one broken file, so a project with one can still be looked at, and fixed.
pub(crate) fn left_out(unreadable: &[Problem]) -> Vec<String> {
    unreadable.iter().map(|p| format!("{} is left out: {}", p.file.display(), p.message)).collect()
}

/// One YAML file of a project (relative to the root) and its nodes, or the problem that kept it
/// from being read.
pub(crate) type FileNodes = (PathBuf, std::result::Result<Vec<Node>, Problem>);

/// The nodes of parsed `file`, or the problem with its top level.
pub(crate) fn nodes_of(doc: &Document, file: &Path) -> std::result::Result<Vec<Node>, Problem> {
    let Some(mapping) = doc.as_mapping() else {
        return Err(Problem::file(file, "the top level must be a map of named nodes"));
    };
    Ok(mapping
        .iter()
        .map(|(key, value)| {
            let name = key.as_scalar().map(|s| s.as_string()).unwrap_or_else(|| key.to_string());
            let body = to_json(&value);
            let kind = Kind::of(&name, &body);
            Node { name, file: file.to_owned(), kind, body }
        })
        .collect())
}

/// Every file's nodes in one list, and the problems of the files that could not be read.
pub(crate) fn flatten(files: Vec<FileNodes>) -> (Vec<Node>, Vec<Problem>) {
    let mut nodes = Vec::new();
    let mut problems = Vec::new();
    for (_, read) in files {
        match read {
            Ok(n) => nodes.extend(n),
            Err(p) => problems.push(p),
        }
    }
    (nodes, problems)
}

fn names_of(nodes: &[Node], kind: Kind) -> Vec<String> {
    nodes.iter().filter(|n| n.kind == Some(kind)).map(|n| n.name.clone()).collect()
}

/// A named node read from a project file.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The node's name (its key at the top level of the file).
    pub name: String,
    /// The file it is in, relative to the root.
    pub file: PathBuf,
    /// Its kind, when it carries exactly one kind key.
    pub kind: Option<Kind>,
    /// The whole node (the map under its name) as JSON.
    pub body: Value,
}

impl Node {
    /// The value under the node's kind key (`hello.box`, for a box `hello`); for the project node,
    /// the whole body.
    pub fn spec(&self) -> &Value {
        match self.kind {
            Some(Kind::Project) => &self.body,
            Some(kind) => self.body.get(kind.key()).unwrap_or(&Value::Null),
            None => &Value::Null,
        }
    }
}

/// The kinds of node; each is named by the key that carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// The node named `project` — project-wide settings, once, in charly.yml. It is the one node
    /// whose kind comes from its name rather than from a kind key.
    Project,
    /// `box:` — a container image.
    Box,
    /// `candy:` — a layer: packages for each distribution.
    Candy,
    /// `port:` — ports a candy's service listens on.
    Port,
    /// `mcp_provide:` — MCP servers a candy provides.
    McpProvide,
    /// `check:` — a check step (with a verb such as `mcp:`).
    Check,
    /// `file:` — files of the candy's directory copied into the image
    /// ([`super::candy_files::CandyFile`]).
    File,
    /// `service:` — supervisord programs ([`super::runtime::Service`]).
    Service,
    /// `volume:` — volumes the box wants ([`super::runtime::VolumeDecl`]).
    Volume,
    /// `env:` — `KEY=VALUE` lines of the container's environment.
    Env,
    /// `alias:` — commands run in the box under a short name ([`super::runtime::AliasDecl`]).
    Alias,
    /// `route:` — HTTP routes to container ports ([`super::runtime::Route`]).
    Route,
    /// `data:` — data seeded into volumes ([`super::runtime::DataSeed`]).
    Data,
    /// `hook:` — `pre_remove` / `post_enable` commands ([`super::runtime::Hooks`]).
    Hook,
    /// `security:` — how the container is confined ([`super::runtime::Security`]).
    Security,
}

impl Kind {
    /// Every kind carried by a kind key, in documentation order.
    pub const KEYED: [Kind; 14] = [
        Kind::Box,
        Kind::Candy,
        Kind::Port,
        Kind::McpProvide,
        Kind::Check,
        Kind::File,
        Kind::Service,
        Kind::Volume,
        Kind::Env,
        Kind::Alias,
        Kind::Route,
        Kind::Data,
        Kind::Hook,
        Kind::Security,
    ];

    /// The kinds a candy's file declares for running the box (see [`super::runtime`]).
    pub const RUNTIME: &[Kind] = Kind::KEYED.split_at(6).1;

    /// Every kind key, comma-separated, for messages.
    pub fn keyed_list() -> String {
        Kind::KEYED.map(Kind::key).join(", ")
    }

    /// The key that carries this kind.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Project => "project",
            Kind::Box => "box",
            Kind::Candy => "candy",
            Kind::Port => "port",
            Kind::McpProvide => "mcp_provide",
            Kind::Check => "check",
            Kind::File => "file",
            Kind::Service => "service",
            Kind::Volume => "volume",
            Kind::Env => "env",
            Kind::Alias => "alias",
            Kind::Route => "route",
            Kind::Data => "data",
            Kind::Hook => "hook",
            Kind::Security => "security",
        }
    }

    /// The kind of node `name`: [`Kind::Project`] for the node named `project`, else the one kind
    /// key its body carries, if exactly one. A node with `check:` is a check whatever else it
    /// carries: check verbs share names with kinds (`port:`, `service:`).
    pub fn of(name: &str, body: &Value) -> Option<Kind> {
        if name == "project" {
            return Some(Kind::Project);
        }
        let map = body.as_object()?;
        if map.contains_key(Kind::Check.key()) {
            return Some(Kind::Check);
        }
        let mut kinds = Kind::KEYED.into_iter().filter(|k| map.contains_key(k.key()));
        let kind = kinds.next()?;
        kinds.next().is_none().then_some(kind)
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// Converts a YAML node to JSON with YAML 1.2 core-schema typing: plain `true`/`false`, integers,
/// floats and null are typed; quoted and block scalars are strings. Aliases become their text.
pub(crate) fn to_json(node: &YamlNode) -> Value {
    match node {
        YamlNode::Mapping(m) => {
            let mut map = Map::new();
            for (k, v) in m.iter() {
                let key = k.as_scalar().map(|s| s.as_string()).unwrap_or_else(|| k.to_string());
                map.insert(key, to_json(&v));
            }
            Value::Object(map)
        }
        YamlNode::Sequence(s) => Value::Array(s.values().map(|v| to_json(&v)).collect()),
        YamlNode::Scalar(s) => {
            if s.is_quoted() || s.is_block() {
                Value::String(s.as_string())
            } else if s.is_null() {
                Value::Null
            } else if let Some(b) = s.as_bool() {
                Value::Bool(b)
            } else if let Some(i) = s.as_i64() {
                Value::from(i)
            } else if let Some(f) = s.as_f64().and_then(serde_json::Number::from_f64) {
                Value::Number(f)
            } else {
                Value::String(s.as_string())
            }
        }
        YamlNode::TaggedNode(t) => {
            if let Some(m) = t.as_mapping() {
                to_json(&YamlNode::Mapping(m))
            } else if let Some(s) = t.as_sequence() {
                to_json(&YamlNode::Sequence(s))
            } else {
                t.as_string().map_or(Value::Null, Value::String)
            }
        }
        YamlNode::Alias(a) => Value::String(a.to_string()),
    }
}
