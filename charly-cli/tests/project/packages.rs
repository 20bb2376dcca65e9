//! Regression test for the reference tool's defect: `add-deb`/`add-pac`/`add-aur` all wrote the rpm
//! list when called over MCP, because the section came from the server process's argv. Here the
//! section is an argument, and each command writes only its own list.

use charly_cli::project::PackageSection;
use serde_json::json;

use crate::util::{Fixture, err_text};

#[test]
fn each_section_writes_its_own_list() {
    for (section, expected) in [
        (PackageSection::Rpm, json!({"rpm": ["openssh-server", "x"], "deb": [], "pac": [], "aur": []})),
        (PackageSection::Deb, json!({"rpm": ["openssh-server"], "deb": ["x"], "pac": [], "aur": []})),
        (PackageSection::Pac, json!({"rpm": ["openssh-server"], "deb": [], "pac": ["x"], "aur": []})),
        (PackageSection::Aur, json!({"rpm": ["openssh-server"], "deb": [], "pac": [], "aur": ["x"]})),
    ] {
        let f = Fixture::sample();
        f.project.add_packages("hello-svc", section, &["x".into()]).unwrap();
        let value = serde_json::to_value(f.project.inspect("hello").unwrap()).unwrap();
        assert_eq!(value["candies"][0]["packages"], expected, "{section}");
    }
}

#[test]
fn missing_lists_and_maps_are_created() {
    let f = Fixture::with(&[
        ("charly.yml", "project: {version: 1}\n"),
        ("candy/bare/charly.yml", "bare:\n  candy:\n    description: bare\n"),
    ]);
    let edited = f
        .project
        .add_packages("bare", PackageSection::Deb, &["curl".into(), "git".into(), "curl".into()])
        .unwrap();
    assert_eq!(
        edited.to_string(),
        "added curl, git to bare.candy.distro.debian,ubuntu.package in candy/bare/charly.yml\n"
    );
    assert_eq!(
        f.read("candy/bare/charly.yml"),
        "bare:\n  candy:\n    description: bare\n    distro:\n      debian,ubuntu:\n        package: [curl, git]\n"
    );
}

#[test]
fn bad_package_names_and_unknown_candies_are_errors() {
    let f = Fixture::sample();
    let err = err_text(f.project.add_packages("hello-svc", PackageSection::Rpm, &["-y".into()]));
    assert!(err.starts_with("`-y` is not a valid package name"), "{err}");
    let err = err_text(f.project.add_packages("nope", PackageSection::Rpm, &["x".into()]));
    assert_eq!(err, "no candy named `nope` (expected candy/nope/charly.yml; candies: hello-svc)");
}

#[test]
fn a_non_list_in_the_way_is_an_error() {
    let f = Fixture::with(&[(
        "candy/c/charly.yml",
        "c:\n  candy:\n    distro:\n      fedora: {package: curl}\n",
    )]);
    let err = err_text(f.project.add_packages("c", PackageSection::Rpm, &["x".into()]));
    assert_eq!(
        err,
        "cannot edit \"c.candy.distro.fedora.package\" in candy/c/charly.yml: it holds a scalar, not a list"
    );
}
