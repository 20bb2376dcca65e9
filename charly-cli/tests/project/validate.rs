use crate::util::Fixture;

#[test]
fn the_sample_is_valid() {
    let f = Fixture::sample();
    let validation = f.project.validate().unwrap();
    assert_eq!(validation.problems, vec![]);
    assert_eq!(validation.to_string(), "ok: 6 nodes, no problems\n");
}

#[test]
fn every_problem_is_reported_with_file_node_and_what_is_allowed() {
    let f = Fixture::with(&[
        (
            "charly.yml",
            "\
project: {version: 2}
web:
  box:
    candy: [ghost, tools]
    colour: blue
both:
  box: {base: x}
  candy: {}
nothing:
  description: no kind
",
        ),
        (
            "candy/tools/charly.yml",
            "\
tools:
  candy:
    distro:
      fedora: {package: [curl, 'rm -rf']}
tools-port:
  port: [80, 70000]
tools-mcp:
  mcp_provide:
    - {name: a, url: 'http://x/mcp', transport: carrier-pigeon}
tools-build-check:
  check: pings during the build
  mcp: ping
  context: [build]
tools-call:
  check: calls a tool
  mcp: call
  context: [deploy]
tools-odd:
  check: odd method
  mcp: dance
  context: [deploy]
",
        ),
        ("candy/wrong/charly.yml", "other:\n  candy: {}\n"),
        ("candy/tabs/charly.yml", "tabs:\n\tcandy: {}\n"),
    ]);
    let validation = f.project.validate().unwrap();
    let lines: Vec<String> = validation.problems.iter().map(ToString::to_string).collect();
    let expected = [
        "candy/tabs/charly.yml: 2:1: Tabs are not allowed for indentation in YAML; fix the file first (indent with spaces, not tabs)",
        "charly.yml: node `project`: project version 2 is not supported; use 1",
        "charly.yml: node `web`: unknown key `colour` in `box:`; allowed: base, candy, description, distro, env, merge, security",
        "charly.yml: node `web`: `box.base` must name a base image, e.g. quay.io/fedora/fedora:43",
        "charly.yml: node `web`: uses candy `ghost`, which does not exist (create it with `charly box new candy ghost`)",
        "charly.yml: node `both`: carries several kind keys (box, candy); a node has exactly one",
        "charly.yml: node `nothing`: carries no kind key; give it one of box, candy, port, mcp_provide, check, file, service, volume, env, alias, route, data, hook, security",
        "candy/tools/charly.yml: node `tools`: `candy.distro.fedora.package` has \"rm -rf\", which is not a valid package name",
        "candy/tools/charly.yml: node `tools-port`: port 70000 is not a port number (1 to 65535)",
        "candy/tools/charly.yml: node `tools-mcp`: `mcp_provide` entry `a`: unsupported mcp transport \"carrier-pigeon\" (expected http, sse or stdio)",
        "candy/tools/charly.yml: node `tools-build-check`: mcp: ping needs context: [deploy] (mcp steps talk to a running container)",
        "candy/tools/charly.yml: node `tools-call`: mcp: call needs tool: <tool name>",
        "candy/tools/charly.yml: node `tools-odd`: mcp: unknown method \"dance\" (allowed: ping, servers, list-tools, list-resources, list-prompts, call, read, lint, list-skills, read-skill)",
        "candy/wrong/charly.yml: no candy node `wrong`; this file must define candy `wrong`",
        "candy/wrong/charly.yml: node `other`: candy `other` belongs in candy/other/charly.yml",
    ];
    assert_eq!(lines, expected);
    assert_eq!(validation.to_string(), format!("{}\n{} problem(s)\n", expected.join("\n"), expected.len()));
}

#[test]
fn a_missing_charly_yml_is_one_problem_and_a_missing_directory_an_error() {
    let f = Fixture::with(&[("candy/web/charly.yml", "web:\n  candy: {}\n")]);
    let lines: Vec<String> = f.project.validate().unwrap().problems.iter().map(ToString::to_string).collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(lines[0].starts_with("charly.yml: "), "{lines:?}");
    let gone = charly_cli::project::Project::at(f.project.root().join("nope"));
    let err = gone.validate().unwrap_err().to_string();
    assert!(err.starts_with("project directory ") && err.contains("nope does not exist"), "{err}");
}

#[test]
fn duplicate_names_and_a_missing_project_node() {
    let f = Fixture::with(&[
        ("charly.yml", "web:\n  box: {base: x}\n"),
        ("candy/web/charly.yml", "web:\n  candy: {}\n"),
    ]);
    let lines: Vec<String> = f.project.validate().unwrap().problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        lines,
        [
            "candy/web/charly.yml: node `web`: the name is already used in charly.yml",
            "charly.yml: no `project:` node; add `project: {version: 1}`",
        ]
    );
}

/// A directory with nothing of a project is not a project of one problem (trial 28, L4:
/// `-C /tmp` said "the project has 1 problem(s): charly.yml is missing").
#[test]
fn an_empty_directory_is_not_a_project() {
    let dir = tempfile::tempdir().unwrap();
    let err = charly_cli::project::Project::at(dir.path().to_owned()).list_boxes().unwrap_err().to_string();
    assert!(
        err.contains("is not a charly project (no charly.yml): create one with `charly box new project`"),
        "{err}"
    );
}
