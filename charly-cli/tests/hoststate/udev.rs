//! `charly udev ...` under a temporary --root; every rules file charly writes is checked by
//! `udevadm verify` (systemd 254 from bookworm-backports).

use crate::util::{Home, mode, udevadm_verify};

#[test]
fn install_is_idempotent_and_udevadm_verifies_the_rules() {
    let t = Home::new();
    let root = t.path().join("root");
    let root_arg = root.to_string_lossy().into_owned();
    let generated = t.run(&["udev", "generate", "--root", &root_arg]).status(0).stdout.clone();
    assert!(
        generated.contains("SUBSYSTEM==\"drm\", KERNEL==\"card[0-9]*\", GROUP=\"render\", MODE=\"0660\"")
    );
    assert!(generated.contains("SUBSYSTEM==\"kfd\", KERNEL==\"kfd\", GROUP=\"render\", MODE=\"0660\""));
    let file = root.join("etc/udev/rules.d/99-charly-container-access.rules");
    t.run(&["udev", "install", "--root", &root_arg]).status(0).stdout(&format!("Wrote {}\n", file.display()));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), generated);
    assert_eq!(mode(&file), 0o644);
    let verify = udevadm_verify(&file);
    assert!(
        verify.status.success(),
        "udevadm verify: {}{}",
        String::from_utf8_lossy(&verify.stdout),
        String::from_utf8_lossy(&verify.stderr)
    );
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    t.run(&["udev", "install", "--root", &root_arg])
        .status(0)
        .stdout(&format!("{} is up to date\n", file.display()));
    assert_eq!(
        std::fs::metadata(&file).unwrap().modified().unwrap(),
        mtime,
        "an identical file is not rewritten"
    );
    // An older charly file is replaced; a foreign one is left alone.
    std::fs::write(&file, format!("{}\nSUBSYSTEM==\"drm\", MODE=\"0666\"\n", charly_cli::udev::HEADER))
        .unwrap();
    t.run(&["udev", "install", "--root", &root_arg]).status(0);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), generated);
    assert!(udevadm_verify(&file).status.success());
    t.run(&["udev", "remove", "--root", &root_arg])
        .status(0)
        .stdout(&format!("Removed {}\n", file.display()));
    assert!(!file.exists());
    t.run(&["udev", "remove", "--root", &root_arg])
        .status(0)
        .stdout(&format!("{} is not installed\n", file.display()));
}

#[test]
fn a_rules_file_that_is_not_charlys_is_left_alone() {
    let t = Home::new();
    let root = t.path().join("root");
    let root_arg = root.to_string_lossy().into_owned();
    let file = root.join("etc/udev/rules.d/99-charly-container-access.rules");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let foreign = "# my own rules\nSUBSYSTEM==\"drm\", GROUP=\"video\"\n";
    std::fs::write(&file, foreign).unwrap();
    t.run(&["udev", "install", "--root", &root_arg]).status(2).stderr_has("is not charly's");
    t.run(&["udev", "remove", "--root", &root_arg]).status(2).stderr_has("is not charly's");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), foreign);
}

#[test]
fn status_lists_the_gpu_nodes_with_access_and_fixes() {
    use std::os::unix::fs::PermissionsExt as _;
    let t = Home::new();
    let root = t.path().join("root");
    let dri = root.join("dev/dri");
    std::fs::create_dir_all(&dri).unwrap();
    for (name, mode) in [("card0", 0o600), ("renderD128", 0o666)] {
        std::fs::write(dri.join(name), "").unwrap();
        std::fs::set_permissions(dri.join(name), std::fs::Permissions::from_mode(mode)).unwrap();
    }
    let device = root.join("sys/class/drm/card0/device");
    std::fs::create_dir_all(&device).unwrap();
    std::os::unix::fs::symlink("../../../../bus/pci/drivers/amdgpu", device.join("driver")).unwrap();
    let root_arg = root.to_string_lossy().into_owned();
    let json = t.run(&["udev", "status", "--root", &root_arg, "--json"]).status(0).json();
    let devices = json["devices"].as_array().unwrap();
    assert_eq!(devices.len(), 2, "{json}");
    assert_eq!(devices[0]["path"], "/dev/dri/card0");
    assert_eq!(devices[0]["driver"], "amdgpu");
    assert_eq!(devices[0]["mode"], "0600");
    assert_eq!(devices[1]["path"], "/dev/dri/renderD128");
    assert_eq!(devices[1]["mode"], "0666");
    assert_eq!(json["rule_installed"], false);
    let text = t.run(&["udev", "status", "--root", &root_arg]).status(0).stdout.clone();
    assert!(
        text.contains("/dev/dri/card0") && text.contains("amdgpu") && text.contains("rule installed: no"),
        "{text}"
    );
    let empty = t.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let none = t.run(&["udev", "status", "--root", &empty.to_string_lossy()]).status(0).stdout.clone();
    assert!(none.starts_with("No GPU device nodes"), "{none}");
}

/// As uid 65534 (setpriv): a node it owns with mode 0006 is not openable (the kernel uses the
/// owner bits alone; status used to OR all three and say `rw`), a node of its group with 0604
/// gives the group bits alone. The verdict is a failure (exit 1), the fixes name the user and
/// create the missing `render` group first; install warns that the group is missing; the
/// udevadm is found through CHARLY_UDEVADM, and a wrong one is named.
#[test]
fn status_decides_access_as_the_kernel_does_and_names_the_fixes() {
    use std::os::unix::fs::PermissionsExt as _;
    let t = Home::new();
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = t.path().join("root");
    let dri = root.join("dev/dri");
    std::fs::create_dir_all(&dri).unwrap();
    std::fs::create_dir_all(root.join("etc")).unwrap();
    std::fs::write(root.join("etc/passwd"), "root:x:0:0::/root:/bin/sh\ntester:x:65534:65534::/:/bin/sh\n")
        .unwrap();
    std::fs::write(root.join("etc/group"), "root:x:0:\nvideo:x:44:\nnogroup:x:65534:\n").unwrap();
    for (name, mode, owner, group) in [("card0", 0o006, 65534, 0), ("renderD128", 0o604, 0, 65534)] {
        let node = dri.join(name);
        std::fs::write(&node, "").unwrap();
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(mode)).unwrap();
        std::os::unix::fs::chown(&node, Some(owner), Some(group)).unwrap();
    }
    let root_arg = root.to_string_lossy().into_owned();
    let mut cmd = std::process::Command::new(crate::util::require("setpriv"));
    t.apply(&mut cmd);
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", crate::util::CHARLY])
        .args(["udev", "status", "--root", &root_arg, "--json"]);
    let run = crate::util::Run::of(&mut cmd, "setpriv ... charly udev status --json");
    run.status(1);
    let json = run.json();
    let devices = json["devices"].as_array().unwrap();
    assert_eq!(
        (devices[0]["readable"].as_bool(), devices[0]["writable"].as_bool()),
        (Some(false), Some(false)),
        "{json}"
    );
    assert_eq!(
        (devices[1]["readable"].as_bool(), devices[1]["writable"].as_bool()),
        (Some(false), Some(false)),
        "{json}"
    );
    assert_eq!(json["user"], "tester");
    let fixes: Vec<&str> = json["fixes"].as_array().unwrap().iter().filter_map(|f| f.as_str()).collect();
    let groupadd = fixes.iter().position(|f| *f == "sudo groupadd --system render");
    let usermod = fixes.iter().position(|f| *f == "sudo usermod -aG render tester");
    assert!(groupadd.is_some() && usermod.is_some() && groupadd < usermod, "{fixes:?}");
    assert!(run.stderr.contains("cannot open some GPU nodes"), "{}", run.dump());

    let install = t.run(&["udev", "install", "--root", &root_arg]);
    install.status(0).stderr_has("there is no `render` group").stderr_has("groupadd --system render");

    let mut t2 = Home::new();
    t2.set_env("CHARLY_UDEVADM", crate::util::udevadm());
    let found = t2.run(&["udev", "status", "--root", &root_arg, "--json"]).json();
    assert_eq!(found["udevadm"], crate::util::udevadm().to_string_lossy().as_ref());
    t2.set_env("CHARLY_UDEVADM", "/nonexistent/udevadm");
    let missing = t2.run(&["udev", "status", "--root", &root_arg, "--json"]).json();
    assert!(
        missing["udevadm"].as_str().unwrap().contains("CHARLY_UDEVADM=/nonexistent/udevadm is not a file"),
        "{missing}"
    );
}
