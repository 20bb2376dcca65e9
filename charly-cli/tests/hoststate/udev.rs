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
