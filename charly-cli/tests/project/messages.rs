//! The YAML editor's refusals say what is wrong in charly's words (trial t28, L4): the tab
//! advice only for a file with tabs, a second document counted, an empty base image called
//! empty, a candy file behind a symlink out of the project named as such.

use charly_cli::project::PackageSection;

use crate::util::{Fixture, err_text};

#[test]
fn the_tab_advice_is_only_for_files_with_tabs() {
    let dup = "dup:\n  candy:\n    description: a\n    description: b\n";
    let tabs = "tabs:\n\tcandy: {}\n";
    let f = Fixture::with(&[
        ("charly.yml", "project:\n  version: 1\n"),
        ("candy/dup/charly.yml", dup),
        ("candy/tabs/charly.yml", tabs),
    ]);
    let err = err_text(f.project.add_packages("dup", PackageSection::Rpm, &["x".into()]));
    assert_eq!(
        err,
        "refusing to edit candy/dup/charly.yml: 4:5: Duplicate key: \"description\" (semantically equal to \
         \"description\"); fix the file first"
    );
    let err = err_text(f.project.candy_set("tabs", "tabs.candy.description", "x"));
    assert_eq!(
        err,
        "refusing to edit candy/tabs/charly.yml: 2:1: Tabs are not allowed for indentation in YAML; fix the \
         file first (indent with spaces, not tabs)"
    );
    let problems: Vec<String> =
        f.project.validate().unwrap().problems.iter().map(ToString::to_string).collect();
    assert_eq!(
        problems,
        [
            "candy/dup/charly.yml: 4:5: Duplicate key: \"description\" (semantically equal to \"description\"); fix \
             the file first",
            "candy/tabs/charly.yml: 2:1: Tabs are not allowed for indentation in YAML; fix the file first (indent \
             with spaces, not tabs)",
        ]
    );
    assert_eq!((f.read("candy/dup/charly.yml"), f.read("candy/tabs/charly.yml")), (dup.into(), tabs.into()));
}

#[test]
fn a_file_of_several_documents_is_counted() {
    let multi = "multi:\n  candy: {}\n---\nother: 1\n---\nthird: 1\n";
    let f = Fixture::with(&[("charly.yml", "project:\n  version: 1\n"), ("candy/multi/charly.yml", multi)]);
    let err = err_text(f.project.add_packages("multi", PackageSection::Deb, &["x".into()]));
    assert_eq!(err, "candy/multi/charly.yml holds 3 YAML documents; charly edits files of one document");
    let problems = f.project.validate().unwrap().problems;
    assert_eq!(
        problems[0].to_string(),
        "candy/multi/charly.yml: holds 3 YAML documents; charly reads files of one document (a `---` line \
         starts another)"
    );
    assert!(!problems[0].message.contains("from_str"), "{}", problems[0]);
    assert_eq!(f.read("candy/multi/charly.yml"), multi);
}

#[test]
fn an_empty_base_image_is_called_empty() {
    let f = Fixture::sample();
    let before = f.read("charly.yml");
    assert_eq!(
        err_text(f.project.new_box("web", "")),
        "the base image is empty; give an image reference, e.g. quay.io/fedora/fedora:43"
    );
    assert_eq!(
        err_text(f.project.new_box("web", "  ")),
        "the base image is empty; give an image reference, e.g. quay.io/fedora/fedora:43"
    );
    assert_eq!(
        err_text(f.project.new_box("web", "fedora 43")),
        "the base image \"fedora 43\" has spaces, which an image reference never has; give an image reference, \
         e.g. quay.io/fedora/fedora:43"
    );
    assert_eq!(f.read("charly.yml"), before);
}

#[test]
fn a_candy_behind_a_symlink_out_of_the_project_is_named_as_such() {
    let f = Fixture::sample();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(outside.path().join("evil")).unwrap();
    std::fs::write(outside.path().join("evil/charly.yml"), "evil:\n  candy: {}\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("evil"), f.path("candy/evil")).unwrap();
    let expected = "refusing path \"candy/evil/charly.yml\": it goes through a symlink that leads outside the \
                    project root; only paths inside it are allowed";
    assert_eq!(err_text(f.project.add_packages("evil", PackageSection::Rpm, &["x".into()])), expected);
    assert_eq!(err_text(f.project.add_candy("hello", "evil")), expected);
    assert_eq!(err_text(f.project.candy_set("evil", "evil.candy.description", "x")), expected);
    // A candy that is not there at all is still "no candy named".
    let err = err_text(f.project.add_packages("ghost", PackageSection::Rpm, &["x".into()]));
    assert!(err.starts_with("no candy named `ghost`"), "{err}");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("evil/charly.yml")).unwrap(),
        "evil:\n  candy: {}\n"
    );
}
