//! One malformed file does not block the leaves that only read (trial t28, M2): the lists and
//! `box.inspect` show what the readable files hold and name each file they left out in their
//! warnings; only an edit talks of "refusing to edit".

use charly_cli::report::Reply;

use crate::util::{Fixture, err_text};

/// The sample project, a healthy candy `tools` that box `hello` uses, and four candy files
/// that cannot be read: a duplicate key, tab indentation, two documents, and an empty file.
fn project() -> Fixture {
    let f = Fixture::with(&[
        ("candy/dup/charly.yml", "dup:\n  candy:\n    description: a\n    description: b\n"),
        ("candy/tabs/charly.yml", "tabs:\n\tcandy: {}\n"),
        ("candy/multi/charly.yml", "multi:\n  candy: {}\n---\nother: 1\n"),
        ("candy/empty/charly.yml", ""),
    ]);
    for (relative, contents) in charly_cli::project::SAMPLE_FILES {
        std::fs::create_dir_all(f.path(relative).parent().unwrap()).unwrap();
        std::fs::write(f.path(relative), contents).unwrap();
    }
    f.project.new_candy("tools").unwrap();
    f.project.add_candy("hello", "tools").unwrap();
    f
}

const LEFT_OUT: [&str; 4] = [
    "candy/dup/charly.yml is left out: 4:5: Duplicate key",
    "candy/empty/charly.yml is left out: the file is empty",
    "candy/multi/charly.yml is left out: ",
    "candy/tabs/charly.yml is left out: 2:1: Tabs are not allowed for indentation",
];

#[track_caller]
fn assert_left_out(reply: &Reply) {
    let warnings = &reply.warnings;
    assert_eq!(warnings.len(), LEFT_OUT.len(), "{warnings:#?}");
    for (warning, start) in warnings.iter().zip(LEFT_OUT) {
        assert!(warning.starts_with(start), "{warning}");
        assert!(!warning.contains("refusing to edit"), "{warning}");
    }
    assert_eq!(reply.json["warnings"], serde_json::json!(warnings), "{}", reply.json);
}

#[test]
fn lists_and_inspect_show_what_parses_and_warn_about_the_rest() {
    let f = project();
    let p = &f.project;
    let boxes = Reply::new(&p.list_boxes().unwrap());
    assert_eq!(boxes.text, "hello\n");
    assert_left_out(&boxes);
    let candies = Reply::new(&p.list_candies().unwrap());
    assert_eq!(candies.text, "hello-svc\ntools\n");
    assert_left_out(&candies);
    let checks = Reply::new(&p.list_checks().unwrap());
    assert_eq!(checks.text, "hello-svc-ping\tcandy/hello-svc/charly.yml\tthe hello server answers ping\n");
    assert_left_out(&checks);
    let targets = Reply::new(&p.list_targets().unwrap());
    assert_eq!(targets.text, "hello\tghcr.io/example/hello:latest\tquay.io/fedora/fedora:43\n");
    assert_left_out(&targets);
    for reply in [
        Reply::new(&p.list_aliases().unwrap()),
        Reply::new(&p.list_routes().unwrap()),
        Reply::new(&p.list_services().unwrap()),
        Reply::new(&p.list_volumes().unwrap()),
    ] {
        assert_eq!(reply.text, "");
        assert_left_out(&reply);
    }
    let inspection = Reply::new(&p.inspect("hello").unwrap());
    assert_eq!(inspection.json["candies"][1]["name"], "tools");
    assert_left_out(&inspection);
}

#[test]
fn a_box_whose_candy_cannot_be_read_names_the_file() {
    let f = project();
    f.project.set("hello.box.candy", "[hello-svc, tools]").unwrap();
    std::fs::write(
        f.path("charly.yml"),
        f.read("charly.yml").replace("[hello-svc, tools]", "[hello-svc, tools, dup]"),
    )
    .unwrap();
    let err = err_text(f.project.inspect("hello"));
    assert!(
        err.starts_with("the project has 4 problem(s):\n  candy/dup/charly.yml: 4:5: Duplicate key"),
        "{err}"
    );
    assert!(!err.contains("refusing to edit"), "{err}");
    // list.targets leaves that box out, with a warning saying why.
    let targets = Reply::new(&f.project.list_targets().unwrap());
    assert_eq!(targets.text, "");
    assert!(
        targets.warnings[4].starts_with("box hello is left out: no candy named `dup`"),
        "{:?}",
        targets.warnings
    );
}

#[test]
fn validate_names_the_files_and_an_edit_of_one_is_refused_as_an_edit() {
    let f = project();
    let validation = f.project.validate().unwrap();
    let lines: Vec<String> = validation.problems.iter().map(ToString::to_string).collect();
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(lines[0].starts_with("candy/dup/charly.yml: 4:5: Duplicate key"), "{lines:#?}");
    assert!(lines.iter().all(|l| !l.contains("refusing to edit")), "{lines:#?}");
    let err = err_text(f.project.candy_set("dup", "dup.candy.description", "c"));
    assert!(err.starts_with("refusing to edit candy/dup/charly.yml: 4:5: Duplicate key"), "{err}");
    // An edit of a healthy file still lands: the broken files are the same before and after.
    f.project.set("hello.box.description", "still editable").unwrap();
}

#[test]
fn the_cli_lists_boxes_with_warnings_on_stderr_and_exit_0() {
    let f = project();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_charly"))
        .arg("-C")
        .arg(f.root())
        .args(["box", "list", "boxes"])
        .env_remove("CHARLY_PROJECT_DIR")
        .env_remove("CHARLY_PROJECT_REPO")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(stdout, "hello\n");
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 4, "{stderr}");
    for (line, start) in warnings.iter().zip(LEFT_OUT) {
        assert!(line.starts_with(&format!("charly: warning: {start}")), "{stderr}");
    }
}
