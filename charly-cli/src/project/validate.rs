//! `box.validate`: every node well formed, every referenced candy present, no build-context `mcp:`
//! check.
//!
//! Each rule is a `check_*` function with its rule in a comment; [`Project::validate`] runs them
//! all and collects every problem rather than stopping at the first.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use charly::client::TransportKind;
use serde_json::Value;
use yaml_edit::Document;

use super::candy_files;
use super::error::Result;
use super::model::{FileNodes, Kind, Node, PROJECT_FILE, Project, flatten, nodes_of};
use super::names::check_package;
use super::problem::Problem;
use super::report::Validation;
use super::runtime::{self, Runtime};

const RUNTIME_HOME: &str = "a candy's file (candy/<name>/charly.yml), where the candy's boxes pick it up";

const BOX_KEYS: [&str; 7] = ["base", "candy", "description", "distro", "env", "merge", "security"];
const CANDY_KEYS: [&str; 2] = ["description", "distro"];
const PROJECT_KEYS: [&str; 3] = ["version", "defaults", "description"];

impl Project {
    /// `box.validate`: checks the whole project and returns every problem (none when valid).
    pub fn validate(&self) -> Result<Validation> {
        let (nodes, problems) = self.load()?;
        self.check_nodes(nodes, problems)
    }

    /// The problems an edit adds: those the project has with `after` as the contents of `file`
    /// (relative to the root) that it does not have with `before`, each compared whole (file,
    /// node and message) and counted, so a problem the edit repeats is new too. Both sides are
    /// [`validate`](Project::validate)'s own checks on the documents in memory; the project's
    /// other files are read once for both.
    pub(crate) fn problems_added(
        &self,
        file: &Path,
        before: &Document,
        after: &Document,
    ) -> Result<Vec<Problem>> {
        let mut files = self.read_files(Some((file, before)))?;
        let mut old = self.check_nodes_of(files.clone())?;
        if let Some(slot) = files.iter_mut().find(|(f, _)| f == file) {
            slot.1 = nodes_of(after, file);
        }
        let new = self.check_nodes_of(files)?;
        Ok(new
            .into_iter()
            .filter(|p| match old.iter().position(|o| o == p) {
                Some(i) => {
                    old.swap_remove(i);
                    false
                }
                None => true,
            })
            .collect())
    }

    fn check_nodes_of(&self, files: Vec<FileNodes>) -> Result<Vec<Problem>> {
        let (nodes, problems) = flatten(files);
        Ok(self.check_nodes(nodes, problems)?.problems)
    }

    /// Runs every rule on `nodes`, read with `problems` (the files that could not be read).
    fn check_nodes(&self, nodes: Vec<Node>, mut problems: Vec<Problem>) -> Result<Validation> {
        let candies: Vec<&str> =
            nodes.iter().filter(|n| n.kind == Some(Kind::Candy)).map(|n| n.name.as_str()).collect();
        check_unique_names(&nodes, &mut problems);
        check_project_node(&nodes, &mut problems);
        for node in &nodes {
            check_node(node, &candies, &mut problems);
        }
        // Each box's candies together (names declared twice, seeded volumes), data and file
        // sources.
        if let Ok(beneath) = self.beneath() {
            for node in nodes.iter().filter(|n| n.kind == Some(Kind::Box)) {
                if let Ok(b) = self.resolve_in(&nodes, &beneath, &node.name) {
                    let messages = b.runtime().conflicts();
                    problems.extend(messages.into_iter().map(|m| Problem::node(node, m)));
                }
            }
            for node in nodes.iter().filter(|n| n.kind == Some(Kind::File)) {
                if let Some(candy) = candy_of(&node.file) {
                    let files = candy_files::parse(node.spec(), candy, &mut Vec::new());
                    let messages = candy_files::missing_sources(&beneath, &files);
                    problems.extend(messages.into_iter().map(|m| Problem::node(node, m)));
                }
            }
            for node in nodes.iter().filter(|n| n.kind == Some(Kind::Data)) {
                if let Some(candy) = candy_of(&node.file) {
                    let mut rt = Runtime::default();
                    runtime::parse("data", node.spec(), candy, &mut rt, &mut Vec::new());
                    let messages = super::image::missing_sources(&beneath, &rt);
                    problems.extend(messages.into_iter().map(|m| Problem::node(node, m)));
                }
            }
        }
        let unreadable: Vec<PathBuf> = problems.iter().map(|p| p.file.clone()).collect();
        for file in self.yaml_files()?.iter().filter(|f| !unreadable.contains(f)) {
            check_candy_file(file, &nodes, &mut problems);
        }
        Ok(Validation { nodes: nodes.len(), problems })
    }
}

// Rule: node names are unique across the project's files.
fn check_unique_names(nodes: &[Node], problems: &mut Vec<Problem>) {
    let mut seen: HashMap<&str, &Path> = HashMap::new();
    for node in nodes {
        if let Some(first) = seen.insert(&node.name, &node.file) {
            problems.push(Problem::node(node, format!("the name is already used in {}", first.display())));
        }
    }
}

// Rule: charly.yml has exactly one `project:` node, and no other file has one.
fn check_project_node(nodes: &[Node], problems: &mut Vec<Problem>) {
    let projects: Vec<&Node> = nodes.iter().filter(|n| n.kind == Some(Kind::Project)).collect();
    // A charly.yml that could not be read is already a problem: no second one for its node.
    let unreadable = problems.iter().any(|p| p.file == Path::new(PROJECT_FILE));
    if !unreadable && !projects.iter().any(|n| n.file == Path::new(PROJECT_FILE)) {
        problems
            .push(Problem::file(Path::new(PROJECT_FILE), "no `project:` node; add `project: {version: 1}`"));
    }
    for extra in projects.iter().skip(1) {
        problems.push(Problem::node(extra, "a project has one `project:` node, in charly.yml"));
    }
}

// Rule: candy/<name>/charly.yml holds the candy node `<name>`, and candies live only there.
fn check_candy_file(file: &Path, nodes: &[Node], problems: &mut Vec<Problem>) {
    let Ok(rest) = file.strip_prefix("candy") else { return };
    let Some(name) = rest.iter().next().and_then(|n| n.to_str()) else { return };
    let here = |n: &&Node| n.file == file;
    if !nodes.iter().filter(here).any(|n| n.name == name && n.kind == Some(Kind::Candy)) {
        problems.push(Problem::file(
            file,
            format!("no candy node `{name}`; this file must define candy `{name}`"),
        ));
    }
    for node in nodes.iter().filter(here).filter(|n| n.kind == Some(Kind::Candy) && n.name != name) {
        problems.push(Problem::node(
            node,
            format!("candy `{}` belongs in candy/{}/charly.yml", node.name, node.name),
        ));
    }
}

// Rule: a node is a map with exactly one kind key; only check nodes carry other keys; each kind's
// value has its own shape.
fn check_node(node: &Node, candies: &[&str], problems: &mut Vec<Problem>) {
    let Some(map) = node.body.as_object() else {
        problems
            .push(Problem::node(node, format!("a node is a map with one kind key ({})", Kind::keyed_list())));
        return;
    };
    if node.kind == Some(Kind::Project) {
        check_project(node, &node.body, problems);
        return;
    }
    let kinds: Vec<&str> = Kind::KEYED.iter().map(|k| k.key()).filter(|k| map.contains_key(*k)).collect();
    let Some(kind) = node.kind else {
        let message = if kinds.is_empty() {
            format!("carries no kind key; give it one of {}", Kind::keyed_list())
        } else {
            format!("carries several kind keys ({}); a node has exactly one", kinds.join(", "))
        };
        problems.push(Problem::node(node, message));
        return;
    };
    // A check's keys are the check plan's business (`check_check`).
    if kind != Kind::Check {
        for key in map.keys().filter(|k| *k != kind.key()) {
            let hint = format!("put it under `{}:`", kind.key());
            problems
                .push(Problem::node(node, format!("unknown key `{key}` next to `{}:`; {hint}", kind.key())));
        }
    }
    let spec = node.spec();
    match kind {
        Kind::Project => {}
        Kind::Box => check_box(node, spec, candies, problems),
        Kind::Candy => check_candy(node, spec, problems),
        Kind::Port => check_port(node, spec, problems),
        Kind::McpProvide => check_mcp_provide(node, spec, problems),
        Kind::Check => check_check(node, &node.body, problems),
        Kind::File => check_file(node, spec, problems),
        _ => check_runtime(node, kind, spec, problems),
    }
}

fn check_keys(node: &Node, what: &str, spec: &Value, allowed: &[&str], problems: &mut Vec<Problem>) {
    for key in spec.as_object().into_iter().flat_map(|m| m.keys()) {
        if !allowed.contains(&key.as_str()) {
            let message = format!("unknown key `{key}` in `{what}:`; allowed: {}", allowed.join(", "));
            problems.push(Problem::node(node, message));
        }
    }
}

fn check_project(node: &Node, spec: &Value, problems: &mut Vec<Problem>) {
    if !(spec.is_object() || spec.is_null()) {
        problems.push(Problem::node(node, "the project node must be a map (version, defaults, description)"));
        return;
    }
    check_keys(node, "project", spec, &PROJECT_KEYS, problems);
    if let Some(version) = spec.get("version").filter(|v| v.as_i64() != Some(1)) {
        problems.push(Problem::node(node, format!("project version {version} is not supported; use 1")));
    }
}

fn check_box(node: &Node, spec: &Value, candies: &[&str], problems: &mut Vec<Problem>) {
    if !spec.is_object() {
        problems
            .push(Problem::node(node, "`box:` must be a map with `base:` (an image) and `candy:` (a list)"));
        return;
    }
    check_keys(node, "box", spec, &BOX_KEYS, problems);
    // A hand-written name must be one `box new box` would take: it becomes the image's name,
    // which podman wants lowercase.
    if let Err(e) = super::names::check_name(&node.name, "box") {
        problems.push(Problem::node(node, e.to_string()));
    }
    match spec.get("base") {
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        _ => problems
            .push(Problem::node(node, "`box.base` must name a base image, e.g. quay.io/fedora/fedora:43")),
    }
    if let Some(distro) = spec.get("distro").filter(|d| !d.is_null())
        && !matches!(distro.as_str(), Some("fedora" | "debian" | "ubuntu" | "arch"))
    {
        problems.push(Problem::node(
            node,
            format!("`box.distro` is {distro}; allowed: fedora, debian, ubuntu, arch"),
        ));
    }
    match spec.get("candy") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                match item.as_str() {
                    Some(name) if candies.contains(&name) => {}
                    Some(name) => problems.push(Problem::node(
                        node,
                        format!("uses candy `{name}`, which does not exist (create it with `charly box new candy {name}`)"),
                    )),
                    None => problems.push(Problem::node(node, format!("`box.candy` item {item} is not a candy name"))),
                }
            }
        }
        Some(other) => problems
            .push(Problem::node(node, format!("`box.candy` must be a list of candy names, not {other}"))),
    }
    check_box_merge(node, spec.get("merge"), problems);
    for problem in super::image::box_runtime(spec).1 {
        problems.push(Problem::node(node, problem));
    }
}

// Rule: a box's `merge:` (what `box.merge` reads) is a map of `auto` (true/false) and the
// limits `max_mb`/`max_total_mb` (whole MB, at least 1).
fn check_box_merge(node: &Node, merge: Option<&Value>, problems: &mut Vec<Problem>) {
    let Some(merge) = merge.filter(|m| !m.is_null()) else { return };
    if !merge.is_object() {
        problems.push(Problem::node(node, "`box.merge` must be a map (auto, max_mb, max_total_mb)"));
        return;
    }
    check_keys(node, "box.merge", merge, &["auto", "max_mb", "max_total_mb"], problems);
    if let Some(auto) = merge.get("auto").filter(|a| !a.is_boolean()) {
        problems.push(Problem::node(node, format!("`box.merge.auto` is {auto}; allowed: true, false")));
    }
    for key in ["max_mb", "max_total_mb"] {
        if let Some(v) = merge.get(key).filter(|v| v.as_u64().is_none_or(|n| n == 0)) {
            problems.push(Problem::node(
                node,
                format!("`box.merge.{key}` is {v}; it is a size in MB, at least 1"),
            ));
        }
    }
}

fn check_candy(node: &Node, spec: &Value, problems: &mut Vec<Problem>) {
    if spec.is_null() {
        return;
    }
    if !spec.is_object() {
        problems.push(Problem::node(node, "`candy:` must be a map (description, distro)"));
        return;
    }
    check_keys(node, "candy", spec, &CANDY_KEYS, problems);
    let Some(distro) = spec.get("distro").filter(|d| !d.is_null()) else { return };
    let Some(distro) = distro.as_object() else {
        problems.push(Problem::node(node, "`candy.distro` must be a map of distribution to packages"));
        return;
    };
    for (name, section) in distro {
        let keys: &[&str] = if name == "arch" { &["package", "aur"] } else { &["package"] };
        let at = format!("candy.distro.{name}");
        check_keys(node, &at, section, keys, problems);
        check_package_list(node, &format!("{at}.package"), section.get("package"), problems);
        if let Some(aur) = section.get("aur").filter(|a| !a.is_null()) {
            check_keys(node, &format!("{at}.aur"), aur, &["package"], problems);
            check_package_list(node, &format!("{at}.aur.package"), aur.get("package"), problems);
        }
    }
}

fn check_package_list(node: &Node, at: &str, list: Option<&Value>, problems: &mut Vec<Problem>) {
    match list {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                if item.as_str().is_none_or(|p| check_package(p).is_err()) {
                    problems.push(Problem::node(
                        node,
                        format!("`{at}` has {item}, which is not a valid package name"),
                    ));
                }
            }
        }
        Some(other) => {
            problems.push(Problem::node(node, format!("`{at}` must be a list of packages, not {other}")))
        }
    }
}

fn check_port(node: &Node, spec: &Value, problems: &mut Vec<Problem>) {
    let ports = match spec {
        Value::Array(items) => items.clone(),
        other => vec![other.clone()],
    };
    for port in ports {
        if !port.as_u64().is_some_and(|p| (1..=65535).contains(&p)) {
            problems.push(Problem::node(node, format!("port {port} is not a port number (1 to 65535)")));
        }
    }
}

fn check_mcp_provide(node: &Node, spec: &Value, problems: &mut Vec<Problem>) {
    let Some(items) = spec.as_array() else {
        problems.push(Problem::node(node, "`mcp_provide:` must be a list of {name, url, transport}"));
        return;
    };
    for item in items {
        let (Some(name), Some(_url)) =
            (item.get("name").and_then(Value::as_str), item.get("url").and_then(Value::as_str))
        else {
            problems.push(Problem::node(
                node,
                format!("`mcp_provide` entry {item} needs `name` and `url` strings"),
            ));
            continue;
        };
        // The client's own parser judges the transport, so a label the resolver accepts is
        // never refused here.
        let transport = match item.get("transport") {
            None | Some(Value::Null) => Ok(TransportKind::StreamableHttp),
            Some(Value::String(t)) => t.parse::<TransportKind>().map_err(|e| e.to_string()),
            Some(other) => Err(format!("transport {other} is not a string")),
        };
        if let Err(why) = transport {
            problems.push(Problem::node(node, format!("`mcp_provide` entry `{name}`: {why}")));
        }
    }
}

// Rule: a check node follows the check plan's rules (`crate::check::check_node_problems`, the
// one home of them, so `box.validate` and `check validate` agree on every check).
fn check_check(node: &Node, body: &Value, problems: &mut Vec<Problem>) {
    let Value::Object(body) = body else {
        problems.push(Problem::node(node, "a check is a map (check:, a verb, matchers)"));
        return;
    };
    for message in crate::check::check_node_problems(&node.name, body) {
        problems.push(Problem::node(node, message));
    }
}

// Rule: a `file:` node lives in a candy's file (its sources are in the candy's directory) and
// has the shape `super::candy_files` reads.
fn check_file(node: &Node, spec: &Value, problems: &mut Vec<Problem>) {
    let Some(candy) = candy_of(&node.file) else {
        problems.push(Problem::node(node, format!("a `file:` node belongs in {RUNTIME_HOME}")));
        return;
    };
    let mut messages = Vec::new();
    candy_files::parse(spec, candy, &mut messages);
    problems.extend(messages.into_iter().map(|m| Problem::node(node, m)));
}

// Rule: a deploy-time node (service, volume, env, ...) lives in a candy's file and has the
// shape `super::runtime` reads; each problem names the key path and what is allowed.
fn check_runtime(node: &Node, kind: Kind, spec: &Value, problems: &mut Vec<Problem>) {
    let Some(candy) = candy_of(&node.file) else {
        problems.push(Problem::node(node, format!("a `{kind}:` node belongs in {RUNTIME_HOME}")));
        return;
    };
    let mut messages = Vec::new();
    runtime::parse(kind.key(), spec, candy, &mut Runtime::default(), &mut messages);
    problems.extend(messages.into_iter().map(|m| Problem::node(node, m)));
}

/// The candy whose file `file` is (`candy/<name>/charly.yml` → `<name>`).
pub(crate) fn candy_of(file: &Path) -> Option<&str> {
    let rest = file.strip_prefix("candy").ok()?;
    let mut parts = rest.iter();
    let name = parts.next()?.to_str()?;
    (parts.next()? == PROJECT_FILE && parts.next().is_none()).then_some(name)
}
