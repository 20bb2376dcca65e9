//! Edits are checked against the whole project before they land (trial t28, M3): an edit that
//! would add a problem `box.validate` reports is refused, naming the problem, and every file is
//! left byte for byte as it was.

use std::collections::BTreeMap;
use std::path::Path;

use crate::util::{Fixture, err_text};

/// The sample project with a candy `tools` that box `hello` uses.
fn project() -> Fixture {
    let f = Fixture::sample();
    f.project.new_candy("tools").unwrap();
    f.project.add_candy("hello", "tools").unwrap();
    assert_eq!(f.project.validate().unwrap().problems, vec![]);
    f
}

/// Every file under `root` and its bytes.
fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![root.to_owned()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let name = path.strip_prefix(root).unwrap().display().to_string();
                files.insert(name, std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

#[test]
fn edits_that_would_break_the_project_are_refused_and_write_nothing() {
    let f = project();
    let before = snapshot(f.root());
    let p = &f.project;
    for (result, problem) in [
        (p.set("project", "null"), "charly.yml: node `project`: a node is a map with one kind key"),
        (
            p.set("hello.box.new.deep.key", "1"),
            "charly.yml: node `hello`: unknown key `new` in `box:`; allowed: base, candy,",
        ),
        (
            p.set("hello.box.candy", "[tools, extra]"),
            "charly.yml: node `hello`: uses candy `extra`, which does not exist",
        ),
        (p.set("hello.box.base", "''"), "charly.yml: node `hello`: `box.base` must name a base image"),
        (
            p.candy_set("tools", "tools-port.port", "[70000]"),
            "candy/tools/charly.yml: node `tools-port`: port 70000 is not a port number",
        ),
        (
            p.candy_set("tools", "tools.candy.distro.fedora.package", "[curl, 'rm -rf']"),
            "candy/tools/charly.yml: node `tools`: `candy.distro.fedora.package` has \"rm -rf\"",
        ),
    ] {
        let err = err_text(result);
        let file = if problem.starts_with("candy/") { "candy/tools/charly.yml" } else { "charly.yml" };
        let head = format!(
            "refusing to edit {file}: the edit would add 1 problem(s) to the project (nothing was written):\n  "
        );
        assert!(err.starts_with(&head), "{err}");
        assert!(err[head.len()..].starts_with(problem), "{err}");
        assert_eq!(snapshot(f.root()), before, "{err}");
    }
    assert_eq!(p.validate().unwrap().problems, vec![]);
}

#[test]
fn an_edit_of_a_project_with_problems_lands_unless_it_adds_one() {
    let f = project();
    // A problem the project already has (a box that names a candy that is not there) does not
    // stop an edit elsewhere, nor one that fixes it.
    std::fs::write(
        f.path("charly.yml"),
        f.read("charly.yml").replace("candy: [hello-svc, tools]", "candy: [hello-svc, tools, ghost]"),
    )
    .unwrap();
    let p = &f.project;
    assert_eq!(p.validate().unwrap().problems.len(), 1);
    p.set("hello.box.description", "still broken elsewhere").unwrap();
    // The same problem a second time is a new problem.
    let err = err_text(p.set("hello.box.candy", "[hello-svc, tools, ghost, ghost]"));
    assert!(err.contains("would add 1 problem(s)") && err.contains("candy `ghost`"), "{err}");
    p.set("hello.box.candy", "[hello-svc, tools]").unwrap();
    assert_eq!(p.validate().unwrap().problems, vec![]);
}

#[test]
fn candy_set_stays_inside_the_candys_own_nodes() {
    let f = project();
    let before = snapshot(f.root());
    let p = &f.project;
    for path in ["hello.box.base", "hello-svc.candy.description", "toolsx.port", "tools-", "project.version"]
    {
        let err = err_text(p.candy_set("tools", path, "hijack"));
        assert_eq!(
            err,
            format!(
                "candy tools: `{path}` starts outside the candy's nodes; a `candy set` path starts at one \
                 of them (tools) or at a new node named `tools-<name>`; edit another node with `box set` \
                 or `candy set` on its own candy"
            )
        );
    }
    assert_eq!(snapshot(f.root()), before);
    // The candy node, a new `tools-*` node, then that node again: all inside.
    p.candy_set("tools", "tools.candy.description", "command-line tools").unwrap();
    p.candy_set("tools", "tools-port.port", "[8080]").unwrap();
    p.candy_set("tools", "tools-port.port", "[8081]").unwrap();
    assert!(f.read("candy/tools/charly.yml").contains("tools-port:\n  port: [8081]\n"));
    // A node of the file that does not follow the naming is the candy's too.
    std::fs::write(
        f.path("candy/tools/charly.yml"),
        f.read("candy/tools/charly.yml") + "web-port:\n  port: [80]\n",
    )
    .unwrap();
    p.candy_set("tools", "web-port.port", "[81]").unwrap();
    assert_eq!(p.validate().unwrap().problems, vec![]);
}

#[test]
fn candy_set_help_shows_a_candy_path() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(["candy", "set", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{help}");
    assert!(help.contains("tools.candy.description"), "{help}");
    assert!(!help.contains(".box."), "a box path in candy set's help:\n{help}");
}
