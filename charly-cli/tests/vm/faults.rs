//! The bad input and faults: a box never built, a box without a kernel, a VM that exists,
//! RAM or CPUs out of range, an SSH key path that is not a key, a port taken (at create and at
//! start), stop of a VM that does not run; each a clear error that leaves no qemu, no disk, no
//! state directory and no export container behind.

use crate::util::{BUSYBOX, Lab, free_port};

/// A child process killed when dropped.
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The names in the test's VM directory (the KVM probe's cache and VM locks aside: a lock file
/// of a killed process stays, and the next lock takes it over).
fn entries(lab: &Lab) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(lab.vms())
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    names.retain(|n| n != ".kvm-probe.json" && !n.ends_with(".lock"));
    names.sort();
    names
}

/// podman containers left by a `vm build` of `vm`.
fn export_containers(vm: &str) -> String {
    let filter = format!("label=ai.opencharly.vm-build={vm}");
    let out = std::process::Command::new("podman")
        .args(["ps", "--all", "--quiet", "--filter", &filter])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn builds_that_cannot_be_made_leave_nothing() {
    let lab = Lab::with("test-vm-nokernel", BUSYBOX, "");
    let n = "test-vm-nokernel";
    // A box whose image has no kernel: which candy adds one, after a base with a package
    // manager (busybox has none).
    lab.run(&["vm", "build", n]).status(2).stderr_has(&[
        "image localhost/test-vm-nokernel:latest has no kernel",
        "its base has no package manager (apt-get or dnf)",
        "`charly box set test-vm-nokernel.box.base docker.io/library/debian:bookworm`",
        "charly candy add-deb vm linux-image-cloud-amd64 systemd-sysv udev dbus dhcpcd openssh-server",
        "charly box add-candy test-vm-nokernel vm",
    ]);
    assert_eq!(entries(&lab), Vec::<String>::new());
    assert_eq!(export_containers("charly-test-vm-nokernel"), "");
    // A box never built, an unknown box, a bad name.
    lab.run(&["box", "new", "box", "test-vm-never", "--base", BUSYBOX]).status(0);
    lab.run(&["vm", "build", "test-vm-never"]).status(2).stderr_has(&[
        "image localhost/test-vm-never:latest is not in local storage",
        "charly box build test-vm-never",
    ]);
    lab.run(&["vm", "build", "nope"]).status(2).stderr_has(&["nope"]);
    lab.run(&["vm", "build", "bad name"]).status(2).stderr_has(&["' ' is not allowed"]);
    // A file system vm build does not make (the setting vm.rootfs).
    lab.run(&["settings", "set", "vm.rootfs", "xfs"]).status(2).stderr_has(&["vm.rootfs"]);
    let with_env = |key: &str, value: &str, args: &[&str]| {
        let mut cmd = lab.charly();
        cmd.env(key, value).args(args);
        crate::util::Run::of(&mut cmd, args)
    };
    with_env("CHARLY_VM_ROOTFS", "xfs", &["vm", "build", n])
        .status(2)
        .stderr_has(&["setting vm.rootfs is \"xfs\": vm build makes ext4 only"]);
    // A setting out of range is named as the setting, not as a flag never given.
    with_env("CHARLY_VM_DISK_SIZE", "1K", &["vm", "build", n])
        .status(2)
        .stderr_has(&["setting vm.disk_size \"1K\"", "a disk is 256M to 16T"]);
    // Sizes out of range.
    for size in ["1M", "0", "lots", "17T"] {
        lab.run(&["vm", "build", n, "--size", size])
            .status(2)
            .stderr_has(&["--size", "a disk is 256M to 16T"]);
    }
    assert_eq!(entries(&lab), Vec::<String>::new());
    // The other leaves on a VM that does not exist.
    for leaf in ["create", "start", "stop", "destroy", "console"] {
        lab.run(&["vm", leaf, n]).status(2).stderr_has(&["VM charly-test-vm-nokernel "]);
    }
    lab.run(&["vm", "ssh", n, "--command", "true"]).status(2).stderr_has(&["VM charly-test-vm-nokernel "]);
    assert_eq!(entries(&lab), Vec::<String>::new());
}

#[test]
fn bad_input_and_faults_of_a_built_vm() {
    let lab = Lab::new("test-vm-faults");
    let n = "test-vm-faults";
    lab.run(&["vm", "create", n])
        .status(2)
        .stderr_has(&["VM charly-test-vm-faults has no disk", "charly vm build test-vm-faults"]);
    lab.run(&["vm", "start", n]).status(2).stderr_has(&["has no disk"]);
    // A build cancelled as a tool (the client's timeout sends notifications/cancelled to a
    // server that stays up): its podman export and tar are killed, and its scratch, work
    // directory and export container removed.
    let port = free_port();
    let mut server = lab.charly();
    server
        .args(["mcp", "serve", "--listen", &format!("127.0.0.1:{port}")])
        .stderr(std::process::Stdio::null());
    let server = Server(server.spawn().unwrap());
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while lab.run(&["check", "mcp", "ping", "--url", &url]).code != Some(0) {
        assert!(std::time::Instant::now() < deadline, "charly mcp serve did not answer on {url}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    let input = serde_json::json!({"box": n}).to_string();
    let call =
        ["check", "mcp", "call", "--url", &url, "--tool", "vm.build", "--input", &input, "--timeout", "2s"];
    lab.run(&call).status(2).stderr_has(&["2s"]);
    let scratch = || {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().starts_with(".charly-test-vm-faults.build-"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !entries(&lab).is_empty() || scratch() || !export_containers("charly-test-vm-faults").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "a cancelled build left {:?}, scratch {}, containers {:?}",
            entries(&lab),
            scratch(),
            export_containers("charly-test-vm-faults")
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    drop(server);

    // A build killed (SIGKILL: nothing of it runs its cleanup): the next build of the VM removes
    // what it left.
    let mut killed = lab.charly();
    killed.args(["vm", "build", n]).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut killed = killed.spawn().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !entries(&lab).iter().any(|e| e.starts_with(".charly-test-vm-faults.build-")) {
        assert!(std::time::Instant::now() < deadline, "the build made no work directory");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(!entries(&lab).is_empty(), "SIGKILL leaves the work directory");

    // Too small for the image's files: named, with the least that fits; nothing left.
    lab.run(&["vm", "build", n, "--size", "300M"])
        .status(2)
        .stderr_has(&["--size 300M", "so the disk needs at least"]);
    assert_eq!(entries(&lab), Vec::<String>::new());
    assert_eq!(export_containers("charly-test-vm-faults"), "");
    let built = lab.run(&["vm", "build", n, "--size", "1G", "--format", "raw", "--json"]);
    built.status(0);
    assert!(
        !scratch() && export_containers("charly-test-vm-faults").is_empty(),
        "the killed build's leftovers"
    );
    assert_eq!(built.json()["format"], "raw");
    assert!(lab.vm_dir().join("disk.raw").is_file());
    assert_eq!(entries(&lab), ["charly-test-vm-faults"]);

    // RAM and CPUs out of range.
    for (flag, value, says) in [
        ("--ram", "64M", "a VM's memory is 128M to"),
        ("--ram", "100T", "(this host's memory)"),
        ("--ram", "lots", "--ram \"lots\""),
        ("--cpus", "0", "--cpus 0: a VM has 1 to"),
        ("--cpus", "999", "--cpus 999: a VM has 1 to"),
    ] {
        lab.run(&["vm", "create", n, flag, value]).status(2).stderr_has(&[says]);
    }
    let with_env = |key: &str, value: &str, args: &[&str]| {
        let mut cmd = lab.charly();
        cmd.env(key, value).args(args);
        crate::util::Run::of(&mut cmd, args)
    };
    with_env("CHARLY_VM_BACKEND", "xen", &["vm", "create", n])
        .status(2)
        .stderr_has(&["setting vm.backend is \"xen\"", "auto, libvirt or qemu"]);
    with_env("CHARLY_VM_RAM", "abc", &["vm", "create", n]).status(2).stderr_has(&["setting vm.ram \"abc\""]);
    // SSH keys that are not keys; nothing generated is left.
    std::fs::write(lab.proj().join("not-a-key.pub"), "hello world\n").unwrap();
    std::fs::write(lab.proj().join("fake.pub"), "ssh-ed25519 AAAAthisisnotbase64atall!! x\n").unwrap();
    for (key, says) in [
        ("not-a-key.pub", "it is not an SSH public key"),
        ("fake.pub", "ssh-keygen -l cannot read"),
        ("missing.pub", "cannot read"),
    ] {
        lab.run(&["vm", "create", n, "--ssh-key", key]).status(2).stderr_has(&["--ssh-key", says]);
    }
    let left: Vec<_> = std::fs::read_dir(lab.vm_dir()).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(!left.iter().any(|f| f == "vm.json" || f == "id_ed25519"), "{left:?}");

    // A port taken: its holder named (this test process).
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port().to_string();
    let me = std::process::id().to_string();
    lab.run(&["vm", "create", n, "--ssh-port", &port])
        .status(2)
        .stderr_has(&[&format!("--ssh-port {port}: port {port} on 127.0.0.1 is in use by process"), &me]);
    lab.run(&["vm", "create", n, "--port", &format!("{port}:80")])
        .status(2)
        .stderr_has(&[&format!("--port {port}:80")]);
    assert!(!lab.vm_dir().join("vm.json").exists());

    // A key of the user's own: the public half given, recorded as is.
    let keydir = tempfile::tempdir().unwrap();
    let user_key = keydir.path().join("id_test");
    let made = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&user_key)
        .status()
        .unwrap();
    assert!(made.success());
    let ssh_port = free_port();
    let ssh_s = ssh_port.to_string();
    let created = lab.run(&[
        "vm",
        "create",
        n,
        "--ssh-key",
        user_key.to_str().unwrap(),
        "--ssh-port",
        &ssh_s,
        "--json",
    ]);
    created.status(0);
    let c = created.json();
    assert_eq!(c["ssh_key"]["mode"], "path");
    assert_eq!(c["ssh_key"]["private"], user_key.to_str().unwrap());
    assert_eq!(
        c["ssh_key"]["public"].as_str().unwrap(),
        std::fs::read_to_string(user_key.with_extension("pub")).unwrap().trim()
    );
    lab.run(&["vm", "create", n])
        .status(2)
        .stderr_has(&["VM charly-test-vm-faults exists already", "charly vm destroy test-vm-faults"]);

    // Start with its SSH port taken since: the holder named, no qemu, no run files.
    let held = std::net::TcpListener::bind(("127.0.0.1", ssh_port)).unwrap();
    lab.run(&["vm", "start", n])
        .status(2)
        .stderr_has(&[&format!("port {ssh_port} on 127.0.0.1 is in use by process"), &me]);
    drop(held);
    assert!(lab.qemus().is_empty());
    assert!(!lab.vm_dir().join("run.json").exists() && !lab.vm_dir().join("qemu.pid").exists());

    // Leaves on a VM that does not run.
    lab.run(&["vm", "stop", n]).status(2).stderr_has(&[
        "VM charly-test-vm-faults is not running; start it with `charly vm start test-vm-faults`",
    ]);
    lab.run(&["vm", "ssh", n, "--command", "true"]).status(2).stderr_has(&["is not running"]);
    let console = lab.run(&["vm", "console", n, "--json"]);
    console.status(0);
    assert_eq!(
        (console.json()["running"].as_bool(), console.json()["attached"].as_bool()),
        (Some(false), Some(false))
    );
    // As a terminal would without a TTY: ssh needs a command.
    lab.run(&["vm", "ssh", n]).status(2).stderr_has(&["give `command`", "stdin is not a terminal"]);

    // destroy keeps the disk; --disk removes everything.
    let destroyed = lab.run(&["vm", "destroy", n, "--json"]);
    destroyed.status(0);
    assert_eq!(
        (destroyed.json()["created"].as_bool(), destroyed.json()["disk_removed"].as_bool()),
        (Some(true), Some(false))
    );
    assert!(lab.vm_dir().join("disk.raw").is_file() && !lab.vm_dir().join("vm.json").exists());
    let all = lab.run(&["vm", "list", "--all", "--json"]);
    assert_eq!(all.json()["vms"][0]["state"], "built", "{}", all.dump());
    lab.run(&["vm", "destroy", n, "--disk"]).status(0);
    assert_eq!(entries(&lab), Vec::<String>::new());
    lab.run(&["vm", "destroy", n]).status(2).stderr_has(&["nothing to destroy"]);
    // The user's key files are the user's: untouched.
    assert!(user_key.is_file());
}

/// The `/dev/shm` scratch directories of VM `vm`'s builds.
fn scratches(vm: &str) -> Vec<String> {
    let prefix = format!(".{vm}.build-");
    std::fs::read_dir("/dev/shm")
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

/// Starts `vm build` of the lab's box, instance `instance`, and waits until it has made its
/// work directory and unpacks the image.
fn building(lab: &Lab, instance: &str) -> std::process::Child {
    let mut build = lab.charly();
    build
        .args(["vm", "build", &lab.name, "-i", instance])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let child = build.spawn().unwrap();
    let prefix = format!(".charly-{}-{instance}.build-", lab.name);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !entries(lab).iter().any(|e| e.starts_with(&prefix)) {
        assert!(std::time::Instant::now() < deadline, "the build made no work directory");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(1500));
    child
}

#[test]
fn an_interrupted_build_leaves_nothing_and_destroy_removes_what_a_killed_one_left() {
    let lab = Lab::new("test-i17f-sig");
    let vm = "charly-test-i17f-sig-a";
    // Port 0 cannot be reached (qemu would forward whatever port the kernel picks, unrecorded).
    lab.run(&["vm", "create", &lab.name, "--ssh-port", "0"])
        .status(2)
        .stderr_has(&["--ssh-port <SSH_PORT>", "0 is not in 1..=65535"]);
    // SIGTERM (and SIGINT, a terminal's Ctrl-C: the same handler) cancels the build as a
    // cancelled tool call is: its tree in /dev/shm, its work directory, its lock and its export
    // container are removed before charly ends.
    let term = building(&lab, "a");
    let pid = rustix::process::Pid::from_raw(term.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let out = term.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cancelled"), "{:?}: {stderr}", out.status);
    assert_eq!(entries(&lab), Vec::<String>::new());
    assert_eq!(scratches(vm), Vec::<String>::new());
    assert!(!lab.vms().join(format!(".{vm}.lock")).exists(), "the lock is left");
    assert_eq!(export_containers(vm), "");

    // SIGKILL runs nothing of charly: `vm destroy` removes what it left, though the VM has no disk.
    let mut killed = building(&lab, "a");
    killed.kill().unwrap();
    killed.wait().unwrap();
    assert!(!entries(&lab).is_empty(), "SIGKILL leaves the work directory");
    let destroyed = lab.run(&["vm", "destroy", &lab.name, "-i", "a", "--disk"]);
    destroyed.status(0);
    assert!(destroyed.stdout.contains("removed what an interrupted vm build left"), "{}", destroyed.dump());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while !export_containers(vm).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(entries(&lab), Vec::<String>::new());
    assert_eq!(scratches(vm), Vec::<String>::new());
    assert_eq!(export_containers(vm), "");
    lab.run(&["vm", "destroy", &lab.name, "-i", "a"]).status(2).stderr_has(&["nothing to destroy"]);

    // Colliding names: box `test-i17f-sig-a` would be VM charly-test-i17f-sig-a, which is box
    // test-i17f-sig's instance a. Every leaf refuses it, naming the owner; its disk stays.
    lab.run(&["vm", "build", &lab.name, "-i", "a", "--size", "1G"]).status(0);
    lab.run(&["box", "new", "box", "test-i17f-sig-a", "--base", crate::util::BUSYBOX]).status(0);
    for leaf in [&["build"][..], &["create"], &["start"], &["stop"], &["destroy", "--disk"], &["console"]] {
        let mut args = vec!["vm", leaf[0], "test-i17f-sig-a"];
        args.extend(&leaf[1..]);
        lab.run(&args).status(2).stderr_has(&[
            "VM charly-test-i17f-sig-a is box test-i17f-sig's instance a (its build.json), not box test-i17f-sig-a's",
            &format!("`charly vm {} test-i17f-sig -i a`", leaf[0]),
        ]);
    }
    assert!(lab.vms().join(vm).join("disk.qcow2").is_file(), "a refused destroy removed the disk");
    // A name that is no box: refused, not taken as some box's instance.
    lab.run(&["vm", "destroy", "test-i17f-nobox", "--disk"])
        .status(2)
        .stderr_has(&["no box named `test-i17f-nobox` in charly.yml"]);
    lab.run(&["vm", "destroy", &lab.name, "-i", "a", "--disk"]).status(0);
    assert_eq!(entries(&lab), Vec::<String>::new());
}
