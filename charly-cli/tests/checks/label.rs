use crate::util::Box;

const CANDY_CHECKS: &str = r#"
pass-busybox:
  check: the busybox applets are there
  file: /bin/busybox
pass-quoted:
  check: quotes and $ survive the label ('single' and "double")
  command: test -n "$PATH" && echo "it's ok"
  stdout: it's ok
"#;

const BOX_CHECKS: &str = r#"
fail-missing:
  check: a file the image does not have
  file: /no/such/file
"#;

#[test]
fn build_bakes_the_checks_and_box_test_runs_them() {
    let name = "test-chk-baked";
    let b = Box::new(name);
    b.run(&["box", "new", "candy", "baked"]).status(0);
    b.run(&["box", "add-candy", name, "baked"]).status(0);
    let candy = b.proj().join("candy/baked/charly.yml");
    let text = std::fs::read_to_string(&candy).unwrap();
    std::fs::write(&candy, format!("{text}{CANDY_CHECKS}")).unwrap();
    b.run(&["box", "validate"]).status(0);
    // Only the candy's checks: all pass.
    b.run(&["box", "build", name]).status(0);
    let run = b.run(&["box", "test", name, "--json"]);
    run.status(0);
    let json = run.json();
    assert_eq!((json["passed"].as_u64(), json["failed"].as_u64()), (Some(2), Some(0)), "{}", run.dump());
    assert_eq!(json["results"][0]["section"], "candy");
    // A failing check in charly.yml (section box): box.test fails on it, by its name.
    let file = b.proj().join("charly.yml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}{BOX_CHECKS}")).unwrap();
    let generated = b.run(&["box", "generate", name]);
    generated.status(0);
    let containerfile =
        std::fs::read_to_string(b.proj().join(format!(".build/{name}/Containerfile"))).unwrap();
    assert!(containerfile.contains("LABEL ai.opencharly.check='{\"candy\":[{"), "{containerfile}");
    assert!(
        containerfile.contains("\"box\":[{\"check\":\"a file the image does not have\""),
        "{containerfile}"
    );
    b.run(&["box", "build", name]).status(0);
    let run = b.run(&["box", "test", &format!("localhost/{name}:latest"), "--json"]);
    run.status(1);
    let json = run.json();
    assert_eq!((json["passed"].as_u64(), json["failed"].as_u64()), (Some(2), Some(1)), "{}", run.dump());
    let failed = &json["results"][2];
    assert_eq!((failed["name"].as_str(), failed["section"].as_str()), (Some("fail-missing"), Some("box")));
}
