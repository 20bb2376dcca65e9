//! Checks that run nothing are errors, and build-context checks see the box's env: a `--filter`
//! that selects no check fails `check live`, `check box` and `box test` (it passed with
//! "0 passed, 0 failed"); a `${...}` that is no variable is a plan problem (it was skipped);
//! the disposable containers of `check box`, `box test` and `shell` get the image's env.

use crate::util::Box;

const CANDY: &str = "\
ck:
  candy: {}
ck-env:
  env: [GREETING=hello]
ck-cmd:
  check: the box's env reaches the check
  command: echo $GREETING
  stdout: \"hello\\n\"
";

#[test]
fn a_filter_that_selects_nothing_fails_and_checks_see_the_boxs_env() {
    let name = "test-dx-check";
    let b = Box::new(name);
    b.candy(name, "ck", CANDY);
    b.run(&["box", "build", name]).status(0);
    // Build context: the env is the image's label, given to each disposable container.
    for args in [vec!["check", "box", name, "--json"], vec!["box", "test", name, "--json"]] {
        let run = b.run(&args);
        let json = run.status(0).json();
        assert_eq!((json["passed"].as_u64(), json["failed"].as_u64()), (Some(1), Some(0)), "{}", run.dump());
    }
    let shell = b.run(&["shell", name, "--command", "echo $GREETING"]);
    assert_eq!(shell.status(0).stdout, "hello\n");
    b.run(&["start", name]).status(0);
    b.run(&["check", "live", name]).status(0);
    for args in [
        vec!["check", "live", name, "--filter", "bogus"],
        vec!["check", "box", name, "--filter", "bogus"],
        vec!["box", "test", name, "--filter", "bogus"],
    ] {
        b.run(&args).status(2).stderr_has(&[
            "--filter bogus: not a check verb; the plan's checks have verbs: command (nothing was run)",
        ]);
    }
    b.run(&["check", "live", name, "--filter", "file"]).status(2).stderr_has(&[
        "--filter file: no check of the plan has this verb; the plan's checks have verbs: command",
    ]);
    // A name that is no variable: a problem of the plan, named, before anything runs.
    let typo = "ck-typo:\n  check: a typo in a variable\n  matching: \"${HOST_PROT:8080}\"\n  contains: x\n";
    std::fs::write(b.proj().join("candy/ck/charly.yml"), format!("{CANDY}{typo}")).unwrap();
    let validate = b.run(&["box", "validate"]);
    assert_ne!(validate.code, Some(0), "{}", validate.dump());
    let said = format!("{}{}", validate.stdout, validate.stderr);
    assert!(said.contains("unknown variable ${HOST_PROT:8080}"), "{}", validate.dump());
    let live = b.run(&["check", "live", name]);
    live.status(2).stderr_has(&["unknown variable ${HOST_PROT:8080}", "${HOST_PORT:N}"]);
}
