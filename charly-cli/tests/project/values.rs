//! `box.set`/`candy.set` write a value as the YAML given, or refuse it with the reason (trial
//! t28, L1); `[N]` addresses a list item (L2); an edit never goes through an alias (L3).

use crate::util::{Fixture, err_text};

/// A project whose box `web` has a description, and the line it is on.
fn web() -> Fixture {
    Fixture::with(&[(
        "charly.yml",
        "project:\n  version: 1\nweb:\n  box:\n    base: quay.io/fedora/fedora:43 # pinned\n    description: old\n    candy: []\n",
    )])
}

/// The `description:` line of box `web`.
fn description(f: &Fixture) -> String {
    let text = f.read("charly.yml");
    text.lines().find(|l| l.trim_start().starts_with("description:")).unwrap().trim().to_owned()
}

#[test]
fn values_are_written_as_given() {
    let f = web();
    for (given, line) in [
        ("plain text", "description: plain text"),
        ("\"a # b\"", "description: \"a # b\""),
        ("'#fff'", "description: '#fff'"),
        ("url#fragment", "description: url#fragment"),
        ("x &y", "description: x &y"),
        ("!!binary aGk=", "description: !!binary aGk="),
        ("!!str 42", "description: !!str 42"),
        ("", "description: \"\""),
        ("  ", "description: \"  \""),
        ("''", "description: ''"),
    ] {
        f.project.set("web.box.description", given).unwrap();
        assert_eq!(description(&f), line, "{given:?}");
    }
    // What the project reads back: the text given, the empty string (not null).
    f.project.set("web.box.description", "").unwrap();
    let nodes = f.project.load().unwrap().0;
    assert_eq!(nodes[1].body["box"]["description"], "");
}

#[test]
fn values_yaml_would_change_are_refused_with_the_reason() {
    let f = web();
    let before = f.read("charly.yml");
    for (given, message) in [
        (
            "a # b",
            r#"the value "a # b" would be written as `a`: YAML reads `# b` as a comment, which is not part of the value; to set the text, quote it ("a # b")"#,
        ),
        (
            "#only",
            r##"the value "#only" would be written as nothing: YAML reads `#only` as a comment, which is not part of the value; to set the text, quote it ("#only")"##,
        ),
        (
            "[a, b] # two",
            r#"the value "[a, b] # two" would be written as `[a, b]`: YAML reads `# two` as a comment, which is not part of the value; to set the text, quote it ("[a, b] # two")"#,
        ),
        (
            "&anchor x",
            r#"the value "&anchor x" defines the anchor `&anchor`; charly writes values, not anchors or aliases: give the value without it, or quote the text to set it ("&anchor x")"#,
        ),
        (
            "*b",
            r#"the value "*b" holds the alias `*b`; charly writes values, not aliases or anchors: give the value itself, or quote the text to set it ("*b")"#,
        ),
        ("[a, *b]", r#"the value "[a, *b]" holds the alias `*b`;"#),
        ("a\n---\nb", r#"the value "a\n---\nb" holds 2 YAML documents; a value is one"#),
    ] {
        let err = err_text(f.project.set("web.box.description", given));
        assert!(err.starts_with(message), "{given:?}: {err}");
        assert_eq!(f.read("charly.yml"), before, "{given:?}");
    }
    // A comment inside a block list is part of the value, and kept.
    f.project.set("project.defaults.platform", "- linux/amd64 # the one we build\n- linux/arm64").unwrap();
    assert!(f.read("charly.yml").contains("- linux/amd64 # the one we build\n"), "{}", f.read("charly.yml"));
}

#[test]
fn an_index_addresses_a_list_item() {
    let f = Fixture::with(&[
        ("charly.yml", "project:\n  version: 1\nweb:\n  box:\n    base: x\n    candy: [a, b] # two\n"),
        ("candy/a/charly.yml", "a:\n  candy: {}\na-port:\n  port:\n    - 80 # http\n    - 443\n"),
        ("candy/b/charly.yml", "b:\n  candy: {}\n"),
        ("candy/c/charly.yml", "c:\n  candy: {}\n"),
    ]);
    let p = &f.project;
    assert_eq!(p.set("web.box.candy[1]", "c").unwrap().summary, "set web.box.candy[1] in charly.yml");
    p.set("web.box.candy[2]", "b").unwrap();
    assert!(f.read("charly.yml").contains("    candy: [a, c, b] # two\n"), "{}", f.read("charly.yml"));
    p.candy_set("a", "a-port.port[1]", "8443").unwrap();
    assert!(
        f.read("candy/a/charly.yml").contains("    - 80 # http\n    - 8443\n"),
        "{}",
        f.read("candy/a/charly.yml")
    );
    let before = f.read("charly.yml");
    for (path, message) in [
        (
            "web.box.candy[4]",
            "cannot set \"web.box.candy[4]\" in charly.yml: `web.box.candy` has 3 item(s), so an index there is [0] to [2], or [3] to append",
        ),
        (
            "web.box.base[0]",
            "cannot set \"web.box.base[0]\" in charly.yml: segment `web.box.base` holds a scalar, not a list; `[N]` indexes a list",
        ),
        (
            "web.box.new[1]",
            "cannot set \"web.box.new[1]\" in charly.yml: `web.box.new` has 0 item(s), so an index there is [0] (a new or empty list starts there)",
        ),
        (
            "web.box.candy.0",
            "cannot set \"web.box.candy.0\" in charly.yml: segment `web.box.candy` holds a list, not a map; only maps (or an empty value) can hold keys; `[N]` is item N of a list",
        ),
        ("web.box.candy[x]", "bad path \"web.box.candy[x]\": `[x]` is not a list index"),
        ("[0].a", "bad path \"[0].a\": a path starts with a key"),
        ("web.box.candy]", "bad path \"web.box.candy]\": a `]` without its `[`"),
    ] {
        let err = err_text(p.set(path, "a"));
        assert!(err.starts_with(message), "{path}: {err}");
        assert_eq!(f.read("charly.yml"), before, "{path}");
    }
    // A bracket in a key is escaped, and is a key, never an index.
    p.set(r"project.defaults.a\[0\]", "1").unwrap();
    assert!(f.read("charly.yml").contains("a[0]: 1"), "{}", f.read("charly.yml"));
}

#[test]
fn set_help_describes_indexes() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_charly"))
        .args(["box", "set", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("`[N]` is item N of a list (`hello.box.candy[0]`"), "{help}");
}

/// A candy file where `debian,ubuntu` is an alias of the fedora section (`&b`), and the arch
/// list an alias of a port list (`&pk`).
const ALIASED: &str = "\
anch-port:
  port: &pk [81]
anch:
  candy:
    description: x
    distro:
      fedora: &b {package: [a]}
      \"debian,ubuntu\": *b
      arch: {package: *pk}
";

#[test]
fn edits_through_an_alias_are_refused_naming_the_anchor() {
    use charly_cli::project::PackageSection;
    let f = Fixture::with(&[("charly.yml", "project:\n  version: 1\n"), ("candy/anch/charly.yml", ALIASED)]);
    let p = &f.project;
    let through_b = "`anch.candy.distro.debian,ubuntu` is an alias of the anchor `&b`, and an edit through it \
                     would change that anchored node and every alias of it";
    for (result, message) in [
        (p.add_packages("anch", PackageSection::Deb, &["zz".into()]), through_b),
        (p.candy_set("anch", "anch.candy.distro.debian,ubuntu.package", "[q]"), through_b),
        (p.candy_set("anch", "anch.candy.distro.debian,ubuntu.package[0]", "q"), through_b),
        (
            p.add_packages("anch", PackageSection::Pac, &["zz".into()]),
            "`anch.candy.distro.arch.package` is an alias of the anchor `&pk`",
        ),
    ] {
        let err = err_text(result);
        assert!(err.starts_with("cannot edit \"anch.candy.distro."), "{err}");
        assert!(err.contains(message), "{err}");
        assert_eq!(f.read("candy/anch/charly.yml"), ALIASED);
    }
    // Replacing the alias itself changes no other node: allowed.
    p.candy_set("anch", "anch.candy.distro.debian,ubuntu", "{package: [q]}").unwrap();
    assert!(f.read("candy/anch/charly.yml").contains("\"debian,ubuntu\": {package: [q]}\n"));
    assert!(f.read("candy/anch/charly.yml").contains("fedora: &b {package: [a]}\n"));
}

#[test]
fn edits_through_a_merge_key_are_refused() {
    let text = "project:\n  version: 1\n  defaults: &d {registry: r, tag: t}\nother:\n  box:\n    base: x\n    merge:\n      <<: {auto: true}\n";
    let f = Fixture::with(&[("charly.yml", text)]);
    let err = err_text(f.project.set("other.box.merge.auto", "false"));
    assert!(
        err.starts_with("cannot edit \"other.box.merge.auto\" in charly.yml: `other.box.merge.auto` comes from a merge key"),
        "{err}"
    );
    assert_eq!(f.read("charly.yml"), text);
}
