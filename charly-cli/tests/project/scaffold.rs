use charly_cli::project::{NEW_PROJECT_FILE, Project, SAMPLE_FILES, doctor, new_project, write_sample};

use crate::util::{Fixture, err_text};

#[test]
fn new_project_scaffolds_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("proj");
    let created = new_project(&root).unwrap();
    assert_eq!(
        created.to_string(),
        format!("created project in {} (charly.yml, box/, candy/)\n", root.display())
    );
    let project = created.project();
    assert_eq!(std::fs::read_to_string(root.join("charly.yml")).unwrap(), NEW_PROJECT_FILE);
    assert!(root.join("box").is_dir() && root.join("candy").is_dir());
    assert!(project.validate().unwrap().problems.is_empty());
    let err = err_text(new_project(&root));
    assert_eq!(
        err,
        format!("{} already exists; refusing to overwrite it", root.join("charly.yml").display())
    );
    std::fs::write(root.join("charly.yml"), "").unwrap();
    assert!(new_project(&root).is_err(), "an empty charly.yml is not overwritten either");
}

#[test]
fn a_project_built_from_nothing_validates() {
    let dir = tempfile::tempdir().unwrap();
    let p = new_project(dir.path()).unwrap().project();
    p.new_box("web", "quay.io/fedora/fedora:43").unwrap();
    p.new_candy("tools").unwrap();
    p.add_candy("web", "tools").unwrap();
    p.candy_set("tools", "tools.candy.description", "command-line tools").unwrap();
    assert!(p.validate().unwrap().problems.is_empty());
    assert_eq!(p.list_boxes().unwrap().boxes, ["web"]);
    assert_eq!(p.list_candies().unwrap().candies, ["tools"]);
    let err = err_text(p.new_box("tools", "x"));
    assert_eq!(
        err,
        "a node named `tools` already exists in candy/tools/charly.yml; node names are unique in a project"
    );
    let err = err_text(p.new_candy("tools"));
    assert!(err.starts_with("a node named `tools` already exists"), "{err}");
    let err = err_text(p.new_box("Web", "x"));
    assert!(err.starts_with("`Web` is not a valid box name"), "{err}");
}

#[test]
fn set_errors_name_the_segment_and_the_file() {
    let f = Fixture::sample();
    let err = err_text(f.project.set("hello.box.base.tag", "1"));
    assert_eq!(
        err,
        "cannot set \"hello.box.base.tag\" in charly.yml: segment `hello.box.base` holds a scalar, not a map; \
         only maps (or an empty value) can hold keys"
    );
    let err = err_text(f.project.set("hello.box.candy.x", "1"));
    assert!(err.contains("segment `hello.box.candy` holds a list"), "{err}");
    let err = err_text(f.project.set("hello..box", "1"));
    assert!(err.starts_with("bad path \"hello..box\": empty segment"), "{err}");
    let err = err_text(f.project.set("a", "[unclosed"));
    assert!(err.starts_with("the value \"[unclosed\" is not valid YAML"), "{err}");
    let err = err_text(f.project.candy_set("ghost", "ghost.candy", "{}"));
    assert_eq!(err, "candy/ghost/charly.yml is missing");
}

#[test]
fn set_parses_values_as_yaml_and_escaped_keys() {
    let f = Fixture::with(&[("charly.yml", "project:\n  version: 1\n")]);
    let p = &f.project;
    let mut out = String::new();
    out += &p.set("project.defaults", "{registry: ghcr.io/x}").unwrap().to_string();
    out += &p.set(r"project.defaults.labels.org\.example\.team", "core").unwrap().to_string();
    out += &p.set("project.defaults.ports.8080", "true").unwrap().to_string();
    out += &p.set("project.defaults.none", "null").unwrap().to_string();
    assert_eq!(
        f.read("charly.yml"),
        "project:\n  version: 1\n  defaults: {registry: ghcr.io/x, labels: {org.example.team: core}, ports: {'8080': true}, none: null}\n"
    );
    assert_eq!(
        out,
        "set project.defaults in charly.yml\nset project.defaults.labels.\"org.example.team\" in charly.yml\n\
         set project.defaults.ports.8080 in charly.yml\nset project.defaults.none in charly.yml\n"
    );
}

#[test]
fn the_sample_project_is_written_out_once() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_sample(dir.path()).unwrap();
    // write_sample no longer prints "wrote the sample project ..." (the command shape: it
    // returns the project; `ProjectSources::locate` announces the sample): check the files.
    for (relative, contents) in SAMPLE_FILES {
        assert_eq!(std::fs::read_to_string(dir.path().join(relative)).unwrap(), contents, "{relative}");
    }
    assert_eq!(p.list_boxes().unwrap().boxes, ["hello"]);
    p.set("hello.box.base", "quay.io/fedora/fedora:44").unwrap();
    let again = write_sample(dir.path()).unwrap();
    assert_eq!(again, p);
    assert!(std::fs::read_to_string(dir.path().join("charly.yml")).unwrap().contains("fedora:44"));
}

#[test]
fn lists_and_open() {
    let f = Fixture::sample();
    let list = f.project.list_checks().unwrap();
    assert_eq!(
        list.to_string(),
        "hello-svc-ping\tcandy/hello-svc/charly.yml\tthe hello server answers ping\n"
    );
    let out = f.project.list_boxes().unwrap().to_string() + &f.project.list_candies().unwrap().to_string();
    assert_eq!(out, "hello\nhello-svc\n");
    let checks = list.checks;
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].name, "hello-svc-ping");
    assert_eq!(checks[0].description, "the hello server answers ping");
    assert_eq!(checks[0].method.as_deref(), Some("ping"));
    let empty = tempfile::tempdir().unwrap();
    let err = err_text(Project::open(empty.path()));
    assert!(err.ends_with("is not a charly project (no charly.yml): create one with `charly box new project`, or name a project with -C/--dir, CHARLY_PROJECT_DIR or CHARLY_PROJECT_REPO"), "{err}");
}

#[test]
fn doctor_reports_tools_and_project() {
    let f = Fixture::sample();
    let report = doctor(Some(&f.project)).unwrap();
    assert_eq!(report.project.as_deref(), Some(f.root()));
    assert_eq!(report.problems, 0);
    assert!(report.git.as_deref().is_some_and(|v| v.starts_with("git version")), "{report:?}");
    let text = report.to_string();
    assert!(text.starts_with(&format!("charly  {}\npodman  ", env!("CARGO_PKG_VERSION"))), "{text}");
    assert!(text.contains(&format!("project {}\n", f.root().display())), "{text}");
    let report = doctor(None).unwrap();
    assert_eq!(report.project, None);
    assert!(
        report.to_string().ends_with("project none (no charly.yml; `charly box new project` makes one)\n")
    );
}
