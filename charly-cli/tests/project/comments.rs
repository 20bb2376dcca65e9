use charly_cli::project::PackageSection;

use crate::util::Fixture;

const PROJECT: &str = "\
# Project file for the comment test.
project:        # the project node
    version: 1
    defaults: {registry: \"ghcr.io/example\", tag: 'auto'}

# The web box: keep this comment.
web:
    box:
        base: quay.io/fedora/fedora:43   # pinned
        # candies, in order
        candy:
            - tools    # first
            - extra
        description: \"quoted: value\"

# trailing comment
";

const CANDY: &str = "\
# tools candy
tools:
    candy:
        description: 'CLI tools'   # shown in lists
        distro:
            fedora:
                package:
                    - curl
            \"debian,ubuntu\": {package: [curl]}
            arch:
                package:       # null on purpose
                aur: {package: []}
# end of tools
";

fn fixture() -> Fixture {
    Fixture::with(&[
        ("charly.yml", PROJECT),
        ("candy/tools/charly.yml", CANDY),
        ("candy/extra/charly.yml", "extra:\n  candy: {}\n"),
        ("candy/more/charly.yml", "more:\n  candy: {}\n"),
    ])
}

#[test]
fn every_charly_yml_edit_keeps_the_rest_byte_for_byte() {
    let f = fixture();
    let p = &f.project;
    p.set("web.box.base", "quay.io/fedora/fedora:44").unwrap();
    p.set("project.defaults.platform", "[linux/amd64]").unwrap();
    p.add_candy("web", "more").unwrap();
    p.rm_candy("web", "tools").unwrap();
    p.new_box("api", "docker.io/library/debian:13").unwrap();
    let expected = "\
# Project file for the comment test.
project:        # the project node
    version: 1
    defaults: {registry: \"ghcr.io/example\", tag: 'auto', platform: [linux/amd64]}

# The web box: keep this comment.
web:
    box:
        base: quay.io/fedora/fedora:44   # pinned
        # candies, in order
        candy:
            - extra
            - more
        description: \"quoted: value\"

# trailing comment
api:
    box:
        base: docker.io/library/debian:13
        candy: []
";
    assert_eq!(f.read("charly.yml"), expected);
}

#[test]
fn every_candy_edit_keeps_the_rest_byte_for_byte() {
    let f = fixture();
    let p = &f.project;
    p.add_packages("tools", PackageSection::Rpm, &["vim".into(), "curl".into()]).unwrap();
    p.add_packages("tools", PackageSection::Deb, &["wget".into(), "wget".into()]).unwrap();
    p.add_packages("tools", PackageSection::Pac, &["vim".into()]).unwrap();
    p.add_packages("tools", PackageSection::Aur, &["yay-bin".into()]).unwrap();
    p.candy_set("tools", "tools.candy.description", "'dev tools'").unwrap();
    let expected = "\
# tools candy
tools:
    candy:
        description: 'dev tools'   # shown in lists
        distro:
            fedora:
                package:
                    - curl
                    - vim
            \"debian,ubuntu\": {package: [curl, wget]}
            arch:
                package: [vim]       # null on purpose
                aur: {package: [yay-bin]}
# end of tools
";
    assert_eq!(f.read("candy/tools/charly.yml"), expected);
}

#[test]
fn repeated_edits_change_nothing() {
    let f = fixture();
    let p = &f.project;
    p.add_packages("tools", PackageSection::Rpm, &["curl".into()]).unwrap();
    let outcome = p.add_candy("web", "tools").unwrap();
    assert!(!outcome.changed);
    let outcome = p.rm_candy("web", "more").unwrap();
    assert!(!outcome.changed);
    let outcome = p.set("project.version", "1").unwrap();
    assert!(!outcome.changed);
    assert_eq!(f.read("charly.yml"), PROJECT);
    assert_eq!(f.read("candy/tools/charly.yml"), CANDY);
}

#[test]
fn crlf_files_stay_crlf() {
    let crlf = PROJECT.replace('\n', "\r\n");
    let f = Fixture::with(&[("charly.yml", &crlf)]);
    f.project.set("web.box.base", "x:1").unwrap();
    let expected = crlf.replace("quay.io/fedora/fedora:43", "x:1");
    assert_eq!(f.read("charly.yml"), expected);
}

#[test]
fn new_boxes_follow_the_file_indentation_and_quote_when_needed() {
    let f =
        Fixture::with(&[("charly.yml", "project:\n   version: 1   # three spaces\n# no newline at the end")]);
    f.project.new_box("odd", "true").unwrap();
    f.project.new_box("even", "quay.io/x/y:1").unwrap();
    assert_eq!(
        f.read("charly.yml"),
        "project:\n   version: 1   # three spaces\n# no newline at the end\nodd:\n   box:\n      base: \"true\"\n      \
         candy: []\neven:\n   box:\n      base: quay.io/x/y:1\n      candy: []\n"
    );
    let value = serde_json::to_value(f.project.inspect("odd").unwrap()).unwrap();
    assert_eq!(value["base"], "true");
}

#[test]
fn tab_indented_files_are_refused_and_left_alone() {
    let tabbed = "project:\n\tversion: 1\n";
    let f = Fixture::with(&[("charly.yml", tabbed)]);
    let err = crate::util::err_text(f.project.set("project.version", "2"));
    assert!(err.starts_with("refusing to edit charly.yml: 2:1: "), "{err}");
    assert!(err.contains("tabs"), "{err}");
    assert_eq!(f.read("charly.yml"), tabbed);
}

#[test]
fn empty_and_comment_only_files_are_not_found() {
    for contents in ["", "\n\n", "# nothing yet\n"] {
        let f = Fixture::with(&[("charly.yml", contents)]);
        let err = crate::util::err_text(f.project.set("a.b", "1"));
        assert_eq!(err, "charly.yml is empty");
    }
}
