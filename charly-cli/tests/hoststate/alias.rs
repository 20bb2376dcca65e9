//! `charly alias ...`: the scripts, run for real with `sh`, with a `charly` on PATH that runs
//! the `-c` command with `sh -c` the way the container's shell will (so quoting is tested by a
//! real shell; `charly shell` itself belongs to the deploy family). The images are real:
//! podman 4.3 with its storage in the test's directory (vfs driver, nothing is run, so no OCI
//! runtime is involved), images imported from a one-file tar with their labels.

use std::path::{Path, PathBuf};

use crate::util::{Home, mode, require};

fn script(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A home whose podman keeps its storage under the test directory (`CONTAINERS_STORAGE_CONF`,
/// `CONTAINERS_CONF`), with images `localhost/dev` (label `ai.opencharly.alias`: two aliases)
/// and `localhost/other` (no label), and `bin/charly` (`charly shell BOX -c CMD` runs CMD with
/// sh -c) first on PATH.
fn setup() -> (Home, PathBuf) {
    require("podman");
    let mut t = Home::new();
    let pm = t.path().join("podman");
    std::fs::create_dir_all(pm.join("layer")).unwrap();
    std::fs::write(
        pm.join("storage.conf"),
        format!(
            "[storage]\ndriver = \"vfs\"\nrunroot = \"{0}/run\"\ngraphroot = \"{0}/root\"\n",
            pm.display()
        ),
    )
    .unwrap();
    std::fs::write(
        pm.join("containers.conf"),
        format!("[engine]\nevents_logger = \"file\"\ntmp_dir = \"{}/tmp\"\n", pm.display()),
    )
    .unwrap();
    t.set_env("CONTAINERS_STORAGE_CONF", pm.join("storage.conf"));
    t.set_env("CONTAINERS_CONF", pm.join("containers.conf"));
    std::fs::write(pm.join("layer/hello"), "hello\n").unwrap();
    let tar = pm.join("layer.tar");
    t.tool("tar", &["-C", &pm.join("layer").to_string_lossy(), "-cf", &tar.to_string_lossy(), "."], None)
        .status(0);
    let label = r#"LABEL ai.opencharly.alias=[{"name":"dls","command":"ls -1"},{"name":"dcat"}]"#;
    let tar = tar.to_string_lossy();
    t.tool("podman", &["import", "-q", "--change", label, &tar, "localhost/dev:latest"], None).status(0);
    t.tool("podman", &["import", "-q", &tar, "localhost/other:latest"], None).status(0);
    let bin = t.path().join("bin");
    script(
        &bin,
        "charly",
        "if [ \"$1\" = -C ]; then echo \"project=$2\" >&2; shift 2; fi\n\
         [ \"$1 $3\" = 'shell -c' ] || exit 99\necho \"box=$2\"\nexec sh -c \"$4\"\n",
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    t.set_env("PATH", path);
    t.set_env("CHARLY_RUN_ENGINE", "podman");
    let dest = t.path().join("home/.local/bin");
    (t, dest)
}

#[test]
fn add_list_run_remove() {
    let (t, dest) = setup();
    // A project (its boxes' images are found as without one): the script names it.
    std::fs::write(t.proj().join("charly.yml"), "# no nodes\n").unwrap();
    t.run(&["alias", "add", "show", "dev", "printf '[%s]\\n'"])
        .status(0)
        .stdout("Created alias show -> printf '[%s]\\n' (box: dev)\n");
    let file = dest.join("show");
    assert_eq!(mode(&file), 0o755);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("#!/bin/sh\n# charly-alias\n# box: dev\n# command: printf '[%s]\\n'\n"),
        "{text}"
    );
    t.run(&["alias", "add", "other-cmd", "other"]).status(0);
    t.run(&["alias", "list"]).status(0).stdout("other-cmd\tother\tother-cmd\nshow\tdev\tprintf '[%s]\\n'\n");

    // Every argument reaches the command as one word, shell syntax and all.
    let canary = t.path().join("pwned");
    let args = ["a b", "$(touch PWNED)", "it's", "; echo hi", "`id`", "*", "-n", "line\n\n"];
    let args: Vec<String> = args.iter().map(|a| a.replace("PWNED", &canary.to_string_lossy())).collect();
    let mut cmd = std::process::Command::new(&file);
    t.apply(&mut cmd);
    cmd.args(&args);
    let run = crate::util::Run::of(&mut cmd, "show ...");
    run.status(0);
    let expected: String =
        std::iter::once("box=dev\n".to_owned()).chain(args.iter().map(|a| format!("[{a}]\n"))).collect();
    assert_eq!(run.stdout, expected, "{}", run.dump());
    assert!(!canary.exists(), "an argument ran as shell syntax");
    // The script names its project, so it runs from any directory (trial 29, M4).
    let project = std::fs::canonicalize(t.proj()).unwrap();
    assert_eq!(run.stderr, format!("project={}\n", project.display()), "{}", run.dump());
    assert!(text.contains(&format!("# project: {}\n", project.display())), "{text}");

    t.run(&["alias", "remove", "show"]).status(0).stdout("Removed alias show\n");
    assert!(!file.exists());
    t.run(&["alias", "remove", "show"]).status(2).stderr_has("no alias show");
}

#[test]
fn bad_names_missing_images_and_foreign_files_change_nothing() {
    let (t, dest) = setup();
    for bad in ["a/b", "x;y", "$(id)", "-rf", ".hidden", "sp ace"] {
        t.run(&["alias", "add", "--", bad, "dev"])
            .status(2)
            .stderr_has("invalid alias name")
            .stderr_has("nothing was changed");
    }
    t.run(&["alias", "add", "ok", "dev", "two\nlines"]).status(2).stderr_has("invalid alias command");
    t.run(&["alias", "add", "ok", "missing-box"]).status(2).stderr_has("is not in podman's local storage");
    assert!(!dest.exists() || std::fs::read_dir(&dest).unwrap().next().is_none(), "nothing was written");
    script(&dest, "mine", "echo my own script\n");
    t.run(&["alias", "remove", "mine"]).status(2).stderr_has("is not a charly alias");
    t.run(&["alias", "add", "mine", "dev"]).status(2).stderr_has("is not a charly alias");
    assert_eq!(std::fs::read_to_string(dest.join("mine")).unwrap(), "#!/bin/sh\necho my own script\n");
    t.run(&["alias", "uninstall", "dev"]).status(0);
    assert!(dest.join("mine").exists());
}

#[test]
fn install_and_uninstall_follow_the_image_label() {
    let (t, dest) = setup();
    let run = t.run(&["alias", "install", "dev"]);
    run.status(0).stdout("Installed dls -> ls -1\nInstalled dcat -> dcat\nInstalled 2 alias(es) for dev\n");
    t.run(&["alias", "add", "keep", "other"]).status(0);
    t.run(&["alias", "list", "--dest", &dest.to_string_lossy()])
        .status(0)
        .stdout("dcat\tdev\tdcat\ndls\tdev\tls -1\nkeep\tother\tkeep\n");
    t.run(&["alias", "uninstall", "dev"])
        .status(0)
        .stdout("Removed alias dcat\nRemoved alias dls\nRemoved 2 alias(es) for dev\n");
    t.run(&["alias", "list"]).status(0).stdout("keep\tother\tkeep\n");
    t.run(&["alias", "install", "other"]).status(0).stdout("No aliases defined for box other\n");
}

/// `alias install` used to write `dls` and then fail on an unmarked `dcat`: now every entry is
/// checked before any script is written. The marker counts only on line 2 (a user's script
/// that mentions it at the end is not charly's), and a dangling symlink where an alias would
/// go is refused, not replaced.
#[test]
fn install_is_all_or_nothing_and_only_charly_scripts_count_as_aliases() {
    let (t, dest) = setup();
    script(&dest, "dcat", "echo mine\n");
    let run = t.run(&["alias", "install", "localhost/dev", "--dest", &dest.to_string_lossy()]);
    run.status(2).stderr_has("dcat is not a charly alias");
    assert!(!dest.join("dls").exists(), "nothing written\n{}", run.dump());
    assert_eq!(std::fs::read_to_string(dest.join("dcat")).unwrap(), "#!/bin/sh\necho mine\n");

    script(&dest, "mine", "echo x\n# charly-alias\n# box: localhost/dev\n# command: ls\n");
    t.run(&["alias", "remove", "mine", "--dest", &dest.to_string_lossy()])
        .status(2)
        .stderr_has("is not a charly alias");
    assert!(dest.join("mine").is_file());
    let list = t.run(&["alias", "list", "--dest", &dest.to_string_lossy()]);
    assert!(!list.status(0).stdout.contains("mine"), "{}", list.dump());
    t.run(&["alias", "uninstall", "localhost/dev", "--dest", &dest.to_string_lossy()]).status(0);
    assert!(dest.join("mine").is_file());

    std::os::unix::fs::symlink("/nonexistent/charly-test", dest.join("dang")).unwrap();
    t.run(&["alias", "add", "dang", "localhost/dev", "--dest", &dest.to_string_lossy()])
        .status(2)
        .stderr_has("is a symlink to a missing file");
    assert_eq!(std::fs::read_link(dest.join("dang")).unwrap(), Path::new("/nonexistent/charly-test"));
    // With the unmarked file gone, the whole set is written.
    std::fs::remove_file(dest.join("dcat")).unwrap();
    t.run(&["alias", "install", "localhost/dev", "--dest", &dest.to_string_lossy()]).status(0);
    assert!(dest.join("dls").is_file() && dest.join("dcat").is_file());
}

/// Adding over an alias says it replaced it, and an alias named like a command elsewhere on
/// PATH says which one it shadows where its directory comes first (trial 29: `alias add sudo`
/// printed "Created" and nothing more).
#[test]
fn replacing_and_shadowing_are_said() {
    let (t, dest) = setup();
    t.run(&["alias", "add", "show", "dev", "ls"]).status(0).stdout("Created alias show -> ls (box: dev)\n");
    t.run(&["alias", "add", "show", "dev", "ls -1"])
        .status(0)
        .stdout("Replaced alias show -> ls -1 (box: dev)\n");
    let shadowing = t.run(&["alias", "add", "sh", "dev"]);
    shadowing
        .status(0)
        .stderr_has("charly: warning: alias sh has the name of ")
        .stderr_has("runs in box dev's container instead");
    let json = t.run(&["alias", "add", "sh", "dev", "--json"]).status(0).json();
    assert_eq!(json["action"], "replaced");
    assert!(json["warnings"][0].as_str().unwrap().contains("alias sh has the name of"), "{json}");
    assert!(dest.join("sh").is_file());
}
